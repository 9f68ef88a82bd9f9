/**
 * The worker's index, kept only as search-index.bin holds it
 * (src/core/searchSnapshotBuilder.ts): its bytes are a MemorySearchIndex's
 * for the same memories handed over in the same order; with memories handed
 * over again, it loads as the index of their last versions.
 */
import { strict as assert } from 'node:assert';
import fc from 'fast-check';
import type { FileSignature } from '../../src/core/files';
import { MemorySearchIndex } from '../../src/core/search';
import type { SearchableMemory } from '../../src/core/searchedText';
import { SearchSnapshotBuilder } from '../../src/core/searchSnapshotBuilder';

// Few words, so that memories share terms; some odd strings and non-ASCII ones for the terms' order.
const VOCABULARY = ['postgres', 'postgresql', 'migration', 'deadlock', 'the', 'index', 'indexes', 'react', 'cache', 'café', 'Zeta', 'x', '日本'];
const word = fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...VOCABULARY) }, { weight: 1, arbitrary: fc.string({ minLength: 1, maxLength: 6 }) });
const text = (max: number) => fc.array(word, { maxLength: max }).map((words) => words.join(' '));
const memoryArb = (ids: fc.Arbitrary<string>): fc.Arbitrary<SearchableMemory> =>
  fc.record({
  id: ids,
  topic: text(6),
  tags: fc.array(fc.constantFrom('db', 'react', 'ci'), { maxLength: 3 }),
  keywords: fc.array(text(2), { maxLength: 2 }),
  summary: text(8),
  content: text(30),
});
/** Each memory once, or a few IDs over and over. */
const distinctMemoriesArb = fc.uniqueArray(memoryArb(fc.integer({ min: 1, max: 60 }).map((n) => `m${n}`)), { selector: (m) => m.id, maxLength: 25 });
const repeatedMemoriesArb = fc.array(memoryArb(fc.constantFrom('m1', 'm2', 'm3', 'm4', 'm5', 'm6')), { maxLength: 25 });
const QUERIES = ['postgres', 'deadlock migration', 'index', 'café', 'zeta', 'the x', 'react cache', 'db'];
/** Versions by ID; one ID has none (saved as unknown). */
const versionOf = (id: string): FileSignature | undefined => (id === 'm6' ? undefined : { size: 100 + id.length, mtimeMs: 1.7e12 + id.charCodeAt(1), ino: 4242 + id.charCodeAt(1) });
/** Each hit of `query`, ID and score, by ID: hits with equal scores may come in either order. */
const hitsById = (index: MemorySearchIndex, query: string) => [...index.search(query)].map((h) => [h.id, h.score] as const).sort((a, b) => (a[0] < b[0] ? -1 : 1));

/** What a MemorySearchIndex built by upserts saves for `memories`, and what the builder saves. */
function bothBytes(memories: readonly SearchableMemory[], blockNumbers?: number): [Buffer, Buffer] {
  const index = MemorySearchIndex.build([]);
  const builder = new SearchSnapshotBuilder();
  for (const memory of memories) {
    index.upsert(memory);
    builder.add(memory);
  }
  if (blockNumbers === undefined) return [index.serialize(versionOf), builder.serialize(versionOf)];
  const pieces = (write: (w: (piece: Uint8Array) => void) => void) => {
    const parts: Buffer[] = [];
    write((piece) => parts.push(Buffer.from(piece)));
    return Buffer.concat(parts);
  };
  return [pieces((w) => index.writeSerialized(versionOf, w, blockNumbers)), pieces((w) => builder.writeSerialized(versionOf, w, blockNumbers))];
}

describe('searchSnapshotBuilder: the worker\'s index, only ever serialized', () => {
  it('saves the bytes a MemorySearchIndex saves for the same memories, in any order, whole or a block at a time', () => {
    fc.assert(
      fc.property(distinctMemoriesArb, fc.constantFrom(undefined, 7, 64), (memories, block) => {
        const [expected, actual] = bothBytes(memories, block);
        assert.ok(actual.equals(expected), 'the builder saved other bytes');
      }),
      { numRuns: 300 },
    );
  });

  it('with memories handed over again, loads as the index of their last versions: the same hits, scores, versions and digests', () => {
    fc.assert(
      fc.property(repeatedMemoriesArb, (memories) => {
        const builder = new SearchSnapshotBuilder();
        for (const memory of memories) builder.add(memory);
        const last = new Map(memories.map((m) => [m.id, m]));
        assert.equal(builder.size, last.size);
        const loaded = MemorySearchIndex.deserialize(builder.serialize(versionOf));
        assert.ok(loaded, 'not a whole snapshot');
        const expected = MemorySearchIndex.build(last.values());
        assert.equal(loaded.index.size, last.size);
        for (const query of QUERIES) assert.deepEqual(hitsById(loaded.index, query), hitsById(expected, query), query);
        for (const id of last.keys()) {
          const slot: number = loaded.index.slotOfDocument(id)!;
          assert.equal(loaded.index.textDigestAt(slot), expected.textDigestAt(expected.slotOfDocument(id)!), id);
          const version = versionOf(id);
          if (version) assert.ok(loaded.versions.isAt(slot, version), id);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('loads as an index that answers as the one it stands for, versions and digests included', () => {
    const memories: SearchableMemory[] = [
      { id: 'm1', topic: 'Postgres deadlock on migration', tags: ['db'], summary: 'Lock order.', content: 'Take the locks in one order.' },
      { id: 'm2', topic: 'React cache', tags: ['react'], summary: 'Stale renders.', content: 'Key the cache by props.' },
      { id: 'm1', topic: 'Postgres deadlock, again', tags: ['db'], summary: 'Lock order, retried.', content: 'Retry the migration.' },
      { id: 'm3', topic: 'Index bloat', tags: ['db'], summary: 'Vacuum.', content: 'Reindex concurrently.' },
    ];
    const builder = new SearchSnapshotBuilder();
    for (const memory of memories) builder.add(memory);
    assert.equal(builder.size, 3);
    const loaded = MemorySearchIndex.deserialize(builder.serialize(versionOf))!;
    assert.ok(loaded, 'not a whole snapshot');
    assert.equal(loaded.index.size, 3);
    assert.deepEqual([...loaded.index.search('deadlock')].map((h) => h.id), ['m1']);
    assert.deepEqual([...loaded.index.search('retry')].map((h) => h.id), ['m1']);
    assert.deepEqual([...loaded.index.search('props')].map((h) => h.id), ['m2']);
    const slot = loaded.index.slotOfDocument('m3')!;
    assert.ok(loaded.versions.isAt(slot, versionOf('m3')!));
    const reference = MemorySearchIndex.build([memories[1]!, memories[2]!, memories[3]!]);
    assert.equal(loaded.index.textDigestAt(loaded.index.slotOfDocument('m1')!), reference.textDigestAt(reference.slotOfDocument('m1')!));
  });

  it('takes 4 bytes a number, as the index does, when a memory repeats a word more than 65,535 times', () => {
    const long: SearchableMemory = { id: 'm1', topic: 'loop', tags: [], summary: 'A word, over and over.', content: 'again '.repeat(70_000) };
    const [expected, actual] = bothBytes([long, { id: 'm2', topic: 'again', tags: [], summary: '', content: 'once again' }]);
    assert.ok(actual.equals(expected));
    const loaded = MemorySearchIndex.deserialize(actual)!;
    assert.deepEqual([...loaded.index.search('again')].map((h) => h.id).sort(), ['m1', 'm2']);
  });
});
