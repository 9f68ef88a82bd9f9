import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as v8 from 'node:v8';
import * as vm from 'node:vm';
import { statSignature } from '../../src/core/files';
import { LoadedFile } from '../../src/core/loadedFile';
import { renderNewMemoryFile, splitFrontmatter } from '../../src/core/memoryFile';
import { MemoryStore } from '../../src/core/store';
import { MemoryRecordCache, RECORDS_VERSION, frontmatterDigest, writeSavedRecords, type SavedRecords } from '../../src/core/memoryRecords';
import type { FileRecord } from '../../src/core/loadedFile';
import { makeTempProject, removeDir, useProject } from '../support/storeKit';

function memoryText(id: string, topic: string, content = 'Some content.'): string {
  return renderNewMemoryFile({
    id,
    topic,
    tags: ['alpha'],
    phase: 0,
    difficulty: 0.5,
    created_at: '2026-01-15T10:30:00.000Z',
    created_session: 1,
    summary: 'A summary.',
    content,
  });
}

/** A memory file written to `dir`, and the record the store would save of it. */
function writeMemory(dir: string, id: string, topic: string): { name: string; file: string; loaded: LoadedFile } {
  const name = `${id}.md`;
  const file = path.join(dir, name);
  const raw = memoryText(id, topic);
  fs.writeFileSync(file, raw);
  const cache = new MemoryRecordCache(path.join(dir, 'unused.json'));
  const { frontmatter } = splitFrontmatter(raw);
  const { meta, digest } = cache.parse(frontmatter);
  const loaded = new LoadedFile({ ...meta, summary: 'A summary.', content: 'Some content.', hasSections: true }, statSignature(file)!, digest, dir, raw);
  return { name, file, loaded };
}

describe('MemoryRecordCache (parse-cache.json)', () => {
  let dir: string;
  let cacheFile: string;
  beforeEach(() => {
    dir = makeTempProject('ltm-records-');
    cacheFile = path.join(dir, 'parse-cache.json');
  });
  afterEach(() => removeDir(dir));
  /** Memories A and B written, and a cache that saved both. */
  const savedTwo = () => {
    const a = writeMemory(dir, 'mem_0000000a', 'Topic A');
    const b = writeMemory(dir, 'mem_0000000b', 'Topic B');
    const cache = new MemoryRecordCache(cacheFile);
    cache.noteChange();
    cache.save([
      [a.name, a.loaded.record()],
      [b.name, b.loaded.record()],
    ]);
    return { a, b, cache };
  };

  it('gives a record back only for the exact file version it was made from', () => {
    const a = writeMemory(dir, 'mem_0000000a', 'Topic A');
    const cache = new MemoryRecordCache(cacheFile);
    cache.noteChange();
    cache.save([[a.name, a.loaded.record()]]);
    const next = new MemoryRecordCache(cacheFile);
    next.load();
    assert.equal(next.recordFor(a.name, { ...a.loaded.signature, mtimeMs: a.loaded.signature.mtimeMs + 1 }), undefined, 'another mtime');
    assert.equal(next.recordFor(a.name, { ...a.loaded.signature, size: a.loaded.signature.size + 1 }), undefined, 'another size');
    assert.equal(next.recordFor(a.name, { ...a.loaded.signature, ino: a.loaded.signature.ino + 1 }), undefined, 'another inode');
    assert.equal(next.recordFor('mem_0000000b.md', a.loaded.signature), undefined, 'another name');
    const record = next.recordFor(a.name, a.loaded.signature);
    assert.equal(record?.meta.topic, 'Topic A');
    assert.equal(record?.summary, 'A summary.');
  });

  it('reuses parsed frontmatter by the digest of its text, and returns copies', () => {
    const cache = new MemoryRecordCache(cacheFile);
    const { frontmatter } = splitFrontmatter(memoryText('mem_0000000a', 'Topic A'));
    const first = cache.parse(frontmatter);
    assert.equal(first.digest, frontmatterDigest(frontmatter));
    first.meta.tags.push('changed');
    first.meta.topic = 'changed';
    const second = cache.parse(frontmatter);
    assert.equal(second.meta.topic, 'Topic A');
    assert.deepEqual(second.meta.tags, ['alpha']);
    const edited = cache.parse(frontmatter.replace('Topic A', 'Topic A, edited'));
    assert.equal(edited.meta.topic, 'Topic A, edited', 'an edited frontmatter parses anew');
  });

  it('saves the records of live files only, and only when something changed', () => {
    const { a, b } = savedTwo();
    const next = new MemoryRecordCache(cacheFile);
    next.load();
    assert.ok(next.recordFor(a.name, a.loaded.signature));
    assert.ok(next.recordFor(b.name, b.loaded.signature));
    // Every record was taken and nothing parsed: nothing to save.
    fs.rmSync(cacheFile);
    next.save([
      [a.name, a.loaded.record()],
      [b.name, b.loaded.record()],
    ]);
    assert.ok(!fs.existsSync(cacheFile));
    // A record not taken (its file went away) makes the next save drop it.
    const third = new MemoryRecordCache(cacheFile);
    third.noteChange();
    third.save([
      [a.name, a.loaded.record()],
      [b.name, b.loaded.record()],
    ]);
    const fourth = new MemoryRecordCache(cacheFile);
    fourth.load();
    assert.ok(fourth.recordFor(a.name, a.loaded.signature));
    fourth.save([[a.name, a.loaded.record()]]);
    assert.ok(!fs.readFileSync(cacheFile, 'utf8').includes('Topic B'));
  });

  const valid = () => {
    const a = writeMemory(dir, 'mem_0000000a', 'Topic A');
    const cache = new MemoryRecordCache(cacheFile);
    cache.noteChange();
    cache.save([[a.name, a.loaded.record()]]);
    return { a, saved: JSON.parse(fs.readFileSync(cacheFile, 'utf8')) as SavedRecords };
  };
  /** The saved file with one column replaced. */
  const withColumn = (s: SavedRecords, column: keyof SavedRecords, value: unknown) => JSON.stringify({ ...s, [column]: value });
  for (const [what, damage] of [
    ['not JSON', () => '{"version": '],
    ['the format before columns (ltm-records-5)', (s: SavedRecords) => JSON.stringify({ version: 'ltm-records-5', records: [[`${s.ids[0]}.md`, s.sizes[0], s.mtimes[0], s.inos[0], s.digests[0], { id: s.ids[0], topic: s.topics[0], tags: [] }, s.summaries[0], true]] })],
    ['columns under an older version', (s: SavedRecords) => withColumn(s, 'version', 'ltm-records-5')],
    ['the frontmatter format', () => JSON.stringify({ version: 'ltm-frontmatter-1', entries: [] })],
    ['a column missing', (s: SavedRecords) => withColumn(s, 'summaries', undefined)],
    ['a column that is not a list', (s: SavedRecords) => withColumn(s, 'topics', {})],
    ['a column shorter than the IDs', (s: SavedRecords) => withColumn(s, 'mtimes', [])],
    ['a size that is not a number', (s: SavedRecords) => withColumn(s, 'sizes', ['12'])],
    ['a tag set index out of range', (s: SavedRecords) => withColumn(s, 'tags', [1])],
    ['tags that are not strings', (s: SavedRecords) => withColumn(s, 'tagSets', [[1]])],
    ['a phase out of range', (s: SavedRecords) => withColumn(s, 'phases', [3])],
    ['keywords that are not strings', (s: SavedRecords) => withColumn(s, 'rest', [{ keywords: [1] }])],
    ['an empty list saved (never written: lists are left out when empty)', (s: SavedRecords) => withColumn(s, 'rest', [{ anchors: [] }])],
    ['a status other than proposed', (s: SavedRecords) => withColumn(s, 'rest', [{ status: 'approved' }])],
  ] as const) {
    it(`ignores a damaged cache (${what}): only a slower open, and the next save replaces it`, () => {
      const { a, saved } = valid();
      fs.writeFileSync(cacheFile, damage(saved));
      const cache = new MemoryRecordCache(cacheFile);
      cache.load();
      assert.equal(cache.recordFor(a.name, a.loaded.signature), undefined);
      cache.save([[a.name, a.loaded.record()]]);
      assert.equal((JSON.parse(fs.readFileSync(cacheFile, 'utf8')) as SavedRecords).version, RECORDS_VERSION);
      const next = new MemoryRecordCache(cacheFile);
      next.load();
      assert.ok(next.recordFor(a.name, a.loaded.signature), 'saved anew');
    });
  }

  it('uses the undamaged rows of a cache with a damaged one: only that file is read again', () => {
    const { a, b } = savedTwo();
    const saved = JSON.parse(fs.readFileSync(cacheFile, 'utf8')) as SavedRecords;
    const rowB = saved.ids.indexOf('mem_0000000b');
    saved.phases[rowB] = 7;
    fs.writeFileSync(cacheFile, JSON.stringify(saved));
    const next = new MemoryRecordCache(cacheFile);
    next.load();
    assert.equal(next.recordFor(a.name, a.loaded.signature)?.meta.topic, 'Topic A');
    assert.equal(next.recordFor(b.name, b.loaded.signature), undefined);
    // The damaged row makes the next save write the file anew, with both records.
    next.save([
      [a.name, a.loaded.record()],
      [b.name, b.loaded.record()],
    ]);
    assert.deepEqual((JSON.parse(fs.readFileSync(cacheFile, 'utf8')) as SavedRecords).phases, [0, 0]);
  });

  describe('saveInSlices (a server\'s pause)', () => {
    /** `count` memory files and their records, by file name. */
    const manyRecords = (count: number) =>
      Array.from({ length: count }, (_, n) => {
        const { name, loaded } = writeMemory(dir, `mem_${(0x20000000 + n).toString(16)}`, `Topic ${n}`);
        return [name, loaded.record()] as [string, FileRecord];
      });

    it('writes what save() writes, giving way between pieces', async () => {
      const live = manyRecords(40);
      const sliced = new MemoryRecordCache(cacheFile);
      sliced.noteChange();
      let pauses = 0;
      await sliced.saveInSlices(live, { sliceMs: 0, pause: async () => void pauses++ });
      const inSlices = fs.readFileSync(cacheFile);
      assert.ok(pauses > 5, `${pauses} pauses`);
      const atOnce = new MemoryRecordCache(cacheFile);
      atOnce.noteChange();
      atOnce.save(live);
      assert.ok(fs.readFileSync(cacheFile).equals(inSlices));
      // Saved: nothing is left to write.
      fs.rmSync(cacheFile);
      await sliced.saveInSlices(live);
      assert.equal(fs.existsSync(cacheFile), false);
    });

    it('leaves the file as it was when the records change between two pieces, and stays unsaved for the next save', async () => {
      const live = manyRecords(40);
      fs.writeFileSync(cacheFile, 'the cache saved before');
      const cache = new MemoryRecordCache(cacheFile);
      cache.noteChange();
      let changed = false;
      await cache.saveInSlices(live, {
        sliceMs: 0,
        pause: async () => {
          if (changed) return;
          changed = true;
          cache.noteChange();
        },
      });
      assert.equal(changed, true);
      assert.equal(fs.readFileSync(cacheFile, 'utf8'), 'the cache saved before');
      assert.deepEqual(fs.readdirSync(dir).filter((name) => name.startsWith('parse-cache.json') && name !== 'parse-cache.json'), [], 'no temporary file left behind');
      cache.save(live);
      assert.equal((JSON.parse(fs.readFileSync(cacheFile, 'utf8')) as SavedRecords).ids.length, 40);
    });
  });

  it('saves each distinct tag list once, and keeps lists that are empty for most memories out of the rows', () => {
    const files = ['mem_0000000a', 'mem_0000000b', 'mem_0000000c'].map((id) => writeMemory(dir, id, `Topic ${id}`));
    const cache = new MemoryRecordCache(cacheFile);
    cache.noteChange();
    cache.save(files.map((f) => [f.name, f.loaded.record()]));
    const saved = JSON.parse(fs.readFileSync(cacheFile, 'utf8')) as SavedRecords;
    assert.deepEqual(saved.tagSets, [['alpha']]);
    assert.deepEqual(saved.tags, [0, 0, 0]);
    assert.deepEqual(saved.rest, [0, 0, 0]);
  });

  it('shares one frozen tag list between memories with the same tags: changing one in place fails, and changes no other', () => {
    const { a, b } = savedTwo();
    const next = new MemoryRecordCache(cacheFile);
    next.load();
    const ra = next.loadedFor(a.name, a.loaded.signature, dir)!;
    const rb = next.loadedFor(b.name, b.loaded.signature, dir)!;
    assert.equal(ra.memory.tags, rb.memory.tags, 'one list for both');
    assert.throws(() => ra.memory.tags.push('leaked'), TypeError);
    assert.throws(() => ra.memory.keywords.push('leaked'), TypeError, 'the shared empty list too');
    assert.deepEqual(rb.memory.tags, ['alpha']);
    assert.deepEqual(rb.memory.keywords, []);
  });

  it('parses a frontmatter whose digest is that of the previous version of the file from that version, without YAML', () => {
    const cache = new MemoryRecordCache(cacheFile);
    const { frontmatter } = splitFrontmatter(memoryText('mem_0000000a', 'Topic A'));
    const digest = frontmatterDigest(frontmatter);
    const previous = { frontmatterDigest: digest, memory: { ...cache.parse(frontmatter).meta, topic: 'As the previous version says' } };
    const fresh = new MemoryRecordCache(cacheFile);
    assert.equal(fresh.parse(frontmatter, previous).meta.topic, 'As the previous version says');
    assert.equal(fresh.parse(frontmatter, { ...previous, frontmatterDigest: 'another' }).meta.topic, 'Topic A', 'another digest: parsed');
  });

  it('does not throw when the cache cannot be written (a read-only checkout)', () => {
    const a = writeMemory(dir, 'mem_0000000a', 'Topic A');
    const cache = new MemoryRecordCache(path.join(dir, 'missing', 'dir', 'parse-cache.json'));
    cache.noteChange();
    assert.doesNotThrow(() => cache.save([[a.name, a.loaded.record()]]));
  });

  it('writes the file a few values at a time, the same text as its columns stringified whole', () => {
    const base = writeMemory(dir, 'mem_0000000a', 'Topic A').loaded.record();
    const records: FileRecord[] = Array.from({ length: 7 }, (_, i) => ({
      ...base,
      signature: { size: 100 + i, mtimeMs: 1.5e12 + i / 3, ino: 1e9 + i },
      summary: `Summary ${i}: "quoted", \\ and \u2028 and \u{1F600}`,
      hasSections: i % 2 === 0,
      meta: {
        ...base.meta,
        id: `mem_0000000${i}`,
        topic: `Topic ${i}`,
        tags: i % 3 === 0 ? ['alpha'] : ['beta', `t${i % 2}`],
        created_session: i === 4 ? null : i,
        keywords: i === 5 ? ['kw'] : [],
        status: i === 6 ? 'proposed' : undefined,
      },
    }));
    // What the file held when its columns were built whole: the reference the pieces must add up to.
    const tagSets: string[][] = [];
    const tagSetOf = (tags: string[]) => {
      const at = tagSets.findIndex((t) => JSON.stringify(t) === JSON.stringify(tags));
      return at >= 0 ? at : tagSets.push(tags) - 1;
    };
    const tags = records.map((r) => tagSetOf(r.meta.tags));
    const whole: SavedRecords = {
      version: RECORDS_VERSION,
      ids: records.map((r) => r.meta.id),
      sizes: records.map((r) => r.signature.size),
      mtimes: records.map((r) => r.signature.mtimeMs),
      inos: records.map((r) => r.signature.ino),
      digests: records.map((r) => r.frontmatterDigest),
      topics: records.map((r) => r.meta.topic),
      tagSets,
      tags,
      phases: records.map((r) => r.meta.phase),
      difficulties: records.map((r) => r.meta.difficulty),
      createdAt: records.map((r) => r.meta.created_at),
      createdSessions: records.map((r) => r.meta.created_session),
      summaries: records.map((r) => r.summary),
      hasSections: records.map((r) => r.hasSections),
      rest: records.map((r) => (r.meta.keywords.length > 0 ? { keywords: r.meta.keywords } : r.meta.status ? { status: 'proposed' } : 0)),
    };
    for (const perPiece of [1, 2, 3, 7, 100]) {
      const pieces: string[] = [];
      writeSavedRecords(records, (text) => pieces.push(text), perPiece);
      assert.equal(pieces.join(''), JSON.stringify(whole), `${perPiece} values a piece`);
      assert.ok(pieces.length >= 2 + 14 * Math.ceil(7 / perPiece), `${pieces.length} pieces for ${perPiece} a piece`);
    }
    const none: string[] = [];
    writeSavedRecords([], (text) => none.push(text));
    assert.deepEqual(JSON.parse(none.join('')), { ...whole, ...Object.fromEntries(Object.keys(whole).filter((k) => k !== 'version').map((k) => [k, []])) });
  });
});

describe('LoadedFile from a record', () => {
  let dir: string;
  beforeEach(() => (dir = makeTempProject('ltm-loaded-')));
  afterEach(() => removeDir(dir));

  it('reads its text when asked; a file gone since refuses to give a text (never an empty one to archive), and shows no Content', () => {
    const a = writeMemory(dir, 'mem_0000000a', 'Topic A');
    const fromRecord = LoadedFile.fromRecord(a.loaded.record(), dir);
    assert.equal(fromRecord.knownText, null, 'not read to open');
    assert.equal(fromRecord.memory.content, 'Some content.');
    assert.equal(fromRecord.raw, fs.readFileSync(a.file, 'utf8'));
    const gone = LoadedFile.fromRecord({ ...a.loaded.record(), meta: { ...a.loaded.memory, id: 'mem_0000000b' } }, dir);
    assert.throws(() => gone.raw, /ENOENT/);
    assert.equal(gone.memory.content, '');
    assert.equal(gone.memory.topic, 'Topic A', 'the fields come from the record');
  });
});

describe('opening a store from its records', () => {
  const ctx = useProject('ltm-records-store-');
  const memoryFile = (id: string) => path.join(ctx.root, 'memories', `${id}.md`);

  it('opens from the records without reading memory files: the Content of a view is read from the file when shown', async () => {
    const first = ctx.open();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await first.store({ topic: `Topic ${i}`, summary: `Summary ${i}.`, content: `Content number ${i}.` })).memory.id);
    // A round mtime, so that it can be set back exactly after the edit below.
    const mtime = 1_700_000_000;
    for (const id of ids) fs.utimesSync(memoryFile(id), mtime, mtime);
    ctx.open().flushCaches();
    // Edited in place behind the store's back, keeping size, inode and mtime: the signature cannot tell.
    for (const id of ids) {
      fs.writeFileSync(memoryFile(id), fs.readFileSync(memoryFile(id), 'utf8').replace(/Topic (\d)/, 'Tipoc $1').replace(/Content number (\d)\./, 'Altered text!! $1.'));
      fs.utimesSync(memoryFile(id), mtime, mtime);
    }
    const second = ctx.open();
    const listed = second.list({ limit: 5 }).memories;
    // Topics and summaries come from the records (the files were not read to open, list or rank)...
    assert.deepEqual(listed.map((m) => m.topic).sort(), ['Topic 0', 'Topic 1', 'Topic 2', 'Topic 3', 'Topic 4']);
    assert.deepEqual(listed.map((m) => m.summary).sort(), ['Summary 0.', 'Summary 1.', 'Summary 2.', 'Summary 3.', 'Summary 4.']);
    // ...and the Content of what is shown is read from the file then.
    assert.deepEqual(listed.map((m) => m.content).sort(), ['Altered text!! 0.', 'Altered text!! 1.', 'Altered text!! 2.', 'Altered text!! 3.', 'Altered text!! 4.']);
    // Without the records, every file is read: the edited topics show.
    fs.rmSync(path.join(ctx.root, 'parse-cache.json'));
    assert.deepEqual(ctx.open().list({ limit: 5 }).memories.map((m) => m.topic).sort(), ['Tipoc 0', 'Tipoc 1', 'Tipoc 2', 'Tipoc 3', 'Tipoc 4']);
  });

  it('reads a file again once its signature changed, even when an edit in place kept its size', async () => {
    const first = ctx.open();
    const id = (await first.store({ topic: 'Original topic', content: 'Original content.' })).memory.id;
    first.flushCaches();
    const text = fs.readFileSync(memoryFile(id), 'utf8');
    fs.writeFileSync(memoryFile(id), text.replace('Original topic', 'Edited! topic'));
    const second = ctx.open();
    assert.equal(second.peek(id).topic, 'Edited! topic');
    assert.equal(second.peek(id).content, 'Original content.');
  });

  it('a file edited below its frontmatter while no process ran shows its new Summary (the fields come from its old record)', async () => {
    const first = ctx.open();
    const id = (await first.store({ topic: 'Kept topic', summary: 'Old summary.', content: 'Old content.', tags: ['kept'] })).memory.id;
    const other = (await first.store({ topic: 'Another topic', summary: 'Another summary.', content: 'Other content.', tags: ['kept'] })).memory.id;
    first.flushCaches();
    fs.writeFileSync(memoryFile(id), fs.readFileSync(memoryFile(id), 'utf8').replace('Old summary.', 'A new, longer summary.'));
    const second = ctx.open();
    const edited = second.peek(id);
    assert.equal(edited.summary, 'A new, longer summary.');
    assert.equal(edited.topic, 'Kept topic');
    assert.deepEqual(edited.tags, ['kept']);
    assert.equal(second.peek(other).summary, 'Another summary.');
    second.flushCaches();
    assert.ok(fs.readFileSync(path.join(ctx.root, 'parse-cache.json'), 'utf8').includes('A new, longer summary.'), 'saved anew');
  });

  it('keeps no trace of a purged memory in parse-cache.json, even if the process dies right after the purge', async () => {
    const store = ctx.open();
    const purged = (await store.store({ topic: 'Door code of the xylophonist', content: 'secret-ish words' })).memory.id;
    await store.store({ topic: 'Lobby hours', content: 'eight to six' });
    store.flushCaches();
    const cache = path.join(ctx.root, 'parse-cache.json');
    assert.ok(fs.readFileSync(cache, 'utf8').includes('xylophonist'));
    await store.forget(purged, { purge: true });
    // No flushCaches(): the purge itself saved the records without the memory.
    assert.ok(!fs.readFileSync(cache, 'utf8').includes('xylophonist'));
  });

  it('opens the same memories with and without parse-cache.json, whatever the cache holds', async () => {
    const store = ctx.open();
    for (let i = 0; i < 4; i++) await store.store({ topic: `Topic ${i}`, content: `Content ${i}`, tags: [`t${i}`] });
    store.flushCaches();
    const withCache = ctx.open().list({ limit: 10 }).memories;
    fs.rmSync(path.join(ctx.root, 'parse-cache.json'));
    const without = ctx.open().list({ limit: 10 }).memories;
    assert.deepEqual(withCache, without);
  });
});

describe('what an opened store holds per memory', () => {
  const ctx = useProject('ltm-records-heap-');

  it('about a kilobyte of heap per memory opened from its records (it was twice that)', function () {
    this.timeout(60_000);
    v8.setFlagsFromString('--expose-gc');
    const gc = vm.runInNewContext('gc') as () => void;
    const count = 2_000;
    const memories = path.join(ctx.root, 'memories');
    fs.mkdirSync(memories, { recursive: true });
    const words = ['cache', 'retry', 'socket', 'schema', 'deploy', 'token', 'queue', 'index', 'worker', 'build'];
    for (let i = 0; i < count; i++) {
      const id = `mem_${i.toString(16).padStart(8, '0')}`;
      const topic = `How the ${words[i % 10]} ${words[(i >> 3) % 10]} handles ${words[(i >> 5) % 10]} number ${i} under load`;
      fs.writeFileSync(
        path.join(memories, `${id}.md`),
        renderNewMemoryFile({
          id,
          topic,
          tags: [words[i % 7]!, words[(i >> 2) % 5]!],
          phase: 0,
          difficulty: 0.5,
          created_at: new Date(Date.UTC(2026, 0, 1) + i * 60_000).toISOString(),
          created_session: i >> 4,
          summary: `The ${words[(i >> 1) % 10]} of memory ${i} is reset before the ${words[(i >> 4) % 10]} starts again.`,
          content: `Content of memory ${i}.`,
        }),
      );
    }
    const first = MemoryStore.open(ctx.project);
    first.flushCaches();
    first.dispose();
    gc();
    const before = process.memoryUsage().heapUsed;
    const store = MemoryStore.open(ctx.project);
    assert.equal(store.list({ limit: 1 }).total, count);
    gc();
    const perMemory = (process.memoryUsage().heapUsed - before) / count;
    store.dispose();
    // ~780 bytes now; ~1,900 with a joined path, a closure, two signatures and a second meta object a memory.
    assert.ok(perMemory < 1_300, `${Math.round(perMemory)} bytes a memory`);
  });
});
