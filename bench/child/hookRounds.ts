/**
 * Run in a fresh, small Node process (bundled by bench/lib/child.ts): sends
 * the hook session rounds of bench/lib/hookTraffic.ts to a server and prints
 * what they measured. Timing from the bench process itself would add the
 * garbage collection of its large heap (the corpus, the built store) to the
 * server's answers.
 *
 *   node hookRounds.js < job.json      (prints one JSON line: RoundsResult)
 */
import { runSessionRounds, type RoundsJob } from '../lib/hookTraffic';

async function main(): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  const job = JSON.parse(Buffer.concat(chunks).toString('utf8')) as RoundsJob;
  process.stdout.write(`${JSON.stringify(await runSessionRounds(job))}\n`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
