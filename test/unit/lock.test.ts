/**
 * StoreLock across real processes and real files: a holder killed with
 * SIGKILL (or left a zombie), writers killed at random moments, a slow and a
 * stuck live holder, locks without a usable record, and a taker killed in the
 * middle of a takeover.
 *
 * The other processes are this file run as a script (LTM_LOCK_TEST_CHILD=1):
 *
 *   hold <dir>            takes the lock, prints "held <pid>", holds it until killed
 *   hold-for <dir> <ms>   takes the lock, prints "held", holds it <ms>, prints
 *                         "leaving <time>" just before releasing, then exits
 *   count <dir>           until its stdin closes: under the lock, reads the
 *                         number in <dir>/counter, waits a little and writes it
 *                         plus one; prints "ack" after each increment. On entry
 *                         it links a marker naming itself; finding the marker
 *                         of a live process there means two live writers, and
 *                         it prints "overlap <pid>" and exits 3.
 */
import { strict as assert } from 'node:assert';
import { type ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { StoreBusyError, StoreLock } from '../../src/core/lock';
import { type ProcessIdentity, asProcessIdentity, currentProcess, isProcessAlive, processStartTime } from '../../src/core/processIdentity';

const CHILD_ENV = 'LTM_LOCK_TEST_CHILD';
const REPO_ROOT = path.resolve(__dirname, '..', '..');

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const lockIn = (dir: string) => new StoreLock(dir, path.join(dir, '.lock'));

// ---------------------------------------------------------------------------
// The child processes

async function runChild([mode, dir, arg]: string[]): Promise<void> {
  if (!dir) throw new Error(`usage: ${CHILD_ENV}=1 lock.test.ts hold|hold-for|count <dir> [ms]`);
  const lock = lockIn(dir);
  if (mode === 'hold') {
    await lock.run(async () => {
      process.stdout.write(`held ${process.pid}\n`);
      await new Promise(() => setInterval(() => undefined, 1000));
    });
  } else if (mode === 'hold-for') {
    await lock.run(async () => {
      process.stdout.write('held\n');
      await sleep(Number(arg));
      process.stdout.write(`leaving ${Date.now()}\n`);
    });
  } else if (mode === 'count') {
    await countUntilStdinCloses(lock, dir);
  } else {
    throw new Error(`unknown mode ${mode}`);
  }
}

async function countUntilStdinCloses(lock: StoreLock, dir: string): Promise<void> {
  const counter = path.join(dir, 'counter');
  const marker = path.join(dir, 'inside');
  let stopping = false;
  process.stdin.on('end', () => (stopping = true));
  process.stdin.resume();
  while (!stopping) {
    await lock.run(async () => {
      enter(marker);
      const value = Number(fs.readFileSync(counter, 'utf8'));
      await sleep(Math.random() * 3);
      // Atomic, so that a kill never leaves half a number.
      fs.writeFileSync(`${counter}.${process.pid}`, String(value + 1));
      fs.renameSync(`${counter}.${process.pid}`, counter);
      fs.unlinkSync(marker);
    });
    process.stdout.write('ack\n');
  }
}

/** Links a marker naming this process; a marker already there must be a dead writer's. */
function enter(marker: string): void {
  const temp = `${marker}.${process.pid}`;
  fs.writeFileSync(temp, JSON.stringify(currentProcess()));
  try {
    fs.linkSync(temp, marker);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    const previous = asProcessIdentity(JSON.parse(fs.readFileSync(marker, 'utf8')));
    if (!previous || isProcessAlive(previous)) {
      process.stdout.write(`overlap ${previous?.pid}\n`);
      process.exit(3);
    }
    // Left by a writer killed inside the lock.
    fs.renameSync(temp, marker);
  } finally {
    fs.rmSync(temp, { force: true });
  }
}

// ---------------------------------------------------------------------------
// The tests

/** A started process and the lines it printed. */
class Proc {
  readonly lines: string[] = [];
  stderr = '';
  /** After the exit and the last of its output. */
  readonly closed: Promise<void>;
  readonly exited: Promise<void>;
  private pending = '';
  private readonly listeners = new Set<(line: string) => void>();

  constructor(readonly child: ChildProcess) {
    child.stdout!.on('data', (data: Buffer) => {
      const parts = (this.pending + data.toString()).split('\n');
      this.pending = parts.pop()!;
      for (const line of parts) {
        this.lines.push(line);
        for (const listener of this.listeners) listener(line);
      }
    });
    child.stderr!.on('data', (data: Buffer) => (this.stderr += data.toString()));
    this.closed = new Promise((resolve) => child.on('close', () => resolve()));
    this.exited = new Promise((resolve) => child.on('exit', () => resolve()));
  }

  get pid(): number {
    return this.child.pid!;
  }

  onLine(listener: (line: string) => void): void {
    this.listeners.add(listener);
  }

  /** The first line (already printed or still to come) that matches. */
  line(pattern: RegExp, timeoutMs = 15_000): Promise<RegExpExecArray> {
    const seen = this.lines.map((l) => pattern.exec(l)).find((m) => m);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const listener = (line: string) => {
        const m = pattern.exec(line);
        if (!m) return;
        stop();
        resolve(m);
      };
      const fail = (why: string) => {
        stop();
        reject(new Error(`no line matching ${pattern} from pid ${this.pid}: ${why}; stderr:\n${this.stderr}`));
      };
      const timer = setTimeout(() => fail(`none within ${timeoutMs} ms`), timeoutMs);
      const stop = () => {
        clearTimeout(timer);
        this.listeners.delete(listener);
      };
      this.listeners.add(listener);
      void this.closed.then(() => this.listeners.has(listener) && fail('it exited'));
    });
  }
}

function killPid(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}

function defineTests(): void {
  let dir: string;
  let lockPath: string;
  /** Every process a test started, killed by PID afterwards. */
  let started: Proc[];
  let otherPids: number[];

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ltm-lock-'));
    lockPath = path.join(dir, '.lock');
    started = [];
    otherPids = [];
  });

  afterEach(async () => {
    // Grandchildren first, while their parents keep their IDs from being reused.
    for (const pid of otherPids) killPid(pid);
    for (const proc of started) if (proc.child.exitCode === null && proc.child.signalCode === null) killPid(proc.pid);
    await Promise.all(started.map((proc) => proc.exited));
    // A grandchild could still hold the pipes open.
    for (const proc of started) for (const stream of [proc.child.stdin, proc.child.stdout, proc.child.stderr]) stream?.destroy();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  function start(command: string, args: string[]): Proc {
    const child = spawn(command, args, { cwd: REPO_ROOT, env: { ...process.env, [CHILD_ENV]: '1' }, stdio: ['pipe', 'pipe', 'pipe'] });
    const proc = new Proc(child);
    started.push(proc);
    return proc;
  }

  /** This file as a child process in `mode`. */
  function startChild(mode: string, ...args: string[]): Proc {
    return start(process.execPath, ['--import', 'tsx', __filename, mode, dir, ...args]);
  }

  /** The identity of a process that has exited (and been collected). */
  async function deadIdentity(): Promise<ProcessIdentity> {
    const proc = start(process.execPath, ['-e', 'setInterval(() => {}, 1000)']);
    await new Promise((resolve) => proc.child.once('spawn', resolve));
    const identity = { ...currentProcess(), pid: proc.pid, started: processStartTime(proc.pid) };
    killPid(proc.pid);
    await proc.exited;
    return identity;
  }

  /** The files the lock protocol left next to the lock (claims, temporary files, the lock). */
  function lockLeftovers(): string[] {
    return fs.readdirSync(dir).filter((name) => name.startsWith('.lock'));
  }

  async function timeToEnter(lock: StoreLock): Promise<number> {
    const begin = performance.now();
    return lock.run(() => performance.now() - begin);
  }

  it('a holder killed with SIGKILL lets the next writer in within a second', async () => {
    const holder = startChild('hold');
    await holder.line(/^held/);
    killPid(holder.pid);
    const waited = await timeToEnter(lockIn(dir));
    assert.ok(waited < 1000, `the next writer waited ${Math.round(waited)} ms for a killed holder`);
    assert.deepEqual(lockLeftovers(), [], 'the lock is released and no claim is left');
  });

  it('a killed holder that its parent never collects (a zombie) is dead too', async function () {
    if (process.platform !== 'linux') this.skip(); // zombies are told apart through /proc
    // The shell starts the holder in the background and becomes `sleep`, which never collects it.
    const parent = start('sh', ['-c', '"$0" --import tsx "$1" hold "$2" & echo "holder $!"; exec sleep 60', process.execPath, __filename, dir]);
    const holderPid = Number((await parent.line(/^holder (\d+)$/))[1]);
    otherPids.push(holderPid);
    await parent.line(/^held /);
    killPid(holderPid);
    await waitFor(() => /\) Z /.test(fs.readFileSync(`/proc/${holderPid}/stat`, 'utf8')), 'the holder to be a zombie');
    const waited = await timeToEnter(lockIn(dir));
    assert.ok(waited < 1000, `the next writer waited ${Math.round(waited)} ms for a zombie holder`);
  });

  it('writers killed at random moments never let two live writers in, and every acknowledged increment lands', async function () {
    this.timeout(20_000);
    const counter = path.join(dir, 'counter');
    const readCounter = () => Number(fs.readFileSync(counter, 'utf8'));
    fs.writeFileSync(counter, '0');
    const writers = new Set<Proc>();
    const acks = new Map<Proc, number>();
    const overlaps: string[] = [];
    let kills = 0;
    /** For each writer killed inside the lock: how long until the others had moved the counter on by two. */
    const stalls: number[] = [];
    const spawnWriter = () => {
      const writer = startChild('count');
      acks.set(writer, 0);
      writer.onLine((line) => {
        if (line === 'ack') acks.set(writer, acks.get(writer)! + 1);
        else if (line.startsWith('overlap')) overlaps.push(line);
      });
      writers.add(writer);
    };
    const kill = (writer: Proc) => {
      killPid(writer.pid);
      writers.delete(writer);
      kills++;
    };
    /** The writer inside the lock, by the marker it linked there. */
    const insideWriter = (): Proc | undefined => {
      try {
        const pid = asProcessIdentity(JSON.parse(fs.readFileSync(path.join(dir, 'inside'), 'utf8')))?.pid;
        return [...writers].find((w) => w.pid === pid);
      } catch {
        return undefined;
      }
    };

    for (let i = 0; i < 5; i++) spawnWriter();
    const begin = Date.now();
    // At least 6 s and 8 kills inside the lock, at most 12 s (starting a writer takes a second or more on a busy machine).
    while (Date.now() - begin < 6_000 || (stalls.length < 8 && Date.now() - begin < 12_000)) {
      await sleep(20 + Math.random() * 150);
      const active = [...writers].filter((w) => acks.get(w)! > 0);
      // Someone must be left to take over.
      if (active.length < 2) continue;
      // Mostly the writer inside the lock, so that takeovers happen often; otherwise any
      // writer, which may be waiting, taking over, or between two increments.
      let inside: Proc | undefined;
      const aimInside = Math.random() < 0.8;
      for (let tries = 0; aimInside && !inside && tries < 200; tries++) {
        inside = insideWriter();
        if (!inside) await sleep(1);
      }
      kill(inside ?? active[Math.floor(Math.random() * active.length)]!);
      spawnWriter();
      if (!inside) continue;
      // The killed writer's increment may land just after this read; two more are surely the others'.
      const from = readCounter();
      const killedAt = Date.now();
      await waitFor(() => readCounter() >= from + 2, 'the others to go on after a kill inside the lock');
      stalls.push(Date.now() - killedAt);
    }
    // Writers still starting have done nothing; the others finish their increment and exit.
    for (const writer of writers) {
      if (acks.get(writer)! > 0) writer.child.stdin!.end();
      else kill(writer);
    }
    await Promise.all([...writers].map((w) => w.exited));

    assert.deepEqual(overlaps, [], 'two live writers were inside the lock at once');
    for (const writer of writers) assert.equal(writer.child.exitCode, 0, `a writer failed: ${writer.stderr}`);
    const acknowledged = [...acks.values()].reduce((a, b) => a + b, 0);
    const count = readCounter();
    assert.ok(count >= acknowledged, `${acknowledged} increments were acknowledged but the counter is ${count}: some were lost`);
    assert.ok(count <= acknowledged + kills, `the counter is ${count} after ${acknowledged} acknowledged increments and ${kills} kills`);
    assert.ok(stalls.length >= 3, `only ${stalls.length} writers were killed inside the lock`);
    assert.ok(Math.max(...stalls) < 3_000, `a writer killed inside the lock held the others up: ${stalls.join(', ')} ms`);
  });

  it('a live holder that is merely slow is waited for, not taken over', async () => {
    const holder = startChild('hold-for', '1500');
    await holder.line(/^held/);
    const lock = lockIn(dir);
    const entered = await lock.run(() => Date.now());
    const leaving = Number((await holder.line(/^leaving (\d+)$/))[1]);
    assert.ok(entered >= leaving, `entered ${entered - leaving} ms before the holder left`);
    await holder.exited;
    assert.equal(holder.child.exitCode, 0, holder.stderr);
  });

  it('a live holder is never taken over, however old its lock looks: StoreBusyError after about 10 s', async function () {
    this.timeout(20_000);
    const holder = startChild('hold');
    await holder.line(/^held/);
    const held = fs.statSync(lockPath).ino;
    // A minute old by its mtime (until the holder's next refresh): only the record of a live process keeps it.
    const minuteAgo = new Date(Date.now() - 60_000);
    fs.utimesSync(lockPath, minuteAgo, minuteAgo);
    let ran = false;
    const begin = Date.now();
    await assert.rejects(
      lockIn(dir).run(() => (ran = true)),
      StoreBusyError,
    );
    const waited = Date.now() - begin;
    assert.ok(waited >= 9_500 && waited < 12_000, `gave up after ${waited} ms`);
    assert.equal(ran, false);
    assert.equal(holder.child.exitCode, null, 'the holder is still running');
    assert.equal(fs.statSync(lockPath).ino, held, 'the holder still holds its lock');
  });

  it('a lock directory without a record (an older LTM) is taken over once it is 10 s old, not before', async () => {
    fs.mkdirSync(lockPath);
    const almostStale = new Date(Date.now() - 8_500);
    fs.utimesSync(lockPath, almostStale, almostStale);
    const waited = await timeToEnter(lockIn(dir));
    assert.ok(waited >= 1_200 && waited < 3_000, `entered after ${Math.round(waited)} ms, expected about 1,500`);
    assert.deepEqual(lockLeftovers(), []);
  });

  it('a dead holder recorded on another host is judged by its age, not by its process ID', async () => {
    const lock = lockIn(dir);
    // A record as a holder writes it, then moved to another host.
    const own = await lock.run(() => JSON.parse(fs.readFileSync(lockPath, 'utf8')) as Record<string, unknown>);
    fs.writeFileSync(lockPath, JSON.stringify({ ...own, ...(await deadIdentity()), host: 'elsewhere.invalid' }));
    const almostStale = new Date(Date.now() - 8_500);
    fs.utimesSync(lockPath, almostStale, almostStale);
    const waited = await timeToEnter(lock);
    assert.ok(waited >= 1_200 && waited < 3_000, `entered after ${Math.round(waited)} ms, expected about 1,500`);
  });

  it('a takeover claimed by a taker that was then killed passes to the next taker at once; one claimed by a live taker is left to it', async () => {
    const holder = startChild('hold');
    await holder.line(/^held/);
    const record = JSON.parse(fs.readFileSync(lockPath, 'utf8')) as Record<string, unknown>;
    killPid(holder.pid);
    await holder.exited;
    // The claim a taker makes on that dead lock, first by a live process (this one).
    const claim = path.join(dir, `.lock.takeover-${String(record.token)}.0.ltm-tmp`);
    fs.writeFileSync(claim, JSON.stringify({ ...record, ...currentProcess(), token: 'c1a1c1a1c1a1c1a1' }));
    const lock = lockIn(dir);
    let entered = false;
    const done = lock.run(() => (entered = true));
    await sleep(1_500);
    assert.equal(entered, false, 'entered while a live taker held the claim');
    // Now its taker is killed mid-takeover.
    fs.writeFileSync(claim, JSON.stringify({ ...record, ...(await deadIdentity()), token: 'c1a1c1a1c1a1c1a1' }));
    const begin = performance.now();
    await done;
    const waited = performance.now() - begin;
    assert.ok(waited < 1000, `waited ${Math.round(waited)} ms after the taker died`);
    assert.deepEqual(lockLeftovers(), [], 'the claims are swept');
  });
}

async function waitFor(condition: () => boolean, what: string): Promise<void> {
  const giveUpAt = Date.now() + 5_000;
  while (!condition()) {
    if (Date.now() > giveUpAt) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

if (process.env[CHILD_ENV]) {
  runChild(process.argv.slice(2)).catch((error: unknown) => {
    process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  });
} else {
  describe('StoreLock across processes', defineTests);
}
