import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { sessionStartContext } from '../../src/core/sessionStartContext';
import type { SessionSituation } from '../../src/core/situation';
import { useProject } from '../support/storeKit';

describe('sessionStartContext', () => {
  const ctx = useProject('ltm-session-start-');

  /** Important memories about other things, and low-priority ones about a file and a subject. */
  async function seed(): Promise<{ important: string[]; aboutFile: string; aboutBranch: string }> {
    const store = ctx.open();
    const important: string[] = [];
    for (let i = 0; i < 4; i++) {
      important.push((await store.store({ topic: `Team convention ${i}`, content: `Convention ${i} about CSS and docs.`, tags: ['importance:important'] })).memory.id);
    }
    const aboutFile = (await store.store({ topic: 'Connection pool size', content: 'src/db/pool.ts keeps 50 connections; batch jobs held 10.', tags: ['importance:low'] })).memory.id;
    const aboutBranch = (await store.store({ topic: 'Invoice import retries', content: 'The importer retries three times with a backoff.', tags: ['importance:low'] })).memory.id;
    for (let i = 0; i < 10; i++) await store.store({ topic: `Unrelated note ${i}`, content: `About the layout grid ${i}.` });
    await store.updateState((s) => {
      s.config.memories_to_load = 3;
    });
    return { important, aboutFile, aboutBranch };
  }

  const situation = (over: Partial<SessionSituation> = {}): SessionSituation => ({ branch: 'main', changedFiles: [], recentFiles: [], ...over });

  it('without a situation injects the highest-priority memories, as before', async () => {
    const { important } = await seed();
    const store = ctx.open();
    const start = sessionStartContext(store, { session: 2, situation: null, budgetTokens: 2000 });
    assert.deepEqual(start.injectedIds, store.topForSession(2, 3).memories.map((m) => m.id));
    assert.ok(start.injectedIds.every((id) => important.includes(id)));
    assert.equal(start.situation, null);
    assert.equal(start.reasons.size, 0);
    assert.match(start.text, /highest priority first/);
  });

  it('puts a memory about a changed file, and one about what the branch is named for, before more important unrelated ones, saying why', async () => {
    const { important, aboutFile, aboutBranch } = await seed();
    const store = ctx.open();
    const start = sessionStartContext(store, {
      session: 2,
      situation: situation({ branch: 'feature/invoice-import', changedFiles: ['src/db/pool.ts', 'README.md'] }),
      budgetTokens: 2000,
    });
    const first = store.topForSession(2, 1).memories[0]!.id;
    assert.ok(important.includes(first));
    assert.deepEqual(start.injectedIds, [aboutFile, aboutBranch, first]);
    assert.deepEqual(start.reasons.get(aboutFile), ['changed file src/db/pool.ts']);
    assert.deepEqual(start.reasons.get(aboutBranch), ['branch feature/invoice-import (invoice, import)']);
    assert.ok(!start.reasons.has(first));
    assert.match(start.text, /ranked by priority and by relevance to the current work \(branch feature\/invoice-import, 2 changed files\)/);
    assert.match(start.text, /related to changed file src\/db\/pool\.ts_/);
    assert.equal(start.omitted, 16 - 3);
  });

  it('a situation nothing relates to leaves the priority order; counting nothing either way', async () => {
    await seed();
    const stats = path.join(ctx.root, 'stats.json');
    const before = fs.existsSync(stats) ? fs.readFileSync(stats, 'utf8') : null;
    const store = ctx.open();
    const start = sessionStartContext(store, { session: 2, situation: situation({ branch: 'fix/kerberos', changedFiles: ['Makefile'] }), budgetTokens: 2000 });
    assert.deepEqual(start.injectedIds, store.topForSession(2, 3).memories.map((m) => m.id));
    assert.equal(start.reasons.size, 0);
    assert.equal(fs.existsSync(stats) ? fs.readFileSync(stats, 'utf8') : null, before, 'no access counted');
  });
});
