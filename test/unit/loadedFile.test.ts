/**
 * A memory file as the store holds it (src/core/loadedFile.ts), on real
 * files: the text kept for a file this process read or wrote until it is
 * released, read lazily and once for a file known from its record
 * (parse-cache.json), and what a view or a writer gets when the file changed
 * or vanished before it was read.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { statSignature } from '../../src/core/files';
import { LoadedFile, READ_TEXTS_BUDGET_CHARS, ReadTexts } from '../../src/core/loadedFile';
import { memoryOf, parseMemoryFile } from '../../src/core/memoryFile';
import { MemoryRecordCache, frontmatterDigest } from '../../src/core/memoryRecords';
import { storePaths } from '../../src/core/storeFiles';
import { createStoreParts } from '../../src/core/storeParts';
import { MemoryStore } from '../../src/core/store';
import { makeTempProject, memoryText, removeDir, testId } from '../support/storeKit';

const A = testId(0xa);

describe('LoadedFile: a memory file, its text read when needed', () => {
  let dir: string;
  let file: string;
  let original: string;
  /** The file as DiskMirror loads it when it reads the file (in its memories/ folder, here `dir`): parsed, its text kept. */
  const readNow = (): LoadedFile => {
    const raw = fs.readFileSync(file, 'utf8');
    const parsed = parseMemoryFile(raw);
    return new LoadedFile(parsed.memory, statSignature(file)!, frontmatterDigest(parsed.frontmatter), dir, raw);
  };
  /** The file as DiskMirror loads it when it reads it whole (LoadedFile.fromText), its text kept until released. */
  const readWhole = (texts: ReadTexts | null = null): LoadedFile => {
    const raw = fs.readFileSync(file, 'utf8');
    const parsed = parseMemoryFile(raw);
    return LoadedFile.fromText(parsed.memory, statSignature(file)!, frontmatterDigest(parsed.frontmatter), dir, raw, texts);
  };
  /** The file as a fresh process opens it from the record of an earlier one: nothing read. */
  const fromRecord = (): LoadedFile => LoadedFile.fromRecord(readNow().record(), dir);

  beforeEach(() => {
    dir = makeTempProject('ltm-loaded-file-');
    file = path.join(dir, `${A}.md`);
    original = memoryText(A, { topic: 'Pool size', tags: ['db'], summary: 'Fifty connections.', content: 'The pool holds 50 connections.' });
    fs.writeFileSync(file, original);
  });
  afterEach(() => removeDir(dir));

  it('a file read or written by this process keeps its text: no read later, whatever happens to the file', () => {
    const loaded = readNow();
    assert.equal(loaded.knownText, original);
    fs.writeFileSync(file, memoryText(A, { content: 'Changed behind its back.' }));
    assert.equal(loaded.raw, original);
    fs.rmSync(file);
    assert.equal(loaded.raw, original, 'gone since: the text this process holds is still the version its fields describe');
    assert.equal(loaded.memory.content, 'The pool holds 50 connections.');
  });

  it('from a record: the fields come from the record and the file is not read until its text is asked for', () => {
    const loaded = fromRecord();
    assert.equal(loaded.knownText, null);
    assert.equal(loaded.memory.topic, 'Pool size');
    assert.equal(loaded.memory.summary, 'Fifty connections.');
    assert.deepEqual(loaded.memory.tags, ['db']);
    assert.equal(loaded.knownText, null, 'reading the fields read nothing');
    assert.equal(loaded.raw, original);
    assert.equal(loaded.knownText, original);
  });

  it('from a record: the text is read once; a later change of the file is not seen (the next refresh loads it anew)', () => {
    const loaded = fromRecord();
    assert.equal(loaded.memory.content, 'The pool holds 50 connections.');
    assert.equal(loaded.knownText, original, 'the Content was read through the text, which is kept');
    fs.writeFileSync(file, memoryText(A, { content: 'A later version.' }));
    assert.equal(loaded.memory.content, 'The pool holds 50 connections.');
    assert.equal(loaded.raw, original);
  });

  it('from a record, the file changed before its first read: the text and Content are the version on disk', () => {
    const loaded = fromRecord();
    const edited = memoryText(A, { topic: 'Pool size', tags: ['db'], summary: 'Fifty connections.', content: 'Edited in place.' });
    fs.writeFileSync(file, edited);
    // Callers that write refresh first (under the lock), so they never pair these fields with another text.
    assert.equal(loaded.memory.content, 'Edited in place.');
    assert.equal(loaded.raw, edited);
  });

  it('from a record, the file gone: the text throws (never an empty text to archive) and the Content is empty, until the file is back', () => {
    const loaded = fromRecord();
    fs.rmSync(file);
    assert.throws(() => loaded.raw, /ENOENT/);
    assert.equal(loaded.memory.content, '');
    assert.equal(loaded.knownText, null, 'nothing kept from a failed read');
    fs.writeFileSync(file, original);
    assert.equal(loaded.memory.content, 'The pool holds 50 connections.');
    assert.equal(loaded.raw, original);
  });

  it('from a record, the file no longer a memory: the Content is empty, the text is what is there', () => {
    const loaded = fromRecord();
    fs.writeFileSync(file, 'no frontmatter here\n');
    assert.equal(loaded.memory.content, '');
    assert.equal(loaded.raw, 'no frontmatter here\n');
  });

  it('record() gives what the record cache keeps: the signature, digest, the memory\'s fields (not copied) and Summary', () => {
    const loaded = readNow();
    const record = loaded.record();
    assert.deepEqual(record.signature, statSignature(file));
    assert.equal(record.frontmatterDigest, loaded.frontmatterDigest);
    assert.equal(record.summary, 'Fifty connections.');
    assert.equal(record.hasSections, true);
    assert.equal(record.meta.topic, 'Pool size');
    // No copy per memory (memories are replaced, never changed): the cache saves the fields it names, never the Content.
    assert.equal(record.meta, loaded.memory);
  });

  it('a memory from a record has the fields of a parsed one, in the same order, its Content left out of a spread', () => {
    const parsed = readNow().memory;
    const lazy = fromRecord().memory;
    assert.deepEqual(Object.keys(lazy), Object.keys(parsed).filter((k) => k !== 'content'));
    assert.ok(!('content' in { ...lazy }), 'views list the fields one by one (StoreQueries.view)');
    assert.deepEqual({ ...memoryOf(lazy, { summary: lazy.summary, content: lazy.content, hasSections: lazy.hasSections }) }, { ...parsed });
  });

  describe('a file read whole (fromText): its text kept until released, then read when asked for', () => {
    it('keeps the text and Content it was read with, whatever happens to the file, until releaseText', () => {
      const loaded = readWhole();
      fs.writeFileSync(file, memoryText(A, { content: 'Changed behind its back.' }));
      assert.equal(loaded.knownText, original);
      assert.equal(loaded.memory.content, 'The pool holds 50 connections.');
      assert.equal(loaded.memory.summary, 'Fifty connections.');
      assert.equal(loaded.raw, original, 'not read again while held');
    });

    it('released: the text and Content go, and are read again from the file as it is then', () => {
      const loaded = readWhole();
      loaded.releaseText();
      assert.equal(loaded.knownText, null, 'the text was let go');
      assert.equal(loaded.memory.topic, 'Pool size', 'the fields stay');
      assert.equal(loaded.memory.summary, 'Fifty connections.');
      const edited = memoryText(A, { topic: 'Pool size', tags: ['db'], summary: 'Fifty connections.', content: 'Read again.' });
      fs.writeFileSync(file, edited);
      assert.equal(loaded.memory.content, 'Read again.', 'the Content too: it is read with the text');
      assert.equal(loaded.raw, edited);
    });

    it('released, the text read again is kept within the ReadTexts budget, as a file opened from its record', () => {
      const texts = new ReadTexts();
      const loaded = readWhole(texts);
      assert.equal(texts.size, 0, 'a text read whole is not the budget\'s');
      loaded.releaseText();
      assert.equal(loaded.memory.content, 'The pool holds 50 connections.');
      assert.equal(texts.size, 1);
      loaded.releaseText();
      assert.equal(loaded.knownText, original, 'a text read when asked for stays with ReadTexts');
    });

    it('a memory read whole has the fields of a parsed one, in the same order, as one from a record', () => {
      const parsed = readNow().memory;
      const whole = readWhole().memory;
      assert.deepEqual(Object.keys(whole), Object.keys(fromRecord().memory));
      assert.deepEqual({ ...memoryOf(whole, { summary: whole.summary, content: whole.content, hasSections: whole.hasSections }) }, { ...parsed });
    });

    it('a file made with a parsed memory (not by fromText) keeps its text: its memory could not read its Content again', () => {
      const loaded = readNow();
      loaded.releaseText();
      assert.equal(loaded.knownText, original);
      assert.equal(loaded.memory.content, 'The pool holds 50 connections.');
    });
  });

  describe('ReadTexts: the texts read when asked for, kept for the files read last', () => {
    const ids = [testId(0xb1), testId(0xb2), testId(0xb3)];
    /** Each memory's file, written in `dir` with a Content of `chars` characters. */
    const write = (id: string, content: string) => fs.writeFileSync(path.join(dir, `${id}.md`), memoryText(id, { topic: `Topic ${id}`, content }));
    const recordOf = (id: string) => {
      const raw = fs.readFileSync(path.join(dir, `${id}.md`), 'utf8');
      const parsed = parseMemoryFile(raw);
      return new LoadedFile(parsed.memory, statSignature(path.join(dir, `${id}.md`))!, frontmatterDigest(parsed.frontmatter), dir, raw).record();
    };

    it('lets go of the oldest texts, and their Content, once over its budget; a file asked again reads it again', () => {
      for (const id of ids) write(id, Array(100).fill(id).join(' '));
      const textLength = fs.readFileSync(path.join(dir, `${ids[0]}.md`), 'utf8').length;
      // Room for two texts.
      const texts = new ReadTexts(2 * textLength);
      const [b1, b2, b3] = ids.map((id) => LoadedFile.fromRecord(recordOf(id), dir, texts));
      assert.equal(b1!.memory.content, Array(100).fill(ids[0]).join(' '));
      assert.ok(b2!.raw.includes(`Topic ${ids[1]}`));
      assert.equal(texts.size, 2);
      assert.ok(b3!.raw.includes(`Topic ${ids[2]}`));
      assert.equal(texts.size, 2);
      assert.equal(b1!.knownText, null, 'the oldest text was kept past the budget');
      assert.notEqual(b2!.knownText, null);
      // Its Content went with it: asked again, it is read from the file as it is now.
      write(ids[0]!, 'Edited since.');
      assert.equal(b1!.memory.content, 'Edited since.');
      assert.equal(b2!.knownText, null, 'reading b1 again let b2 go');
    });

    it('keeps the text just read even when it alone is over the budget', () => {
      write(ids[0]!, 'x'.repeat(1000));
      const texts = new ReadTexts(10);
      const loaded = LoadedFile.fromRecord(recordOf(ids[0]!), dir, texts);
      assert.equal(loaded.memory.content, 'x'.repeat(1000));
      assert.notEqual(loaded.knownText, null);
      assert.equal(texts.size, 1);
    });

    it('a store opened from its caches keeps the texts it reads within the budget, whatever it reads', async () => {
      const project = makeTempProject('ltm-read-texts-');
      try {
        // Enough Content that reading every memory's would be twice the budget.
        const count = 12;
        const contentChars = Math.ceil((2 * READ_TEXTS_BUDGET_CHARS) / count);
        const stored: string[] = [];
        const store = MemoryStore.open(project);
        try {
          for (let i = 0; i < count; i++) stored.push((await store.store({ topic: `Large memory ${i}`, content: String(i % 10).repeat(contentChars) })).memory.id);
          store.flushCaches();
        } finally {
          store.dispose();
        }
        // As a fresh process opens it: the record cache first, then the files (StoreOpening).
        const records = new MemoryRecordCache(storePaths(project).parseCache);
        records.load();
        const parts = createStoreParts(storePaths(project), {}, records);
        parts.mirror.refresh();
        try {
          const files = () => stored.map((id) => parts.mirror.files.get(id)!);
          assert.ok(files().every((f) => f.knownText === null), 'opened from the record cache: nothing read');
          for (const [i, f] of files().entries()) assert.equal(f.memory.content, String(i % 10).repeat(contentChars));
          const keptChars = files().reduce((sum, f) => sum + (f.knownText?.length ?? 0), 0);
          assert.ok(keptChars > 0 && keptChars <= READ_TEXTS_BUDGET_CHARS + contentChars * 1.1, `${keptChars} characters of text kept`);
          assert.equal(files()[count - 1]!.knownText !== null, true, 'the last read is kept');
          assert.equal(files()[0]!.knownText, null, 'the first read was let go');
        } finally {
          parts.mirror.dispose();
        }
      } finally {
        removeDir(project);
      }
    });
  });
});
