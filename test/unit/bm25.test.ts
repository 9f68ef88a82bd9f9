import { strict as assert } from 'node:assert';
import fc from 'fast-check';
import { BM25, entryScore, fieldScorer, idf, setFieldScorer } from '../../src/core/bm25';

/** BM25+ as written down (MiniSearch's formula), computed in one go. */
function bm25Plus(fieldWeight: number, tf: number, length: number, averageLength: number): number {
  return fieldWeight * (BM25.d + (tf * (BM25.k + 1)) / (tf + BM25.k * (1 - BM25.b + (BM25.b * length) / averageLength)));
}

describe('bm25: how much one posting entry adds to a score', () => {
  it('uses MiniSearch\'s parameters', () => {
    assert.deepEqual({ ...BM25 }, { k: 1.2, b: 0.7, d: 0.5 });
  });

  it('gives a rare term a higher IDF than a common one, and a term every document holds a small positive one', () => {
    assert.ok(idf(10_000, 1) > idf(10_000, 100));
    assert.ok(idf(10_000, 100) > idf(10_000, 9_000));
    assert.ok(idf(10_000, 10_000) > 0);
    assert.equal(idf(3, 1), Math.log(1 + 2.5 / 1.5));
  });

  it('scores an entry as the BM25+ formula does, with what the entries share worked out once', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0.01, max: 50, noNaN: true }),
        fc.integer({ min: 1, max: 70_000 }),
        fc.integer({ min: 0, max: 100_000 }),
        fc.double({ min: 0.5, max: 5_000, noNaN: true }),
        (weight, tf, length, average) => {
          const expected = bm25Plus(weight, tf, length, average);
          const got = entryScore(fieldScorer(weight, average), tf, length);
          assert.ok(Math.abs(got - expected) <= 1e-12 * Math.max(1, expected), `${got} against ${expected}`);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('setFieldScorer makes a scorer over again: no value of the previous field or term is left in it', () => {
    const reused = fieldScorer(7, 3);
    setFieldScorer(reused, 2, 40);
    assert.deepEqual(reused, fieldScorer(2, 40));
    assert.equal(entryScore(reused, 3, 20), bm25Plus(2, 3, 20, 40));
  });

  it('grows with the term\'s frequency but saturates, and falls with the field\'s length', () => {
    const scorer = fieldScorer(1, 10);
    assert.ok(entryScore(scorer, 2, 10) > entryScore(scorer, 1, 10));
    assert.ok(entryScore(scorer, 1000, 10) < BM25.d + BM25.k + 1);
    assert.ok(entryScore(scorer, 1, 5) > entryScore(scorer, 1, 50));
    // The lower bound: any entry counts for at least d times the field's weight.
    assert.ok(entryScore(fieldScorer(4, 10), 1, 1e9) > 4 * BM25.d);
  });
});
