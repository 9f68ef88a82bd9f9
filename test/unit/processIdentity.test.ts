/**
 * Judging a recorded holder (of the store lock, of server.json) with real
 * processes: alive, exited, a reused ID, a zombie, and holders this machine
 * cannot see (another host, another PID namespace).
 */
import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import {
  asProcessIdentity,
  currentProcess,
  holderState,
  isProcessAlive,
  pidExists,
  processStartTime,
  type ProcessIdentity,
} from '../../src/core/processIdentity';

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
