import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import fc from 'fast-check';
import { statSignature, toJsonText } from '../../src/core/files';
import type { MemoryStats } from '../../src/core/model';
import { StatsWriter } from '../../src/core/statsWriter';
import { statsEntryJson } from '../../src/core/storeFiles';
import { StoreQueries } from '../../src/core/storeQueries';
import { makeMirror, makeTempProject, removeDir, testId, writeMemory, type MirrorHarness } from '../support/storeKit';

/** stats.json as a from-scratch render of a stats map: entries sorted by ID. */
function renderStats(stats: ReadonlyMap<string, MemoryStats>): string {
  return toJsonText({ version: 1, memories: Object.fromEntries([...stats].sort(([a], [b]) => (a < b ? -1 : 1)).map(([id, s]) => [id, statsEntryJson(s)])) });
}

/** A mirror with a StatsWriter scoring through a real StoreQueries, wired as MemoryStore wires them; `touched` is logged. */
function statsHarness(project: string, memories: number, options: { chunksPerSlice?: number } = {}): MirrorHarness & { stats: StatsWriter; queries: StoreQueries; touched: string[] } {
  const h = makeMirror(project);
  for (let i = 0; i < memories; i++) writeMemory(h.paths.root, testId(i), { difficulty: (i % 5) / 4, created_session: i % 4 });
  const queries = new StoreQueries(h.mirror);
  const touched: string[] = [];
  const stats = new StatsWriter(
    h.mirror,
    {
      score: (id, memory) => queries.score(id, memory),
      touched: (id) => {
        touched.push(id);
        queries.touched(id);
      },
    },
    options,
  );
  h.on.memoryChanged = (id, next) => queries.memoryChanged(id, next);
  h.on.statsRead = () => {
    stats.replaced();
    queries.statsRead();
  };
  h.mirror.refresh();
  return { ...h, stats, queries, touched };
}

/** stats.json with its journal applied, as a fresh process reads them, rendered as stats.json. */
function onDisk(project: string): string {
  const fresh = makeMirror(project, { init: false });
  try {
    fresh.mirror.refresh();
    return renderStats(fresh.mirror.stats);
  } finally {
    fresh.mirror.dispose();
  }
}

const entry = (n: number, priority = 0): MemoryStats => ({ access_count: n, accessed_at: `2026-01-0${(n % 9) + 1}T00:00:00.000Z`, last_session: n, priority });

describe('StatsWriter', () => {
  let project: string;
  let h: ReturnType<typeof statsHarness>;
  const readStats = () => fs.readFileSync(h.paths.stats, 'utf8');

  beforeEach(() => {
    project = makeTempProject('ltm-stats-');
    h = statsHarness(project, 4);
  });
  afterEach(() => {
    h.mirror.dispose();
    removeDir(project);
  });

  describe('recordAccess()', () => {
    it('counts one access, stamps the time and session, and stores the new priority', () => {
      const [a, b] = [testId(0), testId(1)];
      h.mirror.state.session_count = 6;
      const before = Date.now();
      h.stats.recordAccess([a, b], 5);
      h.stats.recordAccess([a], 3);
      const sa = h.mirror.stats.get(a)!;
      assert.equal(sa.access_count, 2);
      assert.equal(sa.last_session, 5, 'an access recorded late never moves last_session back');
      assert.ok(Date.parse(sa.accessed_at) >= before - 1);
      assert.equal(sa.priority, h.queries.score(a, h.mirror.files.get(a)!.memory));
      assert.equal(h.mirror.stats.get(b)!.access_count, 1);
      assert.deepEqual(h.touched, [a, b, a]);
    });
  });

  describe('storePriority()', () => {
    it('stores the current priority with an active memory’s stats, and does nothing for a memory without stats', () => {
      const a = testId(2);
      h.stats.set(a, entry(1, 0.123));
      h.stats.storePriority(a);
      assert.equal(h.mirror.stats.get(a)!.priority, h.queries.score(a, h.mirror.files.get(a)!.memory));
      h.stats.storePriority(testId(3));
      assert.ok(!h.mirror.stats.has(testId(3)));
    });
  });

  describe('write()', () => {
    it('writes stats.json equal to a from-scratch render, with what set() removed left out', () => {
      h.stats.set(testId(1), entry(1));
      h.stats.set(testId(0), entry(2));
      h.stats.set(testId(3), entry(3));
      h.stats.set(testId(1), undefined);
      h.stats.write();
      assert.equal(readStats(), renderStats(h.mirror.stats));
      assert.deepEqual(Object.keys(JSON.parse(readStats()).memories), [testId(0), testId(3)]);
    });

    it('writes nothing when nothing changed since its last write', () => {
      h.stats.set(testId(0), entry(1));
      h.stats.storePriority(testId(0));
      h.stats.write();
      const sig = statSignature(h.paths.stats);
      h.stats.write();
      h.stats.storePriority(testId(0)); // the same priority: no change
      h.stats.write();
      assert.deepEqual(statSignature(h.paths.stats), sig);
    });

    it('writes again when stats.json was deleted by someone else', () => {
      h.stats.set(testId(0), entry(1));
      h.stats.write();
      fs.rmSync(h.paths.stats);
      h.mirror.refresh();
      h.stats.write();
      assert.equal(readStats(), renderStats(new Map()));
    });

    it('after stats.json was read again (another process wrote it), renders every entry from the new values, not from its old bytes', () => {
      for (let i = 0; i < 4; i++) h.stats.set(testId(i), entry(i));
      h.stats.write();
      const theirs = new Map([0, 1, 2, 3].map((i) => [testId(i), entry(i + 10, 0.5)]));
      fs.writeFileSync(h.paths.stats, `${JSON.stringify({ version: 1, memories: Object.fromEntries(theirs) })}\n`);
      h.mirror.refresh();
      assert.deepEqual(h.mirror.stats.get(testId(2)), theirs.get(testId(2)));
      h.stats.set(testId(0), entry(7));
      h.stats.write();
      theirs.set(testId(0), entry(7));
      assert.equal(onDisk(project), renderStats(theirs));
      h.stats.compact();
      assert.equal(readStats(), renderStats(theirs));
    });

    it('writeAsync writes the same bytes and records the signature (the next refresh reads nothing)', async () => {
      h.stats.set(testId(0), entry(1));
      h.stats.set(testId(1), entry(2));
      await h.stats.writeAsync();
      assert.equal(readStats(), renderStats(h.mirror.stats));
      const stats = h.mirror.stats;
      h.mirror.refresh();
      assert.equal(h.mirror.stats, stats);
      const sig = statSignature(h.paths.stats);
      await h.stats.writeAsync();
      assert.deepEqual(statSignature(h.paths.stats), sig, 'nothing changed: nothing written');
    });

    it('after any sequence of accesses, sets, removals, priority updates and rewrites by another process, equals a from-scratch render', async function () {
      this.timeout(60_000);
      const idArb = fc.integer({ min: 0, max: 79 }).map(testId);
      const opArb = fc.oneof(
        fc.record({ kind: fc.constant('access' as const), ids: fc.array(idArb, { maxLength: 5 }), session: fc.integer({ min: 0, max: 9 }) }),
        fc.record({ kind: fc.constant('set' as const), id: idArb, n: fc.integer({ min: 0, max: 20 }) }),
        fc.record({ kind: fc.constant('remove' as const), id: idArb }),
        fc.record({ kind: fc.constant('priority' as const), id: idArb, sessions: fc.integer({ min: 0, max: 12 }) }),
        fc.record({ kind: fc.constant('theirs' as const), keep: fc.integer({ min: 0, max: 3 }), bump: fc.integer({ min: 1, max: 5 }) }),
        fc.record({ kind: fc.constant('write' as const), async: fc.boolean() }),
      );
      const dir = makeTempProject('ltm-stats-prop-');
      const p = statsHarness(dir, 80);
      try {
        await fc.assert(
          fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 30 }), async (ops) => {
            for (const op of ops) {
              switch (op.kind) {
                case 'access':
                  p.stats.recordAccess(op.ids, op.session);
                  break;
                case 'set':
                  p.stats.set(op.id, entry(op.n));
                  break;
                case 'remove':
                  p.stats.set(op.id, undefined);
                  break;
                case 'priority':
                  p.mirror.state.session_count = op.sessions;
                  p.stats.storePriority(op.id);
                  break;
                case 'theirs': {
                  // Another process rewrites stats.json: every `keep`-th entry stays, with a bumped count.
                  const theirs = [...p.mirror.stats].filter((_, i) => i % (op.keep + 1) === 0).map(([id, s]) => [id, { ...s, access_count: s.access_count + op.bump }]);
                  fs.writeFileSync(`${p.paths.stats}.x`, `${JSON.stringify({ version: 1, memories: Object.fromEntries(theirs) })}\n`);
                  fs.renameSync(`${p.paths.stats}.x`, p.paths.stats);
                  p.mirror.refresh();
                  break;
                }
                case 'write':
                  if (op.async) await p.stats.writeAsync();
                  else p.stats.write();
                  assert.equal(onDisk(dir), renderStats(p.mirror.stats));
                  break;
              }
            }
            p.stats.write();
            assert.equal(onDisk(dir), renderStats(p.mirror.stats));
            p.stats.compact();
            // Whole (another process's bytes are kept when there was nothing to add to them).
            assert.deepEqual(JSON.parse(fs.readFileSync(p.paths.stats, 'utf8')), JSON.parse(renderStats(p.mirror.stats)));
            assert.ok(!fs.existsSync(p.paths.statsJournal), 'compaction removes the journal');
          }),
          { numRuns: 60 },
        );
      } finally {
        p.mirror.dispose();
        removeDir(dir);
      }
    });
  });

  describe('the stats journal (statsJournal.ts)', () => {
    const journal = () => fs.readFileSync(h.paths.statsJournal, 'utf8');
    const lines = () => journal().split('\n').filter((l) => l !== '');

    it('after stats.json exists, a write appends one line per changed memory and leaves stats.json as it was; a fresh reader applies it', () => {
      h.stats.set(testId(0), entry(1));
      h.stats.write();
      const before = readStats();
      assert.ok(!fs.existsSync(h.paths.statsJournal), 'the first write creates stats.json itself');
      h.stats.recordAccess([testId(0), testId(1)], 3);
      h.stats.write();
      assert.equal(readStats(), before, 'stats.json untouched');
      assert.equal(lines().length, 3, 'a header and one line per changed memory');
      h.stats.set(testId(0), undefined);
      h.stats.write();
      assert.equal(lines().length, 4);
      assert.equal(onDisk(project), renderStats(h.mirror.stats));
      assert.ok(!h.mirror.stats.has(testId(0)));
    });

    it('a refresh reads only the lines another process appended (the same result as reading both files again)', () => {
      h.stats.set(testId(0), entry(1));
      h.stats.write();
      const other = statsHarness(project, 0);
      try {
        other.stats.recordAccess([testId(2)], 4);
        other.stats.write();
        h.mirror.refresh();
        assert.equal(h.mirror.stats.get(testId(2))?.access_count, 1);
        other.stats.recordAccess([testId(2)], 4);
        other.stats.write();
        h.mirror.refresh();
        assert.equal(h.mirror.stats.get(testId(2))?.access_count, 2);
        assert.equal(renderStats(h.mirror.stats), onDisk(project));
      } finally {
        other.mirror.dispose();
      }
    });

    it('is written into stats.json and removed once it holds more than max(256, entries/4) lines', () => {
      h.stats.set(testId(0), entry(1));
      h.stats.write();
      for (let i = 0; i < 256; i++) {
        h.stats.recordAccess([testId(i % 4)], 1);
        h.stats.write();
      }
      assert.equal(lines().length, 257, 'a header and 256 lines: not yet');
      h.stats.recordAccess([testId(0)], 1);
      h.stats.write();
      assert.ok(!fs.existsSync(h.paths.statsJournal), 'compacted');
      assert.equal(readStats(), renderStats(h.mirror.stats));
    });

    it('a server’s compaction (writeAsync) renders in slices; stats.json replaced by hand between two is not overwritten, and nothing is lost', async () => {
      const sliced = statsHarness(project, 0, { chunksPerSlice: 1 });
      try {
        // 200 entries: 7 chunks, one a slice.
        const ids = Array.from({ length: 200 }, (_, i) => testId(0x100 + i));
        ids.forEach((id, i) => sliced.stats.set(id, entry(i)));
        sliced.stats.write();
        // A journal one line short of its compaction (more than max(256, 200/4) lines).
        for (let i = 0; sliced.mirror.statsFile.journalLines < 256; i++) {
          sliced.stats.set(ids[i % ids.length]!, entry(i + 1));
          sliced.stats.write();
        }
        sliced.stats.set(ids[0]!, entry(7));
        const compacting = sliced.stats.writeAsync();
        // Between two slices: a hand edit, seen by a reader's refresh.
        await new Promise<void>((resolve) => setImmediate(resolve));
        const theirs = `${JSON.stringify({ version: 1, memories: { [ids[1]!]: entry(9), [ids[2]!]: entry(4) } })}\n`;
        fs.writeFileSync(sliced.paths.stats, theirs);
        sliced.mirror.refresh();
        await compacting;
        assert.equal(fs.readFileSync(sliced.paths.stats, 'utf8'), theirs, 'what was rendered before the edit is not written over it');
        // The next writes go on from what was read, and a compaction in slices writes what a from-scratch render gives.
        sliced.stats.set(ids[3]!, entry(5));
        await sliced.stats.writeAsync();
        assert.equal(onDisk(project), renderStats(new Map([[ids[1]!, entry(9)], [ids[2]!, entry(4)], [ids[3]!, entry(5)]])));
        for (let i = 0; i < 300 && fs.existsSync(sliced.paths.statsJournal); i++) {
          sliced.stats.set(ids[i % 3]!, entry(i));
          await sliced.stats.writeAsync();
        }
        assert.ok(!fs.existsSync(sliced.paths.statsJournal), 'compacted');
        assert.equal(fs.readFileSync(sliced.paths.stats, 'utf8'), renderStats(sliced.mirror.stats));
      } finally {
        sliced.mirror.dispose();
      }
    });

    it('deferCompaction: writes only append, however long the journal, and tell once that it is due (again if it doubles); compactAsync compacts it', async () => {
      h.stats.set(testId(0), entry(1));
      h.stats.write();
      let told = 0;
      h.stats.deferCompaction(() => told++);
      for (let i = 0; i < 300; i++) {
        h.stats.recordAccess([testId(i % 4)], 1);
        if (i % 2 === 0) h.stats.write();
        else await h.stats.writeAsync();
      }
      assert.equal(lines().length, 301, 'a header and 300 lines: appended past max(256, entries/4)');
      assert.equal(told, 1, 'told once');
      assert.equal(onDisk(project), renderStats(h.mirror.stats), 'a fresh reader has every change');
      // The compaction asked for never came (a busy lock): told again once the journal doubled.
      while (lines().length <= 2 * 257) {
        h.stats.recordAccess([testId(1)], 1);
        h.stats.write();
      }
      assert.equal(told, 2, 'told again after the journal doubled');
      await h.stats.compactAsync();
      assert.ok(!fs.existsSync(h.paths.statsJournal), 'compacted');
      assert.equal(readStats(), renderStats(h.mirror.stats));
      // Told again once it is due again; without deferral, the write that finds it due compacts it.
      for (let i = 0; i < 257; i++) {
        h.stats.recordAccess([testId(0)], 2);
        h.stats.write();
      }
      assert.equal(told, 3);
      h.stats.deferCompaction(null);
      h.stats.recordAccess([testId(1)], 2);
      h.stats.write();
      assert.ok(!fs.existsSync(h.paths.statsJournal), 'compacted by the write');
      assert.equal(readStats(), renderStats(h.mirror.stats));
    });

    it('a crash after compaction wrote stats.json but before it removed the journal applies nothing twice', () => {
      h.stats.set(testId(0), entry(1));
      h.stats.write();
      h.stats.recordAccess([testId(0)], 2);
      h.stats.recordAccess([testId(0)], 2);
      h.stats.write();
      const left = journal();
      h.stats.compact();
      fs.writeFileSync(h.paths.statsJournal, left);
      assert.equal(onDisk(project), renderStats(h.mirror.stats));
      assert.equal(h.mirror.stats.get(testId(0))?.access_count, 3);
      // The next writer replaces the stale journal rather than adding to it.
      h.mirror.refresh();
      h.stats.recordAccess([testId(0)], 2);
      h.stats.write();
      assert.equal(lines().length, 2);
      assert.equal(JSON.parse(onDisk(project)).memories[testId(0)].access_count, 4);
    });

    it('stats.json rewritten by a writer that knows no journal (an older LTM) wins over the journal', () => {
      h.stats.set(testId(0), entry(1));
      h.stats.write();
      h.stats.recordAccess([testId(0)], 2);
      h.stats.write();
      const theirs = { version: 1, memories: { [testId(0)]: entry(9), [testId(1)]: entry(4) } };
      fs.writeFileSync(h.paths.stats, `${JSON.stringify(theirs)}\n`);
      assert.equal(onDisk(project), renderStats(new Map([[testId(0), entry(9)], [testId(1), entry(4)]])));
    });

    it('a line cut short by a kill is skipped, and the next append starts on a line of its own', () => {
      h.stats.set(testId(0), entry(1));
      h.stats.write();
      h.stats.recordAccess([testId(0)], 2);
      h.stats.write();
      fs.appendFileSync(h.paths.statsJournal, `{"id":"${testId(1)}","stats":{"access_count":5`);
      h.mirror.refresh();
      assert.ok(!h.mirror.stats.has(testId(1)), 'the cut line is not applied');
      h.stats.recordAccess([testId(2)], 2);
      h.stats.write();
      assert.equal(onDisk(project), renderStats(h.mirror.stats));
      assert.equal(JSON.parse(onDisk(project)).memories[testId(2)].access_count, 1);
    });
  });
});
