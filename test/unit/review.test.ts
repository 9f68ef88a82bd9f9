/**
 * Review before use: with `review_new_memories` on, a memory Claude stores is
 * `status: proposed` and is left out of everything Claude is given (session
 * start, offers with prompts, failures, files and subagents, recall, lists)
 * and out of eviction, until a person approves it; rejecting archives it.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { LtmError } from '../../src/core/errors';
import { parseMemoryFile } from '../../src/core/memoryFile';
import { sessionStartContext } from '../../src/core/sessionStartContext';
import type { MemoryStore, StoreInput } from '../../src/core/store';
import { readJson, snapshotFiles, splitFile, testId, useProject, writeConfig, writeMemory, type ProjectContext } from '../support/storeKit';

const POOL: StoreInput = {
  topic: 'Postgres connection pool exhaustion under batch jobs',
  content: 'The pgbouncer pool ran dry when the nightly reconciliation batch held connections; raised pool_size to 50 in src/db/pool.ts.',
  tags: ['database'],
};
const DEPLOY: StoreInput = {
  topic: 'Kubernetes rollout stuck on readiness probe',
  content: 'The readiness probe hit /healthz before migrations finished; the rollout waited forever. See deploy/probe.yaml.',
};

function memFile(ctx: ProjectContext, id: string): string {
  return path.join(ctx.root, 'memories', `${id}.md`);
}

async function reviewing(ctx: ProjectContext): Promise<MemoryStore> {
  const store = ctx.open();
  store.init();
  await store.setReviewNewMemories(true);
  return store;
}

function frontmatterOf(file: string): string {
  return splitFile(fs.readFileSync(file, 'utf8')).frontmatter;
}

function errorCode(run: () => unknown): Promise<string> {
  return Promise.resolve()
    .then(run)
    .then(
      () => 'no error',
      (error: unknown) => (error instanceof LtmError ? error.code : String(error)),
    );
}

describe('review before use', () => {
  const ctx = useProject('ltm-review-');

  describe('the setting', () => {
    it('is off by default and in state.json once set, so hooks and the CLI of any process see it', async () => {
      const store = ctx.open();
      store.init();
      assert.equal(store.config.review_new_memories, false);
      await store.setReviewNewMemories(true);
      assert.equal(readJson<{ config: { review_new_memories: boolean } }>(path.join(ctx.root, 'state.json')).config.review_new_memories, true);
      assert.equal(ctx.open().config.review_new_memories, true);
      assert.equal(ctx.open().status().config.review_new_memories, true);
      await store.setReviewNewMemories(false);
      assert.equal(ctx.open().config.review_new_memories, false);
    });

    it('a state.json of an earlier version (no review_new_memories) keeps its limits, review off', () => {
      writeConfig(ctx.project, { max_memories: 7, eviction_batch_size: 2 });
      const config = ctx.open().config;
      assert.deepEqual(config, { max_memories: 7, memories_to_load: 10, eviction_batch_size: 2, review_new_memories: false, stale_memories: 'label' });
    });
  });

  describe('storing', () => {
    it('off: what Claude stores is approved, its file has no status (as before)', async () => {
      const store = ctx.open();
      store.init();
      const { memory } = await store.store({ ...POOL, author: 'claude' });
      assert.equal(memory.status, undefined);
      assert.doesNotMatch(frontmatterOf(memFile(ctx, memory.id)), /status/);
      assert.equal(store.search('pgbouncer')[0]?.id, memory.id);
    });

    it('on: what Claude stores is proposed (status: "proposed", after the known keys); a person\'s is approved', async () => {
      const store = await reviewing(ctx);
      const claude = (await store.store({ ...POOL, author: 'claude' })).memory;
      const person = (await store.store({ ...DEPLOY, author: 'person' })).memory;
      const unnamed = (await store.store({ topic: 'CLI default', content: 'No author means a person.' })).memory;
      assert.equal(claude.status, 'proposed');
      assert.match(frontmatterOf(memFile(ctx, claude.id)), /\ncreated_session: \d+\nstatus: "proposed"$/);
      for (const m of [person, unnamed]) {
        assert.equal(m.status, undefined);
        assert.doesNotMatch(frontmatterOf(memFile(ctx, m.id)), /status/);
      }
    });

    it('the decision reads state.json under the lock: a setting another process just wrote counts', async () => {
      const store = ctx.open();
      store.init();
      await ctx.open().setReviewNewMemories(true);
      const { memory } = await store.store({ ...POOL, author: 'claude' });
      assert.equal(memory.status, 'proposed');
    });
  });

  describe('a proposed memory is given to Claude nowhere', () => {
    async function withOneOfEach(): Promise<{ store: MemoryStore; proposed: string; approved: string }> {
      const store = await reviewing(ctx);
      const proposed = (await store.store({ ...POOL, author: 'claude' })).memory.id;
      const approved = (await store.store(DEPLOY)).memory.id;
      return { store, proposed, approved };
    }

    it('not injected at session start, and not counted among the memories "more" stored', async () => {
      const { store, proposed, approved } = await withOneOfEach();
      const injection = sessionStartContext(store, { session: 2, situation: null, budgetTokens: 2000 });
      assert.deepEqual(injection.injectedIds, [approved]);
      assert.doesNotMatch(injection.text, /pgbouncer|Postgres/);
      assert.equal(injection.omitted, 0);
      assert.deepEqual(store.topForSession(2, 10).memories.map((m) => m.id), [approved]);
      assert.ok(!store.candidatesFor(['pgbouncer pool', 'src/db/pool.ts'], 2).some((m) => m.id === proposed));
    });

    it('not offered with a prompt, a failure or a subagent task (relevantTo), nor with a file (aboutFile)', async () => {
      const { store } = await withOneOfEach();
      assert.deepEqual(store.relevantTo('why is the pgbouncer connection pool exhausted by the reconciliation batch'), []);
      assert.deepEqual(store.aboutFile('src/db/pool.ts'), []);
      assert.equal(store.relevantTo('the kubernetes rollout is stuck on the readiness probe')[0]?.view.topic, DEPLOY.topic);
      assert.equal(store.aboutFile('deploy/probe.yaml')[0]?.view.topic, DEPLOY.topic);
    });

    it('not found by recall in any scope', async () => {
      const { store } = await withOneOfEach();
      for (const scope of ['active', 'archives', 'all'] as const) assert.deepEqual(store.search('pgbouncer pool', { scope }), [], scope);
    });

    it('not listed unless asked for (status proposed); get by ID still answers and says so', async () => {
      const { store, proposed, approved } = await withOneOfEach();
      assert.deepEqual(store.list().memories.map((m) => m.id), [approved]);
      assert.deepEqual(store.list({ tag: 'database' }).memories, []);
      assert.deepEqual(store.list({ phase: 0 }).memories.map((m) => m.id), [approved]);
      assert.deepEqual(store.list({ status: 'approved' }).memories.map((m) => m.id), [approved]);
      assert.deepEqual(store.list({ status: 'proposed' }).memories.map((m) => m.id), [proposed]);
      assert.deepEqual(store.list({ status: 'proposed', tag: 'database' }).memories.map((m) => m.id), [proposed]);
      assert.deepEqual(store.awaitingReview().map((m) => m.id), [proposed]);
      assert.equal((await store.get(proposed)).status, 'proposed');
      assert.equal(await errorCode(() => store.list({ status: 'proposed', phase: 3 })), 'invalid_input');
      assert.equal(await errorCode(() => store.list({ status: 'maybe' as 'proposed' })), 'invalid_input');
    });

    it('counted apart in status (and in the total of memories/)', async () => {
      const { store } = await withOneOfEach();
      const status = store.status();
      assert.equal(status.total_memories, 2);
      assert.equal(status.awaiting_review, 1);
    });

    it('neither counted against max_memories nor evicted while it waits', async () => {
      const store = await reviewing(ctx);
      await store.updateState((s) => {
        s.config.max_memories = 2;
        s.config.eviction_batch_size = 5;
      });
      const proposed: string[] = [];
      for (let i = 0; i < 4; i++) proposed.push((await store.store({ topic: `proposed ${i}`, content: `waiting ${i}`, author: 'claude' })).memory.id);
      assert.equal((await store.evict()).ran, false, 'four proposed memories do not fill a store of two');
      for (let i = 0; i < 3; i++) await store.store({ topic: `approved ${i}`, content: `in use ${i}` });
      const result = await store.evict();
      assert.equal(result.ran, true);
      assert.equal(result.before, 3);
      assert.ok(result.steps.every((s) => !proposed.includes(s.id)), 'only approved memories are reduced');
      for (const id of proposed) assert.doesNotMatch(fs.readFileSync(memFile(ctx, id), 'utf8'), /^phase: [12]$/m);
    });

    it('a fresh process (opened from parse-cache.json) still knows it is proposed', async () => {
      const { store, proposed } = await withOneOfEach();
      store.flushCaches();
      const cache = fs.readFileSync(path.join(ctx.root, 'parse-cache.json'), 'utf8');
      assert.match(cache, /"status":"proposed"/);
      const fresh = ctx.open();
      assert.deepEqual(fresh.awaitingReview().map((m) => m.id), [proposed]);
      assert.deepEqual(fresh.search('pgbouncer'), []);
    });
  });

  describe('approve', () => {
    it('removes the status line and nothing else, and from then on the memory is used', async () => {
      const store = await reviewing(ctx);
      const { memory } = await store.store({ ...POOL, author: 'claude' });
      const before = fs.readFileSync(memFile(ctx, memory.id), 'utf8');
      const result = await store.approve(memory.id);
      assert.deepEqual(result, { id: memory.id, topic: POOL.topic, decision: 'approved' });
      const after = fs.readFileSync(memFile(ctx, memory.id), 'utf8');
      assert.equal(after, before.replace('status: "proposed"\n', ''));
      assert.equal(store.search('pgbouncer')[0]?.id, memory.id);
      assert.deepEqual(sessionStartContext(store, { session: 2, situation: null, budgetTokens: 2000 }).injectedIds, [memory.id]);
      assert.equal(store.status().awaiting_review, 0);
      assert.equal(ctx.open().search('pgbouncer')[0]?.id, memory.id);
    });

    it('counts its recency from the approval', async () => {
      const store = await reviewing(ctx);
      const { memory } = await store.store({ ...POOL, author: 'claude' });
      await store.updateState((s) => (s.session_count = 9));
      await store.approve(memory.id);
      assert.equal(store.peek(memory.id).last_session, 9);
    });

    it('refuses an approved memory, an unknown ID and a malformed one, changing nothing', async () => {
      const store = await reviewing(ctx);
      const { memory } = await store.store(DEPLOY);
      const before = snapshotFiles(ctx.root);
      assert.equal(await errorCode(() => store.approve(memory.id)), 'invalid_input');
      assert.equal(await errorCode(() => store.approve(testId(77))), 'not_found');
      assert.equal(await errorCode(() => store.approve('mem_nope')), 'invalid_input');
      assert.equal(await errorCode(() => store.reject(memory.id)), 'invalid_input');
      assert.deepEqual([...snapshotFiles(ctx.root).keys()], [...before.keys()]);
      assert.equal(fs.readFileSync(memFile(ctx, memory.id), 'utf8'), before.get(`memories/${memory.id}.md`)!.toString());
    });
  });

  describe('reject', () => {
    it('archives the full text first, with reason "rejected"; restorable, and awaiting review again when restored', async () => {
      const store = await reviewing(ctx);
      const { memory } = await store.store({ ...POOL, author: 'claude' });
      const text = fs.readFileSync(memFile(ctx, memory.id), 'utf8');
      assert.deepEqual(await store.reject(memory.id), { id: memory.id, topic: POOL.topic, decision: 'rejected' });
      assert.ok(!fs.existsSync(memFile(ctx, memory.id)));
      assert.equal(fs.readFileSync(path.join(ctx.root, 'archives', `${memory.id}.md`), 'utf8'), text);
      const entry = readJson<{ memories: Record<string, { reason: string; topic: string }> }>(path.join(ctx.root, 'archive_index.json')).memories[memory.id];
      assert.equal(entry?.reason, 'rejected');
      assert.equal(entry?.topic, POOL.topic);
      assert.equal(store.status().awaiting_review, 0);
      assert.equal(store.search('pgbouncer', { scope: 'archives' })[0]?.id, memory.id);
      assert.equal(ctx.open().getArchived(memory.id).entry?.reason, 'rejected');
      assert.ok(store.check().healthy, JSON.stringify(store.check().problems));
      const restored = await store.restore(memory.id);
      assert.equal(restored.status, 'proposed');
      assert.equal(restored.phase_history.at(-2)?.event, 'rejected');
      assert.deepEqual(store.awaitingReview().map((m) => m.id), [memory.id]);
    });
  });

  describe('files', () => {
    it('no status, "approved" or any other value is approved; only "proposed" waits; unknown keys are kept by approve', async () => {
      fs.mkdirSync(path.join(ctx.root, 'memories'), { recursive: true });
      writeMemory(ctx.root, testId(1), { topic: 'plain' });
      const approvedText = writeMemory(ctx.root, testId(2), { topic: 'approved' }).replace('created_session: 1\n', 'created_session: 1\nstatus: approved\n');
      fs.writeFileSync(memFile(ctx, testId(2)), approvedText);
      fs.writeFileSync(memFile(ctx, testId(3)), writeMemory(ctx.root, testId(3), { topic: 'odd' }).replace('created_session: 1\n', 'created_session: 1\nstatus: [draft]\n'));
      fs.writeFileSync(memFile(ctx, testId(4)), writeMemory(ctx.root, testId(4), { topic: 'hand' }).replace('created_session: 1\n', 'status: proposed # by hand\nreviewer: ana\ncreated_session: 1\n'));
      const store = ctx.open();
      assert.deepEqual(store.awaitingReview().map((m) => m.id), [testId(4)]);
      assert.equal(store.list().total, 3);
      assert.equal(store.status().invalid_files, 0);
      await store.approve(testId(4));
      const after = frontmatterOf(memFile(ctx, testId(4)));
      assert.doesNotMatch(after, /status/);
      assert.match(after, /reviewer: ana\ncreated_session: 1$/);
    });

    it('a proposed file is still a well-formed memory file: its other fields parse as before', async () => {
      const store = await reviewing(ctx);
      const { memory } = await store.store({ ...POOL, author: 'claude' });
      const parsed = parseMemoryFile(fs.readFileSync(memFile(ctx, memory.id), 'utf8')).memory;
      assert.equal(parsed.topic, POOL.topic);
      assert.equal(parsed.status, 'proposed');
      assert.equal(parsed.phase, 0);
    });
  });
});
