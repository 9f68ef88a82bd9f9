/**
 * The memory writes (src/core/memoryWrites.ts) on a store's parts, as
 * MemoryStore runs them under its lock: what each writes to memories/,
 * archives/, archive_index.json, index.json and stats.json, archive first.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { LtmError } from '../../src/core/errors';
import { prepareUpdate } from '../../src/core/memoryUpdate';
import { forgetMemory, mergeMemories, restoreMemory, storeMemory, updateMemory, writeSummary } from '../../src/core/memoryWrites';
import { prepareInput, prepareSummary } from '../../src/core/storeInput';
import type { StoreParts } from '../../src/core/storeParts';
import type { StoreInput } from '../../src/core/storeTypes';
import { filesUnder, makeParts, makeTempProject, memoryKeys, readJson, removeDir, snapshotDiff, snapshotFiles, splitFile, statsOnDisk, testId, writeArchive, writeMemory } from '../support/storeKit';

const A = testId(0xa);
const B = testId(0xb);

describe('memoryWrites: the commands that write memories', () => {
  let project: string;
  let parts: StoreParts;
  const memoryPath = (id: string) => path.join(parts.paths.memories, `${id}.md`);
  const archivePath = (id: string) => path.join(parts.paths.archives, `${id}.md`);
  const archiveIndex = () => readJson<{ memories: Record<string, Record<string, unknown>>; purged?: Record<string, unknown> }>(parts.paths.archiveIndex);
  const store = (input: StoreInput) => storeMemory(parts, input, prepareInput(input), []);
  /** Memories written by another process, seen as a command sees them: refreshed under the lock. */
  const seed = (...ids: string[]) => {
    for (const id of ids) writeMemory(parts.paths.root, id, { topic: `Topic ${id}`, content: `Content of ${id}.`, tags: ['db'] });
    parts.mirror.refresh();
  };

  beforeEach(() => {
    project = makeTempProject('ltm-writes-');
    parts = makeParts(project);
  });
  afterEach(() => {
    parts.mirror.dispose();
    removeDir(project);
  });

  describe('storeMemory', () => {
    it('writes the memory file, its index.json entry and a stats entry with no accesses', () => {
      const { memory, redactions } = store({ topic: 'Fix postgres pool exhaustion', content: 'Pool of 10 was too small.\n\nRaised it to 50.', tags: ['Postgres', 'db'], difficulty: 0.7 });
      assert.match(memory.id, /^mem_[0-9a-f]{8}$/);
      assert.deepEqual(redactions, []);
      assert.equal(memory.summary, 'Pool of 10 was too small.');
      assert.deepEqual(memory.tags, ['postgres', 'db']);
      assert.match(fs.readFileSync(memoryPath(memory.id), 'utf8'), new RegExp(`^---\\nid: "?${memory.id}"?\\n`));
      assert.deepEqual(memoryKeys(parts.paths.index), [memory.id]);
      assert.equal(statsOnDisk(parts.paths.root)[memory.id]!.access_count, 0);
    });

    it('Claude\'s memory awaits review when the project asks for it (state.json as it is now); a person\'s never does', () => {
      parts.mirror.state.config = { ...parts.mirror.state.config, review_new_memories: true };
      const claude = store({ topic: 'By Claude', content: 'x', author: 'claude' });
      const person = store({ topic: 'By a person', content: 'y' });
      assert.match(fs.readFileSync(memoryPath(claude.memory.id), 'utf8'), /^status: "?proposed"?$/m);
      assert.doesNotMatch(fs.readFileSync(memoryPath(person.memory.id), 'utf8'), /^status:/m);
    });

    it('suggests tags from the text when asked and none are given', () => {
      const { memory } = store({ topic: 'Postgres connection pool', content: 'The postgres pool ran dry under load.', autoTag: true });
      assert.ok(memory.tags.includes('postgres'), JSON.stringify(memory.tags));
    });
  });

  describe('writeSummary', () => {
    it('rewrites only the Summary section and keeps every other byte', () => {
      seed(A);
      const before = fs.readFileSync(memoryPath(A), 'utf8');
      const view = writeSummary(parts, A, prepareSummary('  A new summary.  '));
      assert.equal(view.summary, 'A new summary.');
      const after = fs.readFileSync(memoryPath(A), 'utf8');
      assert.equal(splitFile(after).frontmatter, splitFile(before).frontmatter);
      assert.equal(after, before.replace(`Summary of ${A}.`, 'A new summary.'));
    });

    it('refuses an unknown memory, writing nothing', () => {
      const snapshot = snapshotFiles(parts.paths.root);
      assert.throws(() => writeSummary(parts, B, 'x'), (e: LtmError) => e.code === 'not_found');
      assert.deepEqual(snapshotDiff(snapshot, snapshotFiles(parts.paths.root)), []);
    });
  });

  describe('updateMemory', () => {
    it('archives the previous text first (a version of the memory), then changes only the given fields', () => {
      seed(A);
      const before = fs.readFileSync(memoryPath(A), 'utf8');
      const result = updateMemory(parts, A, prepareUpdate({ content: 'Pool of 50.' }));
      assert.deepEqual(result.changed, ['content']);
      const version = result.versions[0]!;
      assert.equal(fs.readFileSync(archivePath(version), 'utf8'), before.replace(`id: "${A}"`, `id: "${version}"`));
      assert.equal(archiveIndex().memories[version]!.version_of, A);
      assert.equal(result.memory.content, 'Pool of 50.');
      assert.equal(result.memory.topic, `Topic ${A}`);
    });

    it('writes nothing for an update that changes nothing', () => {
      seed(A);
      const snapshot = snapshotFiles(parts.paths.root);
      const result = updateMemory(parts, A, prepareUpdate({ topic: `Topic ${A}`, tags: ['DB'] }));
      assert.deepEqual([result.changed, result.versions], [[], []]);
      assert.deepEqual(snapshotDiff(snapshot, snapshotFiles(parts.paths.root)), []);
    });

    it('a reduced memory given new content is full again; its archive (the text from before eviction) becomes a version', () => {
      writeArchive(parts.paths.root, A, { content: 'The full original text.' });
      writeMemory(parts.paths.root, A, { phase: 1, content: 'A hint.' });
      parts.mirror.refresh();
      const result = updateMemory(parts, A, prepareUpdate({ content: 'The new whole story.' }));
      assert.equal(result.memory.phase, 0);
      assert.equal(result.versions.length, 2);
      assert.match(fs.readFileSync(archivePath(result.versions[0]!), 'utf8'), /The full original text\./);
      assert.ok(!fs.existsSync(archivePath(A)), 'its own archive, kept as a version, is gone');
    });
  });

  describe('mergeMemories', () => {
    it('archives both originals, gives the target both texts and tags, and the source leaves memories/, index.json and stats.json', () => {
      writeMemory(parts.paths.root, A, { topic: 'Pool exhaustion', content: 'Pool of 10 ran dry.', tags: ['db'] });
      writeMemory(parts.paths.root, B, { topic: 'Batch jobs starve the pool', summary: 'Release connections between chunks.', content: 'Release connections between chunks.', tags: ['batch'] });
      parts.mirror.refresh();
      store({ topic: 'Other', content: 'Written so that index.json and stats.json list everything.' });
      const sourceBefore = fs.readFileSync(memoryPath(B), 'utf8');
      const result = mergeMemories(parts, B, A);
      assert.equal(result.target.content, `Pool of 10 ran dry.\n\n### Merged from "Batch jobs starve the pool" (${B})\n\nRelease connections between chunks.`);
      assert.deepEqual(result.target.tags, ['db', 'batch']);
      assert.equal(fs.readFileSync(archivePath(B), 'utf8'), sourceBefore);
      assert.equal(archiveIndex().memories[B]!.merged_into, A);
      assert.equal(archiveIndex().memories[result.versions[0]!]!.version_of, A);
      assert.ok(!fs.existsSync(memoryPath(B)));
      assert.ok(!memoryKeys(parts.paths.index).includes(B));
      assert.ok(!(B in statsOnDisk(parts.paths.root)));
    });

    it('refuses an archived source, writing nothing', () => {
      seed(A);
      parts.mirror.archiveIndex.memories.set(B, { topic: 'Gone', tags: [], archived_at: '', original_phase: 0, reason: 'forgotten' });
      const snapshot = snapshotFiles(parts.paths.root);
      assert.throws(() => mergeMemories(parts, B, A), /archived; restore it first/);
      assert.deepEqual(snapshotDiff(snapshot, snapshotFiles(parts.paths.root)), []);
    });
  });

  describe('forgetMemory and restoreMemory', () => {
    it('forget keeps the exact text in archives/ (reason forgotten); restore brings it back at phase 0, full', () => {
      seed(A);
      const before = fs.readFileSync(memoryPath(A), 'utf8');
      const saved: string[] = [];
      assert.deepEqual(forgetMemory(parts, A, {}, (id) => saved.push(id)), { id: A, topic: `Topic ${A}`, archived: true, purged: false });
      assert.deepEqual(saved, [], 'the record cache is saved without the memory only for a purge');
      assert.ok(!fs.existsSync(memoryPath(A)));
      assert.equal(fs.readFileSync(archivePath(A), 'utf8'), before);
      assert.equal(archiveIndex().memories[A]!.reason, 'forgotten');
      assert.throws(() => forgetMemory(parts, A, {}, () => {}), /already archived/);

      const restored = restoreMemory(parts, A, { importance: 'critical' });
      assert.equal(restored.phase, 0);
      assert.equal(restored.content, `Content of ${A}.`);
      assert.ok(restored.tags.includes('importance:critical'));
      assert.deepEqual(restored.phase_history.map((h) => h.event), ['forgotten', 'restored']);
      assert.match(fs.readFileSync(memoryPath(A), 'utf8'), /^restored_from_archive: true$/m);
      assert.ok(!(A in archiveIndex().memories));
      assert.throws(() => restoreMemory(parts, A, {}), /not reduced: it is at phase 0/);
    });

    it('purge saves the caches without the memory first, then leaves no copy of its text, only a purged entry', () => {
      writeMemory(parts.paths.root, A, { topic: 'Purge me', content: 'A secret-ish text to purge.' });
      parts.mirror.refresh();
      const saved: { id: string; fileThere: boolean }[] = [];
      forgetMemory(parts, A, { purge: true }, (id) => saved.push({ id, fileThere: fs.existsSync(memoryPath(A)) }));
      assert.deepEqual(saved, [{ id: A, fileThere: true }]);
      for (const name of filesUnder(parts.paths.root)) {
        assert.ok(!fs.readFileSync(path.join(parts.paths.root, name), 'utf8').includes('A secret-ish text'), name);
      }
      assert.ok(A in (archiveIndex().purged ?? {}));
      assert.throws(() => forgetMemory(parts, A, { purge: true }, () => {}), (e: LtmError) => e.code === 'not_found');
      assert.throws(() => restoreMemory(parts, A, {}), /no archive for/);
    });
  });
});
