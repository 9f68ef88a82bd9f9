/**
 * Changing stored memories (src/core/memoryUpdate.ts and MemoryStore.update /
 * merge): partial updates checked and redacted like store, the previous text
 * archived first under an ID of its own, a failing write leaving the old file,
 * reduced memories becoming full, and merges that lose nothing.
 */
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { LtmError } from '../../src/core/errors';
import { parseMemoryFile } from '../../src/core/memoryFile';
import { applyUpdate, mergedContent, mergedTags, prepareUpdate } from '../../src/core/memoryUpdate';
import { readArchiveIndex } from '../../src/core/storeFiles';
import { memoryText, readJson, snapshotDiff, snapshotFiles, useProject, writeConfig } from '../support/storeKit';

const GITHUB_TOKEN = `ghp_${'a1B2c3D4e5F6g7H8i9J0'.repeat(2).slice(0, 36)}`;

describe('memoryUpdate', () => {
  describe('prepareUpdate', () => {
    it('keeps only the fields given, cleaned as store cleans them', () => {
      assert.deepEqual(prepareUpdate({ topic: '  New topic ' }), { topic: 'New topic', redactions: [] });
      assert.deepEqual(prepareUpdate({ tags: [' Database', 'database', 'PG'] }), { tags: ['database', 'pg'], redactions: [] });
      assert.deepEqual(prepareUpdate({ tags: [] }), { tags: [], redactions: [] });
      const secret = prepareUpdate({ content: `token ${GITHUB_TOKEN} here` });
      assert.ok(!secret.content!.includes(GITHUB_TOKEN));
      assert.equal(secret.redactions.length, 1);
    });

    it('refuses what store refuses, and an update of nothing', () => {
      const refusals: [unknown, RegExp][] = [
        [{}, /at least one field/],
        [{ topic: '   ' }, /topic/],
        [{ content: '' }, /content/],
        [{ summary: ' ' }, /summary must not be empty/],
        [{ summary: 'a\n## Content\nb' }, /## Content/],
        [{ topic: 'x'.repeat(10_001) }, /10,000/],
        [{ content: 'x'.repeat(1_000_001) }, /1,000,000/],
        [{ tags: ['a\nb'] }, /tag/],
        [{ tags: 'a,b' }, /tags must be a list/],
        [{ topic: 'bad \uD800 surrogate' }, /surrogate/],
      ];
      for (const [input, message] of refusals) {
        assert.throws(() => prepareUpdate(input as never), (e: unknown) => e instanceof LtmError && e.code === 'invalid_input' && message.test(e.message), JSON.stringify(input).slice(0, 60));
      }
    });
  });

  describe('applyUpdate', () => {
    const raw = memoryText('mem_00000001', { topic: 'Old topic', tags: ['a'], summary: 'Old summary.', content: 'Old content.\n\nSecond paragraph.' });
    const memory = parseMemoryFile(raw).memory;

    it('changes only the given fields and leaves the rest of the file byte for byte', () => {
      const summaryOnly = applyUpdate(raw, memory, { summary: 'New summary.', redactions: [] }, 'now');
      assert.deepEqual(summaryOnly.changed, ['summary']);
      assert.equal(summaryOnly.text, raw.replace('Old summary.', 'New summary.'));
      const topic = applyUpdate(raw, memory, { topic: 'New: "topic" # with YAML', redactions: [] }, 'now');
      const parsed = parseMemoryFile(topic.text).memory;
      assert.equal(parsed.topic, 'New: "topic" # with YAML');
      assert.equal(parsed.content, memory.content);
      assert.equal(topic.text.split('\n').filter((l, i) => l !== raw.split('\n')[i]).length, 1, 'one line changed');
    });

    it('writes nothing when the values are the ones the memory has', () => {
      const same = applyUpdate(raw, memory, { topic: 'Old topic', tags: ['a'], summary: 'Old summary.', redactions: [] }, 'now');
      assert.deepEqual(same, { text: raw, changed: [], phase: 0 });
    });

    it('makes a reduced memory given new content full again, and records it', () => {
      const reduced = memoryText('mem_00000002', { phase: 1, content: 'Hint only.' });
      const updated = applyUpdate(reduced, parseMemoryFile(reduced).memory, { content: 'Whole new text.', redactions: [] }, '2026-05-01T00:00:00.000Z');
      const after = parseMemoryFile(updated.text).memory;
      assert.equal(after.phase, 0);
      assert.equal(after.content, 'Whole new text.');
      assert.deepEqual(after.phase_history, [{ phase: 0, at: '2026-05-01T00:00:00.000Z', event: 'updated' }]);
      // New tags alone leave it reduced.
      assert.equal(applyUpdate(reduced, parseMemoryFile(reduced).memory, { tags: ['x'], redactions: [] }, 'now').phase, 1);
    });
  });

  describe('merge texts', () => {
    it('puts the other memory below the target, under a heading naming it', () => {
      const text = mergedContent(
        { id: 'mem_00000001', topic: 'T', summary: 'S', content: 'Target text.\n', tags: [] },
        { id: 'mem_00000002', topic: 'Other\ntopic', summary: 'Other summary.', content: 'Other text.', tags: [] },
      );
      assert.equal(text, 'Target text.\n\n### Merged from "Other topic" (mem_00000002)\n\nOther summary.\n\nOther text.');
    });

    it('unites tags, keeping the target importance', () => {
      assert.deepEqual(mergedTags(['db', 'importance:low'], ['db', 'pg', 'importance:critical']), ['db', 'importance:low', 'pg']);
      assert.deepEqual(mergedTags(['db'], ['importance:critical']), ['db', 'importance:critical']);
    });
  });

  describe('MemoryStore.update', () => {
    const ctx = useProject('ltm-update-');
    const memoryPath = (id: string) => path.join(ctx.root, 'memories', `${id}.md`);
    const archivePath = (id: string) => path.join(ctx.root, 'archives', `${id}.md`);
    const archiveIndex = () => readArchiveIndex(fs.readFileSync(path.join(ctx.root, 'archive_index.json'), 'utf8')).value.memories;

    it('archives the previous text first, then changes only the given fields', async () => {
      const store = ctx.open();
      const { memory } = await store.store({ topic: 'Pool size', content: 'Pool of 10.', summary: 'Ten.', tags: ['db'] });
      const before = fs.readFileSync(memoryPath(memory.id), 'utf8');
      const result = await store.update(memory.id, { content: 'Pool of 50, idle timeout 60 s.' });
      assert.deepEqual(result.changed, ['content']);
      assert.equal(result.versions.length, 1);
      const version = result.versions[0]!;
      assert.notEqual(version, memory.id);
      // The archive holds the old text (under its own ID), listed as a version of the memory.
      const archived = fs.readFileSync(archivePath(version), 'utf8');
      assert.equal(archived, before.replace(`id: "${memory.id}"`, `id: "${version}"`));
      assert.deepEqual({ ...archiveIndex().get(version)!, archived_at: '' }, { topic: 'Pool size', tags: ['db'], archived_at: '', original_phase: 0, reason: 'updated', version_of: memory.id });
      const now = store.peek(memory.id);
      assert.equal(now.content, 'Pool of 50, idle timeout 60 s.');
      assert.equal(now.summary, 'Ten.');
      assert.equal(now.topic, 'Pool size');
      assert.deepEqual(now.tags, ['db']);
      // A fresh process sees the same; the store is healthy; the old text is searchable and restorable.
      const other = ctx.open();
      assert.equal(other.peek(memory.id).content, 'Pool of 50, idle timeout 60 s.');
      assert.ok(other.check().healthy, JSON.stringify(other.check().problems));
      assert.deepEqual(other.search('Pool of 10', { scope: 'archives' }).map((h) => h.id), [version]);
      const restored = await other.restore(version);
      assert.equal(restored.content, 'Pool of 10.');
      assert.equal(other.peek(memory.id).content, 'Pool of 50, idle timeout 60 s.');
    });

    it('redacts secrets, refuses bad input and unknown IDs without changing a byte', async () => {
      const store = ctx.open();
      const { memory } = await store.store({ topic: 'Deploy', content: 'Deploy with make deploy.' });
      const snapshot = snapshotFiles(ctx.root);
      const refusals: [string, object, RegExp][] = [
        [memory.id, {}, /at least one field/],
        [memory.id, { topic: '' }, /topic/],
        [memory.id, { summary: 'x\n## Content\ny' }, /## Content/],
        ['mem_0000000g', { topic: 'x' }, /not a memory ID/],
        ['mem_ffffffff', { topic: 'x' }, /no memory with ID mem_ffffffff/],
      ];
      for (const [id, input, message] of refusals) {
        await assert.rejects(store.update(id, input), (e: unknown) => e instanceof LtmError && message.test(e.message), `${id} ${JSON.stringify(input)}`);
      }
      assert.deepEqual(snapshotDiff(snapshot, snapshotFiles(ctx.root)), []);
      await store.forget(memory.id);
      await assert.rejects(store.update(memory.id, { topic: 'x' }), /archived; restore it first/);
      await store.restore(memory.id);
      const secret = await store.update(memory.id, { content: `Deploy with GITHUB_TOKEN=${GITHUB_TOKEN}` });
      assert.equal(secret.redactions.length, 1);
      for (const file of fs.readdirSync(ctx.root, { recursive: true }) as string[]) {
        const full = path.join(ctx.root, file);
        if (fs.statSync(full).isFile()) assert.ok(!fs.readFileSync(full, 'utf8').includes(GITHUB_TOKEN), file);
      }
    });

    it('writes nothing for an update that changes nothing', async () => {
      const store = ctx.open();
      const { memory } = await store.store({ topic: 'Same', content: 'Same text.', tags: ['a'] });
      const before = snapshotFiles(ctx.root);
      const result = await store.update(memory.id, { topic: 'Same', tags: ['A'] });
      assert.deepEqual(result.changed, []);
      assert.deepEqual(result.versions, []);
      assert.deepEqual(snapshotDiff(before, snapshotFiles(ctx.root)), []);
    });

    it('a failing write leaves the old file, with the old text also archived', async function () {
      const store = ctx.open();
      const { memory } = await store.store({ topic: 'Immutable', content: 'Old text.' });
      const before = fs.readFileSync(memoryPath(memory.id), 'utf8');
      const memoriesDir = path.join(ctx.root, 'memories');
      // A real failure: an immutable directory refuses the temporary file (root included).
      if (spawnSync('chattr', ['+i', memoriesDir]).status !== 0) this.skip();
      try {
        await assert.rejects(store.update(memory.id, { content: 'New text.' }), /EPERM|EACCES|not permitted/);
      } finally {
        spawnSync('chattr', ['-i', memoriesDir]);
      }
      assert.equal(fs.readFileSync(memoryPath(memory.id), 'utf8'), before);
      const versions = [...archiveIndex()].filter(([, e]) => e.version_of === memory.id).map(([id]) => id);
      assert.equal(versions.length, 1, 'the archive was written first');
      assert.match(fs.readFileSync(archivePath(versions[0]!), 'utf8'), /Old text\./);
      const fresh = ctx.open();
      assert.equal(fresh.peek(memory.id).content, 'Old text.');
      assert.ok(fresh.check().healthy, JSON.stringify(fresh.check().problems));
      // And it works once the directory can be written again.
      await fresh.update(memory.id, { content: 'New text.' });
      assert.equal(fresh.peek(memory.id).content, 'New text.');
    });

    it('a reduced memory given new content is full again; its pre-eviction text becomes a version', async () => {
      writeConfig(ctx.project, { max_memories: 1, eviction_batch_size: 1 });
      const store = ctx.open();
      const low = await store.store({ topic: 'Low', content: 'First paragraph.\n\nSecond paragraph, the full story.', tags: ['importance:low'] });
      await store.store({ topic: 'High', content: 'Keep me.', tags: ['importance:critical'] });
      await store.evict();
      assert.equal(store.peek(low.memory.id).phase, 1);
      const full = fs.readFileSync(archivePath(low.memory.id), 'utf8');
      // New tags alone: still reduced, its archive untouched.
      await store.update(low.memory.id, { tags: ['importance:low', 'note'] });
      assert.equal(store.peek(low.memory.id).phase, 1);
      assert.equal(fs.readFileSync(archivePath(low.memory.id), 'utf8'), full);
      const reduced = fs.readFileSync(memoryPath(low.memory.id), 'utf8');
      const result = await store.update(low.memory.id, { content: 'The new whole story.' });
      const now = store.peek(low.memory.id);
      assert.equal(now.phase, 0);
      assert.equal(now.content, 'The new whole story.');
      assert.equal(now.phase_history.at(-1)!.event, 'updated');
      // Two versions: the full text from before eviction, and the reduced file as it was.
      assert.equal(result.versions.length, 2);
      const texts = result.versions.map((v) => fs.readFileSync(archivePath(v), 'utf8'));
      assert.match(texts[0]!, /Second paragraph, the full story\./);
      assert.equal(texts[1], reduced.replace(/^id: ".*"$/m, `id: "${result.versions[1]}"`));
      assert.ok(!fs.existsSync(archivePath(low.memory.id)), 'restore can no longer bring the old text over the new');
      await assert.rejects(store.restore(low.memory.id), /not reduced/);
      assert.ok(store.check().healthy, JSON.stringify(store.check().problems));
    });
  });

  describe('MemoryStore.merge', () => {
    const ctx = useProject('ltm-merge-');
    const archivePath = (id: string) => path.join(ctx.root, 'archives', `${id}.md`);

    it('archives both originals, gives the target both texts and forgets the source', async () => {
      const store = ctx.open();
      const target = await store.store({ topic: 'Pool exhaustion', content: 'Pool of 10 ran dry.', summary: 'Raise the pool.', tags: ['db'] });
      const source = await store.store({ topic: 'Batch jobs starve the pool', content: 'Release connections between chunks.', tags: ['batch', 'db'] });
      const targetBefore = fs.readFileSync(path.join(ctx.root, 'memories', `${target.memory.id}.md`), 'utf8');
      const sourceBefore = fs.readFileSync(path.join(ctx.root, 'memories', `${source.memory.id}.md`), 'utf8');
      const result = await store.merge(source.memory.id, target.memory.id);
      assert.equal(result.target.id, target.memory.id);
      assert.equal(result.target.summary, 'Raise the pool.');
      assert.equal(result.target.topic, 'Pool exhaustion');
      assert.deepEqual(result.target.tags, ['db', 'batch']);
      assert.equal(result.target.content, `Pool of 10 ran dry.\n\n### Merged from "Batch jobs starve the pool" (${source.memory.id})\n\nRelease connections between chunks.`);
      // Nothing lost: the source as it was, under its own ID, pointing at the target; the target's previous text as a version.
      assert.equal(fs.readFileSync(archivePath(source.memory.id), 'utf8'), sourceBefore);
      const index = readJson<{ memories: Record<string, Record<string, unknown>> }>(path.join(ctx.root, 'archive_index.json')).memories;
      assert.equal(index[source.memory.id]!.reason, 'merged');
      assert.equal(index[source.memory.id]!.merged_into, target.memory.id);
      assert.equal(result.versions.length, 1);
      assert.equal(index[result.versions[0]!]!.version_of, target.memory.id);
      assert.equal(fs.readFileSync(archivePath(result.versions[0]!), 'utf8'), targetBefore.replace(`id: "${target.memory.id}"`, `id: "${result.versions[0]}"`));
      assert.deepEqual(store.list().memories.map((m) => m.id), [target.memory.id]);
      assert.ok(store.check().healthy, JSON.stringify(store.check().problems));
      // The source comes back whole.
      const restored = await store.restore(source.memory.id);
      assert.equal(restored.content, 'Release connections between chunks.');
      assert.equal(restored.phase_history.at(-2)!.event, 'merged');
    });

    it('refuses a merge into itself, an unknown or archived memory, changing nothing', async () => {
      const store = ctx.open();
      const a = await store.store({ topic: 'A', content: 'a' });
      const b = await store.store({ topic: 'B', content: 'b' });
      await store.forget(b.memory.id);
      const before = snapshotFiles(ctx.root);
      await assert.rejects(store.merge(a.memory.id, a.memory.id), /into itself/);
      await assert.rejects(store.merge(a.memory.id, 'mem_ffffffff'), /no memory with ID mem_ffffffff/);
      await assert.rejects(store.merge(b.memory.id, a.memory.id), /archived/);
      await assert.rejects(store.merge('nope', a.memory.id), /not a memory ID/);
      assert.deepEqual(snapshotDiff(before, snapshotFiles(ctx.root)), []);
    });

    it('merges the full text of a reduced source', async () => {
      writeConfig(ctx.project, { max_memories: 1, eviction_batch_size: 1 });
      const store = ctx.open();
      const low = await store.store({ topic: 'Low', content: 'Hint paragraph.\n\nThe detail only the archive keeps.', tags: ['importance:low'] });
      const high = await store.store({ topic: 'High', content: 'Target.', tags: ['importance:critical'] });
      await store.evict();
      assert.equal(store.peek(low.memory.id).phase, 1);
      const result = await store.merge(low.memory.id, high.memory.id);
      assert.match(result.target.content, /The detail only the archive keeps\./);
      assert.deepEqual(result.target.tags, ['importance:critical']);
      assert.match(fs.readFileSync(archivePath(low.memory.id), 'utf8'), /The detail only the archive keeps\./);
      assert.ok(store.check().healthy, JSON.stringify(store.check().problems));
    });
  });
});
