import { strict as assert } from 'node:assert';
import {
  MAX_SITUATION_LOOKUPS,
  branchWords,
  branchWordsIn,
  describeSituation,
  rankForSituation,
  situationQueries,
  situationRelevance,
  situationScore,
  type SessionSituation,
} from '../../src/core/situation';
import { memoryView } from '../support/storeKit';

const mem = memoryView;

const situation = (over: Partial<SessionSituation> = {}): SessionSituation => ({ branch: 'main', changedFiles: [], recentFiles: [], ...over });

describe('situation', () => {
  it('takes the content words of a branch name, without kinds of branch, default branches and bare numbers', () => {
    assert.deepEqual(branchWords('fix/pool-timeout'), ['pool', 'timeout']);
    assert.deepEqual(branchWords('feature/1234-invoice_import'), ['invoice', 'import']);
    assert.deepEqual(branchWords('alice/retryAfterMs'), ['alice', ...branchWords('retryAfterMs').filter((w) => w !== 'alice')]);
    assert.deepEqual(branchWords('main'), []);
    assert.deepEqual(branchWords('develop'), []);
    assert.deepEqual(branchWords('release/2.1'), []);
  });

  it('relates a memory to a file changed in the working tree most, to a recently committed one less, by its path or its file name', () => {
    const s = situation({ changedFiles: ['src/db/pool.ts'], recentFiles: ['src/api/server.ts'] });
    const byPath = situationRelevance(mem({ id: 'mem_00000001', content: 'src/db/pool.ts holds connections.' }), s);
    assert.deepEqual(byPath, { score: 1, reasons: ['changed file src/db/pool.ts'] });
    const byName = situationRelevance(mem({ id: 'mem_00000002', summary: 'In pool.ts the size is 50.' }), s);
    assert.equal(byName.score, 1);
    const recent = situationRelevance(mem({ id: 'mem_00000003', topic: 'server.ts starts twice' }), s);
    assert.deepEqual(recent, { score: 0.7, reasons: ['recently committed file src/api/server.ts'] });
    assert.deepEqual(situationRelevance(mem({ id: 'mem_00000004', content: 'spool.ts is another file.' }), s), { score: 0, reasons: [] });
  });

  it("relates a memory to the branch by the share of the branch's words it holds, in any of their forms", () => {
    const s = situation({ branch: 'fix/pool-timeout' });
    const both = situationRelevance(mem({ id: 'mem_00000001', topic: 'Pool timeouts under batch jobs' }), s);
    assert.equal(both.score, 0.8);
    assert.deepEqual(both.reasons, ['branch fix/pool-timeout (pool, timeout)']);
    assert.equal(situationRelevance(mem({ id: 'mem_00000002', content: 'The pool of 10 ran dry.' }), s).score, 0.4);
    assert.equal(situationRelevance(mem({ id: 'mem_00000003', content: 'A fix for CSS.' }), s).score, 0, '"fix" names the kind of branch, not its subject');
    assert.equal(situationRelevance(mem({ id: 'mem_00000004', content: 'Main is protected.' }), situation()).score, 0);
    // Not as a prefix, and not by an importance: tag (which says how much a memory matters, not what it is about).
    assert.deepEqual(branchWordsIn(['import', 'pool'], mem({ id: 'mem_00000005', content: 'Spools and whirlpools.', tags: ['importance:important'] })), []);
    assert.deepEqual(branchWordsIn(['import', 'retry'], mem({ id: 'mem_00000006', content: 'Imports are retried.', tags: ['importer'] })), ['import', 'retry']);
  });

  it('without a situation ranks by priority alone; with one, a related memory goes before a more important unrelated one', () => {
    const byPriority = [mem({ id: 'mem_0000000a', priority: 0.9 }), mem({ id: 'mem_0000000b', priority: 0.6 }), mem({ id: 'mem_0000000c', priority: 0.5 })];
    const related = mem({ id: 'mem_0000000d', priority: 0.2, content: 'src/db/pool.ts: raise the size to 50.' });
    assert.deepEqual(
      rankForSituation(byPriority, [related], null, 2).map((r) => r.view.id),
      ['mem_0000000a', 'mem_0000000b'],
    );
    const ranked = rankForSituation(byPriority, [related, byPriority[1]!], situation({ changedFiles: ['src/db/pool.ts'] }), 3);
    assert.deepEqual(ranked.map((r) => r.view.id), ['mem_0000000d', 'mem_0000000a', 'mem_0000000b'], 'the related one first; unrelated ones keep their order; none twice');
    assert.deepEqual(ranked[0]!.reasons, ['changed file src/db/pool.ts']);
    assert.deepEqual(ranked[1]!.reasons, []);
    assert.equal(situationScore(0.2, 1), 0.6);
    assert.equal(situationScore(0.9, 0), 0.45);
  });

  it('breaks ties by priority, then keeps the order of the priority ranking', () => {
    const a = mem({ id: 'mem_0000000b', priority: 0.4 });
    const b = mem({ id: 'mem_0000000a', priority: 0.4 });
    const c = mem({ id: 'mem_0000000c', priority: 0.2, topic: 'Pool' });
    assert.deepEqual(rankForSituation([a, b], [], situation(), 2).map((r) => r.view.id), ['mem_0000000b', 'mem_0000000a']);
    // c: 0.1 + 0.4 (half the branch's words) = 0.5 against 0.2 + 0 for a and b.
    assert.deepEqual(rankForSituation([a, b], [c], situation({ branch: 'pool-timeout' }), 3).map((r) => r.view.id), ['mem_0000000c', 'mem_0000000b', 'mem_0000000a']);
  });

  it('looks memories up by the file names (changed first, bounded) and the branch words', () => {
    const many = Array.from({ length: 30 }, (_, i) => `src/f${i}/file${i}.ts`);
    const queries = situationQueries(situation({ branch: 'fix/pool-timeout', changedFiles: ['src/db/pool.ts', 'lib/pool.ts'], recentFiles: many }));
    assert.equal(queries[0], 'pool.ts', 'one query per file name');
    assert.equal(queries[1], 'file0.ts');
    assert.equal(queries.length, MAX_SITUATION_LOOKUPS - 1 + 1, 'the files are bounded; the branch words are one more query');
    assert.equal(queries.at(-1), 'pool timeout');
    assert.deepEqual(situationQueries(situation()), []);
  });

  it('describes the situation in one line', () => {
    assert.equal(describeSituation(situation({ branch: 'fix/pool', changedFiles: ['a.ts'], recentFiles: ['b.ts', 'c.ts'] })), 'branch fix/pool, 1 changed file, 2 more in recent commits');
    assert.equal(describeSituation(situation()), 'branch main');
    assert.ok(describeSituation(situation({ branch: 'x'.repeat(500) })).length < 100);
  });
});
