/**
 * SessionStart in a real git repository, through a real server: the ranking
 * blends priority with the situation (branch, changed files), says why, and
 * falls back to priority alone when git has no situation to tell.
 */
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { MemoryStore } from '../../src/core/store';
import { makeTempProject, removeDir } from '../support/storeKit';
import { hookInfo, postHook, readStats, sessionStartPayload, setConfig, startTestServer, type Json } from '../support/serverKit';

function git(cwd: string, ...args: string[]): void {
  const r = spawnSync('git', ['-c', 'user.name=T', '-c', 'user.email=t@t.invalid', '-c', 'commit.gpgsign=false', ...args], { cwd, encoding: 'utf8' });
  assert.equal(r.status, 0, `git ${args.join(' ')}: ${r.stderr}`);
}

function write(dir: string, rel: string, text: string): void {
  fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
  fs.writeFileSync(path.join(dir, rel), text);
}

/** The session-start context, checked for the shape Claude Code reads. */
function contextOf(answer: { status: number; text: string; json: () => Json }): string {
  assert.equal(answer.status, 200, answer.text);
  const out = (answer.json() as { hookSpecificOutput: { hookEventName: string; additionalContext: string } }).hookSpecificOutput;
  assert.equal(out.hookEventName, 'SessionStart');
  return out.additionalContext;
}

describe('session_start ranks by the git situation too', function () {
  this.timeout(30_000);
  let project: string;
  const ids = { important: [] as string[], pool: '', invoice: '' };

  async function seed(store: MemoryStore): Promise<void> {
    ids.important = [];
    for (let i = 0; i < 3; i++) {
      ids.important.push((await store.store({ topic: `Team convention ${i}`, content: `Convention ${i}: CSS in modules.`, tags: ['importance:important'] })).memory.id);
    }
    ids.pool = (await store.store({ topic: 'Connection pool size', content: 'src/db/pool.ts keeps 50 connections; 10 ran dry under batch jobs.', tags: ['importance:low'] })).memory.id;
    ids.invoice = (await store.store({ topic: 'Invoice import retries', content: 'The importer retries three times with a backoff.', tags: ['importance:low'] })).memory.id;
  }

  beforeEach(() => {
    project = makeTempProject('ltm-situation-');
    git(project, 'init', '-q', '-b', 'main');
    write(project, 'src/db/pool.ts', 'export const size = 10;\n');
    write(project, 'README.md', '# app\n');
    git(project, 'add', '-A');
    git(project, 'commit', '-q', '-m', 'first');
    // LTM's own files are not what the session works on: git does not see them.
    write(project, '.git/info/exclude', '.claude/\n');
  });
  afterEach(() => removeDir(project));

  it('injects the memories about a changed file and about the branch first, says why, and counts them as accesses', async () => {
    git(project, 'checkout', '-q', '-b', 'feature/invoice-import');
    write(project, 'src/db/pool.ts', 'export const size = 50;\n');
    const t = await startTestServer({ project, prepare: seed });
    try {
      setConfig(project, { memories_to_load: 3 });
      const answer = await postHook(t.port, t.token, 'session_start', sessionStartPayload('sit-1'));
      const context = contextOf(answer);
      const info = hookInfo(answer);
      assert.deepEqual((info.injected as string[]).slice(0, 2), [ids.pool, ids.invoice]);
      assert.ok(ids.important.includes((info.injected as string[])[2]!), 'then the most important');
      assert.deepEqual(info.situation, { branch: 'feature/invoice-import', changed_files: 1, recent_files: 1 });
      assert.deepEqual(info.related, [ids.pool, ids.invoice]);
      assert.match(context, /ranked by priority and by relevance to the current work \(branch feature\/invoice-import, 1 changed file, 1 more in recent commits\)/);
      assert.match(context, new RegExp(`_memory · ${ids.pool} · [^\\n]*related to changed file src/db/pool\\.ts[^\\n]*_\\n`));
      assert.match(context, new RegExp(`_memory · ${ids.invoice} · [^\\n]*related to branch feature/invoice-import \\(invoice, import\\)_\\n`));
      assert.ok(context.length < 10_000);
      await t.idle();
      const stats = readStats(project);
      assert.equal(stats[ids.pool]?.access_count, 1);
      assert.equal(stats[ids.invoice]?.access_count, 1);
    } finally {
      await t.stop();
    }
  });

  it('with a detached HEAD ranks by priority alone', async () => {
    write(project, 'src/db/pool.ts', 'export const size = 50;\n');
    git(project, 'checkout', '-q', '--detach');
    const t = await startTestServer({ project, prepare: seed });
    try {
      setConfig(project, { memories_to_load: 3 });
      const answer = await postHook(t.port, t.token, 'session_start', sessionStartPayload('sit-2'));
      const info = hookInfo(answer);
      assert.equal(info.situation, null);
      assert.deepEqual(info.related, []);
      assert.deepEqual([...(info.injected as string[])].sort(), [...ids.important].sort());
      assert.match(contextOf(answer), /highest priority first/);
    } finally {
      await t.stop();
    }
  });
});
