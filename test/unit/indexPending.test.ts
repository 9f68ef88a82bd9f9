/**
 * The mark a server leaves while index.json is behind (index-pending.json),
 * judged with real processes: this one, a live one and one that died.
 */
import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import {
  clearIndexPending,
  indexPendingElsewhere,
  markIndexPending,
  pendingIndexHolder,
  waitForPendingIndex,
} from '../../src/core/indexPending';
import { currentProcess, processStartTime, type ProcessIdentity } from '../../src/core/processIdentity';
import { GITIGNORE_LINES, storePaths, type StorePaths } from '../../src/core/storeFiles';
import { makeTempProject, removeDir } from '../support/storeKit';

/** A real process that idles until killed, and its identity as it would record it. */
async function otherProcess(): Promise<{ identity: ProcessIdentity; kill: () => Promise<void> }> {
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  await new Promise((resolve) => child.once('spawn', resolve));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  return {
    identity: { ...currentProcess(), pid: child.pid!, started: processStartTime(child.pid!) },
    kill: async () => {
      child.kill('SIGKILL');
      await exited;
    },
  };
}

function markAs(paths: StorePaths, holder: ProcessIdentity): void {
  fs.writeFileSync(paths.indexPending, JSON.stringify({ holder, since: new Date().toISOString() }));
}

describe('index-pending.json', () => {
  let project: string;
  let paths: StorePaths;
  beforeEach(() => {
    project = makeTempProject('ltm-pending-');
    paths = storePaths(project);
    fs.mkdirSync(paths.root, { recursive: true });
  });
  afterEach(() => removeDir(project));

  it('names this process; it is not "elsewhere", and clearing removes it', () => {
    assert.equal(pendingIndexHolder(paths), null);
    markIndexPending(paths);
    assert.equal(pendingIndexHolder(paths)?.pid, process.pid);
    assert.equal(indexPendingElsewhere(paths), false);
    clearIndexPending(paths);
    assert.equal(fs.existsSync(paths.indexPending), false);
  });

  it('a live process’s mark is pending elsewhere and survives another writer’s clear; once it died, it does not', async () => {
    const other = await otherProcess();
    try {
      markAs(paths, other.identity);
      assert.equal(indexPendingElsewhere(paths), true);
      clearIndexPending(paths);
      assert.equal(fs.existsSync(paths.indexPending), true, 'the live server may hold changes made after this write');
    } finally {
      await other.kill();
    }
    assert.equal(indexPendingElsewhere(paths), false);
    clearIndexPending(paths);
    assert.equal(fs.existsSync(paths.indexPending), false);
  });

  it('a mark cut short by a kill is no mark', () => {
    fs.writeFileSync(paths.indexPending, '{"holder":{"pid":');
    assert.equal(pendingIndexHolder(paths), null);
    assert.equal(indexPendingElsewhere(paths), false);
    clearIndexPending(paths);
    assert.equal(fs.existsSync(paths.indexPending), false);
  });

  it('waitForPendingIndex returns once the live holder removed its mark, and gives up after its time', async () => {
    const other = await otherProcess();
    try {
      markAs(paths, other.identity);
      const started = Date.now();
      assert.equal(await waitForPendingIndex(paths, 150), false);
      assert.ok(Date.now() - started >= 150);
      setTimeout(() => fs.rmSync(paths.indexPending), 100);
      assert.equal(await waitForPendingIndex(paths, 5_000), true);
    } finally {
      await other.kill();
    }
  });

  it('is a per-machine file git ignores', () => {
    assert.ok((GITIGNORE_LINES as readonly string[]).includes('index-pending.json'));
  });
});
