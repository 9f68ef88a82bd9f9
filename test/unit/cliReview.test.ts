/**
 * `ltm review [--on | --off]`, `ltm approve <id>`, `ltm reject <id>`,
 * `ltm list --status` and `ltm status` on a store whose new memories are
 * reviewed: in process (runCli) and through the built binary (dist/cli.js).
 */
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { runCli } from '../../src/cli';
import { MemoryStore } from '../../src/core/store';
import { REPO_ROOT, ensureCliBuilt, ltmRoot, makeTempProject, readJson, removeDir, sleep, snapshotDiff, snapshotFiles } from '../support/storeKit';

const CLI = path.join(REPO_ROOT, 'dist', 'cli.js');

type Json = Record<string, unknown>;

describe('cli: review before use', function () {
  this.timeout(60_000);
  let project: string;
  let root: string;

  beforeEach(() => {
    project = makeTempProject('ltm-cli-review-');
    root = ltmRoot(project);
  });
  afterEach(() => removeDir(project));

  const cli = (...args: string[]) => runCli([...args, '--project', project]);
  async function json<T = Json>(...args: string[]): Promise<T> {
    const out = await cli(...args, '--json');
    assert.equal(out.exitCode, 0, `ltm ${args.join(' ')}: ${out.stderr}`);
    return JSON.parse(out.stdout) as T;
  }
  async function text(...args: string[]): Promise<string> {
    const out = await cli(...args);
    assert.equal(out.exitCode, 0, `ltm ${args.join(' ')}: ${out.stderr}`);
    assert.equal(out.stderr, '');
    return out.stdout;
  }

  /** What the MCP tool does for Claude: store through the engine as Claude's. */
  async function claudeStores(topic: string, content: string): Promise<string> {
    const store = MemoryStore.open(project);
    try {
      const id = (await store.store({ topic, content, author: 'claude' })).memory.id;
      // The next one is created a few milliseconds later: review lists the oldest first, by created_at.
      await sleep(5);
      return id;
    } finally {
      store.dispose();
    }
  }

  it('review --on / --off writes state.json (creating the store), and status shows the setting', async () => {
    const off = await json<{ review_new_memories: boolean; memories: unknown[]; total: number }>('review');
    assert.deepEqual(off, { review_new_memories: false, memories: [], total: 0 });
    assert.match(await text('review', '--on'), /^No memories await review\. Review of new memories is on: memories Claude stores wait here\.\n$/);
    assert.equal(readJson<{ config: { review_new_memories: boolean } }>(path.join(root, 'state.json')).config.review_new_memories, true);
    assert.match(await text('status'), /review new memories on/);
    assert.equal((await json<{ config: { review_new_memories: boolean } }>('status')).config.review_new_memories, true);
    await text('review', '--off');
    assert.equal((await json<{ config: { review_new_memories: boolean } }>('status')).config.review_new_memories, false);
    const both = await cli('review', '--on', '--off');
    assert.equal(both.exitCode, 2);
    assert.equal(both.stderr, 'ltm: use either --on or --off, not both\n');
  });

  it('a memory Claude stores waits in review; a person\'s (ltm store) does not; approve and reject decide', async () => {
    await text('review', '--on');
    const first = await claudeStores('Flaky auth test', 'The auth test raced the token refresher; awaited the refresh in the fixture.');
    const second = await claudeStores('Wrong guess about caching', 'The cache was blamed but the bug was a stale fixture.');
    const mine = (await json<{ id: string; status: string }>('store', '--topic', 'Release checklist', '--content', 'Bump the version, tag, push the tag.'));
    assert.equal(mine.status, 'approved');

    const review = await json<{ memories: { id: string; topic: string }[]; total: number }>('review');
    assert.deepEqual(review.memories.map((m) => m.id), [first, second], 'oldest first');
    assert.equal(review.total, 2);
    const reviewText = await text('review');
    assert.match(reviewText, /^2 memories await review \(oldest first\)\. Review of new memories is on/);
    assert.ok(reviewText.includes(`(ID: ${first},`) && reviewText.includes('ltm approve <id>'));

    const status = await json<{ total_memories: number; awaiting_review: number }>('status');
    assert.equal(status.total_memories, 3);
    assert.equal(status.awaiting_review, 2);
    assert.match(await text('status'), /\nAwaiting review: +2 /);

    assert.deepEqual((await json<{ memories: { id: string }[] }>('list')).memories.map((m) => m.id), [mine.id]);
    assert.deepEqual((await json<{ memories: { id: string }[] }>('list', '--status', 'proposed')).memories.map((m) => m.id).sort(), [first, second].sort());
    assert.deepEqual((await json<{ memories: unknown[] }>('recall', 'auth test token refresher')).memories, []);
    const got = await json<{ status: string }>('get', first);
    assert.equal(got.status, 'proposed');
    assert.match(await text('get', first), /\nStatus: +proposed/);

    const approved = await json<{ success: boolean; id: string; decision: string; message: string }>('approve', first);
    assert.deepEqual(approved, { success: true, id: first, decision: 'approved', message: `Memory ${first} approved; it is used from now on` });
    assert.equal((await json<{ memories: { id: string }[] }>('recall', 'auth test token refresher')).memories[0]?.id, first);

    assert.match(await text('reject', second), new RegExp(`^Memory ${second} rejected; its text is kept in archives/ \\(reason "rejected"\\) and can be restored: Wrong guess about caching\\n$`));
    assert.ok(fs.existsSync(path.join(root, 'archives', `${second}.md`)));
    assert.equal(readJson<{ memories: Record<string, { reason: string }> }>(path.join(root, 'archive_index.json')).memories[second]?.reason, 'rejected');
    assert.deepEqual((await json<{ total: number }>('review')).total, 0);
    assert.match(await text('review'), /^No memories await review\./);
    const check = await cli('check');
    assert.equal(check.exitCode, 0, check.stdout);
  });

  it('refusals: one line on stderr, non-zero exit, nothing changed', async () => {
    await text('review', '--on');
    const proposed = await claudeStores('Waiting', 'A memory awaiting review.');
    const approved = (await json<{ id: string }>('store', '--topic', 'Mine', '--content', 'Approved at once.')).id;
    await cli('status');
    const before = snapshotFiles(root);
    const cases: [string[], number, RegExp][] = [
      [['approve', approved], 2, /is not awaiting review/],
      [['reject', approved], 2, /is not awaiting review/],
      [['approve', 'mem_00000000'], 1, /no memory with ID/],
      [['reject', 'not-an-id'], 2, /is not a memory ID/],
      [['approve'], 2, /approve takes <id>/],
      [['list', '--status', 'maybe'], 2, /--status must be approved or proposed/],
      [['list', '--status', 'proposed', '--phase', '3'], 2, /archived memories are not awaiting review/],
      [['review', proposed], 2, /review takes no arguments/],
    ];
    for (const [argv, code, message] of cases) {
      for (const extra of [[], ['--json']]) {
        const out = await cli(...argv, ...extra);
        assert.equal(out.exitCode, code, `ltm ${argv.join(' ')}: ${out.stderr}`);
        assert.equal(out.stdout, '');
        assert.match(out.stderr, /^ltm: [^\n]+\n$/);
        assert.match(out.stderr, message);
      }
    }
    assert.deepEqual(snapshotDiff(before, snapshotFiles(root)), []);
  });

  describe('the real binary (dist/cli.js)', () => {
    before(function () {
      this.timeout(120_000);
      ensureCliBuilt();
    });

    const bin = (...args: string[]) => spawnSync(process.execPath, [CLI, ...args], { cwd: project, encoding: 'utf8' });

    it('review --on, review --json, approve and reject through real processes', async () => {
      assert.equal(bin('review', '--on').status, 0);
      const id = await claudeStores('From Claude', 'A lesson awaiting a person.');
      const other = await claudeStores('Also from Claude', 'Another lesson awaiting a person.');
      const review = bin('review', '--json');
      assert.equal(review.status, 0, review.stderr);
      assert.deepEqual((JSON.parse(review.stdout) as { memories: { id: string }[] }).memories.map((m) => m.id), [id, other]);
      const approve = bin('approve', id);
      assert.equal(approve.status, 0, approve.stderr);
      assert.match(approve.stdout, /approved; it is used from now on/);
      const reject = bin('reject', other, '--json');
      assert.equal(reject.status, 0, reject.stderr);
      assert.equal((JSON.parse(reject.stdout) as { decision: string }).decision, 'rejected');
      const again = bin('approve', id);
      assert.equal(again.status, 2);
      assert.match(again.stderr, /^ltm: mem_[0-9a-f]{8} is not awaiting review \(it is approved already\)\n$/);
      const status = JSON.parse(bin('status', '--json').stdout) as { awaiting_review: number; total_archived: number };
      assert.deepEqual([status.awaiting_review, status.total_archived], [0, 1]);
    });
  });
});
