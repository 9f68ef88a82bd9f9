/**
 * BM25+, as MiniSearch computes it: how much one entry of a posting list (a
 * term's frequency in one field of one document) adds to that document's
 * score. search.ts adds these up per query word; the duplicate check scores a
 * few documents with the same function (MemorySearchIndex.scoresOf), so the
 * two agree to the bit.
 */

/** BM25+ parameters (MiniSearch's defaults): saturation, length normalisation, lower bound. */
export const BM25 = { k: 1.2, b: 0.7, d: 0.5 } as const;

/** BM25's inverse document frequency of a term `count` of `documents` documents hold. */
export function idf(documents: number, count: number): number {
  return Math.log(1 + (documents - count + 0.5) / (count + 0.5));
}

/** What one field's entries of one term share in their BM25+ scores (see entryScore). */
export interface FieldScorer {
  /** The field's weight times BM25+'s lower bound: what any entry gets. */
  floor: number;
  /** The field's weight times (k + 1). */
  numerator: number;
  /** k × (1 − b): the length normalisation's constant part. */
  base: number;
  /** k × b / the field's average length: its part per token of the document's field. */
  perToken: number;
}

/** Sets `scorer` for a field of weight `fieldWeight` (weight × boost × IDF) whose lengths average `averageLength`. */
export function setFieldScorer(scorer: FieldScorer, fieldWeight: number, averageLength: number): FieldScorer {
  scorer.floor = fieldWeight * BM25.d;
  scorer.numerator = fieldWeight * (BM25.k + 1);
  scorer.base = BM25.k * (1 - BM25.b);
  scorer.perToken = (BM25.k * BM25.b) / averageLength;
  return scorer;
}

/** A scorer of its own (see setFieldScorer): one per field and term searched. */
export function fieldScorer(fieldWeight: number, averageLength: number): FieldScorer {
  return setFieldScorer({ floor: 0, numerator: 0, base: 0, perToken: 0 }, fieldWeight, averageLength);
}

/**
 * An entry's BM25+ score, the field's weight × (d + tf × (k + 1) / (tf + k × (1 − b + b × length / average))), with
 * what the entries share worked out once (a search adds ~280,000 entries for a long prompt
 * at 50,000 memories).
 */
export function entryScore(scorer: FieldScorer, tf: number, length: number): number {
  return scorer.floor + (scorer.numerator * tf) / (tf + scorer.base + scorer.perToken * length);
}
