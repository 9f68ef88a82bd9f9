import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import fc from 'fast-check';
import { toJsonText } from '../../src/core/files';
import { MemorySearchIndex, blendedScore } from '../../src/core/search';
import { StatsWriter } from '../../src/core/statsWriter';
import { StoreQueries } from '../../src/core/storeQueries';
import type { MemoryView } from '../../src/core/storeTypes';
import { makeMirror, makeTempProject, memoryText, removeDir, testId, writeArchive, writeMemory, type MirrorHarness } from '../support/storeKit';

/** A mirror with StoreQueries and a StatsWriter listening to it, wired as MemoryStore wires them. */
function queriesHarness(project: string): MirrorHarness & { queries: StoreQueries; stats: StatsWriter } {
  const h = makeMirror(project);
  const queries = new StoreQueries(h.mirror);
  const stats = new StatsWriter(h.mirror, { score: (id, m) => queries.score(id, m), touched: (id) => queries.touched(id) });
  h.on.memoryChanged = (id, next) => queries.memoryChanged(id, next);
  h.on.statsRead = () => {
    stats.replaced();
    queries.statsRead();
  };
  h.on.archivesChanged = () => queries.archivesChanged();
  return { ...h, queries, stats };
}

/** List order by brute force: every view, sorted by priority, then the newest, then ID. */
function bruteForce(q: StoreQueries, ids: Iterable<string>, sessionCount?: number): MemoryView[] {
  return [...ids]
    .map((id) => q.view(id, sessionCount))
    .sort((a, b) => b.priority - a.priority || (a.created_at < b.created_at ? 1 : a.created_at > b.created_at ? -1 : 0) || (a.id < b.id ? -1 : 1));
}

const ids = (views: readonly { id: string }[]) => views.map((v) => v.id);

/** A varied store: difficulties, importance tags, sessions and creation times that tie in places. */
function seed(root: string, n: number): void {
  const tags = [['alpha'], ['beta'], ['alpha', 'importance:critical'], ['importance:low'], []];
  for (let i = 0; i < n; i++) {
    writeMemory(root, testId(i), {
      topic: `${i % 2 ? 'Deploy' : 'Database'} note ${i}`,
      tags: tags[i % tags.length]!,
      difficulty: (i % 4) / 4,
      phase: 0,
      created_at: `2026-01-0${(i % 3) + 1}T00:00:00.000Z`,
      created_session: i % 5,
    });
  }
}

const rankingOpIdArb = fc.integer({ min: 0, max: 29 }).map(testId);
/** What changes a memory's place in the ranking: accesses, edits, deletions, hand edits, stats rewritten, sessions. */
const rankingOpArb = fc.oneof(
  fc.record({ kind: fc.constant('access' as const), ids: fc.array(rankingOpIdArb, { maxLength: 4 }) }),
  fc.record({ kind: fc.constant('edit' as const), id: rankingOpIdArb, difficulty: fc.constantFrom(0, 0.3, 1), critical: fc.boolean() }),
  fc.record({ kind: fc.constant('delete' as const), id: rankingOpIdArb }),
  fc.record({ kind: fc.constant('handEdit' as const), id: rankingOpIdArb, difficulty: fc.constantFrom(0, 0.6, 1) }),
  fc.record({ kind: fc.constant('statsOnDisk' as const), count: fc.integer({ min: 0, max: 12 }) }),
  fc.record({ kind: fc.constant('session' as const) }),
);
type RankingOp = typeof rankingOpArb extends fc.Arbitrary<infer T> ? T : never;

function applyRankingOp(p: ReturnType<typeof queriesHarness>, op: RankingOp): void {
  const active = p.mirror.files.has('id' in op ? op.id : '');
  switch (op.kind) {
    case 'access':
      p.stats.recordAccess(op.ids.filter((id) => p.mirror.files.has(id)), p.mirror.state.session_count);
      break;
    case 'edit':
      p.mirror.writeMemoryFile(op.id, memoryText(op.id, { difficulty: op.difficulty, tags: op.critical ? ['importance:critical'] : [] }));
      p.queries.touched(op.id);
      break;
    case 'delete':
      if (!active) break;
      p.mirror.deleteMemoryFile(op.id);
      p.stats.set(op.id, undefined);
      break;
    case 'handEdit':
      fs.writeFileSync(path.join(p.paths.memories, `${op.id}.md`), memoryText(op.id, { difficulty: op.difficulty, created_at: '2026-02-01T00:00:00.000Z' }));
      p.mirror.refresh({ full: true });
      break;
    case 'statsOnDisk': {
      const entries = [...p.mirror.files.keys()].slice(0, op.count).map((id, i) => [id, { access_count: i, accessed_at: 'x', last_session: i % 4, priority: 0 }]);
      fs.writeFileSync(`${p.paths.stats}.x`, toJsonText({ version: 1, memories: Object.fromEntries(entries) }));
      fs.renameSync(`${p.paths.stats}.x`, p.paths.stats);
      p.mirror.refresh();
      break;
    }
    case 'session':
      p.mirror.state.session_count++;
      break;
  }
}

/** The page of 8 at `offset` and the active count, from the ranking table, are what ranking every memory gives. */
function assertRankedAsBruteForce(p: ReturnType<typeof queriesHarness>, offset: number, what: string): void {
  const expected = bruteForce(p.queries, p.mirror.files.keys());
  assert.deepEqual(ids(p.queries.list({}, offset, 8).memories), ids(expected.slice(offset, offset + 8)), what);
  assert.equal(p.queries.activeCount(), p.mirror.files.size, what);
}

describe('StoreQueries', () => {
  let project: string;
  let h: ReturnType<typeof queriesHarness>;

  beforeEach(() => {
    project = makeTempProject('ltm-queries-');
    h = queriesHarness(project);
  });
  afterEach(() => {
    h.mirror.dispose();
    removeDir(project);
  });

  describe('lists of active memories', () => {
    beforeEach(() => {
      seed(h.paths.root, 40);
      h.mirror.refresh();
      h.mirror.state.session_count = 6;
      h.stats.recordAccess([testId(3), testId(7), testId(7), testId(11)], 5);
    });

    it('the unfiltered list and rankedPage are the brute-force order, page by page, with total and has_more', () => {
      const all = bruteForce(h.queries, h.mirror.files.keys());
      for (const [offset, limit] of [[0, 10], [10, 10], [35, 10], [0, 100], [40, 5]] as const) {
        const page = h.queries.list({}, offset, limit);
        assert.deepEqual(ids(page.memories), ids(all.slice(offset, offset + limit)), `offset ${offset}`);
        assert.deepEqual(page.memories, all.slice(offset, offset + limit));
        assert.equal(page.total, 40);
        assert.equal(page.has_more, offset + limit < 40);
      }
      assert.equal(h.queries.activeCount(), 40);
    });

    it('rankedPage ranks as a later session sees it', () => {
      const page = h.queries.rankedPage(0, 15, 20);
      assert.deepEqual(page.memories, bruteForce(h.queries, h.mirror.files.keys(), 20).slice(0, 15));
    });

    it('filters by phase, tag and keyword (trimmed, any case) and ranks what matches the same way', () => {
      writeMemory(h.paths.root, testId(100), { topic: 'Reduced deploy note', phase: 1, tags: ['alpha'] });
      h.mirror.refresh();
      const cases = [
        { filter: { tag: ' ALPHA ' }, match: (v: MemoryView) => v.tags.includes('alpha') },
        { filter: { keyword: 'deploy' }, match: (v: MemoryView) => v.topic.toLowerCase().includes('deploy') },
        { filter: { phase: 1 }, match: (v: MemoryView) => v.phase === 1 },
        { filter: { phase: 0, tag: 'alpha', keyword: 'DATABASE' }, match: (v: MemoryView) => v.phase === 0 && v.tags.includes('alpha') && /database/i.test(v.topic) },
      ];
      for (const { filter, match } of cases) {
        const expected = bruteForce(h.queries, h.mirror.files.keys()).filter(match);
        assert.ok(expected.length > 0, JSON.stringify(filter));
        const page = h.queries.list(filter, 1, 5);
        assert.deepEqual(ids(page.memories), ids(expected.slice(1, 6)), JSON.stringify(filter));
        assert.equal(page.total, expected.length);
        assert.equal(page.has_more, 6 < expected.length);
      }
    });

    it('view carries the stats, or defaults from the file for a memory never accessed', () => {
      const accessed = h.queries.view(testId(7));
      assert.equal(accessed.access_count, 2);
      assert.equal(accessed.last_session, 5);
      const fresh = h.queries.view(testId(8));
      assert.equal(fresh.access_count, 0);
      assert.equal(fresh.accessed_at, fresh.created_at);
      assert.equal(fresh.last_session, 8 % 5);
      assert.equal(fresh.priority, h.queries.score(testId(8), h.mirror.files.get(testId(8))!.memory));
      assert.equal(h.queries.priorityOf(testId(8), h.mirror.files.get(testId(8))!.memory).priority.toFixed(6), fresh.priority.toFixed(6));
    });
  });

  describe('the lazy ranking table stays in step', () => {
    it('after any sequence of accesses, edits, deletions, hand edits, stats rewrites and new sessions, the first page equals brute force', function () {
      this.timeout(60_000);
      const dir = makeTempProject('ltm-queries-prop-');
      const p = queriesHarness(dir);
      try {
        seed(p.paths.root, 30);
        p.mirror.refresh();
        fc.assert(
          fc.property(fc.array(rankingOpArb, { minLength: 1, maxLength: 20 }), fc.integer({ min: 0, max: 5 }), (ops, offset) => {
            for (const op of ops) {
              applyRankingOp(p, op);
              assertRankedAsBruteForce(p, offset, `after ${op.kind}`);
            }
          }),
          { numRuns: 60 },
        );
      } finally {
        p.mirror.dispose();
        removeDir(dir);
      }
    });

    it('a table filled in slices (warmRanking), with those changes between slices and a list at any point, equals brute force', async function () {
      this.timeout(60_000);
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.option(rankingOpArb, { nil: undefined }), { maxLength: 8 }),
          fc.integer({ min: 1, max: 9 }),
          fc.integer({ min: -1, max: 8 }),
          async (ops, slice, listAt) => {
            const dir = makeTempProject('ltm-queries-warm-');
            const p = queriesHarness(dir);
            try {
              seed(p.paths.root, 30);
              p.mirror.refresh();
              let pauses = 0;
              await p.queries.warmRanking(async () => {
                const op = ops[pauses];
                if (op) applyRankingOp(p, op);
                // A session start in the middle finishes the table itself.
                if (pauses === listAt) assertRankedAsBruteForce(p, 0, `a list at pause ${pauses}`);
                pauses++;
              }, slice);
              assert.equal(p.queries.rankingWarming, false);
              assertRankedAsBruteForce(p, 0, 'once filled');
              assert.ok(pauses >= Math.min(1, ops.length), 'it gave way before ranking');
            } finally {
              p.mirror.dispose();
              removeDir(dir);
            }
          },
        ),
        { numRuns: 40 },
      );
    });
  });

  describe('search', () => {
    /** The ranking search documents: relevance from a fresh index of every active memory, blended with priority. */
    function bruteForceSearch(query: string, limit: number, tag?: string) {
      const index = new MemorySearchIndex();
      for (const file of h.mirror.files.values()) index.upsert(file.memory);
      return [...index.search(query)]
        .filter((hit) => !tag || h.mirror.files.get(hit.id)!.memory.tags.includes(tag))
        .map((hit) => ({ id: hit.id, score: blendedScore(hit.relevance, h.queries.score(hit.id, h.mirror.files.get(hit.id)!.memory)) }))
        .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1))
        .slice(0, limit);
    }

    beforeEach(() => {
      seed(h.paths.root, 60);
      h.mirror.refresh();
      h.mirror.state.session_count = 4;
    });

    it('ranks by relevance blended with priority, exactly as a brute-force search of every memory', () => {
      for (const query of ['database', 'deploy note', 'note', 'databse', 'alpha']) {
        for (const limit of [1, 3, 10, 100]) {
          const got = h.queries.search(query, limit, 'active', undefined);
          const want = bruteForceSearch(query, limit);
          assert.deepEqual(ids(got), ids(want), `${query} / ${limit}`);
          for (const [i, r] of got.entries()) assert.ok(Math.abs(r.score - want[i]!.score) < 1e-12);
          for (const r of got) {
            assert.equal(r.archived, false);
            assert.equal(r.priority, h.queries.score(r.id, h.mirror.files.get(r.id)!.memory));
          }
        }
      }
    });

    it('between equally relevant memories, the higher priority comes first', () => {
      writeMemory(h.paths.root, testId(200), { topic: 'Quokka', difficulty: 0, created_session: 0 });
      writeMemory(h.paths.root, testId(201), { topic: 'Quokka', difficulty: 1, created_session: 4, tags: ['importance:critical'] });
      h.mirror.refresh();
      const results = h.queries.search('quokka', 2, 'active', undefined);
      assert.deepEqual(ids(results), [testId(201), testId(200)]);
      assert.ok(results[0]!.score > results[1]!.score);
    });

    it('honours the tag filter and the limit, and follows memories changed since the index was built', () => {
      assert.deepEqual(ids(h.queries.search('note', 7, 'active', 'beta')), ids(bruteForceSearch('note', 7, 'beta')));
      h.mirror.writeMemoryFile(testId(5), memoryText(testId(5), { topic: 'Wombat burrow' }));
      h.mirror.deleteMemoryFile(testId(6));
      assert.deepEqual(ids(h.queries.search('wombat', 5, 'active', undefined)), [testId(5)]);
      assert.ok(!ids(h.queries.search('note', 100, 'active', undefined)).includes(testId(6)));
    });
  });

  describe('archived memories', () => {
    const entry = (topic: string, tags: string[], archived_at: string) => ({ topic, tags, archived_at, original_phase: 0, reason: 'forgotten' });

    beforeEach(() => {
      writeArchive(h.paths.root, testId(1), { topic: 'Old kangaroo', tags: ['zoo'], content: 'Marsupial facts.' });
      writeArchive(h.paths.root, testId(2), { topic: 'Older koala', tags: [], content: 'Marsupial trees.' });
      writeArchive(h.paths.root, testId(3), { topic: 'Original of an active one', content: 'Marsupial active.' });
      writeMemory(h.paths.root, testId(3), { topic: 'Active one', phase: 1, content: 'Marsupial reduced.' });
      fs.writeFileSync(
        h.paths.archiveIndex,
        toJsonText({
          version: 1,
          memories: {
            [testId(1)]: entry('Old kangaroo', ['zoo'], '2026-03-01T00:00:00.000Z'),
            [testId(2)]: entry('Older koala', [], '2026-02-01T00:00:00.000Z'),
            [testId(3)]: entry('Active one', [], '2026-04-01T00:00:00.000Z'),
            [testId(4)]: entry('No file', [], '2026-05-01T00:00:00.000Z'),
          },
        }),
      );
      h.mirror.refresh();
    });

    it('archivedIds are the archive-index entries with a file whose memory is not active', () => {
      assert.deepEqual(h.queries.archivedIds().sort(), [testId(1), testId(2)]);
    });

    it('list({ phase: 3 }) gives them latest first as phase 3, filtered by tag and keyword', () => {
      const all = h.queries.list({ phase: 3 }, 0, 10);
      assert.deepEqual(ids(all.memories), [testId(1), testId(2)]);
      assert.equal(all.total, 2);
      assert.ok(all.memories.every((m) => m.phase === 3 && m.priority === 0));
      assert.equal(all.memories[0]!.accessed_at, '2026-03-01T00:00:00.000Z');
      assert.deepEqual(ids(h.queries.list({ phase: 3, tag: 'Zoo ' }, 0, 10).memories), [testId(1)]);
      assert.deepEqual(ids(h.queries.list({ phase: 3, keyword: 'KOALA' }, 0, 10).memories), [testId(2)]);
      const second = h.queries.list({ phase: 3 }, 1, 1);
      assert.deepEqual(ids(second.memories), [testId(2)]);
      assert.equal(second.has_more, false);
    });

    it('search with scope archives or all finds archived memories at priority 0, never the archive of an active one', () => {
      const archived = h.queries.search('marsupial', 10, 'archives', undefined);
      assert.deepEqual(ids(archived).sort(), [testId(1), testId(2)]);
      for (const r of archived) {
        assert.equal(r.archived, true);
        assert.equal(r.phase, 3);
        assert.equal(r.priority, 0);
      }
      const all = h.queries.search('marsupial', 10, 'all', undefined);
      assert.deepEqual(ids(all).sort(), [testId(1), testId(2), testId(3)]);
      assert.equal(all.find((r) => r.id === testId(3))!.archived, false);
      assert.deepEqual(ids(h.queries.search('marsupial', 10, 'archives', 'zoo')), [testId(1)]);
      for (let i = 1; i < all.length; i++) assert.ok(all[i - 1]!.score >= all[i]!.score);
    });

    it('an archive added later is searchable (archivesChanged drops the archive index)', () => {
      assert.deepEqual(ids(h.queries.search('platypus', 10, 'archives', undefined)), []);
      h.mirror.writeArchiveFile(testId(9), memoryText(testId(9), { topic: 'Platypus' }));
      h.mirror.archiveIndex.memories.set(testId(9), entry('Platypus', [], '2026-06-01T00:00:00.000Z') as never);
      h.mirror.writeArchiveIndex();
      assert.deepEqual(ids(h.queries.search('platypus', 10, 'archives', undefined)), [testId(9)]);
    });
  });
});
