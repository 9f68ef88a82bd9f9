/**
 * Scripts that run in fresh Node processes, bundled with esbuild exactly as
 * dist/cli.js is (one CommonJS file, dependencies inlined), so a child
 * measures what ships and not the TypeScript loader.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';
import { buildSync } from 'esbuild';

/** Bundles `entry` (relative to the repository) into `outDir`; returns the bundle's path. */
export function bundleChildScript(repoRoot: string, entry: string, outDir: string): string {
  const outfile = path.join(outDir, `${path.basename(entry, '.ts')}.js`);
  buildSync({
    entryPoints: [path.join(repoRoot, entry)],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    logLevel: 'warning',
  });
  return outfile;
}

export interface ChildRun {
  /** Wall time from spawn to exit, as seen by the parent. */
  wallMs: number;
  stdout: string;
  stderr: string;
  status: number | null;
}

/** Runs `node <args>` to completion and times it. */
export function runNode(args: readonly string[], options: { cwd?: string; timeoutMs?: number } = {}): ChildRun {
  const t0 = performance.now();
  const result = spawnSync(process.execPath, args, {
    cwd: options.cwd,
    encoding: 'utf8',
    timeout: options.timeoutMs ?? 120_000,
    maxBuffer: 64 * 1024 * 1024,
  });
  const wallMs = performance.now() - t0;
  if (result.error) throw result.error;
  return { wallMs, stdout: result.stdout, stderr: result.stderr, status: result.status };
}

/** Runs a child that prints one JSON line; fails loudly when it does not. */
export function runJsonChild<T>(args: readonly string[], options: { cwd?: string } = {}): { wallMs: number; data: T } {
  const run = runNode(args, options);
  if (run.status !== 0) throw new Error(`child failed (exit ${run.status}): node ${args.join(' ')}\n${run.stderr}`);
  const line = run.stdout.trim().split('\n').pop() ?? '';
  return { wallMs: run.wallMs, data: JSON.parse(line) as T };
}

/**
 * Runs a bench child script (bundled once by `ctx.childScript`) with `job` as
 * JSON on stdin and returns the JSON of its last line. The bench waits,
 * blocked, so that it competes with nothing.
 */
export function runJobChild<T>(ctx: { childScript(entry: string): string }, entry: string, job: unknown): T {
  const result = spawnSync(process.execPath, [ctx.childScript(entry)], {
    input: JSON.stringify(job),
    encoding: 'utf8',
    timeout: 300_000,
    maxBuffer: 64 * 1024 * 1024,
  });
  if (result.error) throw result.error;
  if (result.status !== 0) throw new Error(`${entry} failed (exit ${result.status}): ${result.stderr}`);
  return JSON.parse(result.stdout.trim().split('\n').pop() ?? 'null') as T;
}

/** Starts a child server script that prints one JSON line `{"port": N}` when it listens; kill it when done. */
export async function startPortChild(script: string, args: readonly string[] = []): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, [script, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  child.once('exit', () => process.off('exit', killOnExit));
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    child.stdout!.setEncoding('utf8').on('data', (s: string) => {
      out += s;
      if (out.includes('\n')) resolve((JSON.parse(out) as { port: number }).port);
    });
    child.once('exit', (code) => reject(new Error(`${script} exited (code ${code}) before listening`)));
  });
  return { child, port };
}
