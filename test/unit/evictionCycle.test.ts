/**
 * One eviction cycle's changes to the files (src/core/evictionCycle.ts) on a
 * store's parts: archive first, the Summary kept, phase by phase until the
 * memory leaves memories/; and the end of sessions, a cycle per turn of the lock.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { evictOnce, maintainAfterSessions } from '../../src/core/evictionCycle';
import type { StoreParts } from '../../src/core/storeParts';
import { afterRenameOnto } from '../support/renameFaults';
import { makeParts, makeTempProject, memoryKeys, readJson, removeDir, snapshotDiff, snapshotFiles, splitFile, statsOnDisk, testId, writeMemory } from '../support/storeKit';

const [LOW, KEPT] = [testId(0x1), testId(0x2)];
const CONTENT = 'First paragraph, the hint.\n\nSecond paragraph, the detail.\n\nThird paragraph, more detail.';

describe('evictionCycle: one cycle', () => {
  let project: string;
  let parts: StoreParts;
  const memoryPath = (id: string) => path.join(parts.paths.memories, `${id}.md`);
  const archivePath = (id: string) => path.join(parts.paths.archives, `${id}.md`);

  beforeEach(() => {
    project = makeTempProject('ltm-evict-');
    parts = makeParts(project);
    writeMemory(parts.paths.root, LOW, { topic: 'Low', summary: 'The summary stays.', content: CONTENT, tags: ['importance:low'] });
    writeMemory(parts.paths.root, KEPT, { topic: 'Kept', tags: ['importance:critical'] });
    parts.mirror.refresh();
    parts.mirror.state.config = { ...parts.mirror.state.config, max_memories: 1, eviction_batch_size: 1 };
  });
  afterEach(() => {
    parts.mirror.dispose();
    removeDir(project);
  });

  it('leaves a memory a person saves after it was archived as they saved it, unreduced; the others are reduced', () => {
    const OTHER = testId(0x3);
    writeMemory(parts.paths.root, OTHER, { topic: 'Other', tags: ['importance:low'] });
    parts.mirror.refresh();
    parts.mirror.state.config = { ...parts.mirror.state.config, max_memories: 1, eviction_batch_size: 2 };
    const saved = fs.readFileSync(memoryPath(LOW), 'utf8').replace('more detail', 'more detail, saved during the cycle');
    // The person's save lands between the archive of LOW's full text and its reduction.
    const result = afterRenameOnto(archivePath(LOW), () => fs.writeFileSync(memoryPath(LOW), saved), () => evictOnce(parts));
    assert.deepEqual(result.steps.map((s) => s.id), [OTHER], 'only the memory nobody touched was reduced');
    assert.equal(fs.readFileSync(memoryPath(LOW), 'utf8'), saved, 'the save was written over');
    assert.match(fs.readFileSync(memoryPath(OTHER), 'utf8'), /^phase: 1$/m);
    assert.equal(parts.mirror.files.get(LOW)!.raw, saved, 'the mirror read the save');
  });

  it('keeps a memory a person saves as its last step begins: it stays in memories/ as saved, and is not listed as archived', () => {
    evictOnce(parts);
    evictOnce(parts);
    assert.match(fs.readFileSync(memoryPath(LOW), 'utf8'), /^phase: 2$/m);
    const saved = fs.readFileSync(memoryPath(LOW), 'utf8').replace('The summary stays.', 'The summary, saved during the cycle.');
    // It is listed as archived first: the save lands right after that.
    const result = afterRenameOnto(parts.paths.archiveIndex, () => fs.writeFileSync(memoryPath(LOW), saved), () => evictOnce(parts));
    assert.deepEqual(result.steps, []);
    assert.equal(fs.readFileSync(memoryPath(LOW), 'utf8'), saved);
    assert.equal(parts.mirror.isActive(LOW), true);
    assert.deepEqual(Object.keys(readJson<{ memories: object }>(parts.paths.archiveIndex).memories), [], 'listed as archived');
  });

  it('does nothing at or under max_memories', () => {
    parts.mirror.state.config = { ...parts.mirror.state.config, max_memories: 2 };
    const snapshot = snapshotFiles(parts.paths.root);
    assert.deepEqual(evictOnce(parts), { ran: false, before: 2, after: 2, max_memories: 2, steps: [] });
    assert.deepEqual(snapshotDiff(snapshot, snapshotFiles(parts.paths.root)), []);
  });

  it('archives the full text (a hand edit included) before reducing; the Summary is kept; phase 3 leaves memories/, archived', () => {
    // Edited by hand a moment ago: the cycle archives the file as it is now.
    const edited = fs.readFileSync(memoryPath(LOW), 'utf8').replace('more detail', 'more detail, edited');
    fs.writeFileSync(memoryPath(LOW), edited);
    const first = evictOnce(parts);
    assert.deepEqual(first.steps, [{ id: LOW, topic: 'Low', from: 0, to: 1 }]);
    assert.equal(first.ran, true);
    assert.equal(fs.readFileSync(archivePath(LOW), 'utf8'), edited);
    const hint = fs.readFileSync(memoryPath(LOW), 'utf8');
    assert.match(splitFile(hint).body, /## Summary\nThe summary stays\./);
    assert.doesNotMatch(hint, /Second paragraph/);
    assert.match(hint, /^phase: 1$/m);
    assert.ok(readJson<{ last_eviction: string | null }>(parts.paths.state).last_eviction, 'state.json says when');

    assert.deepEqual(evictOnce(parts).steps, [{ id: LOW, topic: 'Low', from: 1, to: 2 }]);
    assert.equal(fs.readFileSync(archivePath(LOW), 'utf8'), edited, 'the archive keeps the full text, not the hint');
    assert.match(fs.readFileSync(memoryPath(LOW), 'utf8'), /^phase: 2$/m);

    const last = evictOnce(parts);
    assert.deepEqual(last.steps, [{ id: LOW, topic: 'Low', from: 2, to: 3 }]);
    assert.deepEqual([last.before, last.after], [2, 1]);
    assert.ok(!fs.existsSync(memoryPath(LOW)));
    assert.equal(fs.readFileSync(archivePath(LOW), 'utf8'), edited);
    assert.equal(readJson<{ memories: Record<string, { reason: string; original_phase: number }> }>(parts.paths.archiveIndex).memories[LOW]!.reason, 'eviction');
    assert.deepEqual(memoryKeys(parts.paths.index), [KEPT]);
    assert.ok(!(LOW in statsOnDisk(parts.paths.root)));
    assert.equal(evictOnce(parts).ran, false, 'at the limit again');
  });

  it('maintainAfterSessions stores the ended sessions\' priorities, then runs one cycle per ended session, each in a turn of the lock of its own', async () => {
    const work: string[] = [];
    const mutate = async <T>(run: () => T | Promise<T>): Promise<T> => {
      parts.mirror.refresh();
      work.push(`turn ${parts.mirror.files.get(LOW)?.memory.phase ?? 'gone'}`);
      return run();
    };
    const results = await maintainAfterSessions(parts, mutate, [1, 2]);
    assert.deepEqual(work, ['turn 0', 'turn 0', 'turn 1'], 'the priorities first, then each cycle in a turn of its own');
    assert.deepEqual(results.map((r) => [r.ran, r.steps.map((s) => [s.id, s.to])]), [[true, [[LOW, 1]]], [true, [[LOW, 2]]]]);
    assert.equal(parts.mirror.files.get(LOW)!.memory.phase, 2);
    assert.deepEqual(await maintainAfterSessions(parts, mutate, []), [], 'no session ended: no cycle');
  });
});
