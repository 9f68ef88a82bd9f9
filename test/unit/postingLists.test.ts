import { strict as assert } from 'node:assert';
import fc from 'fast-check';
import { append, removeAt, type NumberList } from '../../src/core/postingLists';

type Change = { append: number } | { removeAt: number };

describe('postingLists (the numbers a search index keeps per term and field)', () => {
  it('appending and removing give the same numbers as a plain array, whatever the list started as; a frozen snapshot is never written', () => {
    const change: fc.Arbitrary<Change> = fc.oneof(
      { weight: 3, arbitrary: fc.nat(1_000_000).map((n) => ({ append: n })) },
      { weight: 1, arbitrary: fc.nat(200).map((n) => ({ removeAt: n })) },
    );
    fc.assert(
      fc.property(fc.array(fc.nat(1_000_000), { maxLength: 90 }), fc.boolean(), fc.array(change, { maxLength: 120 }), (initial, fromSnapshot, changes) => {
        // A list loaded from a snapshot is a view into its numbers, with other lists' numbers after it.
        const snapshot = new Uint32Array([...initial, 7, 7, 7]);
        const saved = Uint32Array.from(snapshot);
        const lists: NumberList[] = [fromSnapshot ? snapshot.subarray(0, initial.length) : [...initial]];
        const model = [...initial];
        for (const c of changes) {
          if ('append' in c) {
            append(lists, 0, c.append, snapshot.buffer);
            model.push(c.append);
          } else if (model.length > 0) {
            const index = c.removeAt % model.length;
            removeAt(lists, 0, index, snapshot.buffer);
            model.splice(index, 1);
          }
          assert.deepEqual(Array.from(lists[0]!), model);
        }
        assert.deepEqual(snapshot, saved, 'the snapshot is unchanged');
      }),
      { numRuns: 500 },
    );
  });

  it("a snapshot's list is copied once into a typed list with room, which later numbers go into", () => {
    const snapshot = Uint32Array.from({ length: 100 }, (_, i) => i);
    const lists: NumberList[] = [snapshot.subarray(0, 50)];
    append(lists, 0, 1000, snapshot.buffer);
    const copy = lists[0] as Uint32Array;
    assert.ok(copy instanceof Uint32Array && copy.buffer !== snapshot.buffer, 'a typed copy of its own');
    assert.ok(copy.buffer.byteLength / 4 > copy.length, 'with room after its end');
    append(lists, 0, 1001, snapshot.buffer);
    removeAt(lists, 0, 0, snapshot.buffer);
    append(lists, 0, 1002, snapshot.buffer);
    assert.equal((lists[0] as Uint32Array).buffer, copy.buffer, 'the next changes use that room, not another copy');
    assert.deepEqual(Array.from(lists[0]!).slice(-3), [1000, 1001, 1002]);
  });
});
