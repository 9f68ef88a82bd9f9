import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import { LtmError } from '../../src/core/errors';
import { dropActiveMemory, registerMemory, requireActive, unregisterMemory, type StoreParts } from '../../src/core/storeParts';
import { makeParts, makeTempProject, memoryKeys, readJson, removeDir, testId, writeMemory } from '../support/storeKit';

const A = testId(0xa);
const B = testId(0xb);

describe('storeParts: a store\'s parts, wired', () => {
  let project: string;
  let parts: StoreParts;

  beforeEach(() => {
    project = makeTempProject('ltm-parts-');
    parts = makeParts(project);
  });
  afterEach(() => {
    parts.mirror.dispose();
    removeDir(project);
  });

  it('a memory file written by another process reaches the index writer and the queries on refresh', () => {
    writeMemory(parts.paths.root, A, { topic: 'Postgres pool size' });
    parts.mirror.refresh();
    assert.equal(parts.queries.activeCount(), 1);
    assert.deepEqual(parts.queries.search('postgres', 5, 'active', undefined).map((h) => h.id), [A]);
    registerMemory(parts, A);
    parts.index.write();
    assert.deepEqual(memoryKeys(parts.paths.index), [A]);
    // An edit of the file reaches index.json at the next write.
    writeMemory(parts.paths.root, A, { topic: 'Postgres pool size, raised' });
    parts.mirror.refresh({ full: true });
    parts.index.write();
    assert.equal(readJson<{ memories: Record<string, { topic: string }> }>(parts.paths.index).memories[A]!.topic, 'Postgres pool size, raised');
  });

  it('stats.json written by another process reaches the stats writer and the ranking', () => {
    writeMemory(parts.paths.root, A);
    writeMemory(parts.paths.root, B);
    parts.mirror.refresh();
    const before = parts.queries.list({}, 0, 2).memories.map((m) => m.id);
    const low = before[1]!;
    fs.writeFileSync(
      parts.paths.stats,
      `${JSON.stringify({ version: 1, memories: { [low]: { access_count: 40, accessed_at: new Date().toISOString(), last_session: 1, priority: 0 } } })}\n`,
    );
    parts.mirror.refresh();
    assert.equal(parts.queries.list({}, 0, 2).memories[0]!.id, low, 'the accessed memory ranks first');
    // The writer starts from the file as read: a change keeps the other process's counts.
    parts.stats.recordAccess([low], 1);
    parts.stats.compact();
    assert.equal(readJson<{ memories: Record<string, { access_count: number }> }>(parts.paths.stats).memories[low]!.access_count, 41);
  });

  it('registerMemory and unregisterMemory change what index.json lists at the next write', () => {
    writeMemory(parts.paths.root, A);
    writeMemory(parts.paths.root, B);
    parts.mirror.refresh();
    registerMemory(parts, A);
    registerMemory(parts, B);
    parts.index.write();
    assert.deepEqual(memoryKeys(parts.paths.index), [A, B]);
    fs.rmSync(`${parts.paths.memories}/${B}.md`);
    parts.mirror.refresh();
    unregisterMemory(parts, B);
    parts.index.write();
    assert.deepEqual(memoryKeys(parts.paths.index), [A]);
    assert.deepEqual([...parts.index.ids], [A]);
  });

  it('dropActiveMemory: index.json and the stats no longer list a memory whose file left memories/', () => {
    writeMemory(parts.paths.root, A);
    writeMemory(parts.paths.root, B);
    parts.mirror.refresh();
    registerMemory(parts, A);
    registerMemory(parts, B);
    parts.stats.set(B, { access_count: 2, accessed_at: '2026-01-01T00:00:00.000Z', last_session: 1, priority: 0 });
    parts.index.write();
    parts.stats.write();
    parts.mirror.deleteMemoryFile(B);
    dropActiveMemory(parts, B);
    assert.deepEqual(memoryKeys(parts.paths.index), [A]);
    assert.equal(parts.mirror.stats.has(B), false);
    // Written to disk: a fresh look at the files agrees.
    const fresh = makeParts(project);
    fresh.mirror.refresh();
    assert.equal(fresh.mirror.stats.has(B), false);
    fresh.mirror.dispose();
  });

  it('requireActive: passes an active memory; names an archived one and how to restore it; else no such memory', () => {
    writeMemory(parts.paths.root, A);
    parts.mirror.refresh();
    parts.mirror.archiveIndex.memories.set(B, { topic: 'Gone', tags: [], archived_at: '2026-01-01T00:00:00.000Z', original_phase: 0, reason: 'forgotten' });
    requireActive(parts.mirror, A);
    assert.throws(() => requireActive(parts.mirror, B), (e: LtmError) => e.code === 'not_found' && e.message === `${B} is archived; restore it first (ltm restore ${B})`);
    const C = testId(0xc);
    assert.throws(() => requireActive(parts.mirror, C), (e: LtmError) => e.code === 'not_found' && e.message === `no memory with ID ${C}`);
  });
});
