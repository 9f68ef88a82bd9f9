import { strict as assert } from 'node:assert';
import fc from 'fast-check';
import { HitColumnPool, HitColumns, RankHeap, RankOrder } from '../../src/core/rankHeap';
import { MemorySearchIndex } from '../../src/core/search';
import type { SearchableMemory } from '../../src/core/searchedText';

function memory(id: string, content: string): SearchableMemory {
  return { id, topic: `topic of ${id}`, tags: [], summary: '', content };
}

describe('rankHeap (the buffers a search ranks its hits in)', () => {
  it('pops rows best rank first, equal ranks in slot order, with their columns alongside', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.nat(50), fc.integer({ min: 0, max: 5 })), { maxLength: 200 }), (rows) => {
        const columns = new HitColumns(rows.length + 3);
        rows.forEach(([slot, rank], i) => {
          columns.slots[i] = slot;
          columns.ranks[i] = rank;
          columns.scores[i] = rank * 10 + slot;
          columns.words[i] = slot % 7;
        });
        const heap = new RankHeap(columns, rows.length);
        const taken: [number, number, number, number][] = [];
        while (heap.size > 0) {
          const row = heap.pop();
          taken.push([columns.slots[row]!, columns.ranks[row]!, columns.scores[row]!, columns.words[row]!]);
        }
        const expected = rows
          .map(([slot, rank]) => [slot, rank, rank * 10 + slot, slot % 7] as [number, number, number, number])
          .sort((a, b) => b[1] - a[1] || a[0] - b[0]);
        assert.deepEqual(taken, expected);
      }),
      { numRuns: 300 },
    );
  });

  it('RankOrder takes rows in the same order as one heap of them all, whether read to the end or left early', () => {
    // Ranks spread over a wide range, with ties (at the front's threshold too) and zeros.
    const rank = fc.oneof(fc.integer({ min: 0, max: 30 }), fc.constantFrom(0, 10, 30), fc.double({ min: 0, max: 30, noNaN: true }));
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.nat(60), rank), { maxLength: 200 }), fc.nat(220), (rows, taken) => {
        const fill = (columns: HitColumns) =>
          rows.forEach(([slot, r], i) => {
            columns.slots[i] = slot;
            columns.ranks[i] = r;
            columns.scores[i] = r * 10 + slot;
            columns.words[i] = slot % 7;
          });
        const one = new HitColumns(rows.length + 1);
        const lazy = new HitColumns(rows.length + 1);
        fill(one);
        fill(lazy);
        const heap = new RankHeap(one, rows.length);
        const order = new RankOrder(lazy, rows.length);
        for (let n = 0; n < Math.min(taken, rows.length); n++) {
          assert.equal(order.size, heap.size);
          const [a, b] = [heap.pop(), order.pop()];
          assert.deepEqual([lazy.slots[b], lazy.ranks[b], lazy.scores[b], lazy.words[b]], [one.slots[a], one.ranks[a], one.scores[a], one.words[a]], `row ${n}`);
        }
        assert.equal(order.size, Math.max(0, rows.length - taken));
      }),
      { numRuns: 500 },
    );
  });

  it('a heap over rows from a base leaves the rows before it as they were', () => {
    const columns = new HitColumns(8);
    [5, 1, 9, 3, 7, 2].forEach((r, i) => {
      columns.slots[i] = i;
      columns.ranks[i] = r;
    });
    const heap = new RankHeap(columns, 4, 2);
    const taken: number[] = [];
    while (heap.size > 0) taken.push(columns.ranks[heap.pop()]!);
    assert.deepEqual(taken, [9, 7, 3, 2]);
    assert.deepEqual([columns.ranks[0], columns.ranks[1]], [5, 1]);
  });

  it('the pool lends its spare set once at a time, and a larger set returned replaces a smaller spare', () => {
    const pool = new HitColumnPool();
    const first = pool.take(10);
    assert.equal(first.capacity, 64);
    const second = pool.take(10);
    assert.notEqual(second, first, 'a set still lent is never lent twice');
    pool.give(first);
    assert.equal(pool.take(50), first, 'the spare serves a search it is large enough for');
    assert.notEqual(pool.take(50), first);
    const large = pool.take(1000);
    assert.equal(large.capacity, 1024);
    pool.give(large);
    pool.give(second);
    assert.equal(pool.take(500), large, 'a smaller set returned does not replace a larger spare');
  });

  it('searches read side by side, or one left unread, rank exactly as each alone (the index lends each its own columns)', () => {
    const index = new MemorySearchIndex();
    for (let i = 0; i < 300; i++) index.upsert(memory(`m${i}`, `deadlock ${i % 2 ? 'postgres' : 'mysql'} retry ${'pool '.repeat(i % 5)} n${i}`));
    const alone = (query: string) => [...index.search(query)].map((h) => [h.id, h.relevance, h.score, h.words]);
    const deadlock = alone('deadlock pool');
    const postgres = alone('postgres retry');
    // One search read while another is read, and one left after its first hit.
    const outer = index.search('deadlock pool');
    const abandoned = index.search('mysql');
    assert.ok(abandoned.next().value);
    const interleaved: unknown[][] = [];
    let inner: unknown[][] = [];
    for (const hit of outer) {
      interleaved.push([hit.id, hit.relevance, hit.score, hit.words]);
      if (interleaved.length === 3) inner = [...index.search('postgres retry')].map((h) => [h.id, h.relevance, h.score, h.words]);
    }
    assert.deepEqual(interleaved, deadlock);
    assert.deepEqual(inner, postgres);
    assert.deepEqual(alone('deadlock pool'), deadlock, 'and the columns returned serve later searches as well');
  });
});
