/**
 * Recording the use of memories (src/core/usageRecording.ts) on a store's
 * parts: what stats.json (with its journal) holds after each recording, as
 * another process reads it.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { StoreParts } from '../../src/core/storeParts';
import { accessedInSession, readMemory, recordAccesses, recordUses, storeEndedSessionPriorities, storePriorities } from '../../src/core/usageRecording';
import { makeParts, makeTempProject, removeDir, statsOnDisk, testId, writeMemory } from '../support/storeKit';

const [A, B, GONE] = [testId(0xa), testId(0xb), testId(0x99)];

describe('usageRecording: the use of memories, in stats.json', () => {
  let project: string;
  let parts: StoreParts;
  const stats = () => statsOnDisk(parts.paths.root);
  /** stats.json as another process wrote it, every memory at priority 0.01, read again. */
  const staleStats = (sessions: Record<string, number>) => {
    const memories: Record<string, object> = {};
    for (const [id, session] of Object.entries(sessions)) memories[id] = { access_count: 1, accessed_at: '2026-01-01T00:00:00.000Z', last_session: session, priority: 0.01 };
    fs.rmSync(path.join(parts.paths.root, 'stats.log'), { force: true });
    fs.writeFileSync(parts.paths.stats, JSON.stringify({ version: 1, memories }));
    parts.mirror.refresh();
  };

  beforeEach(() => {
    project = makeTempProject('ltm-usage-rec-');
    parts = makeParts(project);
    writeMemory(parts.paths.root, A, { difficulty: 0.9 });
    writeMemory(parts.paths.root, B);
    parts.mirror.refresh();
    parts.mirror.state.session_count = 7;
  });
  afterEach(() => {
    parts.mirror.dispose();
    removeDir(project);
  });

  it('readMemory gives the memory and counts the read as an access and a use in the current session; refuses a memory not active', () => {
    const view = readMemory(parts, A);
    assert.equal(view.id, A);
    const s = stats();
    assert.deepEqual([s[A]!.read_count, s[A]!.access_count, s[A]!.last_session], [1, 1, 7]);
    assert.ok(!(B in s), 'only the memory read');
    assert.throws(() => readMemory(parts, GONE), /no memory with ID/);
    assert.ok(!(GONE in stats()));
  });

  it('recordAccesses counts an access per memory in its session (-1: the current one), skipping memories not active', async () => {
    await recordAccesses(parts, new Map([[-1, [A, GONE]], [5, [B]]]));
    const s = stats();
    assert.deepEqual([s[A]!.access_count, s[A]!.last_session], [1, 7]);
    assert.deepEqual([s[B]!.access_count, s[B]!.last_session], [1, 5]);
    assert.ok(!(GONE in s));
    assert.ok(s[A]!.priority > 0, 'the priority is stored with the access');
    await recordAccesses(parts, new Map([[-1, [A]]]));
    assert.equal(stats()[A]!.access_count, 2);
  });

  it('recordUses counts each kind of use; a recall is not an access, a read is', async () => {
    await recordUses(parts, new Map([[-1, { recalled: [A], read: [B], injected: [A, GONE] }]]));
    const s = stats();
    assert.deepEqual([s[A]!.recall_count, s[A]!.injected_sessions, s[A]!.last_injected_session, s[A]!.access_count], [1, 1, 7, 1]);
    assert.deepEqual([s[B]!.read_count, s[B]!.access_count, s[B]!.last_used_session], [1, 1, 7]);
    assert.ok(!(GONE in s));
  });

  it('storePriorities stores the priority of the active memories given, and only theirs', () => {
    staleStats({ [A]: 3, [B]: 3, [GONE]: 3 });
    storePriorities(parts, [A, GONE]);
    const s = stats();
    assert.notEqual(s[A]!.priority, 0.01);
    assert.equal(s[B]!.priority, 0.01);
    assert.equal(s[GONE]!.priority, 0.01);
  });

  it('storeEndedSessionPriorities stores again only the memories last accessed in the ended sessions', () => {
    staleStats({ [A]: 3, [B]: 4 });
    storeEndedSessionPriorities(parts, [3]);
    const s = stats();
    assert.notEqual(s[A]!.priority, 0.01);
    assert.equal(s[B]!.priority, 0.01);
  });

  it('accessedInSession: the active memories whose last access was in that session', async () => {
    await recordAccesses(parts, new Map([[3, [A]], [4, [B]]]));
    assert.deepEqual(accessedInSession(parts, 3), [A]);
    assert.deepEqual(accessedInSession(parts, 4), [B]);
    fs.rmSync(path.join(parts.paths.memories, `${B}.md`));
    parts.mirror.refresh();
    assert.deepEqual(accessedInSession(parts, 4), []);
  });
});
