/**
 * Judging a recorded holder (of the store lock, of server.json) with real
 * processes: alive, exited, a reused ID, a zombie, and holders this machine
 * cannot see (another host, another PID namespace).
 */
import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';
import {
  asProcessIdentity,
  currentProcess,
  holderState,
  isProcessAlive,
  pidExists,
  processStartTime,
  type ProcessIdentity,
} from '../../src/core/processIdentity';
import type { WatchReport } from '../support/holderWatcher';

const onLinux = process.platform === 'linux';

/** A child that idles until killed, and its identity as it would record it. */
async function idleChild(): Promise<{ identity: ProcessIdentity; kill: () => Promise<void> }> {
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  await new Promise((resolve) => child.once('spawn', resolve));
  const pid = child.pid!;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  return {
    identity: { ...currentProcess(), pid, started: processStartTime(pid) },
    kill: async () => {
      child.kill('SIGKILL');
      await exited;
    },
  };
}

describe('process identity', () => {
  it('knows this process: its ID, its start time (Linux), its machine and PID namespace', () => {
    const self = currentProcess();
    assert.equal(self.pid, process.pid);
    if (onLinux) {
      assert.match(self.started ?? '', /^\d+$/);
      assert.match(self.pidNamespace ?? '', /^pid:\[\d+\]$/);
    }
    assert.equal(isProcessAlive(self), true);
    assert.equal(holderState(self), onLinux ? 'alive' : 'unknown');
  });

  it('a running child is alive; once killed it is dead, and so is a record naming it', async () => {
    const { identity, kill } = await idleChild();
    assert.equal(isProcessAlive(identity), true);
    await kill();
    assert.equal(pidExists(identity.pid), false);
    assert.equal(isProcessAlive(identity), false);
    assert.equal(holderState(identity), 'dead');
  });

  it('a holder judged dead stays dead while its parent collects it (judged from another thread, 150 times)', async function () {
    if (!onLinux) this.skip(); // the race is between /proc and the ID
    // Regression: the ID was tried before /proc was read, so a process collected between the
    // two looks read as alive after reading as dead, and a lock test saw "two live writers".
    // A worker does not inherit this process's TypeScript loader: it registers tsx's own.
    const watcherFile = path.join(__dirname, '..', 'support', 'holderWatcher.ts');
    const watcher = new Worker(`require('tsx/cjs/api').register(); require(${JSON.stringify(watcherFile)});`, { eval: true });
    try {
      const reports: WatchReport[] = [];
      for (let i = 0; i < 150; i++) {
        const victim = spawn('sleep', ['30'], { stdio: 'ignore' });
        await new Promise((resolve) => victim.once('spawn', resolve));
        const exited = new Promise((resolve) => victim.once('exit', resolve));
        const stop = new Int32Array(new SharedArrayBuffer(4));
        const messages = [new Promise<'watching'>((resolve) => watcher.once('message', resolve))];
        watcher.postMessage({ holder: { ...currentProcess(), pid: victim.pid!, started: processStartTime(victim.pid!) }, stop });
        await messages[0];
        const report = new Promise<WatchReport>((resolve) => watcher.once('message', resolve));
        victim.kill('SIGKILL');
        await exited; // emitted once this thread has collected it
        Atomics.store(stop, 0, 1);
        reports.push(await report);
      }
      const lookedLittle = reports.filter((r) => r.looks < 2 || !r.sawDead);
      assert.deepEqual(lookedLittle, [], 'every holder was judged dead at last, after several looks');
      const flips = reports.filter((r) => r.afterDead.length > 0).map((r) => r.afterDead.join(','));
      assert.deepEqual(flips, [], 'a holder judged dead was judged alive or unknown again');
    } finally {
      await watcher.terminate();
    }
  });

  it('a process that now has the recorded ID but started at another time is not the holder', function () {
    if (!onLinux) this.skip();
    // This process stands in for one that reused the ID: same pid, another start time.
    const reused = { ...currentProcess(), started: String(Number(currentProcess().started) + 1) };
    assert.equal(isProcessAlive(reused), false);
    assert.equal(holderState(reused), 'dead');
  });

  it('a zombie (killed, not yet collected by its parent) is dead', async function () {
    if (!onLinux) this.skip();
    // The shell starts a sleeper in the background and becomes `sleep` itself, which never collects
    // it; the sleeper is killed only after that, so it stays a zombie.
    const shell = spawn('sh', ['-c', 'sleep 30 & echo $!; exec sleep 30'], { stdio: ['ignore', 'pipe', 'ignore'] });
    const waitUntil = async (probe: () => boolean, what: string) => {
      const deadline = Date.now() + 5_000;
      while (!probe()) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
        await new Promise((r) => setTimeout(r, 10));
      }
    };
    const readProc = (file: string) => {
      try {
        return fs.readFileSync(file, 'utf8');
      } catch {
        return '';
      }
    };
    try {
      const pid = Number(await new Promise<string>((resolve) => shell.stdout.once('data', (d: Buffer) => resolve(d.toString().trim()))));
      const started = processStartTime(pid);
      await waitUntil(() => readProc(`/proc/${shell.pid}/comm`).trim() === 'sleep', 'the shell to become sleep');
      assert.equal(isProcessAlive({ ...currentProcess(), pid, started }), true, 'the sleeper runs');
      process.kill(pid, 'SIGKILL');
      await waitUntil(() => /\) Z /.test(readProc(`/proc/${pid}/stat`)), 'the sleeper to be a zombie');
      assert.equal(pidExists(pid), true, 'the zombie still has its ID');
      assert.equal(isProcessAlive({ ...currentProcess(), pid, started }), false);
      assert.equal(holderState({ ...currentProcess(), pid, started }), 'dead');
    } finally {
      shell.kill('SIGKILL');
    }
  });

  it('a process whose first thread ended is alive while another of its threads runs, dead once that one ends', async function () {
    if (!onLinux) this.skip();
    // A killed process's first thread is a zombie at once, while a thread-pool thread may still be
    // finishing a rename: its lock must not be taken over yet. python3's ctypes ends the first
    // thread alone (pthread_exit); the other reads stdin until it closes.
    const script = 'import ctypes, sys, threading\nthreading.Thread(target=sys.stdin.read).start()\nprint("ready", flush=True)\nctypes.CDLL(None).pthread_exit(None)\n';
    const child = spawn('python3', ['-c', script], { stdio: ['pipe', 'pipe', 'inherit'] });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    try {
      await new Promise<void>((resolve, reject) => {
        child.once('error', reject);
        child.stdout.once('data', () => resolve());
      });
      const pid = child.pid!;
      const identity = { ...currentProcess(), pid, started: processStartTime(pid) };
      const deadline = Date.now() + 5_000;
      while (!/\) Z /.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'))) {
        if (Date.now() > deadline) throw new Error('the first thread did not end');
        await new Promise((r) => setTimeout(r, 10));
      }
      assert.equal(fs.readdirSync(`/proc/${pid}/task`).length, 2, 'the first thread (a zombie) and the reader');
      assert.equal(holderState(identity), 'alive');
      assert.equal(isProcessAlive(identity), true);
      child.stdin.end();
      await exited;
      assert.equal(holderState(identity), 'dead');
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('a holder on another machine or in another PID namespace is never declared dead from here', async () => {
    const { identity, kill } = await idleChild();
    await kill();
    for (const elsewhere of [{ ...identity, host: `${identity.host}-other` }, { ...identity, pidNamespace: 'pid:[1]' }]) {
      assert.equal(isProcessAlive(elsewhere), true);
      assert.equal(holderState(elsewhere), 'unknown');
    }
  });

  it('without a start time a live ID is not certain: unknown, left to another judgement', async () => {
    const { identity, kill } = await idleChild();
    try {
      assert.equal(holderState({ ...identity, started: null }), 'unknown');
      assert.equal(isProcessAlive({ ...identity, started: null }), true);
    } finally {
      await kill();
    }
  });

  it('reads an identity out of parsed JSON only when it is one; a record without a namespace reads as null', () => {
    const self = currentProcess();
    assert.deepEqual(asProcessIdentity(JSON.parse(JSON.stringify(self))), self);
    assert.deepEqual(asProcessIdentity({ pid: 5, started: null, host: 'h' }), { pid: 5, started: null, host: 'h', pidNamespace: null });
    for (const bad of [null, [], 'x', {}, { pid: 0, started: null, host: 'h' }, { pid: 1.5, started: null, host: 'h' }, { pid: 1, started: 3, host: 'h' }, { pid: 1, started: null }, { pid: 1, started: null, host: 'h', pidNamespace: 7 }]) {
      assert.equal(asProcessIdentity(bad), null, JSON.stringify(bad));
    }
    assert.equal(asProcessIdentity(JSON.parse('{"__proto__":{"pid":1},"started":null,"host":"h"}')), null, 'a pid on a prototype is no pid');
  });
});
