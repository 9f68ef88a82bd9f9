import { strict as assert } from 'node:assert';
import fc from 'fast-check';
import { RRF_K, reciprocalRankFusion } from '../../src/core/rankFusion';

describe('rankFusion', () => {
  it('puts an item near the top of several rankings above one at the top of a single ranking', () => {
    assert.deepEqual(reciprocalRankFusion([['a', 'b', 'c'], ['b', 'd'], ['e', 'b']]), ['b', 'a', 'e', 'd', 'c']);
  });

  it('is the identity for one ranking, and counts an ID listed twice in a ranking once', () => {
    assert.deepEqual(reciprocalRankFusion([['x', 'y', 'z']]), ['x', 'y', 'z']);
    assert.deepEqual(reciprocalRankFusion([['x', 'y', 'x'], ['y']]), ['y', 'x']);
    assert.deepEqual(reciprocalRankFusion([]), []);
  });

  it('breaks ties by the best rank reached, then by the ranking listed first', () => {
    // a and b: ranks 1 and 2 in one ranking each, mirrored: equal scores; a is first in the first ranking.
    assert.deepEqual(reciprocalRankFusion([['a', 'b'], ['b', 'a']]), ['a', 'b']);
    assert.deepEqual(reciprocalRankFusion([['a'], ['b']]), ['a', 'b']);
  });

  it('scores 1 / (k + rank) with k = 60: rank 1 of one ranking loses to ranks 2 and 3 of two', () => {
    assert.equal(RRF_K, 60);
    assert.ok(1 / 61 < 1 / 62 + 1 / 63);
    assert.deepEqual(reciprocalRankFusion([['solo', 'pair'], ['x', 'y', 'pair']]), ['pair', 'solo', 'x', 'y']);
  });

  it('returns every ID once, whatever the rankings (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.array(fc.constantFrom('a', 'b', 'c', 'd', 'e'), { maxLength: 6 }), { maxLength: 4 }), (rankings) => {
        const fused = reciprocalRankFusion(rankings);
        assert.deepEqual([...fused].sort(), [...new Set(rankings.flat())].sort());
        assert.deepEqual(reciprocalRankFusion(rankings), fused, 'deterministic');
      }),
    );
  });
});
