import { strict as assert } from 'node:assert';
import fc from 'fast-check';
import { addEntry, append, dropEntries, entryCount, removeAt, removeEntry, type FieldPostings, type NumberList } from '../../src/core/postingLists';

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

  type EntryChange = { add: number } | { remove: number } | { drop: number[] };

  /** The (slot, frequency) pairs of field 0, the list's and those added beside it, in slot order. */
  function entriesOf(postings: FieldPostings): [number, number][] {
    const pairs: [number, number][] = [];
    const parts: [ArrayLike<number>, ArrayLike<number>][] = [[postings.slots[0]!, postings.frequencies[0]!]];
    if (postings.added) parts.push([postings.added[0]!.slots, postings.added[0]!.frequencies]);
    for (const [slots, frequencies] of parts) for (let i = 0; i < slots.length; i++) pairs.push([slots[i]!, frequencies[i]!]);
    return pairs.sort((a, b) => a[0] - b[0]);
  }

  it("a posting's entries, added, removed and dropped, are those of a plain model; a frozen list is copied only when one of its entries goes", () => {
    const change: fc.Arbitrary<EntryChange> = fc.oneof(
      { weight: 3, arbitrary: fc.nat(300).map((n) => ({ add: n })) },
      { weight: 2, arbitrary: fc.nat(300).map((n) => ({ remove: n })) },
      { weight: 1, arbitrary: fc.array(fc.nat(300), { maxLength: 5 }).map((d) => ({ drop: d })) },
    );
    fc.assert(
      fc.property(fc.uniqueArray(fc.nat(300), { maxLength: 60 }), fc.boolean(), fc.array(change, { maxLength: 80 }), (initial, fromSnapshot, changes) => {
        // Slots in the snapshot's list, frequencies 1000 + slot; other lists' numbers after them.
        const snapshot = new Uint32Array([...initial, ...initial.map((s) => 1000 + s), 7, 7]);
        const saved = Uint32Array.from(snapshot);
        const frozenSlots = snapshot.subarray(0, initial.length);
        const postings: FieldPostings = fromSnapshot
          ? { slots: [frozenSlots], frequencies: [snapshot.subarray(initial.length, 2 * initial.length)], added: null }
          : { slots: [[...initial]], frequencies: [initial.map((s) => 1000 + s)], added: null };
        const model = new Map(initial.map((s) => [s, 1000 + s]));
        let removedOne = false;
        for (const c of changes) {
          if ('add' in c) {
            if (model.has(c.add)) continue; // a document holds a term once per field
            addEntry(postings, 0, c.add, 2000 + c.add, snapshot.buffer);
            model.set(c.add, 2000 + c.add);
          } else if ('remove' in c) {
            const had = model.delete(c.remove);
            assert.equal(removeEntry(postings, 0, c.remove, snapshot.buffer), had);
            removedOne ||= had;
          } else {
            const removed = new Uint8Array(301);
            for (const slot of c.drop) removed[slot] = 1;
            dropEntries(postings, 0, removed);
            for (const slot of c.drop) removedOne = model.delete(slot) || removedOne;
          }
          assert.deepEqual(entriesOf(postings), [...model].sort((a, b) => a[0] - b[0]));
          assert.equal(entryCount(postings, 0), model.size);
          if (fromSnapshot && !removedOne) assert.equal(postings.slots[0], frozenSlots, 'adding never copies the frozen list');
        }
        assert.deepEqual(snapshot, saved, 'the snapshot is unchanged');
      }),
      { numRuns: 500 },
    );
  });
});
