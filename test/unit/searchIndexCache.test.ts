import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { MemoryStore } from '../../src/core/store';
import { loadSearchIndex, saveSearchIndex, saveSearchIndexInSlices } from '../../src/core/searchIndexCache';
import { MemorySearchIndex } from '../../src/core/search';
import { statSignature } from '../../src/core/files';
import { initStoreFiles, storePaths } from '../../src/core/storeFiles';
import { makeTempProject, removeDir, useProject } from '../support/storeKit';
import { upsertsDuring } from '../support/searchIndexCalls';

function searchIds(store: MemoryStore, query: string): string[] {
  return store.search(query).map((r) => r.id);
}

describe('search-index.bin (the persisted search index)', () => {
  const ctx = useProject('ltm-searchcache-');
  const indexFile = () => path.join(ctx.root, 'search-index.bin');
  const memoryFile = (id: string) => path.join(ctx.root, 'memories', `${id}.md`);

  async function storeThree(store: MemoryStore): Promise<string[]> {
    const ids: string[] = [];
    for (const [topic, content] of [
      ['Postgres deadlock on invoice import', 'The zebra migration took locks in two orders; take them in id order.'],
      ['Flaky websocket test in CI', 'The test awaited a hummingbird event before subscribing.'],
      ['Gradle cache poisoning', 'A stale kingfisher artifact came from the shared build cache.'],
    ]) {
      ids.push((await store.store({ topic: topic!, content: content! })).memory.id);
    }
    return ids;
  }

  it('a later process searches what an earlier one saved, as the files are now: edits, additions and deletions in between included', async () => {
    const first = ctx.open();
    const [edited, deleted, kept] = await storeThree(first);
    assert.deepEqual(searchIds(first, 'zebra'), [edited]);
    first.flushCaches();
    assert.ok(fs.existsSync(indexFile()), 'flushCaches saved the index');

    // While no LTM process runs: an edit in place (same inode, as editors save), a deletion, and a new memory.
    fs.writeFileSync(memoryFile(edited!), fs.readFileSync(memoryFile(edited!), 'utf8').replaceAll('zebra', 'giraffe'));
    fs.rmSync(memoryFile(deleted!));
    const other = ctx.open();
    const added = (await other.store({ topic: 'Ostrich parser regression', content: 'The ostrich grammar lost a rule.' })).memory.id;

    const later = ctx.open();
    assert.deepEqual(searchIds(later, 'giraffe'), [edited], 'the edited text is searched');
    assert.deepEqual(searchIds(later, 'zebra'), [], 'the old text is not');
    assert.deepEqual(searchIds(later, 'hummingbird'), [], 'a deleted memory is not found');
    assert.deepEqual(searchIds(later, 'ostrich'), [added], 'a memory added since is found');
    assert.deepEqual(searchIds(later, 'kingfisher'), [kept], 'an unchanged memory is found');
  });

  it('is used as saved when nothing changed, and saved again only after a change', async () => {
    const store = ctx.open();
    await storeThree(store);
    store.search('zebra');
    store.flushCaches();
    const saved = statSignature(indexFile());
    const mirrorFiles = new Map(
      fs.readdirSync(path.join(ctx.root, 'memories')).map((name) => {
        const id = name.slice(0, -3);
        const view = store.peek(id);
        return [id, { memory: view, signature: statSignature(memoryFile(id))! }] as const;
      }),
    );
    assert.equal(loadSearchIndex(indexFile(), mirrorFiles).changed, false, 'every document is taken from the file');

    const reopened = ctx.open();
    reopened.search('zebra');
    reopened.flushCaches();
    assert.deepEqual(statSignature(indexFile()), saved, 'an index loaded unchanged is not written again');

    await reopened.store({ topic: 'Pelican timeout', content: 'The pelican service needs 30 s to warm up.' });
    reopened.flushCaches();
    assert.notDeepEqual(statSignature(indexFile()), saved, 'a change is saved');
    assert.equal(ctx.open().search('pelican').length, 1);
  });

  it('a copied project keeps its saved index: files with new inodes and times but the same text are not indexed again; one edited in the copy is', async () => {
    const first = ctx.open();
    const [edited, , kept] = await storeThree(first);
    first.flushCaches();
    const copy = makeTempProject('ltm-searchcache-copy-');
    try {
      fs.cpSync(ctx.project, copy, { recursive: true });
      const copiedFile = (id: string) => path.join(storePaths(copy).memories, `${id}.md`);
      assert.notEqual(statSignature(copiedFile(kept!))!.ino, statSignature(memoryFile(kept!))!.ino, 'a copy has new inodes');
      fs.writeFileSync(copiedFile(edited!), fs.readFileSync(copiedFile(edited!), 'utf8').replaceAll('zebra', 'giraffe'));

      let store!: MemoryStore;
      const indexedHere = await upsertsDuring(() => {
        store = MemoryStore.open(copy);
        assert.deepEqual(searchIds(store, 'giraffe'), [edited], 'the text edited in the copy is searched');
        assert.deepEqual(searchIds(store, 'zebra'), [], 'its old text is not');
        assert.deepEqual(searchIds(store, 'kingfisher'), [kept]);
      });
      assert.equal(indexedHere, 1, 'only the edited memory is indexed again');
      // Saved under the copy's signatures: the next process indexes nothing again.
      store.flushCaches();
      store.dispose();
      const again = await upsertsDuring(() => {
        const next = MemoryStore.open(copy);
        assert.deepEqual(searchIds(next, 'giraffe'), [edited]);
        next.dispose();
      });
      assert.equal(again, 0);
    } finally {
      removeDir(copy);
    }
  });

  it('a damaged or foreign file is rebuilt from the memory files, never answered from', async () => {
    const store = ctx.open();
    const [edited] = await storeThree(store);
    for (const junk of [Buffer.from('garbage'), Buffer.alloc(0), Buffer.alloc(4096, 0xff)]) {
      fs.writeFileSync(indexFile(), junk);
      const reopened = ctx.open();
      assert.deepEqual(searchIds(reopened, 'zebra'), [edited]);
      reopened.flushCaches();
      assert.ok(fs.statSync(indexFile()).size > 4096 || !fs.readFileSync(indexFile()).equals(junk), 'replaced by a real index');
    }
  });

  it('is written only where .gitignore keeps it out of git; the next write to the store adds the line', async () => {
    const store = ctx.open();
    await storeThree(store);
    const gitignore = path.join(ctx.root, '.gitignore');
    fs.writeFileSync(gitignore, fs.readFileSync(gitignore, 'utf8').replace('search-index.bin\n', ''));
    store.search('zebra');
    store.flushCaches();
    assert.equal(fs.existsSync(indexFile()), false, 'not written while git would see it');

    await store.store({ topic: 'Heron', content: 'heron' });
    assert.match(fs.readFileSync(gitignore, 'utf8'), /^search-index\.bin$/m);
    store.flushCaches();
    assert.ok(fs.existsSync(indexFile()));
  });

  it('keeps no word of a purged memory, even when another process saves the index it loaded before the purge', async () => {
    const server = ctx.open();
    const secretish = 'xylophonist';
    const purged = (await server.store({ topic: 'Private note', content: `The ${secretish} knows the office door code.` })).memory.id;
    await server.store({ topic: 'Public note', content: 'The lobby opens at eight.' });
    assert.deepEqual(searchIds(server, secretish), [purged]);
    server.flushCaches();
    assert.ok(fs.readFileSync(indexFile()).includes(secretish), 'the word is in the saved index before the purge');

    // The server changes its index after saving it, so it has something to save again.
    await server.store({ topic: 'Another public note', content: 'The lift is out of order.' });
    const cli = ctx.open();
    await cli.forget(purged, { purge: true });
    assert.ok(!fs.existsSync(indexFile()) || !fs.readFileSync(indexFile()).includes(secretish), 'the purge removed it from disk at once');
    // The server still holds the index it built before the purge; what it saves must not bring the word back.
    server.flushCaches();
    cli.flushCaches();
    if (fs.existsSync(indexFile())) assert.ok(!fs.readFileSync(indexFile()).includes(secretish), 'no process saved it back');
    assert.deepEqual(searchIds(ctx.open(), secretish), []);
  });

  it('a process that built its index goes on with the form it saved: the same answers, and later changes still apply', async () => {
    const [edited, forgotten, kept] = await storeThree(ctx.open());
    // A fresh process without the cache builds the index from the files, then saves it and keeps the saved form.
    fs.rmSync(indexFile(), { force: true });
    const store = ctx.open();
    const queries = ['zebra', 'hummingbird', 'kingfisher', 'invoice import', 'cache', 'test'];
    const built = queries.map((q) => store.search(q).map((r) => [r.id, r.score]));
    store.flushCaches();
    assert.ok(fs.existsSync(indexFile()));
    assert.deepEqual(queries.map((q) => store.search(q).map((r) => [r.id, r.score])), built, 'the same hits and scores');

    await store.update(edited!, { summary: 'Flamingo locks in id order.', content: 'Take the locks of the flamingo migration in id order.' });
    await store.forget(forgotten!);
    const added = (await store.store({ topic: 'Heron build cache', content: 'The heron artifact was stale.' })).memory.id;
    assert.deepEqual(searchIds(store, 'zebra'), []);
    assert.deepEqual(searchIds(store, 'flamingo'), [edited]);
    assert.deepEqual(searchIds(store, 'hummingbird'), []);
    assert.deepEqual(searchIds(store, 'kingfisher'), [kept]);
    assert.deepEqual(searchIds(store, 'heron'), [added]);
    store.flushCaches();
    assert.deepEqual(searchIds(ctx.open(), 'flamingo'), [edited], 'and a later process reads what it saved');
  });
  describe('saveSearchIndexInSlices (a server\'s pause)', () => {
    /** An index of `count` memories, and their files' signatures as a store would give them, in an initialised store folder. */
    function indexOf(count: number) {
      initStoreFiles(storePaths(ctx.project));
      const memories = Array.from({ length: count }, (_, n) => ({ id: `mem_${(0x10000000 + n).toString(16)}`, topic: `Topic ${n} cache`, tags: ['db'], summary: `Summary ${n}`, content: `Words ${n} in slices.` }));
      const index = MemorySearchIndex.build(memories);
      const files = new Map(memories.map((memory, n) => [memory.id, { memory, signature: { size: 100 + n, mtimeMs: 1.7e12 + n, ino: 5000 + n } }]));
      return { index, files, memories };
    }

    it('writes what saveSearchIndex writes, giving way between slices', async () => {
      const { index, files } = indexOf(800);
      let pauses = 0;
      assert.equal(await saveSearchIndexInSlices(indexFile(), index, files, { sliceMs: 0, pause: async () => void pauses++ }), true);
      const inSlices = fs.readFileSync(indexFile());
      assert.ok(pauses > 2, `${pauses} pauses`);
      assert.ok(saveSearchIndex(indexFile(), index, files));
      assert.ok(fs.readFileSync(indexFile()).equals(inSlices));
    });

    it('leaves the file as it was when the index changes between two slices', async () => {
      const { index, files, memories } = indexOf(800);
      fs.writeFileSync(indexFile(), 'the index saved before');
      let changed = false;
      const saved = await saveSearchIndexInSlices(indexFile(), index, files, {
        sliceMs: 0,
        pause: async () => {
          if (changed) return;
          changed = true;
          index.upsert({ ...memories[0]!, content: 'Edited while it was being saved.' });
        },
      });
      assert.equal(changed, true);
      assert.equal(saved, false);
      assert.equal(fs.readFileSync(indexFile(), 'utf8'), 'the index saved before');
      assert.deepEqual(fs.readdirSync(ctx.root).filter((name) => name.startsWith('search-index.bin') && name !== 'search-index.bin'), [], 'no temporary file left behind');
    });
  });
});
