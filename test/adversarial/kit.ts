/**
 * Helpers of the adversarial suite (test/adversarial/): seeded fast-check
 * properties, child processes tracked by PID and killed in after-hooks, the
 * real CLI run asynchronously with a time limit, temp dirs removed at the end,
 * byte snapshots of the shared store files, and scans of files for strings.
 *
 * It builds on test/support/serverKit.ts, test/support/ltmProcess.ts and
 * test/support/storeKit.ts (imported, never edited).
 */
import { strict as assert } from 'node:assert';
import { spawn, spawnSync, type ChildProcess, type SpawnOptions } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import fc from 'fast-check';
import { CLI, spawnLtm, spawnNode, waitForServerJson, type HookRun, type ServeProcess, type ServerJson } from '../support/serverKit';
import { REPO_ROOT, filesUnder, ltmRoot, makeTempProject, removeDir, snapshotDiff, snapshotFiles } from '../support/storeKit';

export { CLI, REPO_ROOT };

// --- deterministic randomness --------------------------------------------------------

/** The base seed of every property and PRNG of the suite; LTM_ADV_SEED overrides it to explore. */
export const BASE_SEED = Number(process.env.LTM_ADV_SEED ?? 20_260_101);

/** A fixed seed per name (FNV-1a of the name, mixed with BASE_SEED). */
export function seedFor(name: string): number {
  let h = 0x811c9dc5 ^ BASE_SEED;
  for (let i = 0; i < name.length; i++) {
    h ^= name.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h | 0;
}

/** A small seeded PRNG (mulberry32): the same sequence on every run. */
export function prng(name: string): { next: () => number; int: (min: number, max: number) => number; pick: <T>(xs: readonly T[]) => T } {
  let a = seedFor(name) >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    pick: (xs) => xs[Math.floor(next() * xs.length)]!,
  };
}

/**
 * Runs an async property with a fixed seed and a bounded number of runs, no
 * shrinking (each run is real I/O; the counterexample is printed as found).
 * On failure the seed is printed, so that the run can be replayed.
 */
export async function checkProperty<T>(name: string, arb: fc.Arbitrary<T>, body: (value: T) => Promise<void>, numRuns: number): Promise<void> {
  const seed = seedFor(name);
  try {
    await fc.assert(
      fc.asyncProperty(arb, async (value) => {
        await body(value);
      }),
      { seed, numRuns, endOnFailure: true },
    );
  } catch (error) {
    console.log(`      property "${name}" failed: seed ${seed} (BASE_SEED ${BASE_SEED}, set LTM_ADV_SEED to change it)`);
    // fast-check quotes the whole counterexample, which may hold megabytes: keep the report readable.
    const e = error as Error & { cause?: unknown };
    if (e.message.length > 6_000) {
      const short = new Error(`${e.message.slice(0, 3_000)}\n…(${e.message.length} characters)…\n${e.message.slice(-1_500)}`, { cause: e.cause });
      throw short;
    }
    throw error;
  }
}

// --- processes -----------------------------------------------------------------------

/**
 * Every child process a suite starts, so that after-hooks kill what is left
 * by PID, even when a test failed half-way.
 */
export class Processes {
  private readonly children = new Set<ChildProcess>();

  track<C extends ChildProcess>(child: C): C {
    this.children.add(child);
    child.once('exit', () => this.children.delete(child));
    return child;
  }

  /** `ltm serve` (or any ltm command) as a tracked process. */
  spawnLtm(args: string[]): ServeProcess {
    const proc = spawnLtm(args);
    this.track(proc.child);
    return proc;
  }

  /** `node <args>` as a tracked process, its output kept. */
  spawnNode(args: string[]): ServeProcess {
    const proc = spawnNode(args);
    this.track(proc.child);
    return proc;
  }

  /** Runs a hook script with `sh` as a tracked process: the payload on stdin, exactly `env` (plus PATH). */
  runHookScript(script: string, event: string, payload: unknown, env: Record<string, string>, cwd?: string, shell = 'sh'): Promise<HookRun> {
    return new Promise((resolve, reject) => {
      const started = process.hrtime.bigint();
      const [program, ...options] = shell.split(' ') as [string, ...string[]];
      const child = this.track(spawn(program, [...options, script, event], { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env }, cwd, stdio: ['pipe', 'pipe', 'pipe'] }));
      let stdout = '';
      let stderr = '';
      child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
      child.on('error', reject);
      child.stdin!.on('error', () => undefined);
      child.on('close', (status) => resolve({ status, stdout, stderr, ms: Number(process.hrtime.bigint() - started) / 1e6 }));
      child.stdin!.end(typeof payload === 'string' ? payload : JSON.stringify(payload));
    });
  }

  /** SIGKILLs every tracked process that still runs, by its PID, and waits for it to exit. */
  async killAll(): Promise<void> {
    const waits: Promise<void>[] = [];
    for (const child of this.children) {
      if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) continue;
      waits.push(
        new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, 5_000);
          child.once('exit', () => {
            clearTimeout(timer);
            resolve();
          });
        }),
      );
      try {
        process.kill(child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    await Promise.all(waits);
    this.children.clear();
  }
}

export interface CliRun {
  status: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  ms: number;
  pid: number;
  timedOut: boolean;
}

/**
 * Runs `node dist/cli.js <args>` without blocking the event loop, killed
 * (SIGKILL) after `timeoutMs`. `killAfterMs` kills it on purpose at that moment.
 */
export function runLtm(
  procs: Processes,
  args: string[],
  options: { timeoutMs?: number; killAfterMs?: number; cwd?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = procs.track(
      spawn(process.execPath, [CLI, ...args], { cwd: options.cwd ?? REPO_ROOT, env: options.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] }),
    );
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const timers: NodeJS.Timeout[] = [];
    timers.push(
      setTimeout(() => {
        timedOut = true;
        child.kill('SIGKILL');
      }, options.timeoutMs ?? 30_000),
    );
    if (options.killAfterMs !== undefined) timers.push(setTimeout(() => child.kill('SIGKILL'), options.killAfterMs));
    child.on('error', reject);
    child.on('close', (status, signal) => {
      for (const t of timers) clearTimeout(t);
      resolve({ status, signal, stdout, stderr, ms: Number(process.hrtime.bigint() - started) / 1e6, pid: child.pid ?? -1, timedOut });
    });
  });
}

/** Runs `ltm <args> --json` and parses its output; fails with its stderr when it exits non-zero. */
export async function ltmJsonAsync<T = Record<string, unknown>>(procs: Processes, args: string[], timeoutMs = 30_000): Promise<T> {
  const r = await runLtm(procs, [...args, '--json'], { timeoutMs });
  assert.equal(r.status, 0, `ltm ${args.join(' ')} exited ${r.status}${r.timedOut ? ' (timed out)' : ''}: ${r.stderr}`);
  return JSON.parse(r.stdout) as T;
}

/** Runs tasks with at most `limit` of them at a time; results in task order. */
export async function pool<T>(limit: number, tasks: (() => Promise<T>)[]): Promise<T[]> {
  const results: T[] = new Array(tasks.length);
  let next = 0;
  const worker = async () => {
    while (next < tasks.length) {
      const i = next++;
      results[i] = await tasks[i]!();
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, tasks.length) }, worker));
  return results;
}

/** Starts `ltm serve --project <dir>` as a tracked process and waits for its server.json. */
export async function startServe(procs: Processes, project: string, extra: string[] = []): Promise<{ proc: ServeProcess; info: ServerJson }> {
  const proc = procs.spawnLtm(['serve', '--project', project, ...extra]);
  const info = await waitForServerJson(project, proc);
  return { proc, info };
}

// --- raw HTTP -------------------------------------------------------------------------

/**
 * Writes a request byte for byte on a fresh connection to 127.0.0.1 (for
 * what Node's client refuses to send: duplicate Host or Content-Length,
 * both Transfer-Encoding and Content-Length, bad header bytes) and reads the
 * status of the answer. Status 0: the server closed without answering.
 */
export function rawHttp(port: number, request: string | Buffer, timeoutMs = 5_000): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer within ${timeoutMs} ms`));
    }, timeoutMs);
    socket.on('connect', () => socket.end(request));
    socket.on('data', (d: Buffer) => chunks.push(d));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString('latin1');
      const m = /^HTTP\/1\.[01] (\d{3})/.exec(text);
      resolve({ status: m ? Number(m[1]) : 0, text });
    });
  });
}

// --- sampling /proc/<pid>/cmdline: test/support/cmdlineSampler.ts ---------------------

export { sampleCmdlines, type CmdlineSampling } from '../support/cmdlineSampler';

// --- temp dirs -----------------------------------------------------------------------

/** Temp dirs of a suite, removed by `removeAll()` in an after-hook. */
export class TempDirs {
  private readonly dirs: string[] = [];

  make(prefix: string): string {
    const dir = makeTempProject(prefix);
    this.dirs.push(dir);
    return dir;
  }

  removeAll(): void {
    for (const dir of this.dirs.splice(0)) removeDir(dir);
  }
}

// --- the store on disk ---------------------------------------------------------------

/** The files git shares: memories/, archives/, index.json, archive_index.json, by path under .claude/ltm. */
export function sharedSnapshot(project: string): Map<string, Buffer> {
  const root = ltmRoot(project);
  const out = new Map<string, Buffer>();
  for (const dir of ['memories', 'archives']) {
    for (const [name, bytes] of snapshotFiles(path.join(root, dir))) out.set(`${dir}/${name}`, bytes);
  }
  for (const file of ['index.json', 'archive_index.json']) {
    const full = path.join(root, file);
    if (fs.existsSync(full)) out.set(file, fs.readFileSync(full));
  }
  return out;
}

export function assertSnapshotUnchanged(before: Map<string, Buffer>, after: Map<string, Buffer>, what: string): void {
  const diff = snapshotDiff(before, after);
  assert.deepEqual(diff, [], `${what} changed the store: ${diff.join(', ')}`);
}

/** Every regular file under `dir` (recursively), absolute paths. */
export function allFiles(dir: string): string[] {
  return filesUnder(dir).map((name) => path.join(dir, name));
}

export interface Finding {
  needle: string;
  where: string;
}

/** Where each needle occurs (case-insensitive) in the files under `dir` and in the named texts. */
export function findStrings(needles: readonly string[], dirs: readonly string[], texts: Record<string, string> = {}): Finding[] {
  const haystacks: { where: string; text: string }[] = [];
  for (const dir of dirs) for (const file of allFiles(dir)) haystacks.push({ where: file, text: fs.readFileSync(file, 'latin1').toLowerCase() });
  for (const [where, text] of Object.entries(texts)) haystacks.push({ where, text: text.toLowerCase() });
  const found: Finding[] = [];
  for (const needle of needles) {
    const n = needle.toLowerCase();
    // Files are read as latin1: compare the needle's UTF-8 bytes the same way.
    const nBytes = Buffer.from(needle, 'utf8').toString('latin1').toLowerCase();
    for (const h of haystacks) if (h.text.includes(n) || h.text.includes(nBytes)) found.push({ needle, where: h.where });
  }
  return found;
}

// --- git -----------------------------------------------------------------------------

export function git(cwd: string, args: string[], allowFail = false): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync('git', ['-c', 'user.name=LTM Test', '-c', 'user.email=ltm@test.invalid', '-c', 'commit.gpgsign=false', '-c', 'init.defaultBranch=main', ...args], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: cwd, GIT_TERMINAL_PROMPT: '0' },
  });
  if (!allowFail) assert.equal(r.status, 0, `git ${args.join(' ')} failed in ${cwd}:\n${r.stdout}\n${r.stderr}`);
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The Summary and Content sections of a memory or archive file, read from its text. */
export function fileSections(raw: string): { summary: string; content: string } {
  const m = /\n## Summary\n([\s\S]*?)\n\n## Content\n([\s\S]*?)\n?$/.exec(raw);
  if (!m) throw new Error(`no Summary and Content sections in:\n${raw.slice(0, 500)}`);
  return { summary: m[1]!, content: m[2]! };
}

/** The median of some numbers. */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

// --- misc ----------------------------------------------------------------------------

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** A unique lowercase word (letters only) that search can find and nothing else contains. */
export function nonceWord(rand: { int: (a: number, b: number) => number }, length = 10): string {
  let s = '';
  for (let i = 0; i < length; i++) s += String.fromCharCode(97 + rand.int(0, 25));
  return s;
}

/** Whether a path exists (lstat). */
export function exists(file: string): boolean {
  try {
    fs.lstatSync(file);
    return true;
  } catch {
    return false;
  }
}

export type { ServeProcess, ServerJson, SpawnOptions };
