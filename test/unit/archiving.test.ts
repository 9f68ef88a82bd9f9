import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { archiveEntryFor, archiveForRemoval, archiveVersions, ensureArchived, fullTextOf } from '../../src/core/archiving';
import type { StoreParts } from '../../src/core/storeParts';
import { makeParts, makeTempProject, memoryText, removeDir, splitFile, testId, writeArchive, writeMemory } from '../support/storeKit';

const A = testId(0xa);

describe('archiving: archive first', () => {
  let project: string;
  let parts: StoreParts;
  const archiveOf = (id: string) => fs.readFileSync(path.join(parts.paths.archives, `${id}.md`), 'utf8');

  beforeEach(() => {
    project = makeTempProject('ltm-archiving-');
    parts = makeParts(project);
  });
  afterEach(() => {
    parts.mirror.dispose();
    removeDir(project);
  });

  /** Writes memory A by hand and reads it, as a command finds it under the lock. */
  const load = (fields: Parameters<typeof writeMemory>[2] = {}) => {
    writeMemory(parts.paths.root, A, fields);
    parts.mirror.refresh();
    return parts.mirror.files.get(A)!;
  };

  describe('archiveForRemoval', () => {
    it('archives the text and writes the archive_index.json entry with its reason, before the file goes', () => {
      const file = load({ content: 'Leaving the active set.' });
      archiveForRemoval(parts, A, file, 'forgotten');
      assert.equal(archiveOf(A), file.raw);
      const index = JSON.parse(fs.readFileSync(parts.paths.archiveIndex, 'utf8')) as { memories: Record<string, { reason: string }> };
      assert.equal(index.memories[A]!.reason, 'forgotten');
      assert.ok(fs.existsSync(path.join(parts.paths.memories, `${A}.md`)), 'the memory file is the caller\'s to delete');
    });
  });

  describe('ensureArchived', () => {
    it('writes a full memory\'s exact text to archives/, over an older archive', () => {
      writeArchive(parts.paths.root, A, { content: 'An older text.' });
      const file = load({ content: 'The text as it is now.' });
      ensureArchived(parts, A, file);
      assert.equal(archiveOf(A), file.raw);
    });

    it('keeps the archive of a reduced memory (its full text from before eviction), unless told to overwrite', () => {
      const full = writeArchive(parts.paths.root, A, { content: 'The full original text.' });
      const file = load({ phase: 1, content: 'A hint.' });
      ensureArchived(parts, A, file);
      assert.equal(archiveOf(A), full);
      ensureArchived(parts, A, file, true);
      assert.equal(archiveOf(A), file.raw);
    });

    it('archives a reduced memory that has no archive yet', () => {
      const file = load({ phase: 2, content: 'An abstract.' });
      ensureArchived(parts, A, file);
      assert.equal(archiveOf(A), file.raw);
    });
  });

  describe('archiveVersions', () => {
    it('archives the current text under a new ID, version_of the memory, listed in the archive index (written by the caller)', () => {
      const file = load({ topic: 'Pool size', tags: ['db'], content: 'Pool of 10.' });
      const { versions, ownArchiveKept } = archiveVersions(parts, A, file, 'updated', false);
      assert.equal(versions.length, 1);
      assert.equal(ownArchiveKept, false);
      const version = versions[0]!;
      assert.notEqual(version, A);
      const text = archiveOf(version);
      assert.match(splitFile(text).frontmatter, new RegExp(`^id: "?${version}"?$`, 'm'));
      assert.equal(splitFile(text).body, splitFile(file.raw).body, 'the body is kept byte for byte');
      const entry = parts.mirror.archiveIndex.memories.get(version)!;
      assert.deepEqual({ ...entry, archived_at: '' }, { topic: 'Pool size', tags: ['db'], archived_at: '', original_phase: 0, reason: 'updated', version_of: A });
      assert.ok(!fs.existsSync(parts.paths.archiveIndex), 'archive_index.json is the caller\'s to write');
    });

    it('with withOwnArchive also archives the full text from before eviction, oldest first, and says it was kept', () => {
      writeArchive(parts.paths.root, A, { content: 'The full original text.' });
      const file = load({ phase: 1, content: 'A hint.' });
      const { versions, ownArchiveKept } = archiveVersions(parts, A, file, 'merged', true);
      assert.equal(ownArchiveKept, true);
      assert.equal(versions.length, 2);
      assert.match(archiveOf(versions[0]!), /The full original text\./);
      assert.match(archiveOf(versions[1]!), /A hint\./);
      assert.equal(parts.mirror.archiveIndex.memories.get(versions[0]!)!.reason, 'merged');
      assert.equal(parts.mirror.archiveIndex.memories.get(versions[0]!)!.original_phase, 0);
      assert.equal(parts.mirror.archiveIndex.memories.get(versions[1]!)!.original_phase, 1);
    });

    it('leaves an unreadable own archive where it is (for check and fix) and says it was not kept', () => {
      fs.writeFileSync(path.join(parts.paths.archives, `${A}.md`), 'not a memory file\n');
      const file = load({ phase: 1, content: 'A hint.' });
      const { versions, ownArchiveKept } = archiveVersions(parts, A, file, 'updated', true);
      assert.equal(ownArchiveKept, false);
      assert.equal(versions.length, 1);
      assert.equal(archiveOf(A), 'not a memory file\n');
    });

    it('never gives a version an ID in use', () => {
      const file = load();
      const seen = new Set([A]);
      for (let i = 0; i < 20; i++) {
        for (const v of archiveVersions(parts, A, file, 'updated', false).versions) {
          assert.ok(!seen.has(v), `${v} reused`);
          seen.add(v);
        }
      }
    });
  });

  describe('fullTextOf', () => {
    it('a full memory: its own text', () => {
      const file = load({ topic: 'T', summary: 'S.', content: 'C.', tags: ['x'] });
      assert.deepEqual(fullTextOf(parts, A, file), { topic: 'T', summary: 'S.', content: 'C.', tags: ['x'] });
    });

    it('a reduced memory: its archive\'s content, with the topic, summary and tags it has now', () => {
      writeArchive(parts.paths.root, A, { topic: 'Old topic', content: 'The full original text.', tags: ['old'] });
      const file = load({ topic: 'T', summary: 'S.', phase: 2, content: 'An abstract.', tags: ['x'] });
      assert.deepEqual(fullTextOf(parts, A, file), { topic: 'T', summary: 'S.', content: 'The full original text.', tags: ['x'] });
    });
  });

  it('archiveEntryFor: topic, tags, phase and reason, stamped now', () => {
    const before = new Date().toISOString();
    const meta = parts.mirror.parseMemory(memoryText(A, { topic: 'T', tags: ['a', 'b'], phase: 2 }));
    const entry = archiveEntryFor(meta, 'eviction');
    assert.deepEqual({ ...entry, archived_at: '' }, { topic: 'T', tags: ['a', 'b'], archived_at: '', original_phase: 2, reason: 'eviction' });
    assert.ok(entry.archived_at >= before && entry.archived_at <= new Date().toISOString());
  });
});
