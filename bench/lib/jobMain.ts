/**
 * The main of a bench child script: reads its job as JSON from stdin, runs
 * it, prints the result as one JSON line (what runJobChild in child.ts reads).
 * Kept apart from child.ts, which imports esbuild, so child bundles stay small.
 */
export function jobMain<J, R>(run: (job: J) => Promise<R>): void {
  const main = async () => {
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    const job = JSON.parse(Buffer.concat(chunks).toString('utf8')) as J;
    process.stdout.write(`${JSON.stringify(await run(job))}\n`);
  };
  main().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
