import { strict as assert } from 'node:assert';
import fc from 'fast-check';
import { importanceOf, priorityScore, roundScore } from '../../src/core/priority';
import { RankingTable, before, compareRanked, type RankedEntry, type RankingInputs } from '../../src/core/ranking';

/** What the store knows of a memory, as priority.ts takes it. */
interface ModelMemory {
  difficulty: number;
  tags: string[];
  created_at: string;
  stats: { access_count: number; last_session: number } | undefined;
  created_session: number | null;
}

/** The ranking inputs the store derives from a memory (see MemoryStore.syncRanking). */
function inputsOf(m: ModelMemory): RankingInputs {
  return {
    difficulty: m.difficulty,
    tags: m.tags,
    created_at: m.created_at,
    lastSession: m.stats?.last_session ?? m.created_session ?? 0,
    accessCount: m.stats?.access_count ?? 0,
  };
}

/** The list order computed from scratch: each memory scored by priority.ts, sorted by compareRanked. */
function expectedOrder(model: ReadonlyMap<string, ModelMemory>, sessionCount: number): RankedEntry[] {
  return [...model]
    .map(([id, m]) => ({
      id,
      priority: roundScore(priorityScore({ difficulty: m.difficulty, tags: m.tags, stats: m.stats, created_session: m.created_session, session_count: sessionCount })),
      created_at: m.created_at,
    }))
    .sort(compareRanked);
}

const entry = (id: string, priority: number, created_at: string): RankedEntry => ({ id, priority, created_at });
const plain = (over: Partial<RankingInputs> = {}): RankingInputs => ({ difficulty: 0.5, tags: [], created_at: '2026-01-01T00:00:00.000Z', lastSession: 1, accessCount: 0, ...over });

// Few distinct values, so that priorities, ages and both tie often.
const IDS = Array.from({ length: 90 }, (_, i) => `mem_${i.toString(16).padStart(8, '0')}`);
const memoryArb: fc.Arbitrary<ModelMemory> = fc.record({
  difficulty: fc.oneof(fc.constantFrom(0, 0.25, 0.5, 0.7, 1, 1.5, -0.3), fc.double({ min: 0, max: 1, noNaN: true })),
  tags: fc.subarray(['importance:critical', 'importance:important', 'importance:low', 'docker', 'importance:normal']),
  created_at: fc.constantFrom('2026-01-01T00:00:00.000Z', '2026-01-02T00:00:00.000Z', '2026-03-09T12:30:00.000Z'),
  stats: fc.option(fc.record({ access_count: fc.integer({ min: 0, max: 15 }), last_session: fc.integer({ min: 0, max: 12 }) }), { nil: undefined }),
  created_session: fc.option(fc.integer({ min: 0, max: 12 }), { nil: null }),
});
type Op = { set: string; memory: ModelMemory } | { delete: string } | { clear: true };
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 12, arbitrary: fc.record({ set: fc.constantFrom(...IDS), memory: memoryArb }) },
  { weight: 4, arbitrary: fc.record({ delete: fc.constantFrom(...IDS) }) },
  { weight: 1, arbitrary: fc.constant({ clear: true as const }) },
);

function apply(table: RankingTable, model: Map<string, ModelMemory>, op: Op): void {
  if ('set' in op) {
    table.set(op.set, inputsOf(op.memory));
    model.set(op.set, op.memory);
  } else if ('delete' in op) {
    table.delete(op.delete);
    model.delete(op.delete);
  } else {
    table.clear();
    model.clear();
  }
}

describe('ranking', () => {
  describe('before / compareRanked: the list order', () => {
    it('puts the higher priority first, whatever the age and ID', () => {
      assert.equal(before(entry('mem_b', 0.6, '2020-01-01'), entry('mem_a', 0.5, '2030-01-01')), true);
      assert.equal(before(entry('mem_a', 0.5, '2030-01-01'), entry('mem_b', 0.6, '2020-01-01')), false);
    });

    it('breaks a priority tie by the newest created_at, then by the smaller ID', () => {
      assert.equal(before(entry('mem_z', 0.5, '2026-02-01T00:00:00.000Z'), entry('mem_a', 0.5, '2026-01-01T00:00:00.000Z')), true);
      assert.equal(before(entry('mem_a', 0.5, '2026-01-01T00:00:00.000Z'), entry('mem_z', 0.5, '2026-02-01T00:00:00.000Z')), false);
      assert.equal(before(entry('mem_a', 0.5, '2026-01-01'), entry('mem_b', 0.5, '2026-01-01')), true);
      assert.equal(before(entry('mem_b', 0.5, '2026-01-01'), entry('mem_a', 0.5, '2026-01-01')), false);
    });

    it('is a strict total order: compareRanked is 0 only for the same entry and antisymmetric otherwise', () => {
      const entryArb = fc.record({ id: fc.constantFrom('a', 'b', 'c'), priority: fc.constantFrom(0, 0.25, 0.5), created_at: fc.constantFrom('2026-01-01', '2026-01-02') });
      fc.assert(
        fc.property(entryArb, entryArb, entryArb, (a, b, c) => {
          const same = a.id === b.id && a.priority === b.priority && a.created_at === b.created_at;
          assert.equal(compareRanked(a, b) === 0, same);
          assert.equal(compareRanked(a, b), 0 - compareRanked(b, a));
          assert.equal(before(a, a), false, 'irreflexive');
          if (before(a, b) && before(b, c)) assert.equal(before(a, c), true, 'transitive');
        }),
        { numRuns: 500 },
      );
    });

    it('sorts a list into the documented order', () => {
      const list = [
        entry('mem_c', 0.4, '2026-01-03'),
        entry('mem_b', 0.9, '2026-01-01'),
        entry('mem_a', 0.4, '2026-01-03'),
        entry('mem_d', 0.4, '2026-01-05'),
        entry('mem_e', 0.4, '2026-01-01'),
      ];
      assert.deepEqual(
        [...list].sort(compareRanked).map((e) => e.id),
        ['mem_b', 'mem_d', 'mem_a', 'mem_c', 'mem_e'],
      );
    });
  });

  describe('RankingTable', () => {
    it('ranks exactly as scoring each memory with priority.ts and sorting by compareRanked, after any sets, deletes and clears', () => {
      fc.assert(
        fc.property(
          fc.array(opArb, { maxLength: 220 }),
          fc.integer({ min: 0, max: 20 }),
          fc.constantFrom(1, 2, 3, 7, 20, 64, 100, 501, 600),
          (ops, sessionCount, k) => {
            const table = new RankingTable();
            const model = new Map<string, ModelMemory>();
            for (const op of ops) apply(table, model, op);
            assert.equal(table.size, model.size);
            const expected = expectedOrder(model, sessionCount);
            // The whole list, through the sorting path (k > 500) and the inserting one (k = size).
            assert.deepEqual(table.top(Math.max(1, model.size), sessionCount), model.size === 0 ? [] : expected);
            assert.deepEqual(table.top(501 + model.size, sessionCount), expected);
            assert.deepEqual(table.top(k, sessionCount), expected.slice(0, k), `top(${k}) of ${model.size}`);
          },
        ),
        { numRuns: 300 },
      );
    });

    it('gives each entry as an eviction candidate with the priority and importance priority.ts gives its memory', () => {
      fc.assert(
        fc.property(fc.array(opArb, { maxLength: 150 }), fc.integer({ min: 0, max: 20 }), (ops, sessionCount) => {
          const table = new RankingTable();
          const model = new Map<string, ModelMemory>();
          for (const op of ops) apply(table, model, op);
          const candidates = new Map(table.evictionCandidates(sessionCount).map((c) => [c.id, c]));
          assert.equal(candidates.size, model.size);
          const scored = new Map(expectedOrder(model, sessionCount).map((e) => [e.id, e]));
          for (const [id, m] of model) {
            const c = candidates.get(id)!;
            assert.equal(c.priority, scored.get(id)!.priority, `priority of ${id}`);
            assert.equal(c.importance, importanceOf(m.tags), `importance of ${id}`);
            assert.equal(c.created_at, m.created_at);
          }
        }),
        { numRuns: 200 },
      );
    });

    it('top(n) is a prefix of top(n + m) for any n and m', () => {
      fc.assert(
        fc.property(fc.array(opArb, { minLength: 1, maxLength: 120 }), fc.integer({ min: 0, max: 15 }), fc.integer({ min: 0, max: 100 }), fc.integer({ min: 0, max: 600 }), (ops, sessionCount, n, m) => {
          const table = new RankingTable();
          const model = new Map<string, ModelMemory>();
          for (const op of ops) apply(table, model, op);
          const short = table.top(n, sessionCount);
          const long = table.top(n + m, sessionCount);
          assert.equal(short.length, Math.min(n, table.size));
          assert.deepEqual(long.slice(0, short.length), short);
        }),
        { numRuns: 200 },
      );
    });

    it('gives priorities rounded to 6 decimals, so a difference below rounding is a tie broken by age', () => {
      const table = new RankingTable();
      table.set('mem_older', plain({ difficulty: 0.5000000001, created_at: '2026-01-01T00:00:00.000Z' }));
      table.set('mem_newer', plain({ difficulty: 0.5, created_at: '2026-01-02T00:00:00.000Z' }));
      const top = table.top(2, 1);
      assert.deepEqual(top.map((e) => e.id), ['mem_newer', 'mem_older']);
      assert.equal(top[0]!.priority, top[1]!.priority);
      // 0.5·0.4 + recency 1·0.3 + frequency 0
      assert.equal(top[0]!.priority, 0.5);
    });

    it('scores the documented formula: difficulty clamped, recency by sessions since the last access, frequency capped, importance boosts', () => {
      const table = new RankingTable();
      table.set('mem_hard', plain({ difficulty: 3, lastSession: 4, accessCount: 40 })); // 0.4 + 0.3/(1+1) + 0.3 = 0.85
      table.set('mem_low', plain({ difficulty: 1, tags: ['importance:low'], lastSession: 5, accessCount: 5 })); // 0.4 + 0.3 + 0.15 - 0.25 = 0.6
      table.set('mem_crit', plain({ difficulty: 0, tags: ['importance:critical', 'importance:low'], lastSession: 0, accessCount: 0 })); // 0 + 0.3/6 + 0 + 0.5 = 0.55
      table.set('mem_neg', plain({ difficulty: -1, tags: ['importance:low'], lastSession: 0, accessCount: 0 })); // clamped to 0
      assert.deepEqual(
        table.top(10, 5).map((e) => [e.id, e.priority]),
        [
          ['mem_hard', 0.85],
          ['mem_low', 0.6],
          ['mem_crit', 0.55],
          ['mem_neg', 0],
        ],
      );
    });

    it('set on a known ID replaces its inputs, created_at included, without adding an entry', () => {
      const table = new RankingTable();
      table.set('mem_a', plain({ difficulty: 0 }));
      table.set('mem_b', plain({ difficulty: 0.5 }));
      table.set('mem_a', plain({ difficulty: 1, created_at: '2027-01-01T00:00:00.000Z' }));
      assert.equal(table.size, 2);
      assert.deepEqual(table.top(2, 1), [entry('mem_a', 0.7, '2027-01-01T00:00:00.000Z'), entry('mem_b', 0.5, '2026-01-01T00:00:00.000Z')]);
    });

    it('delete of an entry keeps every other entry’s own inputs (the last one moves into the freed slot)', () => {
      const table = new RankingTable();
      table.set('mem_a', plain({ difficulty: 1, created_at: 'A' }));
      table.set('mem_b', plain({ difficulty: 0.5, created_at: 'B' }));
      table.set('mem_c', plain({ difficulty: 0, created_at: 'C' }));
      table.delete('mem_a');
      table.delete('mem_unknown');
      assert.equal(table.size, 2);
      assert.deepEqual(table.top(5, 1), [entry('mem_b', 0.5, 'B'), entry('mem_c', 0.3, 'C')]);
      table.set('mem_a', plain({ difficulty: 0.25, created_at: 'A2' }));
      assert.deepEqual(table.top(5, 1), [entry('mem_b', 0.5, 'B'), entry('mem_a', 0.4, 'A2'), entry('mem_c', 0.3, 'C')]);
    });

    it('clear empties the table, and it fills again from nothing', () => {
      const table = new RankingTable();
      for (const id of IDS) table.set(id, plain());
      table.clear();
      assert.equal(table.size, 0);
      assert.deepEqual(table.top(10, 1), []);
      table.set('mem_x', plain({ difficulty: 1 }));
      assert.deepEqual(table.top(10, 1), [entry('mem_x', 0.7, '2026-01-01T00:00:00.000Z')]);
    });

    it('returns nothing for k ≤ 0', () => {
      const table = new RankingTable();
      table.set('mem_a', plain());
      assert.deepEqual(table.top(0, 1), []);
      assert.deepEqual(table.top(-3, 1), []);
    });

    it('ranks the same after growing past its initial capacity (64) as a table filled in another order', () => {
      const inputs = Array.from({ length: 300 }, (_, i) => [`mem_${i.toString(16).padStart(8, '0')}`, plain({ difficulty: (i * 37) % 101 / 100, lastSession: i % 7, accessCount: i % 13 })] as const);
      const forward = new RankingTable();
      const backward = new RankingTable();
      for (const [id, x] of inputs) forward.set(id, x);
      for (const [id, x] of [...inputs].reverse()) backward.set(id, x);
      assert.equal(forward.size, 300);
      assert.deepEqual(forward.top(300, 9), backward.top(300, 9));
      assert.deepEqual(forward.top(10, 9), backward.top(600, 9).slice(0, 10));
    });
  });
});
