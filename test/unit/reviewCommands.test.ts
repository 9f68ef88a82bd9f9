/**
 * Review before use on a store's parts (src/core/reviewCommands.ts): the inbox,
 * and approve and reject as MemoryStore runs them under its lock.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { LtmError } from '../../src/core/errors';
import { approveMemory, awaitingReview, rejectMemory } from '../../src/core/reviewCommands';
import type { StoreParts } from '../../src/core/storeParts';
import { makeParts, makeTempProject, readJson, removeDir, snapshotDiff, snapshotFiles, statsOnDisk, testId, writeMemory } from '../support/storeKit';

const [A, B, C] = [testId(0xa), testId(0xb), testId(0xc)];

describe('reviewCommands: review before use', () => {
  let project: string;
  let parts: StoreParts;
  const memoryPath = (id: string) => path.join(parts.paths.memories, `${id}.md`);

  beforeEach(() => {
    project = makeTempProject('ltm-review-');
    parts = makeParts(project);
    // Two memories awaiting review (the newer first on disk) and an approved one, written by another process.
    writeMemory(parts.paths.root, A, { status: 'proposed', topic: 'Newer', created_at: '2026-02-01T00:00:00.000Z' });
    writeMemory(parts.paths.root, B, { status: 'proposed', topic: 'Older', created_at: '2026-01-01T00:00:00.000Z' });
    writeMemory(parts.paths.root, C, { topic: 'Approved' });
    parts.mirror.refresh();
  });
  afterEach(() => {
    parts.mirror.dispose();
    removeDir(project);
  });

  it('awaitingReview: the proposed memories only, oldest first', () => {
    assert.deepEqual(awaitingReview(parts).map((m) => m.id), [B, A]);
  });

  it('approve removes the status line and nothing else; the memory ranks, its recency counted from the approval', () => {
    assert.ok(!parts.queries.list({}, 0, 10).memories.some((m) => m.id === A), 'not ranked while it waits');
    parts.mirror.state.session_count = 9;
    const before = fs.readFileSync(memoryPath(A), 'utf8');
    assert.deepEqual(approveMemory(parts, A), { id: A, topic: 'Newer', decision: 'approved' });
    assert.equal(fs.readFileSync(memoryPath(A), 'utf8'), before.replace('status: "proposed"\n', ''));
    assert.equal(statsOnDisk(parts.paths.root)[A]!.last_session, 9);
    assert.ok(parts.queries.list({}, 0, 10).memories.some((m) => m.id === A), 'ranked once approved');
    assert.deepEqual(awaitingReview(parts).map((m) => m.id), [B]);
  });

  it('approve and reject refuse an approved memory and an unknown one, changing nothing', () => {
    const snapshot = snapshotFiles(parts.paths.root);
    assert.throws(() => approveMemory(parts, C), (e: LtmError) => e.code === 'invalid_input' && /not awaiting review/.test(e.message));
    assert.throws(() => rejectMemory(parts, C), (e: LtmError) => e.code === 'invalid_input');
    assert.throws(() => approveMemory(parts, testId(77)), (e: LtmError) => e.code === 'not_found');
    assert.deepEqual(snapshotDiff(snapshot, snapshotFiles(parts.paths.root)), []);
  });

  it('reject archives the exact text first with reason "rejected", then the file leaves memories/', () => {
    const text = fs.readFileSync(memoryPath(A), 'utf8');
    assert.deepEqual(rejectMemory(parts, A), { id: A, topic: 'Newer', decision: 'rejected' });
    assert.ok(!fs.existsSync(memoryPath(A)));
    assert.equal(fs.readFileSync(path.join(parts.paths.archives, `${A}.md`), 'utf8'), text);
    const entry = readJson<{ memories: Record<string, { reason: string; topic: string }> }>(parts.paths.archiveIndex).memories[A]!;
    assert.deepEqual([entry.reason, entry.topic], ['rejected', 'Newer']);
    assert.ok(!(A in statsOnDisk(parts.paths.root)));
    assert.deepEqual(awaitingReview(parts).map((m) => m.id), [B]);
  });
});
