/**
 * The real `ltm` binary (dist/cli.js) as a child process: `ltm serve` started
 * and stopped by signal, and one-shot commands.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

export const REPO_ROOT = path.resolve(__dirname, '..', '..');
export const CLI = path.join(REPO_ROOT, 'dist', 'cli.js');

export function requireBuiltCli(): void {
  if (!fs.existsSync(CLI)) throw new Error(`${CLI} is missing: run npm run build first`);
}

export function ltm(args: string[], cwd = REPO_ROOT): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd, encoding: 'utf8' });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

export function ltmJson<T = unknown>(args: string[]): T {
  const r = ltm([...args, '--json']);
  if (r.status !== 0) throw new Error(`ltm ${args.join(' ')} failed: ${r.stderr}`);
  return JSON.parse(r.stdout) as T;
}

export interface RunningServer {
  process: ChildProcess;
  port: number;
  token: string;
  output: () => string;
  stop: () => Promise<void>;
}

async function waitFor<T>(probe: () => T | null, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== null) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Starts `ltm serve --project <dir>` and waits for its server.json. */
export async function startServe(project: string, extraArgs: string[] = []): Promise<RunningServer> {
  const serverJson = path.join(project, '.claude', 'ltm', 'server.json');
  fs.rmSync(serverJson, { force: true });
  const child = spawn(process.execPath, [CLI, 'serve', '--project', project, ...extraArgs], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const info = await waitFor(
    () => {
      if (child.exitCode !== null) throw new Error(`ltm serve exited early: ${output}`);
      try {
        const parsed = JSON.parse(fs.readFileSync(serverJson, 'utf8')) as { port: number; token: string; pid: number };
        return parsed.pid === child.pid ? parsed : null;
      } catch {
        return null;
      }
    },
    10_000,
    'ltm serve to write server.json',
  );
  return {
    process: child,
    port: info.port,
    token: info.token,
    output: () => output,
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
  };
}
