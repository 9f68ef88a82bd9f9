/**
 * The store's counts, configuration and place (src/core/storeStatus.ts) on a
 * store's parts built on a real directory: memory files, stats and archives
 * written as another process would, then counted.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { anchorsToFrontmatter } from '../../src/core/anchors';
import { toJsonText } from '../../src/core/files';
import { updateFrontmatter } from '../../src/core/memoryFile';
import type { StoreParts } from '../../src/core/storeParts';
import { storeConfigOf, storeStatus } from '../../src/core/storeStatus';
import { DEMOTION_MIN_INJECTED_SESSIONS } from '../../src/core/usage';
import { makeParts, makeTempProject, memoryText, removeDir, testId, writeArchive, writeMemory } from '../support/storeKit';

const [FULL, HINT, ABSTRACT, PROPOSED, ANCHORED, ARCHIVED] = [1, 2, 3, 4, 5, 6].map(testId) as [string, string, string, string, string, string];

describe('storeStatus: the store\'s counts, configuration and place', () => {
  let project: string;
  let parts: StoreParts;

  beforeEach(() => {
    project = makeTempProject('ltm-status-');
    parts = makeParts(project);
  });
  afterEach(() => {
    parts.mirror.dispose();
    removeDir(project);
  });

  it('an empty store: zero everywhere, the default configuration, where it is', () => {
    const status = storeStatus(parts);
    assert.deepEqual(
      { ...status, config: undefined, storage_size_bytes: undefined },
      {
        total_memories: 0,
        awaiting_review: 0,
        by_phase: { full: 0, hint: 0, abstract: 0 },
        total_archived: 0,
        session_count: parts.mirror.state.session_count,
        last_eviction: null,
        storage_size_bytes: undefined,
        config: undefined,
        store_path: parts.paths.root,
        exists: true,
        invalid_files: 0,
        stale_memories: 0,
        demotion_candidates: 0,
      },
    );
    assert.deepEqual(status.config, storeConfigOf(parts));
  });

  it('counts memories by phase, those awaiting review, archived, invalid, stale and demotion candidates', () => {
    fs.mkdirSync(path.join(project, 'src'), { recursive: true });
    fs.writeFileSync(path.join(project, 'src', 'a.ts'), 'one\ntwo\nthree\n');
    writeMemory(parts.paths.root, FULL);
    writeMemory(parts.paths.root, HINT, { phase: 1 });
    writeMemory(parts.paths.root, ABSTRACT, { phase: 2 });
    writeMemory(parts.paths.root, PROPOSED, { status: 'proposed' });
    const anchors = anchorsToFrontmatter(parts.anchoring.anchorsFor(['src/a.ts#L2']));
    fs.writeFileSync(path.join(parts.paths.memories, `${ANCHORED}.md`), updateFrontmatter(memoryText(ANCHORED), { anchors }));
    fs.writeFileSync(path.join(project, 'src', 'a.ts'), 'one\nTWO\nthree\n');
    writeArchive(parts.paths.root, ARCHIVED);
    fs.writeFileSync(
      parts.paths.archiveIndex,
      toJsonText({ version: 1, memories: { [ARCHIVED]: { topic: 'Gone', tags: [], archived_at: '2026-01-01T00:00:00.000Z', original_phase: 0, reason: 'forgotten' } } }),
    );
    fs.writeFileSync(path.join(parts.paths.memories, 'notes.md'), 'not a memory\n');
    parts.mirror.refresh();
    for (let session = 1; session <= DEMOTION_MIN_INJECTED_SESSIONS; session++) parts.stats.recordUsage([FULL, HINT], session, 'injected');
    parts.stats.recordUsage([HINT], DEMOTION_MIN_INJECTED_SESSIONS, 'recalled');

    const status = storeStatus(parts);
    assert.equal(status.total_memories, 5);
    assert.deepEqual(status.by_phase, { full: 3, hint: 1, abstract: 1 });
    assert.equal(status.awaiting_review, 1);
    assert.equal(status.total_archived, 1);
    assert.equal(status.invalid_files, 1);
    assert.equal(status.stale_memories, 1, 'the anchored line changed');
    assert.equal(status.demotion_candidates, 1, 'injected often and never used; the recalled one is not');
    assert.ok(status.storage_size_bytes > fs.statSync(path.join(parts.paths.memories, `${FULL}.md`)).size * 5, 'the memory and archive files, summed');
  });

  it('storeConfigOf gives the known fields of state.json\'s config and leaves out any other', () => {
    parts.mirror.state.config = { ...parts.mirror.state.config, max_memories: 7, stale_memories: 'skip', ...({ unknown_field: 1 } as object) };
    const config = storeConfigOf(parts);
    assert.equal(config.max_memories, 7);
    assert.equal(config.stale_memories, 'skip');
    assert.deepEqual(Object.keys(config).sort(), ['eviction_batch_size', 'max_memories', 'memories_to_load', 'review_new_memories', 'stale_memories']);
  });

  it('a store whose directory was removed says so', () => {
    parts.mirror.dispose();
    fs.rmSync(parts.paths.root, { recursive: true });
    assert.equal(storeStatus(parts).exists, false);
  });
});
