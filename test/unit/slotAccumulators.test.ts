import { strict as assert } from 'node:assert';
import fc from 'fast-check';
import { entryScore, fieldScorer, idf } from '../../src/core/bm25';
import { HitColumns } from '../../src/core/rankHeap';
import { SlotAccumulators, WORDS_PER_FOLD, bitCount } from '../../src/core/slotAccumulators';

type Hits = Map<number, { score: number; rank: number; words: number }>;

/** The same slots, words matched, scores and ranks (up to the rounding of sums added in another order). */
function assertSameHits(got: Hits, expected: Hits): void {
  assert.deepEqual([...got.keys()], [...expected.keys()]);
  for (const [slot, hit] of got) {
    const want = expected.get(slot)!;
    assert.equal(hit.words, want.words, `slot ${slot}: words`);
    assert.ok(Math.abs(hit.score - want.score) <= 1e-9 * want.score, `slot ${slot}: score ${hit.score} against ${want.score}`);
    assert.ok(Math.abs(hit.rank - want.rank) <= 1e-9 * want.rank, `slot ${slot}: rank ${hit.rank} against ${want.rank}`);
  }
}

/** One query word's entries: the slots holding it, their frequencies, and how many documents hold it. */
interface WordEntries {
  slots: number[];
  frequencies: number[];
  holding: number;
}

/**
 * Adds `words` to `accumulators` as a search does (a fold every WORDS_PER_FOLD words), and collects
 * the hits: by slot, the score (sum × words matched), the rank and the words matched.
 */
function searchOnce(accumulators: SlotAccumulators, words: readonly WordEntries[], lengths: Uint32Array, slotCount: number, informative: boolean): { bySlot: Hits; top: number } {
  const documents = slotCount;
  const documentsHolding = words.map((w) => w.holding);
  let folded = 0;
  words.forEach((word, w) => {
    if (w - folded >= WORDS_PER_FOLD) folded = accumulators.foldWords(folded, w, documentsHolding, documents, slotCount, informative);
    accumulators.addEntries(word.slots, word.frequencies, lengths, 0, fieldScorer(1, 4), 2 ** (w - folded));
  });
  if (informative) accumulators.fillInformationTable(folded, documentsHolding, documents);
  const hits = new HitColumns(slotCount);
  const { count, top } = accumulators.collectHits(hits, slotCount, informative, folded > 0);
  const bySlot: Hits = new Map();
  for (let row = 0; row < count; row++) bySlot.set(hits.slots[row]!, { score: hits.scores[row]!, rank: hits.ranks[row]!, words: hits.words[row]! });
  return { bySlot, top };
}

/** The same, from the definitions: each slot's BM25+ sum over the words it holds, times their number; the rank with their summed IDF. */
function expectedHits(words: readonly WordEntries[], lengths: Uint32Array, slotCount: number, informative: boolean): Hits {
  const bySlot: Hits = new Map();
  for (let slot = 0; slot < slotCount; slot++) {
    let sum = 0;
    let matched = 0;
    let information = 0;
    for (const word of words) {
      const at = word.slots.indexOf(slot);
      if (at < 0) continue;
      sum += entryScore(fieldScorer(1, 4), word.frequencies[at]!, lengths[slot]!);
      matched++;
      information += idf(slotCount, word.holding);
    }
    if (matched === 0) continue;
    bySlot.set(slot, { score: sum * matched, rank: informative ? sum * Math.sqrt(matched * information) : sum * matched, words: matched });
  }
  return bySlot;
}

const SLOTS = 12;
const wordEntries: fc.Arbitrary<WordEntries> = fc
  .uniqueArray(fc.integer({ min: 0, max: SLOTS - 1 }), { minLength: 1, maxLength: SLOTS })
  .chain((slots) => fc.record({ slots: fc.constant(slots), frequencies: fc.array(fc.integer({ min: 1, max: 9 }), { minLength: slots.length, maxLength: slots.length }), holding: fc.integer({ min: slots.length, max: SLOTS }) }));

describe('slotAccumulators: what a search adds up per document slot', () => {
  it('bitCount counts the bits of any 32-bit mask', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 32 - 1 }), (mask) => {
        assert.equal(bitCount(mask), [...mask.toString(2)].filter((bit) => bit === '1').length);
      }),
    );
    assert.equal(bitCount(0xffffffff | 0), 32);
  });

  it('gives each touched slot its BM25+ sum times the words it matched, and the rank informative coordination defines, for queries longer than a mask holds', () => {
    fc.assert(
      fc.property(fc.array(wordEntries, { minLength: 1, maxLength: 3 * WORDS_PER_FOLD + 5, size: 'max' }), fc.boolean(), fc.array(fc.integer({ min: 1, max: 30 }), { minLength: SLOTS, maxLength: SLOTS }), (words, informative, lengthList) => {
        const lengths = Uint32Array.from(lengthList);
        const accumulators = new SlotAccumulators(SLOTS);
        const { bySlot, top } = searchOnce(accumulators, words, lengths, SLOTS, informative);
        assertSameHits(bySlot, expectedHits(words, lengths, SLOTS, informative));
        assert.equal(top, Math.max(0, ...[...bySlot.values()].map((h) => h.rank)));
      }),
      { numRuns: 150 },
    );
  });

  it('is all zero again after collecting the hits: the next search starts clean', () => {
    const accumulators = new SlotAccumulators(SLOTS);
    const lengths = new Uint32Array(SLOTS).fill(4);
    const many = Array.from({ length: WORDS_PER_FOLD + 3 }, (_, w) => ({ slots: [w % SLOTS, (w + 5) % SLOTS], frequencies: [1, 2], holding: 3 }));
    searchOnce(accumulators, many, lengths, SLOTS, true);
    // Long enough to fold too: counts or sums a fold of the first search left behind would show.
    const next = Array.from({ length: WORDS_PER_FOLD + 2 }, (_, w) => ({ slots: [2, 7], frequencies: [1 + (w % 3), 1], holding: 2 + (w % 4) }));
    assertSameHits(searchOnce(accumulators, next, lengths, SLOTS, true).bySlot, expectedHits(next, lengths, SLOTS, true));
  });

  it('grows its room between searches, and the slots past the old room start at zero', () => {
    const accumulators = new SlotAccumulators(4);
    assert.equal(accumulators.capacity, 4);
    accumulators.grow(2);
    assert.equal(accumulators.capacity, 4);
    accumulators.grow(10);
    assert.equal(accumulators.capacity, 10);
    const lengths = new Uint32Array(10).fill(3);
    const words = [{ slots: [9, 1], frequencies: [2, 1], holding: 2 }];
    assertSameHits(searchOnce(accumulators, words, lengths, 10, false).bySlot, expectedHits(words, lengths, 10, false));
  });
});
