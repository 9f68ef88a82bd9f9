/**
 * The search index built on a worker thread while a store without a saved
 * one opens (src/core/searchIndexAside.ts), with the worker as shipped
 * (dist/search-index-worker.js): its index is the one the store would build,
 * the store uses it instead of indexing on its own thread, and a worker that
 * cannot run changes nothing but where the index is built.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { MemorySearchIndex } from '../../src/core/search';
import type { SearchableMemory } from '../../src/core/searchedText';
import { INDEX_ASIDE_MIN_MEMORIES, SearchIndexFeed } from '../../src/core/searchIndexAside';
import { MemoryRecordCache } from '../../src/core/memoryRecords';
import { MemoryStore } from '../../src/core/store';
import { StoreOpening } from '../../src/core/storeOpening';
import { createStoreParts } from '../../src/core/storeParts';
import { storePaths } from '../../src/core/storeFiles';
import CLI_FILES from '../../src/shared/cliFiles.json';
import { upsertsDuring } from '../support/searchIndexCalls';
import { REPO_ROOT, ensureCliBuilt, makeTempProject, removeDir, testId, writeMemory } from '../support/storeKit';

const WORKER = path.join(REPO_ROOT, CLI_FILES.indexWorker);
const WORDS = ['postgres', 'deadlock', 'retry', 'webhook', 'docker', 'cache', 'timeout', 'migration', 'react', 'render', 'queue', 'token'];

/** The n-th memory of a deterministic corpus: words shared unevenly, so that searches rank many hits. */
function memoryAt(n: number): SearchableMemory & { tags: string[] } {
  const word = (k: number) => WORDS[(n * 7 + k * 5) % WORDS.length]!;
  return {
    id: testId(n + 1),
    topic: `${word(0)} ${word(1)} note ${n}`,
    tags: [word(2), `area-${n % 9}`],
    keywords: n % 4 === 0 ? [word(3)] : [],
    summary: `Why the ${word(1)} step needs the ${word(3)} fix.`,
    content: `The ${word(0)} broke when ${word(2)} ran twice; item ${n} kept its ${word(4)} after the ${word(5)} was ${n % 2 ? 'retried' : 'cleared'}.`,
  };
}

/** Each hit of `query`: ID and score, best first. */
function hitsOf(index: MemorySearchIndex, query: string): [string, number][] {
  return [...index.search(query)].map((h) => [h.id, h.score]);
}

describe('searchIndexAside: the search index built on a worker while the store opens', function () {
  this.timeout(60_000);
  before(() => ensureCliBuilt());

  it('the shipped worker answers the index the store would build of what it was handed, each document keyed by its file signature', async () => {
    const memories = Array.from({ length: 600 }, (_, n) => memoryAt(n));
    const feed = SearchIndexFeed.start(WORKER);
    assert.ok(feed, 'the worker did not start');
    memories.forEach((m, n) => feed.add(m, { ino: 1000 + n, size: 300 + n, mtimeMs: 1.5e12 + n }));
    assert.equal(feed.size, 600);
    const bytes = await feed.finish();
    assert.ok(bytes, 'the worker answered no index');
    const saved = MemorySearchIndex.deserialize(bytes);
    assert.ok(saved, 'the worker answered what is not an index');
    assert.equal(saved.index.size, 600);
    memories.forEach((m, n) => {
      const slot = saved.index.slotOfDocument(m.id)!;
      assert.ok(saved.versions.isAt(slot, { ino: 1000 + n, size: 300 + n, mtimeMs: 1.5e12 + n }), m.id);
      assert.ok(!saved.versions.isAt(slot, { ino: 1000 + n, size: 301 + n, mtimeMs: 1.5e12 + n }), m.id);
    });
    const here = MemorySearchIndex.build(memories);
    for (const query of ['postgres', 'deadlock retry', 'webhok', 'area-3', 'cache cleared', 'note 42', 'render queue token']) {
      assert.deepEqual(hitsOf(saved.index, query), hitsOf(here, query), query);
    }
  });

  it('a worker that cannot start or run answers nothing, at once', async () => {
    const missing = SearchIndexFeed.start(path.join(REPO_ROOT, 'dist', 'no-such-worker.js'));
    if (missing) {
      missing.add(memoryAt(0), { ino: 1, size: 1, mtimeMs: 1 });
      assert.equal(await missing.finish(), null);
    }
    const broken = path.join(makeTempProject('ltm-aside-broken-'), 'worker.js');
    try {
      fs.writeFileSync(broken, "throw new Error('not a worker');\n");
      const feed = SearchIndexFeed.start(broken);
      assert.ok(feed);
      feed.add(memoryAt(0), { ino: 1, size: 1, mtimeMs: 1 });
      assert.equal(await feed.finish(), null);
    } finally {
      removeDir(path.dirname(broken));
    }
  });

  describe('a store opened without search-index.bin', () => {
    let project: string;
    const stores: MemoryStore[] = [];
    const track = (store: MemoryStore) => (stores.push(store), store);
    const write = (count: number) => {
      const { root } = storePaths(project);
      for (let n = 0; n < count; n++) {
        const m = memoryAt(n);
        writeMemory(root, m.id, { topic: m.topic, tags: m.tags, summary: m.summary, content: m.content });
      }
    };
    const queries = ['postgres', 'deadlock retry', 'area-3 cache', 'render queue token', 'timeout cleared'];
    const answers = (store: MemoryStore) => queries.map((q) => store.search(q, { limit: 20 }).map((h) => [h.id, h.score]));

    beforeEach(() => {
      project = makeTempProject('ltm-aside-');
      MemoryStore.open(project).init();
    });
    afterEach(() => {
      for (const store of stores.splice(0)) store.dispose();
      removeDir(project);
    });

    it('opens with the index the worker built: none of it indexed on this thread, searches answer as without it, and the next process loads it', async () => {
      const count = INDEX_ASIDE_MIN_MEMORIES + 100;
      write(count);
      const expected = answers(track(MemoryStore.open(project)));
      assert.ok(!fs.existsSync(storePaths(project).searchIndex));

      let store!: MemoryStore;
      const indexedHere = await upsertsDuring(async () => {
        store = track(await MemoryStore.openAsync(project, { searchIndexWorker: WORKER }));
        assert.deepEqual(answers(store), expected);
      });
      assert.equal(indexedHere, 0, `${indexedHere} of ${count} memories were indexed on the opening thread`);

      // Not on disk yet: the worker's index is saved for the next process.
      store.flushCaches();
      assert.ok(fs.existsSync(storePaths(project).searchIndex), 'search-index.bin was not written');
      const next = track(await MemoryStore.openAsync(project));
      assert.equal(await upsertsDuring(() => void answers(next)), 0, 'the saved index was not used');
      assert.deepEqual(answers(next), expected);
    });

    it('lets go of each text it hands the worker once the worker\'s index is the one used: the opening does not hold every memory\'s text', async () => {
      const count = INDEX_ASIDE_MIN_MEMORIES + 100;
      write(count);
      const expected = answers(track(MemoryStore.open(project)));
      fs.rmSync(storePaths(project).searchIndex, { force: true });
      fs.rmSync(storePaths(project).parseCache, { force: true });

      const records = new MemoryRecordCache(storePaths(project).parseCache);
      const parts = createStoreParts(storePaths(project), {}, records);
      const opening = new StoreOpening(records, parts, WORKER);
      try {
        await opening.openInSteps();
        const files = [...parts.mirror.files.values()];
        assert.equal(files.length, count);
        // Below the size where the index would be built here (from the texts), they are kept until flushCaches.
        const held = files.filter((file) => file.knownText !== null).length;
        assert.equal(held, INDEX_ASIDE_MIN_MEMORIES, `${held} of ${count} texts held after the opening`);
        const last = memoryAt(count - 1);
        assert.equal(parts.mirror.files.get(last.id)!.memory.content, last.content, 'read again from its file');
        await parts.queries.searchIndexReady();
        assert.equal(await upsertsDuring(async () => void parts.queries.warmSearchIndex()), 0, 'the worker\'s index was not the one used');
        assert.deepEqual(
          queries.map((q) => parts.queries.search(q, 20, 'active', undefined).map((h) => [h.id, h.score])),
          expected,
        );
      } finally {
        parts.mirror.dispose();
      }
    });

    it('a copied project (caches there, every file with a new inode) opens from its saved index: nothing is indexed again, here or on a worker', async () => {
      write(INDEX_ASIDE_MIN_MEMORIES + 10);
      const original = track(MemoryStore.open(project));
      const expected = answers(original);
      original.flushCaches();
      assert.ok(fs.existsSync(storePaths(project).searchIndex));
      const copy = makeTempProject('ltm-aside-copy-');
      try {
        fs.cpSync(project, copy, { recursive: true });
        // A worker that cannot start: an opening that asked for one would build the index on this thread.
        const indexedHere = await upsertsDuring(async () => {
          const store = track(await MemoryStore.openAsync(copy, { searchIndexWorker: path.join(copy, 'no-such-worker.js') }));
          assert.deepEqual(answers(store), expected);
        });
        assert.equal(indexedHere, 0, `${indexedHere} memories were indexed again`);
      } finally {
        removeDir(copy);
      }
    });

    it('a copied project lets go of each text its saved index holds as the file is read, and indexes again only the file that changed', async () => {
      write(60);
      const original = track(MemoryStore.open(project));
      answers(original);
      original.flushCaches();
      const copy = makeTempProject('ltm-aside-copy-');
      try {
        fs.cpSync(project, copy, { recursive: true });
        const edited = memoryAt(7);
        writeMemory(storePaths(copy).root, edited.id, { topic: edited.topic, tags: edited.tags, summary: edited.summary, content: `${edited.content} Zeppelin.` });
        const records = new MemoryRecordCache(storePaths(copy).parseCache);
        const parts = createStoreParts(storePaths(copy), {}, records);
        const opening = new StoreOpening(records, parts);
        try {
          // As an opening with a large record cache does: the saved index read ahead, then every file (each record is stale).
          parts.queries.readSavedSearchIndex();
          opening.refresh();
          const held = () => [...parts.mirror.files.values()].filter((file) => file.knownText !== null).map((file) => file.memory.id);
          assert.deepEqual(held(), [edited.id], 'only the changed file keeps its text, to be indexed again');
          assert.equal(await upsertsDuring(async () => void parts.queries.warmSearchIndex()), 1);
          assert.deepEqual(held(), [edited.id], 'loading the index read no text again to compare it');
          assert.deepEqual(parts.queries.search('zeppelin', 10, 'active', undefined).map((hit) => hit.id), [edited.id]);
          assert.equal(parts.queries.search('note 3', 10, 'active', undefined)[0]?.id, memoryAt(3).id);
          assert.equal(parts.mirror.files.get(memoryAt(3).id)!.memory.content, memoryAt(3).content, 'read again from its file');
        } finally {
          parts.mirror.dispose();
        }
      } finally {
        removeDir(copy);
      }
    });

    it('opened without waiting for the index (a host that serves meanwhile), searches wait for the worker through untilSearchIndexReady', async () => {
      write(INDEX_ASIDE_MIN_MEMORIES + 10);
      const expected = answers(track(MemoryStore.open(project)));
      const deserialize = MemorySearchIndex.deserialize.bind(MemorySearchIndex);
      let loaded = 0;
      MemorySearchIndex.deserialize = (...args: Parameters<typeof MemorySearchIndex.deserialize>) => (loaded++, deserialize(...args));
      try {
        const store = track(await MemoryStore.openAsync(project, { searchIndexWorker: WORKER }, { untilSearchIndex: false }));
        assert.equal(loaded, 0, 'the worker\'s index was waited for and loaded before the store was given back');
        const indexedHere = await upsertsDuring(async () => {
          await store.untilSearchIndexReady();
          assert.equal(loaded, 1);
          assert.deepEqual(answers(store), expected);
        });
        assert.equal(indexedHere, 0);
      } finally {
        MemorySearchIndex.deserialize = deserialize;
      }
    });

    it('a memory edited after it was handed over is found by its new words', async () => {
      write(INDEX_ASIDE_MIN_MEMORIES + 10);
      const store = track(MemoryStore.prepare(project, { searchIndexWorker: WORKER }));
      const edited = testId(8);
      await store.openInSteps({
        // The files are read and handed over; the worker's index is not loaded yet.
        beforeSearchIndex: async () => {
          // Saved as an editor that renames saves it (a one-shot store notices no edit in place).
          const file = path.join(storePaths(project).memories, `${edited}.md`);
          fs.writeFileSync(`${file}.tmp`, fs.readFileSync(file, 'utf8').replace(/The \w+ broke when/, 'The zeppelin broke when'));
          fs.renameSync(`${file}.tmp`, file);
          // Seen before the worker's index is loaded: that index has the old text, under the old file's signature.
          assert.equal(store.list({ limit: 1 }).total, INDEX_ASIDE_MIN_MEMORIES + 10);
        },
      });
      assert.deepEqual(store.search('zeppelin').map((h) => h.id), [edited]);
    });

    it('a small store builds its index where it searches (a worker would take longer to start)', async () => {
      write(40);
      let store!: MemoryStore;
      const indexedHere = await upsertsDuring(async () => {
        store = track(await MemoryStore.openAsync(project, { searchIndexWorker: WORKER }));
        store.search('postgres');
      });
      assert.equal(indexedHere, 40);
      assert.deepEqual(answers(store), answers(track(MemoryStore.open(project))));
    });

    it('with a worker that cannot run, the store builds its index itself and answers the same', async () => {
      write(INDEX_ASIDE_MIN_MEMORIES + 10);
      const expected = answers(track(MemoryStore.open(project)));
      const store = track(await MemoryStore.openAsync(project, { searchIndexWorker: path.join(project, 'no-such-worker.js') }));
      assert.deepEqual(answers(store), expected);
    });
  });
});
