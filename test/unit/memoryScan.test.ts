/**
 * memories/ scanned on another thread (memoryScan.ts) while a server starts:
 * the first refresh uses the scan only as far as it is still true, so what
 * changed on disk before or after it is seen all the same.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { statSignature } from '../../src/core/files';
import { scanMemoryDir } from '../../src/core/memoryScan';
import { MemoryStore } from '../../src/core/store';
import { makeMirror, makeTempProject, removeDir, testId, writeMemory, type MirrorHarness } from './storeTestKit';

const IDS = [1, 2, 3, 4, 5].map((n) => testId(n));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Node's fs module itself (an `import *` namespace is read-only), to count calls on the real file system. */
const nodeFs = createRequire(__filename)('node:fs') as { statSync: (...args: unknown[]) => unknown };

/** Counts the files under memories/ this thread stats while `run` runs. */
function statsOfMemories(memories: string, run: () => void): number {
  const original = nodeFs.statSync;
  let count = 0;
  nodeFs.statSync = (file: unknown, ...rest: unknown[]) => {
    if (String(file).startsWith(memories + path.sep)) count++;
    return original(file, ...rest);
  };
  try {
    run();
  } finally {
    nodeFs.statSync = original;
  }
  return count;
}

describe('memoryScan', function () {
  this.timeout(20_000);
  let project: string;
  let h: MirrorHarness;
  const memFile = (id: string) => path.join(h.paths.memories, `${id}.md`);

  beforeEach(() => {
    project = makeTempProject('ltm-scan-');
    h = makeMirror(project, { watch: true });
    for (const [i, id] of IDS.entries()) writeMemory(h.paths.root, id, { topic: `Topic ${i}`, content: `Content ${i}` });
  });
  afterEach(() => {
    h.mirror.dispose();
    removeDir(project);
  });

  it('scanMemoryDir gives the signature of memories/ and of each *.md in it, as statSignature does', async () => {
    fs.writeFileSync(path.join(h.paths.memories, 'notes.txt'), 'not a memory');
    const scan = await scanMemoryDir(h.paths.memories).done;
    assert.ok(scan);
    assert.deepEqual(scan.dir, statSignature(h.paths.memories));
    assert.deepEqual([...scan.files.keys()].sort(), IDS.map((id) => `${id}.md`).sort());
    for (const [name, sig] of scan.files) assert.deepEqual(sig, statSignature(path.join(h.paths.memories, name)));
  });

  it('scanMemoryDir of a missing folder finds nothing', async () => {
    const scan = await scanMemoryDir(path.join(project, 'nowhere')).done;
    assert.deepEqual(scan, { dir: null, files: new Map() });
  });

  it('the first refresh takes the signatures from the scan instead of stat-ing every file', async () => {
    h.mirror.scanAhead();
    await h.mirror.scanSettled();
    const stats = statsOfMemories(h.paths.memories, () => h.mirror.refresh());
    assert.equal(stats, 0);
    assert.deepEqual([...h.mirror.files.keys()].sort(), [...IDS].sort());
    assert.match(h.mirror.files.get(IDS[2]!)!.memory.topic, /Topic 2/);
  });

  it('a file edited in place after the scan is read as it is now (the watcher reported it)', async () => {
    h.mirror.scanAhead();
    await h.mirror.scanSettled();
    const file = memFile(IDS[1]!);
    const ino = fs.statSync(file).ino;
    fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('Topic 1', 'Rotated zeppelin keys'));
    assert.equal(fs.statSync(file).ino, ino);
    await sleep(100);
    h.mirror.refresh();
    assert.equal(h.mirror.files.get(IDS[1]!)!.memory.topic, 'Rotated zeppelin keys');
    assert.deepEqual(h.mirror.fileSignatures.get(`${IDS[1]}.md`), statSignature(file));
  });

  it('a file added or deleted after the scan voids it: memories/ is listed again', async () => {
    h.mirror.scanAhead();
    await h.mirror.scanSettled();
    fs.rmSync(memFile(IDS[0]!));
    const added = testId(0x99);
    writeMemory(h.paths.root, added, { topic: 'Added after the scan' });
    h.mirror.refresh();
    assert.equal(h.mirror.files.has(IDS[0]!), false, 'a deleted memory is still there');
    assert.equal(h.mirror.files.get(added)?.memory.topic, 'Added after the scan');
    assert.equal(h.mirror.files.size, IDS.length);
  });

  it('a store that does not watch does not scan ahead', async () => {
    const plain = makeMirror(project, { init: false });
    try {
      plain.mirror.scanAhead();
      await plain.mirror.scanSettled();
      assert.ok(statsOfMemories(plain.paths.memories, () => plain.mirror.refresh()) >= IDS.length);
    } finally {
      plain.mirror.dispose();
    }
  });
});

describe('a watching store prepared as a server prepares it (scan ahead)', function () {
  this.timeout(20_000);
  let project: string;
  beforeEach(() => (project = makeTempProject('ltm-scan-store-')));
  afterEach(() => removeDir(project));

  it('its first search sees a file edited in place and one deleted while no process ran, with both caches saved before', async () => {
    const writer = MemoryStore.open(project);
    writer.init();
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) ids.push((await writer.store({ topic: `Build step ${i}`, content: `Run the build step number ${i}.`, tags: ['build'] })).memory.id);
    writer.search('build step');
    writer.flushCaches();
    writer.dispose();
    const memories = path.join(project, '.claude', 'ltm', 'memories');
    const edited = path.join(memories, `${ids[3]}.md`);
    fs.writeFileSync(edited, fs.readFileSync(edited, 'utf8').replace('Run the build step number 3.', 'Rotate the zeppelin credentials.'));
    fs.rmSync(path.join(memories, `${ids[5]}.md`));

    const store = MemoryStore.prepare(project, { watch: true });
    try {
      await store.openInSteps();
      assert.deepEqual(store.search('zeppelin credentials').map((r) => r.id), [ids[3]]);
      const all = store.search('build step', { limit: 50 }).map((r) => r.id);
      assert.ok(!all.includes(ids[5]!), 'a deleted memory was returned');
      assert.equal(store.memoryCount(), 19);
    } finally {
      store.dispose();
    }
  });
});
