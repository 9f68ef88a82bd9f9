/**
 * Near-duplicates (src/core/similarity.ts): the threshold is calibrated on the
 * pairs of similarityPairs.ts, each incoming memory measured against every
 * existing one in one index (with unrelated background memories, so that word
 * rarity is as in a real store). The table printed is the one the threshold's
 * comment quotes.
 */
import { strict as assert } from 'node:assert';
import { Corpus } from '../../bench/lib/corpus';
import { deriveSummary } from '../../src/core/memoryFile';
import { developerVocabulary } from '../../src/core/relatedTerms';
import { MemorySearchIndex } from '../../src/core/search';
import type { SearchableMemory } from '../../src/core/searchedText';
import { SIMILARITY_THRESHOLD, findSimilar, similarityQuery, similarityScore } from '../../src/core/similarity';
import { BACKGROUND, DUPLICATE_PAIRS, RELATED_PAIRS, type MemoryPair, type PairMemory } from './similarityPairs';
import { useProject } from '../support/storeKit';

const expand = (query: string) => developerVocabulary().expand(query);

interface Measured {
  pair: MemoryPair;
  /** Similarity of the incoming memory to its pair's existing one. */
  own: number;
  /** The highest similarity to any other existing memory. */
  other: number;
  /** What findSimilar names for the incoming memory. */
  found: string[];
}

function measure(): { duplicates: Measured[]; related: Measured[] } {
  const index = new MemorySearchIndex();
  const memories = new Map<string, SearchableMemory>();
  const existing = new Map<PairMemory, SearchableMemory>();
  let n = 0;
  const add = (m: PairMemory): SearchableMemory => {
    const memory = { id: `mem_${(n++).toString(16).padStart(8, '0')}`, tags: [], ...m };
    memories.set(memory.id, memory);
    index.upsert(memory);
    return memory;
  };
  for (const m of BACKGROUND) add(m);
  for (const pair of [...DUPLICATE_PAIRS, ...RELATED_PAIRS]) if (!existing.has(pair.existing)) existing.set(pair.existing, add(pair.existing));
  const run = (pairs: readonly MemoryPair[]): Measured[] =>
    pairs.map((pair) => {
      const incoming = add(pair.incoming);
      const mine = existing.get(pair.existing)!;
      const own = similarityScore(index, incoming, mine, expand);
      const other = Math.max(...[...existing.values()].filter((e) => e !== mine).map((e) => similarityScore(index, incoming, e, expand)));
      const found = findSimilar(index, incoming, { accept: (id) => id !== incoming.id, memoryOf: (id) => memories.get(id), expand }).map((h) => h.id);
      index.remove(incoming.id);
      memories.delete(incoming.id);
      return { pair, own, other, found: found.map((id) => (id === mine.id ? 'its pair' : id)) };
    });
  return { duplicates: run(DUPLICATE_PAIRS), related: run(RELATED_PAIRS) };
}

describe('similarity: near-duplicate memories', () => {
  const { duplicates, related } = measure();

  before(() => {
    const row = (kind: string, m: Measured) => `      ${kind.padEnd(10)} ${m.pair.name.padEnd(42)} ${m.own.toFixed(3)}   ${m.other.toFixed(3)}`;
    console.log(`      ${'kind'.padEnd(10)} ${'pair'.padEnd(42)} score   best other (threshold ${SIMILARITY_THRESHOLD})`);
    for (const m of duplicates) console.log(row('duplicate', m));
    for (const m of related) console.log(row('related', m));
  });

  it('has at least 8 pairs of each kind', () => {
    assert.ok(DUPLICATE_PAIRS.length >= 8 && RELATED_PAIRS.length >= 8);
  });

  it('flags every rewording of the same lesson, and names its pair first', () => {
    for (const m of duplicates) {
      assert.ok(m.own >= SIMILARITY_THRESHOLD, `${m.pair.name}: ${m.own.toFixed(3)} < ${SIMILARITY_THRESHOLD}`);
      assert.deepEqual(m.found, ['its pair'], `${m.pair.name}: findSimilar names its pair and nothing else`);
    }
  });

  it('flags no memory that is only about the same subject', () => {
    for (const m of related) {
      assert.ok(m.own < SIMILARITY_THRESHOLD, `${m.pair.name}: ${m.own.toFixed(3)} ≥ ${SIMILARITY_THRESHOLD}`);
      assert.deepEqual(m.found, [], `${m.pair.name}: findSimilar names nothing`);
    }
  });

  it('keeps a margin on both sides of the threshold', () => {
    const lowestDuplicate = Math.min(...duplicates.map((m) => m.own));
    const highestRelated = Math.max(...related.map((m) => Math.max(m.own, m.other)), ...duplicates.map((m) => m.other));
    assert.ok(lowestDuplicate >= SIMILARITY_THRESHOLD * 1.3, `lowest duplicate ${lowestDuplicate.toFixed(3)}`);
    assert.ok(highestRelated <= SIMILARITY_THRESHOLD / 1.3, `highest related ${highestRelated.toFixed(3)}`);
  });

  it('is symmetric and 1 for a copy', () => {
    const index = new MemorySearchIndex();
    const a = { id: 'mem_0000000a', tags: [], ...DUPLICATE_PAIRS[0]!.existing };
    const b = { id: 'mem_0000000b', tags: [], ...DUPLICATE_PAIRS[0]!.incoming };
    const copy = { ...a, id: 'mem_0000000c' };
    for (const m of [a, b, copy, ...BACKGROUND.map((x, i) => ({ id: `mem_1000000${i}`, tags: [], ...x }))]) index.upsert(m);
    assert.equal(similarityScore(index, a, b, expand), similarityScore(index, b, a, expand));
    assert.equal(similarityScore(index, a, copy, expand), 1);
  });

  describe('among 5,000 other memories (the bench corpus)', () => {
    const index = new MemorySearchIndex();
    const memories = new Map<string, SearchableMemory>();
    const existing = new Map<PairMemory, SearchableMemory>();
    const corpus = new Corpus(5_000);
    const add = (id: string, m: PairMemory & { tags?: readonly string[] }): SearchableMemory => {
      const memory = { tags: [], ...m, id };
      memories.set(id, memory);
      index.upsert(memory);
      return memory;
    };
    before(() => {
      for (let i = 0; i < 5_000; i++) {
        const m = corpus.memory();
        add(`mem_c${i.toString(16).padStart(7, '0')}`, { topic: m.topic, tags: m.tags, summary: deriveSummary(m.content), content: m.content });
      }
      for (const m of BACKGROUND) add(`mem_b${memories.size.toString(16).padStart(7, '0')}`, m);
      for (const pair of [...DUPLICATE_PAIRS, ...RELATED_PAIRS]) {
        if (!existing.has(pair.existing)) existing.set(pair.existing, add(`mem_e${existing.size.toString(16).padStart(7, '0')}`, pair.existing));
      }
    });
    const similarTo = (memory: SearchableMemory) =>
      findSimilar(index, memory, { accept: (id) => id !== memory.id, memoryOf: (id) => memories.get(id), expand }).map((h) => h.id);

    it('still names every rewording first, and no memory only about the same subject', () => {
      const check = (pair: MemoryPair, duplicate: boolean) => {
        const incoming = add('mem_incoming', pair.incoming);
        const found = similarTo(incoming);
        index.remove(incoming.id);
        memories.delete(incoming.id);
        const mine = existing.get(pair.existing)!.id;
        if (duplicate) assert.equal(found[0], mine, `${pair.name}: its pair first (found ${found.join(', ') || 'nothing'})`);
        else assert.ok(!found.includes(mine), `${pair.name}: its related memory is not named`);
      };
      for (const pair of DUPLICATE_PAIRS) check(pair, true);
      for (const pair of RELATED_PAIRS) check(pair, false);
    });

    it('costs less than three searches for the memory\'s text (top 20; it was six): it scores only the memories it compares', () => {
      // Medians of interleaved runs, so that a busy machine slows both sides alike.
      const sample = [...memories.values()].filter((_, i) => i % 250 === 0);
      const similar: number[] = [];
      const searched: number[] = [];
      for (let round = 0; round < 3; round++) {
        for (const memory of sample) {
          let t = performance.now();
          similarTo(memory);
          similar.push(performance.now() - t);
          t = performance.now();
          const query = similarityQuery(memory);
          let read = 0;
          for (const hit of index.search(query, undefined, expand(query))) if (hit && ++read >= 20) break;
          searched.push(performance.now() - t);
        }
      }
      const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
      assert.ok(median(similar) < 3 * median(searched), `findSimilar ${median(similar).toFixed(2)} ms, one search ${median(searched).toFixed(2)} ms`);
    });
  });

  describe('through the store', () => {
    const ctx = useProject('ltm-similar-');

    it('store answers with the similar memory and still stores the new one; a related memory is not named', async () => {
      const store = ctx.open();
      for (const m of BACKGROUND) await store.store(m);
      const pool = await store.store(DUPLICATE_PAIRS[0]!.existing);
      assert.deepEqual(pool.similar, []);
      const duplicate = await store.store(DUPLICATE_PAIRS[0]!.incoming);
      assert.deepEqual(duplicate.similar?.map((s) => [s.id, s.topic]), [[pool.memory.id, pool.memory.topic]]);
      assert.ok(duplicate.similar![0]!.score >= SIMILARITY_THRESHOLD && duplicate.similar![0]!.score <= 1);
      assert.ok(store.peek(duplicate.memory.id), 'the duplicate is stored all the same');
      const relatedOne = await store.store(RELATED_PAIRS[0]!.incoming);
      assert.deepEqual(relatedOne.similar, []);
      // Forgotten memories are not named: only active ones count.
      await store.forget(pool.memory.id);
      assert.deepEqual(store.similarTo(duplicate.memory.id), []);
    });
  });
});
