/**
 * What a search adds up per document slot while it reads posting lists
 * (MemorySearchIndex.search): each slot's BM25+ sum, which of the query's
 * words it matched, and, for informative coordination, the summed IDF of those
 * words. Then every touched slot becomes a row of the hit columns (rankHeap.ts).
 *
 * An entry only adds its score and sets its word's bit: checking whether a
 * slot had matched the current word already, as before, was a branch no
 * processor could predict, and two thirds of a long prompt's search at 50,000
 * memories. The bits are counted once, per slot, when the hits are collected
 * (or every WORDS_PER_FOLD words, for a longer query).
 *
 * The accumulators are reused by every search of an index, and are all zero
 * between searches: collecting the hits clears what a search touched.
 */
import { idf, entryScore, type FieldScorer } from './bm25';
import type { HitColumns } from './rankHeap';

/** Query words a search marks in a slot's bits (wordMask) before it counts them. */
export const WORDS_PER_FOLD = 31;

/** How many bits of `mask` are set. */
export function bitCount(mask: number): number {
  let n = mask - ((mask >>> 1) & 0x55555555);
  n = (n & 0x33333333) + ((n >>> 2) & 0x33333333);
  return Math.imul((n + (n >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24;
}

export class SlotAccumulators {
  /** Each slot's BM25+ sum over the query's words. */
  private scores: Float64Array;
  /** The query words each slot matched since the last fold, a bit per word (see WORDS_PER_FOLD). */
  private wordMask: Uint32Array;
  /** How many of the query's words each slot matched, in the folds so far. */
  private wordsMatched: Uint16Array;
  /** The summed IDF of the query words each slot matched in the folds so far (informative coordination). */
  private informationMatched: Float64Array;
  /** The summed IDF of the words of each bit pattern of a wordMask byte (see fillInformationTable). */
  private readonly informationTable = new Float64Array(4 * 256);

  constructor(capacity: number) {
    this.scores = new Float64Array(capacity);
    this.wordMask = new Uint32Array(capacity);
    this.wordsMatched = new Uint16Array(capacity);
    this.informationMatched = new Float64Array(capacity);
  }

  /** How many slots there is room for. */
  get capacity(): number {
    return this.scores.length;
  }

  /** Room for `capacity` slots. Between searches only, when every accumulator is zero: the new ones start at zero. */
  grow(capacity: number): void {
    if (capacity <= this.scores.length) return;
    this.scores = new Float64Array(capacity);
    this.wordMask = new Uint32Array(capacity);
    this.wordsMatched = new Uint16Array(capacity);
    this.informationMatched = new Float64Array(capacity);
  }

  /**
   * Adds one list of a field's entries: each slot's score, scored with the
   * field's length at `lengths[fieldAt + slot]`, and the query word's bit
   * `wordBit`. No branch per entry.
   */
  addEntries(slots: ArrayLike<number>, frequencies: ArrayLike<number>, lengths: Uint32Array, fieldAt: number, scorer: FieldScorer, wordBit: number): void {
    const { wordMask, scores } = this;
    for (let i = 0; i < slots.length; i++) {
      const slot = slots[i]!;
      wordMask[slot]! |= wordBit;
      scores[slot]! += entryScore(scorer, frequencies[i]!, lengths[fieldAt + slot]!);
    }
  }

  /**
   * Counts the bits of words `first` to `end` (exclusive; at most WORDS_PER_FOLD) into each
   * of the first `slotCount` slots' counts (and summed IDFs, when `informative`), and clears
   * them: a query of more words than the bits hold. `documentsHolding[w]`: how many of the
   * index's `documents` the broadest term word w reached is in. Returns `end`.
   */
  foldWords(first: number, end: number, documentsHolding: readonly number[], documents: number, slotCount: number, informative: boolean): number {
    if (informative) this.fillInformationTable(first, documentsHolding.slice(0, end), documents);
    const { wordMask, wordsMatched, informationMatched } = this;
    for (let slot = 0; slot < slotCount; slot++) {
      const mask = wordMask[slot]!;
      if (mask === 0) continue;
      wordMask[slot] = 0;
      wordsMatched[slot]! += bitCount(mask);
      if (informative) informationMatched[slot]! += this.informationOf(mask);
    }
    return end;
  }

  /**
   * Every touched slot of the first `slotCount` as a row of `hits` (the slots in order, one
   * pass over them all: ~0.1 ms at 50,000 memories), with its accumulators cleared; returns
   * how many, and the best rank. Matching more of the query's words multiplies the score
   * (MiniSearch's coordination bonus); with `informative`, the rank also weighs how
   * informative the matched words are (see search.ts, Coordination). `folded`: words were
   * folded before the last ones (foldWords). Call fillInformationTable first when informative.
   */
  collectHits(hits: HitColumns, slotCount: number, informative: boolean, folded: boolean): { count: number; top: number } {
    const { wordMask, wordsMatched, informationMatched, scores } = this;
    let count = 0;
    let top = 0;
    for (let slot = 0; slot < slotCount; slot++) {
      const mask = wordMask[slot]!;
      const earlier = folded ? wordsMatched[slot]! : 0;
      if (mask === 0 && earlier === 0) continue;
      const words = earlier + bitCount(mask);
      const sum = scores[slot]!;
      hits.slots[count] = slot;
      hits.scores[count] = sum * words;
      const rank = informative ? sum * Math.sqrt(words * ((earlier ? informationMatched[slot]! : 0) + this.informationOf(mask))) : sum * words;
      if (rank > top) top = rank;
      hits.ranks[count] = rank;
      hits.words[count] = words;
      count++;
      scores[slot] = 0;
      wordMask[slot] = 0;
      if (earlier !== 0) {
        wordsMatched[slot] = 0;
        informationMatched[slot] = 0;
      }
    }
    return { count, top };
  }

  /**
   * Fills the information table for the words from `first` on (the bits of a wordMask): for
   * each byte of a mask and each of its 256 values, the summed IDF of the words its bits
   * stand for, so that a slot's sum takes four lookups rather than a step per bit. A word
   * counts with the IDF of `documentsHolding[w]` of `documents` (none when unknown).
   */
  fillInformationTable(first: number, documentsHolding: readonly number[], documents: number): void {
    const table = this.informationTable;
    for (let byte = 0; byte < 4; byte++) {
      const at = byte * 256;
      table[at] = 0;
      for (let value = 1; value < 256; value++) {
        const word = first + byte * 8 + (31 - Math.clz32(value & -value));
        const holding = documentsHolding[word];
        table[at + value] = table[at + (value & (value - 1))]! + (holding === undefined ? 0 : idf(documents, holding));
      }
    }
  }

  /** The summed IDF of the words whose bits `mask` holds (see fillInformationTable). */
  private informationOf(mask: number): number {
    const table = this.informationTable;
    return table[mask & 255]! + table[256 + ((mask >>> 8) & 255)]! + table[512 + ((mask >>> 16) & 255)]! + table[768 + (mask >>> 24)]!;
  }
}
