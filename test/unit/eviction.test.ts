import { strict as assert } from 'node:assert';
import fc from 'fast-check';
import { selectEvictionBatch, type EvictionCandidate } from '../../src/core/eviction';
import type { Importance } from '../../src/core/priority';

const c = (id: string, priority: number, importance: Importance = 'normal', created_at = '2026-01-01T00:00:00.000Z'): EvictionCandidate => ({ id, priority, importance, created_at });
const ids = (batch: readonly EvictionCandidate[]) => batch.map((x) => x.id);

/** The eviction order: lowest priority, then oldest, then smallest ID. */
function evictionOrder(a: EvictionCandidate, b: EvictionCandidate): number {
  if (a.priority !== b.priority) return a.priority - b.priority;
  if (a.created_at !== b.created_at) return a.created_at < b.created_at ? -1 : 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

describe('eviction: selectEvictionBatch', () => {
  it('selects nothing while the store holds at most max_memories', () => {
    const three = [c('mem_a', 0.1), c('mem_b', 0.2), c('mem_c', 0.3)];
    assert.deepEqual(selectEvictionBatch(three, { max_memories: 3, eviction_batch_size: 10 }), []);
    assert.deepEqual(selectEvictionBatch(three, { max_memories: 5, eviction_batch_size: 10 }), []);
    assert.deepEqual(selectEvictionBatch([], { max_memories: 0, eviction_batch_size: 10 }), []);
  });

  it('selects the lowest-priority batch, lowest first, once there are more than max_memories', () => {
    const candidates = [c('mem_a', 0.9), c('mem_b', 0.1), c('mem_c', 0.5), c('mem_d', 0.05), c('mem_e', 0.3)];
    assert.deepEqual(ids(selectEvictionBatch(candidates, { max_memories: 4, eviction_batch_size: 3 })), ['mem_d', 'mem_b', 'mem_e']);
  });

  it('selects a full batch even when the store is only one over the limit', () => {
    const candidates = [c('mem_a', 0.4), c('mem_b', 0.3), c('mem_c', 0.2), c('mem_d', 0.1)];
    assert.deepEqual(ids(selectEvictionBatch(candidates, { max_memories: 3, eviction_batch_size: 2 })), ['mem_d', 'mem_c']);
    assert.deepEqual(ids(selectEvictionBatch(candidates, { max_memories: 3, eviction_batch_size: 10 })), ['mem_d', 'mem_c', 'mem_b', 'mem_a']);
  });

  it('never selects an importance:critical memory, however low its priority', () => {
    const candidates = [c('mem_crit', 0, 'critical'), c('mem_a', 0.8), c('mem_b', 0.9)];
    assert.deepEqual(ids(selectEvictionBatch(candidates, { max_memories: 1, eviction_batch_size: 2 })), ['mem_a', 'mem_b']);
    const onlyCritical = [c('mem_x', 0, 'critical'), c('mem_y', 0.1, 'critical')];
    assert.deepEqual(selectEvictionBatch(onlyCritical, { max_memories: 1, eviction_batch_size: 5 }), []);
  });

  it('treats importance:low like normal memories (both before any important one)', () => {
    const candidates = [c('mem_low', 0.6, 'low'), c('mem_norm', 0.5, 'normal'), c('mem_imp', 0.0, 'important')];
    assert.deepEqual(ids(selectEvictionBatch(candidates, { max_memories: 1, eviction_batch_size: 2 })), ['mem_norm', 'mem_low']);
  });

  it('selects importance:important memories only when no normal or low memory is left', () => {
    // One ordinary memory is left: it alone is the batch; important ones do not fill the rest.
    const mixed = [c('mem_imp1', 0.0, 'important'), c('mem_imp2', 0.1, 'important'), c('mem_norm', 0.99), c('mem_crit', 0, 'critical')];
    assert.deepEqual(ids(selectEvictionBatch(mixed, { max_memories: 1, eviction_batch_size: 3 })), ['mem_norm']);
    // None is left: the important ones, lowest first, never the critical one.
    const noOrdinary = [c('mem_imp1', 0.4, 'important'), c('mem_crit', 0, 'critical'), c('mem_imp2', 0.2, 'important'), c('mem_imp3', 0.3, 'important')];
    assert.deepEqual(ids(selectEvictionBatch(noOrdinary, { max_memories: 1, eviction_batch_size: 2 })), ['mem_imp2', 'mem_imp3']);
  });

  it('breaks priority ties by age (oldest first), then by ID', () => {
    const candidates = [
      c('mem_c', 0.2, 'normal', '2026-01-02T00:00:00.000Z'),
      c('mem_b', 0.2, 'normal', '2026-01-01T00:00:00.000Z'),
      c('mem_a', 0.2, 'normal', '2026-01-02T00:00:00.000Z'),
      c('mem_z', 0.1, 'normal', '2026-12-31T00:00:00.000Z'),
      c('mem_top', 0.9, 'normal', '2020-01-01T00:00:00.000Z'),
    ];
    assert.deepEqual(ids(selectEvictionBatch(candidates, { max_memories: 1, eviction_batch_size: 4 })), ['mem_z', 'mem_b', 'mem_a', 'mem_c']);
  });

  it('leaves its input as it was', () => {
    const candidates = [c('mem_b', 0.5), c('mem_a', 0.1), c('mem_c', 0.3)];
    const copy = candidates.map((x) => ({ ...x }));
    selectEvictionBatch(candidates, { max_memories: 1, eviction_batch_size: 2 });
    assert.deepEqual(candidates, copy);
  });

  describe('properties', () => {
    const candidateArb = fc.record({
      priority: fc.constantFrom(0, 0.1, 0.25, 0.5, 0.75, 1),
      importance: fc.constantFrom<Importance>('critical', 'important', 'normal', 'low'),
      created_at: fc.constantFrom('2026-01-01T00:00:00.000Z', '2026-01-02T00:00:00.000Z', '2026-02-01T00:00:00.000Z'),
    });
    const storeArb = fc
      .uniqueArray(fc.integer({ min: 0, max: 0xffff }), { maxLength: 40 })
      .chain((nums) => fc.tuple(...nums.map((n) => candidateArb.map((x) => ({ id: `mem_${n.toString(16).padStart(8, '0')}`, ...x })))));
    const configArb = fc.record({ max_memories: fc.integer({ min: 0, max: 40 }), eviction_batch_size: fc.integer({ min: 1, max: 15 }) });

    it('selects the first eviction_batch_size of the eligible pool in eviction order, and nothing else', () => {
      fc.assert(
        fc.property(storeArb, configArb, (candidates, config) => {
          const batch = selectEvictionBatch(candidates, config);
          if (candidates.length <= config.max_memories) {
            assert.deepEqual(batch, []);
            return;
          }
          const ordinary = candidates.filter((x) => x.importance === 'normal' || x.importance === 'low');
          const pool = ordinary.length > 0 ? ordinary : candidates.filter((x) => x.importance === 'important');
          const expected = [...pool].sort(evictionOrder).slice(0, config.eviction_batch_size);
          assert.deepEqual(batch, expected);
          assert.ok(batch.length <= config.eviction_batch_size);
          assert.ok(batch.every((x) => x.importance !== 'critical'), 'no critical memory');
          if (ordinary.length > 0) assert.ok(batch.every((x) => x.importance !== 'important'), 'no important memory while an ordinary one is left');
          // Nothing left out of the pool ranks below anything selected.
          const chosen = new Set(ids(batch));
          for (const left of pool.filter((x) => !chosen.has(x.id))) {
            for (const taken of batch) assert.ok(evictionOrder(taken, left) < 0, `${taken.id} selected before ${left.id}`);
          }
        }),
        { numRuns: 400 },
      );
    });

    it('selects the same batch from a large store as sorting the whole pool would (the partial selection)', () => {
      const largeStoreArb = fc
        .uniqueArray(fc.integer({ min: 0, max: 0xffff }), { minLength: 50, maxLength: 400 })
        .chain((nums) => fc.tuple(...nums.map((n) => candidateArb.map((x) => ({ id: `mem_${n.toString(16).padStart(8, '0')}`, ...x })))));
      fc.assert(
        fc.property(largeStoreArb, fc.integer({ min: 1, max: 6 }), (candidates, batchSize) => {
          const config = { max_memories: 10, eviction_batch_size: batchSize };
          const ordinary = candidates.filter((x) => x.importance === 'normal' || x.importance === 'low');
          const pool = ordinary.length > 0 ? ordinary : candidates.filter((x) => x.importance === 'important');
          assert.deepEqual(selectEvictionBatch(candidates, config), [...pool].sort(evictionOrder).slice(0, batchSize));
        }),
        { numRuns: 200 },
      );
    });

    it('selects the same memories in the same order, whatever the order of its input', () => {
      fc.assert(
        fc.property(
          storeArb.chain((candidates) => fc.tuple(fc.constant(candidates), fc.shuffledSubarray(candidates, { minLength: candidates.length, maxLength: candidates.length }))),
          configArb,
          ([candidates, shuffled], config) => {
            assert.deepEqual(selectEvictionBatch(shuffled, config), selectEvictionBatch(candidates, config));
          },
        ),
        { numRuns: 300 },
      );
    });
  });
});
