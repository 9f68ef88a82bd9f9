import { strict as assert } from 'node:assert';
import fc from 'fast-check';
import { insertionPoint } from '../../src/core/sortedStrings';

describe('sortedStrings', () => {
  it('insertionPoint is the first index not below the key: inserting there keeps the array sorted, and a key held is found there', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.string({ maxLength: 4 })), fc.string({ maxLength: 4 }), (strings, key) => {
        const sorted = [...strings].sort();
        const at = insertionPoint(sorted, key);
        assert.ok(sorted.slice(0, at).every((s) => s < key));
        assert.ok(sorted.slice(at).every((s) => !(s < key)));
        if (sorted.includes(key)) assert.equal(sorted[at], key);
      }),
      { numRuns: 500 },
    );
    assert.equal(insertionPoint([], 'a'), 0);
    assert.equal(insertionPoint(['a', 'c'], 'b'), 1);
    assert.equal(insertionPoint(['a', 'c'], 'd'), 2);
  });
});
