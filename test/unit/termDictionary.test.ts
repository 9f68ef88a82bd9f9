import { strict as assert } from 'node:assert';
import fc from 'fast-check';
import { TermDictionary } from '../../src/core/termDictionary';

/** Levenshtein distance, the plain way. */
function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row[j] = Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    previous = row;
  }
  return previous[b.length]!;
}

/** Short words over a small alphabet, so that prefixes and near misses are common. */
const word = fc.string({ unit: fc.constantFrom('a', 'b', 'c', 'é', '1'), minLength: 1, maxLength: 6 });

type Step = { kind: 'toggle'; term: string } | { kind: 'prefix'; prefix: string } | { kind: 'typos'; word: string; edits: number };

const step: fc.Arbitrary<Step> = fc.oneof(
  { arbitrary: word.map((term) => ({ kind: 'toggle' as const, term })), weight: 6 },
  { arbitrary: fc.string({ unit: fc.constantFrom('a', 'b', 'c', 'é', '1'), maxLength: 3 }).map((prefix) => ({ kind: 'prefix' as const, prefix })), weight: 1 },
  { arbitrary: fc.tuple(word, fc.integer({ min: 1, max: 2 })).map(([w, edits]) => ({ kind: 'typos' as const, word: w, edits })), weight: 1 },
);

describe('TermDictionary (the terms a query word reaches as a prefix or with typos)', () => {
  it('answers prefix and typo lookups as a plain scan of the terms would, after any adds and deletes, in any order', () => {
    fc.assert(
      fc.property(fc.uniqueArray(word, { maxLength: 40 }), fc.array(step, { maxLength: 300 }), (initial, steps) => {
        const dictionary = new TermDictionary([...initial]);
        const model = new Set(initial);
        for (const s of steps) {
          if (s.kind === 'toggle') {
            // The caller adds only terms it lacks and deletes only terms it has (search.ts).
            if (model.has(s.term)) {
              model.delete(s.term);
              dictionary.delete(s.term);
            } else {
              model.add(s.term);
              dictionary.add(s.term);
            }
          } else if (s.kind === 'prefix') {
            const expected = [...model].filter((t) => t.startsWith(s.prefix)).sort();
            assert.deepEqual([...dictionary.withPrefix(s.prefix)], expected);
          } else {
            const expected = [...model].map((t) => [t, distance(s.word, t)] as const).filter(([, d]) => d <= s.edits);
            assert.deepEqual([...dictionary.withinTypos(s.word, s.edits)].sort(), expected.sort());
          }
        }
        assert.deepEqual(dictionary.ascending(), [...model].sort());
      }),
      { numRuns: 300 },
    );
  });

  it('brings many changes in at once by sorting and merging, as an index built from scratch makes them', () => {
    const dictionary = new TermDictionary(['m']);
    const terms = Array.from({ length: 500 }, (_, i) => `t${(i * 7919) % 500}`);
    for (const term of terms) dictionary.add(term);
    dictionary.delete('m');
    assert.deepEqual(dictionary.ascending(), [...terms].sort());
    for (const term of terms.slice(0, 200)) dictionary.delete(term);
    dictionary.add('m');
    assert.deepEqual(dictionary.ascending(), [...terms.slice(200), 'm'].sort());
    const left = terms.slice(200).filter((t) => t.startsWith('t49'));
    assert.ok(left.length > 3);
    assert.deepEqual([...dictionary.withPrefix('t49')], left.sort());
  });

  it('takes terms given in ascending order as they are, and sorts (once each) terms given in any other order', () => {
    const ascending = ['alpha', 'beta', 'gamma'];
    assert.equal(new TermDictionary(ascending).ascending(), ascending);
    assert.deepEqual(new TermDictionary(['gamma', 'alpha', 'beta', 'alpha']).ascending(), ['alpha', 'beta', 'gamma']);
    // Code-unit order, as a saved index writes it: upper case before lower, 'é' after 'z'.
    assert.deepEqual(new TermDictionary(['é', 'z', 'Z', 'a']).ascending(), ['Z', 'a', 'z', 'é']);
  });

  it('keeps typo lookups right for terms added and deleted after its first typo lookup', () => {
    const dictionary = new TermDictionary(['deadlock', 'postgres']);
    assert.deepEqual([...dictionary.withinTypos('deadlok', 1)], [['deadlock', 1]]);
    dictionary.add('deadlocks');
    dictionary.delete('deadlock');
    assert.deepEqual([...dictionary.withinTypos('deadlok', 2)], [['deadlocks', 2]]);
    assert.deepEqual([...dictionary.withPrefix('dead')], ['deadlocks']);
  });

  it("gives the prefixed terms as an array of the caller's own (changing it changes nothing in the dictionary)", () => {
    const dictionary = new TermDictionary(['deadlock', 'deadline', 'postgres']);
    const found = dictionary.withPrefix('dead');
    assert.deepEqual(found, ['deadline', 'deadlock']);
    found.push('zzz');
    found[0] = 'aaa';
    assert.deepEqual(dictionary.withPrefix('dead'), ['deadline', 'deadlock']);
    assert.deepEqual(dictionary.ascending(), ['deadline', 'deadlock', 'postgres']);
    assert.deepEqual(dictionary.withPrefix('x'), []);
  });

  it('looks terms up without touching its sets of pending changes when there are none', () => {
    // Set.clear() gives even an empty set a new table; a server's dictionary lives long, so each
    // such table went to the old generation (~55 KB per stored memory, whose similarity check
    // looks up ~50 prefixes).
    const dictionary = new TermDictionary(['deadlock', 'deadline', 'postgres']);
    dictionary.add('deadbeat');
    assert.deepEqual([...dictionary.withPrefix('dead')], ['deadbeat', 'deadline', 'deadlock']);
    const clear = Set.prototype.clear;
    let clears = 0;
    Set.prototype.clear = function (this: Set<unknown>) {
      clears++;
      clear.call(this);
    };
    try {
      for (let i = 0; i < 10; i++) assert.deepEqual([...dictionary.withPrefix('post')], ['postgres']);
      assert.deepEqual(dictionary.ascending(), ['deadbeat', 'deadline', 'deadlock', 'postgres']);
    } finally {
      Set.prototype.clear = clear;
    }
    assert.equal(clears, 0);
  });
});
