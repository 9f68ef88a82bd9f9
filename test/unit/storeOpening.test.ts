/**
 * How a store opens and what it leaves the next process (src/core/storeOpening.ts),
 * on a store's parts built on a real directory, not yet refreshed: the record
 * cache (parse-cache.json) read before the first look at the files, opening in
 * steps, and the caches saved for the next process.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { MemoryRecordCache, type SavedRecords } from '../../src/core/memoryRecords';
import { MemorySearchIndex } from '../../src/core/search';
import { initStoreFiles, storePaths } from '../../src/core/storeFiles';
import { sweepSignatures } from '../../src/core/signatureSweep';
import { SWEEP_ASIDE_MIN_RECORD_CACHE_BYTES, StoreOpening } from '../../src/core/storeOpening';
import { createStoreParts, type StoreParts } from '../../src/core/storeParts';
import { statPathsDuring } from '../support/fsCalls';
import { makeTempProject, removeDir, testId, writeMemory } from '../support/storeKit';

const [A, B] = [testId(0xa), testId(0xb)];

describe('storeOpening: how a store opens, and the caches it saves', () => {
  let project: string;
  let opened: { parts: StoreParts; opening: StoreOpening }[];
  /** A store's parts and their opening as MemoryStore builds them, nothing read yet. */
  const prepare = () => {
    const paths = storePaths(project);
    const records = new MemoryRecordCache(paths.parseCache);
    const parts = createStoreParts(paths, {}, records);
    const built = { parts, opening: new StoreOpening(records, parts) };
    opened.push(built);
    return built;
  };
  /** Names of the files parse-cache.json holds records of. */
  const recordNames = (): string[] => {
    const saved = JSON.parse(fs.readFileSync(storePaths(project).parseCache, 'utf8')) as SavedRecords;
    return saved.ids.map((id) => `${id}.md`).sort();
  };

  beforeEach(() => {
    project = makeTempProject('ltm-opening-');
    opened = [];
    const paths = storePaths(project);
    initStoreFiles(paths);
    writeMemory(paths.root, A, { topic: 'Alpha topic', content: 'Alpha content.' });
    writeMemory(paths.root, B, { topic: 'Beta topic', content: 'Beta content.' });
  });
  afterEach(() => {
    for (const { parts } of opened) parts.mirror.dispose();
    removeDir(project);
  });

  it('is not open until a refresh; ensureOpen reads the files once', () => {
    const { parts, opening } = prepare();
    assert.equal(opening.isOpen, false);
    assert.equal(parts.mirror.files.size, 0, 'nothing read yet');
    opening.ensureOpen();
    assert.equal(opening.isOpen, true);
    assert.deepEqual([...parts.mirror.files.keys()].sort(), [A, B]);
    // Open already: ensureOpen does not look again (refresh does).
    writeMemory(parts.paths.root, testId(0xc));
    opening.ensureOpen();
    assert.equal(parts.mirror.files.size, 2);
    opening.refresh();
    assert.equal(parts.mirror.files.size, 3);
  });

  it('flushCaches saves nothing for a store never opened, and the records and the search index once it was', () => {
    const first = prepare();
    first.opening.flushCaches();
    assert.equal(fs.existsSync(first.parts.paths.parseCache), false);
    first.opening.refresh();
    first.parts.queries.warmSearchIndex();
    first.opening.flushCaches();
    assert.deepEqual(recordNames(), [`${A}.md`, `${B}.md`]);
    assert.ok(fs.existsSync(first.parts.paths.searchIndex), 'the search index built is saved');
  });

  it('the next process opens from the records, reading no memory file until its text is needed', () => {
    const first = prepare();
    first.opening.refresh();
    // Read or written by this process: the text is kept.
    assert.notEqual(first.parts.mirror.files.get(A)!.knownText, null);
    first.opening.flushCaches();
    const next = prepare();
    next.opening.refresh();
    const file = next.parts.mirror.files.get(A)!;
    assert.equal(file.memory.topic, 'Alpha topic');
    assert.equal(file.knownText, null, 'opened from its record: the file was not read');
    assert.equal(file.memory.content, 'Alpha content.');
  });

  it('flushCaches lets go of the texts read whole once the search index holds them (a fresh clone reads every one)', () => {
    const { parts, opening } = prepare();
    opening.refresh();
    const texts = () => [A, B].map((id) => parts.mirror.files.get(id)!.knownText);
    opening.flushCaches();
    assert.ok(texts().every((t) => t !== null), 'the search index not loaded yet: building it would read them again');
    parts.queries.warmSearchIndex();
    opening.flushCaches();
    assert.deepEqual(texts(), [null, null]);
    assert.equal(parts.mirror.files.get(A)!.memory.content, 'Alpha content.', 'read again when asked for');
    assert.deepEqual(
      parts.queries.search('beta', 10, 'active', undefined).map((hit) => hit.id),
      [B],
      'the index holds what the texts gave',
    );
  });

  it('saveRecords leaves out the memory being purged', () => {
    const { opening } = prepare();
    opening.refresh();
    opening.saveRecords(B);
    assert.deepEqual(recordNames(), [`${A}.md`]);
  });

  it('flushCaches and saveRecords write nothing once the store directory is gone', () => {
    const { parts, opening } = prepare();
    opening.refresh();
    parts.mirror.dispose();
    fs.rmSync(parts.paths.root, { recursive: true });
    opening.saveRecords();
    opening.flushCaches();
    assert.equal(fs.existsSync(parts.paths.root), false);
  });

  describe('flushCachesInSlices (a server\'s pause)', () => {
    /** A store of `count` memories, opened and indexed, its caches behind the files (none saved yet). */
    const openedStore = (count: number) => {
      for (let n = 0; n < count; n++) writeMemory(storePaths(project).root, testId(0x100 + n), { topic: `Topic ${n} about caching`, content: `Content ${n}: the record cache and the search index.` });
      const built = prepare();
      built.opening.refresh();
      built.parts.queries.warmSearchIndex();
      return built;
    };

    it('writes the same caches as flushCaches, giving way between slices', async () => {
      const sliced = openedStore(300);
      let pauses = 0;
      await sliced.opening.flushCachesInSlices({ sliceMs: 0, pause: async () => void pauses++ });
      const inSlices = [fs.readFileSync(sliced.parts.paths.parseCache), fs.readFileSync(sliced.parts.paths.searchIndex)];
      assert.ok(pauses > 10, `${pauses} pauses`);
      // The same store saved at once (a new process, the caches deleted).
      fs.rmSync(sliced.parts.paths.parseCache);
      fs.rmSync(sliced.parts.paths.searchIndex);
      const atOnce = prepare();
      atOnce.opening.refresh();
      atOnce.parts.queries.warmSearchIndex();
      atOnce.opening.flushCaches();
      assert.ok(fs.readFileSync(atOnce.parts.paths.parseCache).equals(inSlices[0]!), 'the record cache');
      assert.ok(fs.readFileSync(atOnce.parts.paths.searchIndex).equals(inSlices[1]!), 'the search index');
      // Saved: nothing is left to write.
      pauses = 0;
      await sliced.opening.flushCachesInSlices({ sliceMs: 0, pause: async () => void pauses++ });
      assert.equal(pauses, 0);
    });

    it('leaves the cache being written as it was when a memory changes between two slices, and the next flush saves it', async () => {
      const { parts, opening } = openedStore(200);
      const late = testId(0xfff);
      let changed = false;
      await opening.flushCachesInSlices({
        sliceMs: 0,
        pause: async () => {
          if (changed) return;
          changed = true;
          // What a request answered in the pause does: a memory written, the mirror and the index told.
          writeMemory(parts.paths.root, late, { topic: 'Written during the flush' });
          opening.refresh();
        },
      });
      assert.equal(changed, true);
      assert.equal(fs.existsSync(parts.paths.parseCache), false, 'the record cache was overtaken: not written');
      // The search index was written after the change, whole: it holds the new memory.
      const loaded = MemorySearchIndex.deserialize(fs.readFileSync(parts.paths.searchIndex));
      assert.notEqual(loaded?.index.slotOfDocument(late), undefined);
      await opening.flushCachesInSlices();
      assert.ok(recordNames().includes(`${late}.md`));
      const next = prepare();
      next.opening.refresh();
      assert.deepEqual(next.parts.queries.search('written during the flush', 10, 'active', undefined).map((hit) => hit.id), [late]);
    });

    it('writes nothing more once the store is closed between two slices', async () => {
      const { parts, opening } = openedStore(200);
      await opening.flushCachesInSlices({ sliceMs: 0, pause: async () => parts.mirror.dispose() });
      assert.equal(fs.existsSync(parts.paths.parseCache), false);
      assert.equal(fs.existsSync(parts.paths.searchIndex), false);
      assert.deepEqual(fs.readdirSync(parts.paths.root).filter((name) => name.endsWith('.tmp')), [], 'no temporary file left behind');
    });

    it('runs one flush at a time: a second call waits for the first', async () => {
      const { parts, opening } = openedStore(100);
      const order: string[] = [];
      const first = opening.flushCachesInSlices({ sliceMs: 0, pause: async () => void order.push('first') }).then(() => order.push('first done'));
      const second = opening.flushCachesInSlices({ sliceMs: 0, pause: async () => void order.push('second') }).then(() => order.push('second done'));
      await Promise.all([first, second]);
      assert.equal(order.indexOf('first done') < order.indexOf('second done'), true);
      assert.equal(order.includes('second'), false, 'nothing left to write for the second');
      assert.ok(fs.existsSync(parts.paths.searchIndex));
    });
  });

  it('in a large store, openInSteps has a worker thread stat the memory files, and opens to what a plain refresh reads', async () => {
    prepare().opening.refresh();
    opened[0]!.opening.flushCaches();
    const paths = storePaths(project);
    // The size that decides is the record cache's; trailing spaces keep its JSON as it was.
    fs.appendFileSync(paths.parseCache, ' '.repeat(SWEEP_ASIDE_MIN_RECORD_CACHE_BYTES));
    const { parts, opening } = prepare();
    const statted = await statPathsDuring(() => opening.openInSteps());
    assert.deepEqual(statted.filter((file) => file.endsWith('.md')), [], 'a memory file was statted on this thread');
    const plain = prepare();
    plain.opening.refresh();
    assert.deepEqual([...parts.mirror.files.keys()].sort(), [A, B]);
    for (const id of [A, B]) {
      assert.deepEqual(parts.mirror.files.get(id)!.signature, plain.parts.mirror.files.get(id)!.signature);
      assert.deepEqual(parts.mirror.files.get(id)!.memory, plain.parts.mirror.files.get(id)!.memory);
    }
    assert.equal(parts.mirror.files.get(A)!.knownText, null, 'opened from the records');

    // A small store's files are statted here: a worker's start would cost more.
    fs.writeFileSync(paths.parseCache, fs.readFileSync(paths.parseCache, 'utf8').trimEnd());
    const small = prepare();
    const stattedSmall = await statPathsDuring(() => small.opening.openInSteps());
    assert.equal(stattedSmall.filter((file) => file.endsWith('.md')).length, 2);
  });

  describe('the saved search index, read ahead while the worker sweeps', () => {
    /** A large store's parts (the worker sweeps), with the read-ahead of search-index.bin recorded. */
    const large = () => {
      prepare().opening.refresh();
      opened[0]!.opening.flushCaches();
      fs.appendFileSync(storePaths(project).parseCache, ' '.repeat(SWEEP_ASIDE_MIN_RECORD_CACHE_BYTES));
      const built = prepare();
      const readAhead: boolean[] = [];
      const read = built.parts.queries.readSavedSearchIndex.bind(built.parts.queries);
      built.parts.queries.readSavedSearchIndex = () => {
        readAhead.push(built.opening.isOpen);
        read();
      };
      return { ...built, readAhead };
    };

    it('is read before the files when nothing waits, or only requests that will search', async () => {
      const alone = large();
      await alone.opening.openInSteps();
      assert.deepEqual(alone.readAhead, [false], 'read ahead, before the files');
      const searching = large();
      const opening = searching.opening.openInSteps();
      const waited = searching.opening.untilOpened({ thenSearches: true });
      await opening;
      await waited;
      assert.deepEqual(searching.readAhead, [false]);
    });

    it('is left for later when a request that will not search waits for the opening (a first session start)', async () => {
      const { parts, opening, readAhead } = large();
      const done = opening.openInSteps();
      const waited = opening.untilOpened();
      await done;
      await waited;
      assert.deepEqual(readAhead, [], 'the session start waited for the saved index, which it does not use');
      // The index is read when first needed, as without a read-ahead.
      assert.deepEqual(parts.queries.search('Alpha', 5, 'active', undefined).map((hit) => hit.id), [A]);
    });
  });

  describe('a sweep started ahead (sweepAhead: a server starts it before it listens)', () => {
    /** A large store's parts (the worker sweeps), its sweeps counted. */
    const large = () => {
      prepare().opening.refresh();
      opened[0]!.opening.flushCaches();
      fs.appendFileSync(storePaths(project).parseCache, ' '.repeat(SWEEP_ASIDE_MIN_RECORD_CACHE_BYTES));
      const paths = storePaths(project);
      const records = new MemoryRecordCache(paths.parseCache);
      const parts = createStoreParts(paths, {}, records);
      const sweeps: string[] = [];
      const opening = new StoreOpening(records, parts, undefined, (dir) => {
        sweeps.push(dir);
        return sweepSignatures(dir);
      });
      opened.push({ parts, opening });
      return { parts, opening, sweeps };
    };

    it('is the one the opening uses: one worker, and the store reads as one opened without it', async () => {
      const { parts, opening, sweeps } = large();
      opening.sweepAhead();
      opening.sweepAhead();
      assert.equal(sweeps.length, 1, 'started once');
      await opening.openInSteps();
      assert.equal(sweeps.length, 1, 'the opening started none of its own');
      const plain = prepare();
      plain.opening.refresh();
      assert.deepEqual([...parts.mirror.files.keys()].sort(), [...plain.parts.mirror.files.keys()].sort());
      assert.equal(parts.mirror.files.get(A)!.memory.topic, 'Alpha topic');
    });

    it('misses nothing written between its start and the opening', async () => {
      const { parts, opening } = large();
      opening.sweepAhead();
      const C = testId(0xc);
      writeMemory(parts.paths.root, C, { topic: 'Gamma topic', content: 'Written while the sweep ran.' });
      await opening.openInSteps();
      assert.equal(parts.mirror.files.get(C)?.memory.topic, 'Gamma topic');
    });

    it('is not started for a store open already, and a store opened after it started opens again with none', async () => {
      const open = large();
      open.opening.refresh();
      open.opening.sweepAhead();
      assert.equal(open.sweeps.length, 0);
      const { opening, sweeps } = large();
      opening.sweepAhead();
      opening.refresh();
      await opening.openInSteps();
      assert.equal(sweeps.length, 1, 'the opening after a refresh statted nothing more');
    });
  });

  it('a memory file edited in place after the worker statted it, which the watcher reports, is read as it is now, not from its record', async () => {
    prepare().opening.refresh();
    opened[0]!.opening.flushCaches();
    const paths = storePaths(project);
    const records = new MemoryRecordCache(paths.parseCache);
    const parts = createStoreParts(paths, { watch: true }, records);
    const opening = new StoreOpening(records, parts);
    opened.push({ parts, opening });
    // As openInSteps does: watching first, then the sweep.
    parts.mirror.watchIfAsked();
    const swept = await sweepSignatures(paths.memories);
    const file = path.join(paths.memories, `${A}.md`);
    const reported = new Promise<void>((resolve) => {
      const watcher = fs.watch(paths.memories, () => {
        watcher.close();
        resolve();
      });
    });
    const ino = fs.statSync(file).ino;
    fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('Alpha topic', 'Alpha topic, edited after the sweep'));
    assert.equal(fs.statSync(file).ino, ino, 'edited in place');
    await reported;
    // The store's own watcher has had its turn of the event loop too.
    await new Promise((resolve) => setTimeout(resolve, 50));
    opening.refresh({ swept });
    assert.equal(parts.mirror.files.get(A)!.memory.topic, 'Alpha topic, edited after the sweep');
    assert.equal(parts.mirror.files.get(B)!.knownText, null, 'the others opened from their records');
  });

  describe('on a shared thread without the record cache (a fresh clone), the memory files are read a slice at a time', () => {
    /** Enough files that reading them takes several slices (OPENING_SLICE_MS) on any machine: ~0.1 ms each. */
    const COUNT = 1500;
    beforeEach(() => {
      for (let i = 0; i < COUNT; i++) writeMemory(storePaths(project).root, testId(0x1000 + i), { topic: `Topic ${i}`, content: `Content ${i}.` });
    });

    /** How many files were read at each turn of the event loop that came while they were partly read. */
    const partlyReadTurns = async ({ parts, opening }: { parts: StoreParts; opening: StoreOpening }, inSlices: boolean): Promise<number[]> => {
      const loadedAtTurns: number[] = [];
      let underWay = true;
      const tick = () => {
        loadedAtTurns.push(parts.mirror.files.size);
        if (underWay) setImmediate(tick);
      };
      setImmediate(tick);
      await opening.openInSteps({ inSlices });
      underWay = false;
      return loadedAtTurns.filter((n) => n > 0 && n < COUNT + 2);
    };

    it('other callbacks run while the files are partly read, and the store opens to what a plain refresh reads', async () => {
      const { parts, opening } = prepare();
      const partly = await partlyReadTurns({ parts, opening }, true);
      assert.ok(partly.length >= 1, `the event loop turned while ${partly.join(', ')} of ${COUNT + 2} files were read`);
      // By default (a process of its own) they are read in one go.
      assert.deepEqual(await partlyReadTurns(prepare(), false), []);
      const plain = prepare();
      plain.opening.refresh();
      assert.equal(parts.mirror.files.size, COUNT + 2);
      for (const [id, file] of plain.parts.mirror.files) {
        assert.deepEqual(parts.mirror.files.get(id)?.signature, file.signature, id);
        assert.deepEqual(parts.mirror.files.get(id)?.memory, file.memory, id);
      }
    });

    it('a request between two slices reads the rest at once; the opening ends with the files as they are', async () => {
      const { parts, opening } = prepare();
      let refreshedAt = -1;
      const request = () => {
        if (parts.mirror.files.size === 0) return void setImmediate(request);
        refreshedAt = parts.mirror.files.size;
        opening.ensureOpen();
      };
      setImmediate(request);
      // A memory added meanwhile is seen by the request's refresh.
      const late = testId(0x9999);
      setImmediate(() => writeMemory(parts.paths.root, late, { topic: 'Late topic' }));
      await opening.openInSteps({ inSlices: true });
      assert.ok(refreshedAt > 0 && refreshedAt < COUNT + 2, `the request came between slices (${refreshedAt} files read)`);
      assert.equal(parts.mirror.files.size, COUNT + 3);
      assert.equal(parts.mirror.files.get(late)?.memory.topic, 'Late topic');
    });
  });

  it('openInSteps gives way to the event loop between the record cache and the files', async () => {
    prepare().opening.refresh();
    opened[0]!.opening.flushCaches();
    const { parts, opening } = prepare();
    const seen: boolean[] = [];
    setImmediate(() => seen.push(opening.isOpen));
    const done = opening.openInSteps();
    assert.equal(opening.isOpen, false, 'nothing read before the first turn of the event loop');
    await done;
    assert.deepEqual(seen, [false], 'another callback ran between the steps, before the files were read');
    assert.equal(opening.isOpen, true);
    assert.equal(parts.mirror.files.get(A)!.knownText, null, 'the records were loaded before the files were looked at');
    // Open already: nothing is done again.
    await opening.openInSteps();
  });
});
