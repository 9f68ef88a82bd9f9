import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { MemoryStats } from '../../src/core/model';
import { readStats, statsEntryJson } from '../../src/core/storeFiles';
import {
  DEMOTION_MIN_INJECTED_SESSIONS,
  NO_USAGE,
  isDemotionCandidate,
  lastUsedText,
  timeAgo,
  usageOf,
  usageText,
  type MemoryUsage,
} from '../../src/core/usage';
import { FIXTURE_DIR, readJson, statsOnDisk, useProject } from '../support/storeKit';

type StatsFile = { memories: Record<string, MemoryStats & Record<string, unknown>> };

const NOW = Date.parse('2026-12-10T12:00:00.000Z');
const usage = (over: Partial<MemoryUsage>): MemoryUsage => ({ ...NO_USAGE, ...over });

describe('usage', () => {
  describe('the counters in words', () => {
    it('usageText: "injected in 12 sessions, read 3 times, recalled 5 times, last used in session 40 (2 days ago)"', () => {
      const u = usage({ injected_sessions: 12, read_count: 3, recall_count: 5, last_used_session: 40, last_used_at: '2026-12-08T11:00:00.000Z' });
      assert.equal(usageText(u, NOW), 'injected in 12 sessions, read 3 times, recalled 5 times, last used in session 40 (2 days ago)');
    });

    it('usageText: never used; one session; once and twice; offers only when there were some', () => {
      assert.equal(usageText(NO_USAGE, NOW), 'injected in 0 sessions, never read, never recalled, last used never');
      assert.equal(
        usageText(usage({ injected_sessions: 1, offer_count: 2, read_count: 1, last_used_session: 3, last_used_at: '2026-12-10T11:59:30.000Z' }), NOW),
        'injected in 1 session, offered twice, read once, never recalled, last used in session 3 (just now)',
      );
    });

    it('timeAgo: the largest whole unit, singular or plural; nothing for an unknown time; a future time is "just now"', () => {
      const ago = (ms: number) => timeAgo(new Date(NOW - ms).toISOString(), NOW);
      assert.deepEqual(
        [ago(5_000), ago(60_000), ago(150_000), ago(3_600_000), ago(86_400_000 * 2.5), ago(86_400_000 * 8), ago(86_400_000 * 40), ago(86_400_000 * 800), ago(-60_000)],
        ['just now', '1 minute ago', '2 minutes ago', '1 hour ago', '2 days ago', '1 week ago', '1 month ago', '2 years ago', 'just now'],
      );
      assert.equal(timeAgo('', NOW), '');
      assert.equal(timeAgo('not a date', NOW), '');
      assert.equal(lastUsedText(usage({ last_used_session: 7, last_used_at: 'garbled' }), NOW), 'in session 7');
    });
  });

  describe('demotion candidates', () => {
    it(`injected in ${DEMOTION_MIN_INJECTED_SESSIONS} sessions or more and never read nor recalled; importance:critical never`, () => {
      const n = DEMOTION_MIN_INJECTED_SESSIONS;
      assert.equal(isDemotionCandidate(usage({ injected_sessions: n - 1 }), []), false);
      assert.equal(isDemotionCandidate(usage({ injected_sessions: n }), []), true);
      assert.equal(isDemotionCandidate(usage({ injected_sessions: n, offer_count: 9 }), []), true, 'offers are not asked for');
      assert.equal(isDemotionCandidate(usage({ injected_sessions: n * 4, read_count: 1 }), []), false);
      assert.equal(isDemotionCandidate(usage({ injected_sessions: n * 4, recall_count: 1 }), []), false);
      assert.equal(isDemotionCandidate(usage({ injected_sessions: n }), ['importance:critical']), false);
      assert.equal(isDemotionCandidate(usage({ injected_sessions: n }), ['importance:important']), true);
    });
  });

  describe('stats.json', () => {
    it('an entry without the counters (older LTM, the reference implementation) reads as never used', () => {
      const text = fs.readFileSync(path.join(FIXTURE_DIR, '.claude', 'ltm', 'stats.json'), 'utf8');
      const { value, status } = readStats(text);
      assert.deepEqual(status, { kind: 'ok' });
      assert.ok(value.size > 0);
      for (const stats of value.values()) assert.deepEqual(usageOf(stats), NO_USAGE);
    });

    it('a bad counter reads as none and keeps the rest of the entry', () => {
      const { value } = readStats(
        JSON.stringify({ memories: { mem_00000001: { access_count: 2, accessed_at: 'x', last_session: 1, priority: 0.5, read_count: -3, recall_count: 'many', injected_sessions: 4 } } }),
      );
      const stats = value.get('mem_00000001')!;
      assert.equal(stats.access_count, 2);
      assert.deepEqual(usageOf(stats), { ...NO_USAGE, injected_sessions: 4 });
    });

    it('statsEntryJson: the reference’s four fields first, then only the counters that are set, in a fixed order', () => {
      const base = { access_count: 1, accessed_at: 'a', last_session: 2, priority: 0.3 };
      assert.deepEqual(Object.keys(statsEntryJson({ ...base, read_count: 0, last_used_at: '' })), ['access_count', 'accessed_at', 'last_session', 'priority']);
      const full = statsEntryJson({
        last_used_at: 't',
        last_used_session: 9,
        read_count: 1,
        recall_count: 2,
        offer_count: 3,
        last_injected_session: 8,
        injected_sessions: 4,
        ...base,
      });
      assert.deepEqual(Object.keys(full), [
        'access_count',
        'accessed_at',
        'last_session',
        'priority',
        'injected_sessions',
        'last_injected_session',
        'offer_count',
        'recall_count',
        'read_count',
        'last_used_session',
        'last_used_at',
      ]);
      assert.deepEqual(readStats(JSON.stringify({ memories: { m: full } })).value.get('m'), full, 'round trip');
    });
  });

  describe('the store counts each kind of use', () => {
    const ctx = useProject('ltm-usage-');
    const statsFile = () => statsOnDisk(ctx.root) as StatsFile['memories'];

    async function storeTwo() {
      const store = ctx.open();
      const a = (await store.store({ topic: 'Pool exhaustion', content: 'The Postgres pool ran dry under batch jobs.' })).memory.id;
      const b = (await store.store({ topic: 'Ruff line length', content: 'Team convention: ruff, line length 100.' })).memory.id;
      return { store, a, b };
    }

    it('a new memory is written as before: no counter in stats.json, all zero in its view', async () => {
      const { store, a } = await storeTwo();
      assert.deepEqual(Object.keys(statsFile()[a]!), ['access_count', 'accessed_at', 'last_session', 'priority']);
      const view = store.peek(a);
      assert.deepEqual(view.usage, NO_USAGE);
      assert.equal(view.demotion_candidate, false);
    });

    it('an injection counts once per session (a start again after a compaction does not) and is an access', async () => {
      const { store, a, b } = await storeTwo();
      await store.recordUsageBySession(new Map([[3, { injected: [a, b] }]]));
      await store.recordUsageBySession(new Map([[3, { injected: [a] }]]));
      await store.recordUsageBySession(new Map([[4, { injected: [a] }]]));
      // Recorded late for an earlier session (two sessions started together): already counted.
      await store.recordUsageBySession(new Map([[2, { injected: [a] }]]));
      const sa = statsFile()[a]!;
      assert.equal(sa.injected_sessions, 2);
      assert.equal(sa.last_injected_session, 4);
      assert.equal(sa.access_count, 4, 'every injection is still an access, as before');
      assert.equal(sa.last_session, 4);
      assert.equal(statsFile()[b]!.injected_sessions, 1);
      assert.deepEqual(store.peek(a).usage, { ...NO_USAGE, injected_sessions: 2 });
    });

    it('an offer counts per offer and is an access; a recall is not an access; a read is', async () => {
      const { store, a, b } = await storeTwo();
      await store.recordUsageBySession(new Map([[-1, { offered: [a, a] }]]));
      const before = statsFile()[b]!;
      await store.recordRecalls([b], 6);
      const afterRecall = statsFile()[b]!;
      assert.equal(afterRecall.recall_count, 1);
      assert.equal(afterRecall.last_used_session, 6);
      assert.ok(Date.parse(afterRecall.last_used_at as string) > 0);
      assert.equal(afterRecall.access_count, before.access_count, 'a recall does not change the access count');
      assert.equal(afterRecall.last_session, before.last_session, 'nor the recency priority comes from');
      assert.equal(afterRecall.priority, before.priority);

      const read = await store.get(a);
      assert.deepEqual([read.usage.read_count, read.usage.offer_count, read.access_count], [1, 2, 3], 'the answer of get counts its own read');
      const sa = statsFile()[a]!;
      assert.deepEqual([sa.offer_count, sa.read_count, sa.access_count], [2, 1, 3]);
      // No session has started in this store: session 0, which stats.json leaves out like every zero.
      assert.equal(sa.last_used_session ?? 0, store.sessionCount);
      assert.ok(Date.parse(sa.last_used_at as string) > 0);
      assert.match(usageText(store.peek(a).usage), /, last used in session 0 \(just now\)$/);
    });

    it('last used is the last session read or recalled, never moved back by a use recorded late; an injection is not a use', async () => {
      const { store, a } = await storeTwo();
      await store.recordRecalls([a], 9);
      await store.recordRecalls([a], 7);
      await store.recordUsageBySession(new Map([[12, { injected: [a], offered: [a] }]]));
      assert.equal(store.peek(a).usage.last_used_session, 9);
      assert.equal(store.peek(a).usage.recall_count, 2);
    });

    it('a memory injected in many sessions and never asked for is a demotion candidate, counted by status; a read ends it', async () => {
      const { store, a, b } = await storeTwo();
      for (let s = 1; s <= DEMOTION_MIN_INJECTED_SESSIONS; s++) await store.recordUsageBySession(new Map([[s, { injected: [a, b] }]]));
      await store.recordRecalls([b]);
      assert.equal(store.peek(a).demotion_candidate, true);
      assert.equal(store.peek(b).demotion_candidate, false);
      assert.equal(store.status().demotion_candidates, 1);
      assert.deepEqual(
        store.list({ limit: 10 }).memories.map((m) => [m.id, m.demotion_candidate]).sort(),
        [
          [a, true],
          [b, false],
        ].sort(),
      );
      await store.get(a);
      assert.equal(store.status().demotion_candidates, 0);
    });

    it('uses of memories that are no longer active are skipped; a memory without stats gets them, keeping its recency', async () => {
      const { store, a, b } = await storeTwo();
      await store.forget(b);
      const stats = readJson<{ version: number; memories: Record<string, unknown> }>(path.join(ctx.root, 'stats.json'));
      delete stats.memories[a];
      fs.writeFileSync(path.join(ctx.root, 'stats.json'), JSON.stringify(stats));
      const priority = store.peek(a).priority;
      await store.recordRecalls([a, b]);
      const file = statsFile();
      assert.equal(file[b], undefined);
      assert.equal(file[a]!.recall_count, 1);
      assert.equal(file[a]!.access_count, 0);
      assert.equal(store.peek(a).priority, priority, 'recency and frequency as before the recall');
    });

    it('a second store (another process) sees the counters and adds to them', async () => {
      const { store, a } = await storeTwo();
      await store.recordRecalls([a]);
      const other = ctx.open();
      await other.recordRecalls([a]);
      await store.get(a);
      await other.get(a);
      assert.deepEqual([statsFile()[a]!.recall_count, statsFile()[a]!.read_count], [2, 2]);
    });

    it('list sorts by priority (default), by last use, or newest first; --phase 3 keeps archived order', async () => {
      const store = ctx.open();
      const ids: string[] = [];
      for (const [i, topic] of ['first', 'second', 'third', 'fourth'].entries()) {
        ids.push((await store.store({ topic, content: `Memory number ${i}.`, difficulty: [0.9, 0.1, 0.5, 0.3][i] })).memory.id);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      const [first, second, third, fourth] = ids as [string, string, string, string];
      await store.recordRecalls([second], 3);
      await store.recordRecalls([third], 5);
      await store.recordRecalls([first], 3);
      const order = (sort?: 'priority' | 'used' | 'created') => store.list({ sort, limit: 10 }).memories.map((m) => m.id);
      const byPriority = store.list({ limit: 10 }).memories;
      assert.deepEqual(order('priority'), order());
      assert.deepEqual(
        byPriority.map((m) => m.priority),
        [...byPriority.map((m) => m.priority)].sort((x, y) => y - x),
      );
      assert.deepEqual(order('used'), [third, first, second, fourth], 'session 5, then session 3 latest first, then never used');
      assert.deepEqual(order('created'), [fourth, third, second, first]);
      assert.deepEqual(
        store.list({ sort: 'used', limit: 2, offset: 1 }).memories.map((m) => m.id),
        [first, second],
      );
      assert.deepEqual(
        store.list({ sort: 'used', keyword: 'o', limit: 10 }).memories.map((m) => m.id),
        [second, fourth],
        'filters apply before the order',
      );
      assert.throws(() => store.list({ sort: 'usage' as never }), /sort must be priority, used, created/);
    });
  });
});
