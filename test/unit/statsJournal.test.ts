import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { FileSignature } from '../../src/core/files';
import type { MemoryStats } from '../../src/core/model';
import { applyJournal, compactionDue, journalAppliesTo, journalHeader, journalLine, readJournalLines } from '../../src/core/statsJournal';
import { MemoryStore } from '../../src/core/store';
import { ltmRoot, makeTempProject, removeDir, statsOnDisk, testId, writeMemory } from '../support/storeKit';

const base: FileSignature = { ino: 42, size: 1234, mtimeMs: 1764028800123.4567 };
const entry = (n: number): MemoryStats => ({ access_count: n, accessed_at: '2026-01-01T00:00:00.000Z', last_session: n, priority: 0.5 });

describe('statsJournal', () => {
  it('a header names stats.json by inode, size and mtime; any other file, or none, is not its base', () => {
    const text = `${journalHeader(base)}${journalLine(testId(1), entry(1))}`;
    assert.ok(journalAppliesTo(text, base));
    for (const other of [{ ...base, ino: 43 }, { ...base, size: 1235 }, { ...base, mtimeMs: base.mtimeMs + 0.001 }]) assert.ok(!journalAppliesTo(text, other));
    assert.ok(!journalAppliesTo(text, null));
    assert.ok(!journalAppliesTo(journalHeader(base).slice(0, 20), base), 'a header cut short');
    assert.ok(!journalAppliesTo('', base));
  });

  it('reads entries and removals in order; replaying the lines twice gives the same stats (absolute values)', () => {
    const text = [journalLine(testId(1), entry(1)), journalLine(testId(2), entry(2)), journalLine(testId(1), undefined), journalLine(testId(2), entry(3))].join('');
    const { changes } = readJournalLines(text);
    const once = new Map<string, MemoryStats>([[testId(9), entry(9)]]);
    applyJournal(once, changes);
    assert.deepEqual([...once.keys()].sort(), [testId(2), testId(9)]);
    assert.equal(once.get(testId(2))!.access_count, 3);
    const twice = new Map(once);
    applyJournal(twice, changes);
    assert.deepEqual(twice, once);
  });

  it('skips a line cut short, a line that is not an object, an ID that is not a memory ID (`__proto__` included) and the header', () => {
    const text =
      journalHeader(base) +
      '{"id":"mem_00000001","stats":{"access_count":5\n' +
      '[1,2]\n\n' +
      `{"id":"__proto__","stats":${JSON.stringify(entry(1))}}\n` +
      `{"id":"not an id","stats":null}\n` +
      journalLine(testId(3), entry(3));
    const { changes } = readJournalLines(text);
    assert.deepEqual(
      changes.map(([id]) => id),
      [testId(3)],
    );
    assert.equal(Object.getPrototypeOf({}).access_count, undefined);
  });

  it('a line holds the entry as stats.json holds it (the reference’s four fields first, zero counters left out)', () => {
    const line = JSON.parse(journalLine(testId(1), { ...entry(1), read_count: 0, offer_count: 2 })) as { stats: Record<string, unknown> };
    assert.deepEqual(Object.keys(line.stats), ['access_count', 'accessed_at', 'last_session', 'priority', 'offer_count']);
  });

  it('compaction is due past max(256, entries / 4) lines', () => {
    assert.ok(!compactionDue(256, 0));
    assert.ok(compactionDue(257, 0));
    assert.ok(!compactionDue(2_500, 10_000));
    assert.ok(compactionDue(2_501, 10_000));
  });

  describe('bytes a store() writes to stats.json and its journal, by store size', () => {
    /** Mean bytes written to stats.json + stats.log per store() on a store of `n` memories that all have stats. */
    async function bytesPerStore(n: number): Promise<{ stats: number; journal: number }> {
      const project = makeTempProject('ltm-journal-bytes-');
      const root = ltmRoot(project);
      try {
        for (let i = 0; i < n; i++) writeMemory(root, testId(i), { topic: `memory ${i}` });
        const store = MemoryStore.open(project);
        try {
          await store.recordAccesses(Array.from({ length: n }, (_, i) => testId(i)));
          await store.compactStats();
          const statsFile = path.join(root, 'stats.json');
          const journalFile = path.join(root, 'stats.log');
          let stats = 0;
          let journal = 0;
          const stores = 20;
          for (let i = 0; i < stores; i++) {
            const before = { stats: fs.statSync(statsFile), journal: fs.existsSync(journalFile) ? fs.statSync(journalFile).size : 0 };
            await store.store({ topic: `new ${i}`, content: `New memory number ${i}.` });
            const after = fs.statSync(statsFile);
            // stats.json rewritten (another inode) counts whole; the journal counts what it grew by.
            if (after.ino !== before.stats.ino) stats += after.size;
            journal += (fs.existsSync(journalFile) ? fs.statSync(journalFile).size : 0) - before.journal;
          }
          assert.equal(Object.keys(statsOnDisk(root)).length, n + stores, 'every stored memory has its stats entry');
          return { stats: stats / stores, journal: journal / stores };
        } finally {
          store.dispose();
        }
      } finally {
        removeDir(project);
      }
    }

    it('stay flat from 200 to 2,000 memories: stats.json is not rewritten, the journal grows by one line', async function () {
      this.timeout(60_000);
      const small = await bytesPerStore(200);
      const large = await bytesPerStore(2_000);
      console.log(`      bytes per store(): 200 memories: stats.json ${small.stats}, stats.log ${small.journal.toFixed(0)}; 2,000: stats.json ${large.stats}, stats.log ${large.journal.toFixed(0)}`);
      assert.equal(small.stats, 0);
      assert.equal(large.stats, 0);
      assert.ok(large.journal < 400 && large.journal <= small.journal * 1.1 + 10, `${large.journal} bytes per store at 2,000 against ${small.journal} at 200`);
    });
  });
});
