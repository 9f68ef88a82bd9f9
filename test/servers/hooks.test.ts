/**
 * The hook endpoints with Claude Code's real payload shapes, and the real
 * hook script (`sh hooks/ltm-hook.sh`, and the copy `ltm init` installs)
 * talking to a real server, or to none.
 */
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import lockfile from 'proper-lockfile';
import type { MemoryStore } from '../../src/core/store';
import { ensureCliBuilt, ltmRoot, makeTempProject, readJson, removeDir, snapshotDiff, snapshotFiles } from '../support/storeKit';
import {
  CLI,
  HOOK_SCRIPT,
  closedPort,
  deadPid,
  hookInfo,
  postHook,
  postToolUsePayload,
  rawRequest,
  readState,
  readStats,
  replaceFile,
  runHookScript,
  sessionStartPayload,
  setConfig,
  startTestServer,
  type HttpAnswer,
  type Json,
  type TestServer,
} from '../support/serverKit';

const estimateTokens = (text: string) => Math.ceil(text.length / 4);

/** The one answer a SessionStart hook may give, as Claude Code reads it. */
function sessionStartContext(answer: HttpAnswer): string {
  assert.equal(answer.status, 200, answer.text);
  const body = answer.json();
  assert.deepEqual(Object.keys(body), ['hookSpecificOutput']);
  const out = body.hookSpecificOutput as Json;
  assert.deepEqual(Object.keys(out).sort(), ['additionalContext', 'hookEventName']);
  assert.equal(out.hookEventName, 'SessionStart');
  assert.equal(typeof out.additionalContext, 'string');
  assert.equal(answer.text, JSON.stringify({ hookSpecificOutput: { hookEventName: 'SessionStart', additionalContext: out.additionalContext } }));
  return out.additionalContext as string;
}

/** The `### topic` blocks of an injection, in order, with their IDs. */
function injectedIds(context: string): string[] {
  return [...context.matchAll(/^_(?:memory|hint|abstract) · (mem_[0-9a-f]{8})/gm)].map((m) => m[1]!);
}

describe('hook endpoints', function () {
  this.timeout(20_000);

  describe('session_start', () => {
    it('counts sessions: the first is 1; a known session_id or source "compact" does not count again', async () => {
      const t = await startTestServer();
      try {
        const start = async (id: string, source: string) => {
          const answer = await postHook(t.port, t.token, 'session_start', sessionStartPayload(id, source));
          sessionStartContext(answer);
          return { info: hookInfo(answer), count: readState(t.project).session_count };
        };
        const first = await start('s-1', 'startup');
        assert.deepEqual([first.info.session, first.info.counted, first.count], [1, true, 1]);
        const resumed = await start('s-1', 'resume');
        assert.deepEqual([resumed.info.session, resumed.info.counted, resumed.count], [1, false, 1]);
        const compacted = await start('s-1', 'compact');
        assert.deepEqual([compacted.info.session, compacted.info.counted, compacted.count], [1, false, 1]);
        const unknownCompact = await start('s-other', 'compact');
        assert.deepEqual([unknownCompact.info.counted, unknownCompact.count], [false, 1]);
        const second = await start('s-2', 'startup');
        assert.deepEqual([second.info.session, second.info.counted, second.count], [2, true, 2]);
        const sessions = readState(t.project).sessions;
        assert.deepEqual(Object.keys(sessions).sort(), ['s-1', 's-2', 's-other']);
        assert.equal(sessions['s-1']!.number, 1);
        assert.equal(sessions['s-2']!.number, 2);
      } finally {
        await t.stop();
      }
    });

    it('says so when there are no memories yet', async () => {
      const t = await startTestServer();
      try {
        const context = sessionStartContext(await postHook(t.port, t.token, 'session_start', sessionStartPayload('empty')));
        assert.match(context, /^## Long-term memory \(LTM\)\n/);
        assert.match(context, /No memories yet\./);
        assert.match(context, /store_memory/);
      } finally {
        await t.stop();
      }
    });

    describe('with memories in every phase', () => {
      let t: TestServer;
      const ids: Record<string, string> = {};
      const longContent = Array.from({ length: 40 }, (_, i) => `Step ${i + 1}: run the migration check before the deploy script.`).join(' ');

      before(async () => {
        t = await startTestServer({
          prepare: async (store: MemoryStore, project) => {
            setConfig(project, { max_memories: 1, eviction_batch_size: 1, memories_to_load: 10 });
            const put = async (key: string, input: Parameters<MemoryStore['store']>[0]) => (ids[key] = (await store.store(input)).memory.id);
            await put('full', { topic: 'Deploy needs migrations first', content: longContent, summary: 'Always run migrations before deploying.', tags: ['importance:critical', 'deploy'], difficulty: 0.9 });
            await put('full2', { topic: 'Use 127.0.0.1, not localhost', content: 'localhost resolved to ::1 on CI. The server listens on IPv4 only.', tags: ['importance:critical'], difficulty: 0.8 });
            await put('abstract', { topic: 'Old flaky test', content: 'The date test failed at midnight. The fix was a fixed clock.\n\nUse sinon fake timers in every date test.', summary: 'Date tests need a fixed clock.', difficulty: 0.9 });
            await store.evict();
            await store.evict();
            await put('hint', { topic: 'Cache key includes the node version', content: 'The CI cache was reused across Node versions. Adding the version to the key fixed odd failures.', summary: 'Put the Node version in CI cache keys.', difficulty: 0 });
            await store.evict();
          },
        });
        const phases = Object.fromEntries(Object.entries(ids).map(([k, id]) => [k, t.store.peek(id).phase]));
        assert.deepEqual(phases, { full: 0, full2: 0, abstract: 2, hint: 1 }, 'test setup: one memory per phase');
      });
      after(async () => t?.stop());

      it('answers exactly {"hookSpecificOutput":{...}} with the memories rendered by phase, by priority, within the budget', async () => {
        const statsBefore = readStats(t.project);
        const answer = await postHook(t.port, t.token, 'session_start', sessionStartPayload('render'));
        const context = sessionStartContext(answer);
        assert.match(context, /^## Long-term memory \(LTM\)\n/);
        assert.ok(estimateTokens(context) <= 2000, `${estimateTokens(context)} tokens`);

        // Full: header, Summary, then the Content, bounded.
        const full = context.split('\n\n').find((b) => b.includes(ids.full!))!;
        assert.match(full, new RegExp(`^### Deploy needs migrations first\\n_memory · ${ids.full} · tags: importance:critical, deploy · priority \\d\\.\\d\\d_\\nAlways run migrations before deploying\\.\\nStep 1: run the migration check`));
        assert.ok(longContent.length > 2000);
        assert.ok(full.length < 1000, `full memory content not bounded (${full.length} chars)`);
        assert.ok(!full.includes('Step 40:'), 'the end of a long content is left out');
        assert.ok(full.endsWith('…'));
        // Hint: header, Summary and the key point.
        const hint = context.split('\n\n').find((b) => b.includes(ids.hint!))!;
        assert.match(hint, new RegExp(`^### Cache key includes the node version\\n_hint · ${ids.hint} · priority \\d\\.\\d\\d_\\nPut the Node version in CI cache keys\\.\\nKey point: `));
        // Abstract: header and the one-line summary.
        const abstract = context.split('\n\n').find((b) => b.includes(ids.abstract!))!;
        assert.match(abstract, new RegExp(`^### Old flaky test\\n_abstract · ${ids.abstract} · priority \\d\\.\\d\\d_\\nDate tests need a fixed clock\\.`));
        assert.ok(!abstract.includes('sinon'), 'an abstract carries no detail');

        // Highest priority first; all four fit, so the closing line says how to add more.
        const ranked = injectedIds(context);
        assert.deepEqual([...ranked].sort(), Object.values(ids).sort());
        assert.deepEqual(hookInfo(answer).injected, ranked);
        const shown = [...context.matchAll(/ · priority (\d\.\d\d)_$/gm)].map((m) => Number(m[1]));
        assert.equal(shown.length, 4);
        assert.deepEqual(shown, [...shown].sort((a, b) => b - a), `not by priority: ${shown.join(', ')}`);
        assert.deepEqual(ranked.slice(2), [ids.abstract, ids.hint], 'the critical memories come first, then by difficulty');
        assert.match(context, /store_memory/);
        assert.doesNotMatch(context, /more memor(y is|ies are) stored/);

        // Injected memories count as accessed.
        const statsAfter = readStats(t.project);
        const session = hookInfo(answer).session as number;
        for (const id of ranked) {
          assert.equal(statsAfter[id]!.access_count, statsBefore[id]!.access_count + 1, `${id} access_count`);
          assert.equal(statsAfter[id]!.last_session, session);
          assert.ok(statsAfter[id]!.accessed_at > statsBefore[id]!.accessed_at);
        }
      });
    });

    it('injects the top memories_to_load memories and says how many more exist and how to recall them', async () => {
      const t = await startTestServer({
        prepare: async (store, project) => {
          setConfig(project, { memories_to_load: 5 });
          for (let i = 0; i < 14; i++) await store.store({ topic: `Lesson ${i}`, content: `Lesson number ${i} about the build.`, difficulty: i / 20 });
        },
      });
      try {
        const before = readStats(t.project);
        const answer = await postHook(t.port, t.token, 'session_start', sessionStartPayload('top'));
        const context = sessionStartContext(answer);
        const injected = injectedIds(context);
        const expected = t.store.list({ limit: 100 }).memories.filter((m) => /^Lesson (13|12|11|10|9)$/.test(m.topic)).map((m) => m.id);
        assert.deepEqual([...injected].sort(), [...expected].sort(), 'the five highest-priority memories');
        assert.match(context, /\n\n9 more memories are stored\. Search them with the recall tool \(mcp__ltm__recall\) or \/recall <query>/);
        const after = readStats(t.project);
        for (const id of Object.keys(before)) {
          assert.equal(after[id]!.access_count, before[id]!.access_count + (injected.includes(id) ? 1 : 0), `${id}: only injected memories count as accessed`);
        }
      } finally {
        await t.stop();
      }
    });

    it('keeps a tiny token budget (200) with many memories, and says how many more exist', async () => {
      const t = await startTestServer({
        injectionBudgetTokens: () => 200,
        prepare: async (store) => {
          for (let i = 0; i < 30; i++) {
            await store.store({
              topic: `Build lesson ${i} with a fairly long topic line`,
              content: `Lesson ${i}: ${'the build failed because of a stale lockfile and a cache mismatch; '.repeat(8)}`,
              difficulty: (i % 10) / 10,
            });
          }
        },
      });
      try {
        const context = sessionStartContext(await postHook(t.port, t.token, 'session_start', sessionStartPayload('tiny')));
        assert.ok(estimateTokens(context) <= 200, `${estimateTokens(context)} tokens > 200:\n${context}`);
        const injected = injectedIds(context);
        assert.ok(injected.length >= 1 && injected.length < 10, `${injected.length} injected`);
        assert.match(context, new RegExp(`\\n\\n${30 - injected.length} more memories are stored\\. Search them with the recall tool`));
      } finally {
        await t.stop();
      }
    });
  });

  describe('user_prompt_submit', () => {
    /** The context a UserPromptSubmit answer adds ('' when it adds nothing), checked for the shape Claude Code reads. */
    function promptContext(answer: HttpAnswer): string {
      assert.equal(answer.status, 200, answer.text);
      const body = answer.json();
      if (Object.keys(body).length === 0) return '';
      assert.deepEqual(Object.keys(body), ['hookSpecificOutput']);
      const out = body.hookSpecificOutput as Json;
      assert.deepEqual(Object.keys(out).sort(), ['additionalContext', 'hookEventName']);
      assert.equal(out.hookEventName, 'UserPromptSubmit');
      return out.additionalContext as string;
    }
    const prompt = (session: string, text: string) => ({ session_id: session, hook_event_name: 'UserPromptSubmit', prompt: text, cwd: '/x', transcript_path: '/x/t.jsonl', permission_mode: 'default' });

    async function withMemories(): Promise<{ t: TestServer; deadlock: string; flaky: string }> {
      let deadlock = '';
      let flaky = '';
      const t = await startTestServer({
        prepare: async (store) => {
          deadlock = (
            await store.store({
              topic: 'Invoice import deadlocks in Postgres',
              summary: 'Two import workers deadlocked on the invoices table.',
              content: 'Both workers locked invoice rows in different orders. Fix: sort invoice IDs before locking.',
              tags: ['postgres', 'importance:low'],
            })
          ).memory.id;
          flaky = (await store.store({ topic: 'Flaky websocket reconnect test', summary: 'The reconnect test awaited the wrong event.', content: 'Await the open event before sending.', tags: ['testing'] })).memory.id;
          for (let i = 0; i < 8; i++) await store.store({ topic: `Unrelated note ${i} about CSS grid gaps`, content: `Grid gap note ${i}.`, tags: ['css'] });
        },
      });
      return { t, deadlock, flaky };
    }

    it('offers the memory a prompt is about, with the words that matched, and counts it as an access', async () => {
      const { t, deadlock } = await withMemories();
      try {
        const answer = await postHook(t.port, t.token, 'user_prompt_submit', prompt('s1', 'The invoice import workers deadlocked again in postgres, can you look?'));
        const context = promptContext(answer);
        assert.match(context, /Invoice import deadlocks in Postgres/);
        assert.match(context, new RegExp(`_${deadlock} · matched: [^_]*invoice`));
        assert.ok(!context.includes('CSS grid'), 'nothing unrelated');
        assert.ok(context.length / 4 <= 600, 'within the default budget');
        assert.deepEqual(hookInfo(answer).offered, [deadlock]);
        await t.idle();
        assert.equal(readStats(t.project)[deadlock]?.access_count, 1);
      } finally {
        await t.stop();
      }
    });

    it('keeps to the prompt budget the server is given (ltm.promptTokenBudget)', async () => {
      let id = '';
      const t = await startTestServer({
        promptBudgetTokens: () => 100,
        prepare: async (store) => {
          id = (await store.store({ topic: 'Invoice import deadlocks in Postgres', summary: 'Two import workers deadlocked on invoices.', content: 'Sort invoice IDs before locking. '.repeat(40) })).memory.id;
          for (let i = 0; i < 6; i++) await store.store({ topic: `Unrelated note ${i}`, content: `CSS grid ${i}.` });
        },
      });
      try {
        const context = promptContext(await postHook(t.port, t.token, 'user_prompt_submit', prompt('b1', 'the invoice import workers deadlocked in postgres')));
        assert.ok(context.includes(id), context);
        assert.ok(context.length <= 100 * 4, `${context.length} characters`);
        assert.ok(!context.includes('Sort invoice IDs'), 'the content did not fit: the summary only');
      } finally {
        await t.stop();
      }
    });

    it('adds nothing for an unrelated prompt, a short answer or a slash command', async () => {
      const { t } = await withMemories();
      try {
        for (const text of ['Write a haiku about autumn leaves falling', 'yes', 'continue', 'ok go', '/recall invoice deadlock', '']) {
          assert.equal(promptContext(await postHook(t.port, t.token, 'user_prompt_submit', prompt('s2', text))), '', JSON.stringify(text));
        }
        assert.equal(promptContext(await postHook(t.port, t.token, 'user_prompt_submit', { session_id: 's2' })), '', 'no prompt field');
      } finally {
        await t.stop();
      }
    });

    it('never offers a memory twice in a session (nor one its start injected), but again after a compaction', async () => {
      const { t, deadlock, flaky } = await withMemories();
      try {
        setConfig(t.project, { memories_to_load: 1 });
        const start = sessionStartContext(await postHook(t.port, t.token, 'session_start', sessionStartPayload('s3')));
        const injected = injectedIds(start);
        assert.equal(injected.length, 1);
        const ask = async (text: string) => hookInfo(await postHook(t.port, t.token, 'user_prompt_submit', prompt('s3', text))).offered as string[];
        const deadlockPrompt = 'invoice import workers deadlocked in postgres';
        const flakyPrompt = 'the websocket reconnect test is flaky again';
        const first = [...(await ask(deadlockPrompt)), ...(await ask(flakyPrompt))];
        for (const id of injected) assert.ok(!first.includes(id), 'what the start injected is not offered');
        assert.ok(first.includes(deadlock) || injected.includes(deadlock));
        assert.ok(first.includes(flaky) || injected.includes(flaky));
        assert.deepEqual([...(await ask(deadlockPrompt)), ...(await ask(flakyPrompt))], [], 'not twice');
        // Resumed (claude --resume), the session keeps its conversation and what it was offered.
        await postHook(t.port, t.token, 'session_start', { ...sessionStartPayload('s3'), source: 'resume' });
        assert.deepEqual([...(await ask(deadlockPrompt)), ...(await ask(flakyPrompt))], [], 'not twice after a resume');
        // Another session is offered them afresh.
        assert.deepEqual(hookInfo(await postHook(t.port, t.token, 'user_prompt_submit', prompt('other', deadlockPrompt))).offered, [deadlock]);
        // After a compaction the context is gone: offered again.
        await postHook(t.port, t.token, 'pre_compact', { session_id: 's3', hook_event_name: 'PreCompact', trigger: 'auto' });
        const reinjected = injectedIds(sessionStartContext(await postHook(t.port, t.token, 'session_start', { ...sessionStartPayload('s3'), source: 'compact' })));
        const again = [...(await ask(deadlockPrompt)), ...(await ask(flakyPrompt))];
        for (const id of reinjected) assert.ok(!again.includes(id), 'what the new start injected is not offered');
        for (const id of [deadlock, flaky]) assert.ok(again.includes(id) || reinjected.includes(id), `${id} reaches the new context`);
      } finally {
        await t.stop();
      }
    });
  });

  describe('stale memories (state.json stale_memories): labelled, or left out with skip', () => {
    let t: TestServer;
    const ids = { stale: '', fresh: '' };
    const promptText = 'the connection pool in src/db/pool.ts ran dry under load again';
    const ask = (session: string, event: string, payload: Json) => postHook(t.port, t.token, event, { session_id: session, ...payload });
    const additional = (answer: HttpAnswer) => {
      assert.equal(answer.status, 200, answer.text);
      return ((answer.json() as { hookSpecificOutput?: { additionalContext: string } }).hookSpecificOutput?.additionalContext ?? '');
    };

    beforeEach(async () => {
      t = await startTestServer({
        prepare: async (store, project) => {
          fs.mkdirSync(path.join(project, 'src', 'db'), { recursive: true });
          fs.writeFileSync(path.join(project, 'src', 'db', 'pool.ts'), 'export const POOL_SIZE = 50;\n');
          // The stale memory outranks the fresh one, which outranks the rest, by priority and by relevance to the prompt and the file.
          ids.stale = (await store.store({ topic: 'Connection pool ran dry under load', content: 'The connection pool in src/db/pool.ts ran dry under load; POOL_SIZE is 50 now.', difficulty: 0.9, anchors: ['src/db/pool.ts'] })).memory.id;
          ids.fresh = (await store.store({ topic: 'Pool under load: leaked connections', content: 'When the pool in src/db/pool.ts runs dry under load, look for leaked connections.', difficulty: 0.8 })).memory.id;
          for (let i = 0; i < 6; i++) await store.store({ topic: `Unrelated note ${i} about CSS grid gaps`, content: `Grid gap note ${i}.` });
          fs.writeFileSync(path.join(project, 'src', 'db', 'pool.ts'), 'export const POOL_SIZE = 10;\n');
        },
      });
      setConfig(t.project, { memories_to_load: 1 });
    });
    afterEach(async () => t.stop());

    it('label (the default): session_start and user_prompt_submit give it, marked possibly outdated', async () => {
      const start = sessionStartContext(await postHook(t.port, t.token, 'session_start', sessionStartPayload('label-1')));
      assert.deepEqual(injectedIds(start), [ids.stale]);
      assert.match(start, new RegExp(`_memory · ${ids.stale} [^\n]*· possibly outdated, its code changed: src/db/pool\.ts: the file changed_`));
      // A session that has not been given it yet (no start: another window's prompt) is offered it, marked.
      const offer = await ask('label-2', 'user_prompt_submit', { hook_event_name: 'UserPromptSubmit', prompt: promptText });
      assert.ok((hookInfo(offer).offered as string[]).includes(ids.stale));
      assert.match(additional(offer), new RegExp(`_${ids.stale} · matched: [^_]*· possibly outdated, its code changed: src/db/pool\.ts: the file changed_`));
    });

    it('skip: absent from session_start and from every offer (prompt, file, failure, subagent), the next memory in its place', async () => {
      setConfig(t.project, { stale_memories: 'skip' });
      const startAnswer = await postHook(t.port, t.token, 'session_start', sessionStartPayload('skip-1'));
      const start = sessionStartContext(startAnswer);
      assert.deepEqual(injectedIds(start), [ids.fresh], 'the next memory fills the place');
      assert.deepEqual(hookInfo(startAnswer).injected, [ids.fresh]);
      assert.ok(!start.includes(ids.stale) && !start.includes('possibly outdated'));
      // Each offer in a session of its own, so that nothing was given before it.
      const prompt = await ask('skip-2', 'user_prompt_submit', { hook_event_name: 'UserPromptSubmit', prompt: promptText });
      assert.deepEqual(hookInfo(prompt).offered, [ids.fresh]);
      assert.ok(!additional(prompt).includes(ids.stale));
      const file = await ask('skip-3', 'pre_tool_use', { hook_event_name: 'PreToolUse', tool_name: 'Read', tool_input: { file_path: path.join(t.project, 'src/db/pool.ts') }, tool_use_id: 'toolu_skip3' });
      assert.deepEqual(hookInfo(file).offered, [ids.fresh]);
      const failure = await ask('skip-4', 'post_tool_use', { hook_event_name: 'PostToolUseFailure', tool_name: 'Bash', tool_input: { command: 'npm test' }, error: 'Error: the connection pool ran dry under load (src/db/pool.ts)' });
      assert.deepEqual(hookInfo(failure).offered, [ids.fresh]);
      await ask('skip-5', 'pre_tool_use', { hook_event_name: 'PreToolUse', tool_name: 'Agent', tool_input: { description: 'Investigate', prompt: `Find out why ${promptText}.` }, tool_use_id: 'toolu_skip5' });
      const subagent = await ask('skip-5', 'subagent_start', { hook_event_name: 'SubagentStart', agent_id: 'agent-1', agent_type: 'general-purpose' });
      assert.deepEqual(hookInfo(subagent).offered, [ids.fresh]);
      // Back to label: given again, marked (two loaded: the offers above counted as accesses of the fresh one, which may rank first now).
      setConfig(t.project, { stale_memories: 'label', memories_to_load: 2 });
      const again = sessionStartContext(await postHook(t.port, t.token, 'session_start', sessionStartPayload('skip-6')));
      assert.deepEqual(injectedIds(again).sort(), [ids.fresh, ids.stale].sort());
      assert.match(again, /possibly outdated/);
    });
  });

  describe('pre_tool_use: memories about a file', () => {
    it('offers, before a file tool runs, the memories that name the file, once per session', async () => {
      let pool = '';
      const t = await startTestServer({
        prepare: async (store) => {
          pool = (await store.store({ topic: 'Connection pool size', content: 'src/db/pool.ts caps connections at 10: Postgres max_connections is 20 across two services.', tags: ['postgres'] })).memory.id;
          await store.store({ topic: 'Spool files', content: 'spool.ts writes the print queue.' });
          for (let i = 0; i < 5; i++) await store.store({ topic: `Unrelated note ${i}`, content: `CSS grid ${i}.` });
        },
      });
      try {
        const read = (session: string, file: string, tool = 'Read') => ({ session_id: session, hook_event_name: 'PreToolUse', tool_name: tool, tool_input: { file_path: file }, tool_use_id: `toolu_${session}_${tool}` });
        const answer = await postHook(t.port, t.token, 'pre_tool_use', read('f1', path.join(t.project, 'src/db/pool.ts')));
        const body = answer.json() as { hookSpecificOutput: { hookEventName: string; additionalContext: string } };
        assert.equal(body.hookSpecificOutput.hookEventName, 'PreToolUse');
        assert.match(body.hookSpecificOutput.additionalContext, /related to this file/);
        assert.match(body.hookSpecificOutput.additionalContext, new RegExp(`_${pool} · matched: src/db/pool\\.ts_`));
        assert.ok(!body.hookSpecificOutput.additionalContext.includes('Spool'), 'spool.ts is another file');
        assert.equal((await postHook(t.port, t.token, 'pre_tool_use', read('f1', path.join(t.project, 'src/db/pool.ts'), 'Edit'))).text, '{}', 'once per session');
        assert.equal((await postHook(t.port, t.token, 'pre_tool_use', read('f2', path.join(t.project, 'src/other.ts')))).text, '{}', 'a file no memory names');
        // store_memory's PreToolUse (no file) still links the tool call to its session and adds nothing.
        const store = await postHook(t.port, t.token, 'pre_tool_use', { session_id: 'f3', tool_name: 'mcp__ltm__store_memory', tool_input: { topic: 'x' }, tool_use_id: 'toolu_x' });
        assert.equal(store.text, '{}');
        await t.idle();
        assert.equal(readStats(t.project)[pool]?.access_count, 1);
      } finally {
        await t.stop();
      }
    });
  });

  describe('post_tool_use: memories about a failure', () => {
    it('offers the memory a failed tool call is about (its command and error), once per session; a success gets nothing', async () => {
      let pnpm = '';
      const t = await startTestServer({
        prepare: async (store) => {
          pnpm = (
            await store.store({
              topic: 'pnpm install fails with ERR_PNPM_OUTDATED_LOCKFILE in CI',
              content: 'CI runs pnpm install --frozen-lockfile; the lockfile was not updated after editing package.json. Run pnpm install locally and commit pnpm-lock.yaml.',
              tags: ['pnpm', 'ci'],
            })
          ).memory.id;
          for (let i = 0; i < 6; i++) await store.store({ topic: `Unrelated note ${i} on CSS grid`, content: `Grid gap ${i}.` });
        },
      });
      try {
        const failure = {
          session_id: 'fail-1',
          hook_event_name: 'PostToolUseFailure',
          tool_name: 'Bash',
          tool_input: { command: 'pnpm install --frozen-lockfile' },
          error: 'Exit code 1\n ERR_PNPM_OUTDATED_LOCKFILE  Cannot install with "frozen-lockfile" because pnpm-lock.yaml is not up to date with package.json',
          is_interrupt: false,
        };
        const answer = await postHook(t.port, t.token, 'post_tool_use', failure);
        assert.equal(answer.status, 200, answer.text);
        const body = answer.json() as { hookSpecificOutput: { hookEventName: string; additionalContext: string } };
        assert.equal(body.hookSpecificOutput.hookEventName, 'PostToolUseFailure');
        assert.match(body.hookSpecificOutput.additionalContext, /related to this failure/);
        assert.match(body.hookSpecificOutput.additionalContext, /ERR_PNPM_OUTDATED_LOCKFILE in CI/);
        assert.deepEqual(hookInfo(answer).offered, [pnpm]);
        assert.equal((await postHook(t.port, t.token, 'post_tool_use', failure)).text, '{}', 'not twice in a session');
        // A tool_response that reads as an error counts as a failure too (PostToolUse).
        const asResponse = postToolUsePayload('fail-2', 'Error: ERR_PNPM_OUTDATED_LOCKFILE pnpm-lock.yaml is not up to date', { tool_input: { command: 'pnpm install --frozen-lockfile' } });
        assert.equal(((await postHook(t.port, t.token, 'post_tool_use', asResponse)).json() as { hookSpecificOutput: { hookEventName: string } }).hookSpecificOutput.hookEventName, 'PostToolUse');
        const success = postToolUsePayload('fail-3', { stdout: 'Lockfile is up to date, ERR_PNPM_OUTDATED_LOCKFILE not raised', stderr: '', interrupted: false }, { tool_input: { command: 'pnpm install --frozen-lockfile' } });
        assert.equal((await postHook(t.port, t.token, 'post_tool_use', success)).text, '{}', 'a success offers nothing');
        const unrelated = { ...failure, session_id: 'fail-4', tool_input: { command: 'make' }, error: 'make: *** No rule to make target quux. Stop.' };
        assert.equal((await postHook(t.port, t.token, 'post_tool_use', unrelated)).text, '{}', 'an unrelated failure offers nothing');
        await t.idle();
        assert.equal(readStats(t.project)[pnpm]?.access_count, 2, 'each offer counted as an access');
      } finally {
        await t.stop();
      }
    });
  });

  describe('post_tool_use', () => {
    let t: TestServer;
    before(async () => (t = await startTestServer()));
    after(async () => t?.stop());

    const cases: { what: string; payload: (sessionId: string) => Json; failed: boolean }[] = [
      { what: 'an object with an error', payload: (s) => postToolUsePayload(s, { error: 'Command failed with exit code 1' }), failed: true },
      { what: 'an object with success:false', payload: (s) => postToolUsePayload(s, { success: false, filePath: '/tmp/x' }), failed: true },
      { what: 'an object with stdout', payload: (s) => postToolUsePayload(s, { stdout: 'ok', stderr: '', interrupted: false, isImage: false }), failed: false },
      { what: 'an object with success:true', payload: (s) => postToolUsePayload(s, { success: true, filePath: '/tmp/x' }), failed: false },
      { what: 'a string starting with "Error:"', payload: (s) => postToolUsePayload(s, 'Error: ENOENT: no such file or directory'), failed: true },
      { what: 'a normal string', payload: (s) => postToolUsePayload(s, 'No errors found. All 12 tests passed.'), failed: false },
      { what: 'content blocks with is_error', payload: (s) => postToolUsePayload(s, [{ type: 'text', text: 'could not connect', is_error: true }]), failed: true },
      { what: 'content blocks with "Error:" text', payload: (s) => postToolUsePayload(s, [{ type: 'text', text: 'Error: no memory with ID mem_00000000' }]), failed: true },
      {
        what: 'normal content blocks (an MCP tool)',
        payload: (s) => postToolUsePayload(s, [{ type: 'text', text: 'Stored memory **x** (ID: `mem_12345678`)' }], { tool_name: 'mcp__ltm__store_memory', mcp_server: { name: 'ltm', source: 'project' } }),
        failed: false,
      },
      {
        what: 'a PostToolUseFailure event',
        payload: (s) => ({ session_id: s, transcript_path: '/tmp/t.jsonl', cwd: '/tmp', hook_event_name: 'PostToolUseFailure', tool_name: 'Bash', tool_input: { command: 'false' }, tool_use_id: 'toolu_f', error: 'Exit code 1' }),
        failed: true,
      },
    ];
    for (const c of cases) {
      it(`counts tool_response as ${c.what} as a ${c.failed ? 'failure' : 'success'}`, async () => {
        const session = `post-${cases.indexOf(c)}`;
        const answer = await postHook(t.port, t.token, 'post_tool_use', c.payload(session));
        assert.equal(answer.status, 200, answer.text);
        assert.deepEqual(answer.json(), {});
        assert.equal(hookInfo(answer).recorded, c.failed ? 'failure' : 'success');
        const counters = readState(t.project).sessions[session]!;
        assert.deepEqual([counters.tool_failures, counters.tool_successes], c.failed ? [1, 0] : [0, 1]);
      });
    }

    it('never mixes the counters of two concurrent sessions', async () => {
      const requests: Promise<HttpAnswer>[] = [];
      for (let i = 0; i < 12; i++) {
        requests.push(postHook(t.port, t.token, 'post_tool_use', postToolUsePayload('conc-S', i % 3 === 0 ? { stdout: 'ok' } : { error: 'boom' })));
        requests.push(postHook(t.port, t.token, 'post_tool_use', postToolUsePayload('conc-T', [{ type: 'text', text: 'fine' }])));
      }
      const answers = await Promise.all(requests);
      for (const a of answers) assert.equal(a.status, 200, a.text);
      const { sessions } = readState(t.project);
      assert.deepEqual([sessions['conc-S']!.tool_failures, sessions['conc-S']!.tool_successes], [8, 4]);
      assert.deepEqual([sessions['conc-T']!.tool_failures, sessions['conc-T']!.tool_successes], [0, 12]);
    });
  });

  it('answers session_start while another process holds the store lock, and writes the sessions once it is free', async () => {
    const t = await startTestServer({
      prepare: async (store) => {
        await store.store({ topic: 'Held lock memory', content: 'Injected while the lock is held.' });
      },
    });
    try {
      const release = await lockfile.lock(ltmRoot(t.project), { lockfilePath: t.store.paths.lock, realpath: false });
      try {
        const answerOnly = { 'X-LTM-Wait': undefined };
        const first = await postHook(t.port, t.token, 'session_start', sessionStartPayload('held-1'), answerOnly);
        const second = await postHook(t.port, t.token, 'session_start', sessionStartPayload('held-2'), answerOnly);
        assert.deepEqual([hookInfo(first).session, hookInfo(second).session], [1, 2]);
        assert.match(sessionStartContext(first), /Held lock memory/);
        assert.equal(fs.existsSync(path.join(ltmRoot(t.project), 'state.json')), false, 'nothing is written while the lock is held');
      } finally {
        await release();
      }
      await t.idle();
      const state = readState(t.project);
      assert.equal(state.session_count, 2);
      assert.deepEqual([state.sessions['held-1']!.number, state.sessions['held-2']!.number], [1, 2]);
    } finally {
      await t.stop();
    }
  });

  it('answers 500 naming the file, and logs it, when a store file cannot be read (the store\'s fault, not the request\'s)', async () => {
    const logged: string[] = [];
    const t = await startTestServer({ log: (m) => logged.push(m) });
    try {
      await postHook(t.port, t.token, 'session_start', sessionStartPayload('before'));
      await t.idle();
      const state = path.join(ltmRoot(t.project), 'state.json');
      fs.rmSync(state);
      fs.mkdirSync(state);
      const answer = await postHook(t.port, t.token, 'session_start', sessionStartPayload('after'));
      assert.equal(answer.status, 500, answer.text);
      assert.match(String(answer.json().error), /cannot read .*state\.json/);
      assert.ok(logged.some((line) => /state\.json/.test(line)), `logged: ${logged.join('; ')}`);
      // A request with a real problem of its own is still the client's error.
      assert.equal((await postHook(t.port, t.token, 'no_such_event', {})).status, 404);
    } finally {
      await t.stop();
    }
  });

  it('pre_compact marks the session compacted and counts the compaction', async () => {
    const t = await startTestServer();
    try {
      await postHook(t.port, t.token, 'session_start', sessionStartPayload('pc'));
      await postHook(t.port, t.token, 'session_start', sessionStartPayload('other'));
      const before = readState(t.project);
      assert.equal(before.compaction_count, 0);
      const answer = await postHook(t.port, t.token, 'pre_compact', { session_id: 'pc', transcript_path: '/tmp/pc.jsonl', cwd: '/tmp', hook_event_name: 'PreCompact', trigger: 'manual', custom_instructions: 'keep it short' });
      assert.equal(answer.status, 200, answer.text);
      assert.deepEqual(answer.json(), {});
      const after = readState(t.project);
      assert.equal(after.sessions.pc!.compacted, true);
      assert.equal(after.sessions.other!.compacted, false);
      assert.equal(after.compaction_count, 1);
      assert.equal(after.session_count, before.session_count);
      await postHook(t.port, t.token, 'pre_compact', { session_id: 'pc', hook_event_name: 'PreCompact', trigger: 'auto', custom_instructions: null });
      assert.equal(readState(t.project).compaction_count, 2);
    } finally {
      await t.stop();
    }
  });

  describe('session_end', () => {
    let t: TestServer;
    const ids: string[] = [];
    before(async () => {
      t = await startTestServer({
        prepare: async (store) => {
          for (let i = 1; i <= 5; i++) ids.push((await store.store({ topic: `Memory ${i}`, content: `Content of memory ${i}. It has two sentences.`, difficulty: i / 10 })).memory.id);
        },
      });
    });
    after(async () => t?.stop());

    const endPayload = (sessionId: string) => ({ session_id: sessionId, transcript_path: `/tmp/${sessionId}.jsonl`, cwd: '/tmp', hook_event_name: 'SessionEnd', reason: 'other' });

    it('removes the session counters and runs no eviction when the store is within max_memories', async () => {
      await postHook(t.port, t.token, 'session_start', sessionStartPayload('calm'));
      await postHook(t.port, t.token, 'post_tool_use', postToolUsePayload('calm', { stdout: 'ok' }));
      const answer = await postHook(t.port, t.token, 'session_end', endPayload('calm'));
      assert.equal(answer.status, 200, answer.text);
      assert.deepEqual(answer.json(), {});
      assert.deepEqual(hookInfo(answer), { session: 1, session_difficulty: 0.006, eviction_ran: false, evicted: 0 });
      const state = readState(t.project);
      assert.equal(state.sessions.calm, undefined);
      assert.equal(state.last_eviction, null);
      assert.equal(fs.readdirSync(path.join(ltmRoot(t.project), 'archives')).length, 0);
    });

    it('answers before the eviction it triggers, which still runs right after', async () => {
      const s = await startTestServer({
        prepare: async (store) => {
          for (let i = 1; i <= 4; i++) await store.store({ topic: `Deferred ${i}`, content: `Content ${i}.`, difficulty: i / 10 });
        },
      });
      try {
        setConfig(s.project, { max_memories: 2, eviction_batch_size: 1 });
        await postHook(s.port, s.token, 'session_start', sessionStartPayload('quick'));
        const answer = await postHook(s.port, s.token, 'session_end', endPayload('quick'), { 'X-LTM-Wait': undefined });
        assert.equal(answer.status, 200, answer.text);
        assert.deepEqual(answer.json(), {});
        assert.equal(hookInfo(answer).eviction_ran, undefined, 'the answer does not wait for the eviction');
        const deadline = Date.now() + 5_000;
        while (readState(s.project).last_eviction === null) {
          assert.ok(Date.now() < deadline, 'the eviction ran after the answer');
          await new Promise((r) => setTimeout(r, 20));
        }
        assert.equal(fs.readdirSync(path.join(ltmRoot(s.project), 'archives')).length, 1, 'one memory was archived before its reduction');
      } finally {
        await s.stop();
      }
    });

    it('takes no request still being received for a pause: follow-up work waits for its answer', async () => {
      const s = await startTestServer({ quietMs: 30 });
      const successes = () => {
        try {
          return Number(readState(s.project).sessions.held?.tool_successes ?? 0);
        } catch {
          return 0; // no state.json yet
        }
      };
      try {
        // Its follow-up (the tool call counts) waits for 30 ms without a request, or 250 ms at the most.
        assert.equal((await postHook(s.port, s.token, 'post_tool_use', postToolUsePayload('held', 'ok'), { 'X-LTM-Wait': undefined })).status, 200);
        // Another hook arrives at once, and its body takes 150 ms to come in.
        const body = JSON.stringify(postToolUsePayload('other', 'ok'));
        const slow = http.request({
          host: '127.0.0.1',
          port: s.port,
          method: 'POST',
          path: '/hook/post_tool_use',
          headers: { Authorization: `Bearer ${s.token}`, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) },
        });
        const answered = new Promise<number>((resolve, reject) => {
          slow.once('response', (res) => {
            res.resume();
            res.once('end', () => resolve(res.statusCode ?? 0));
          });
          slow.once('error', reject);
        });
        slow.write(body.slice(0, 20));
        await new Promise((r) => setTimeout(r, 150));
        assert.equal(successes(), 0, 'nothing was written while a request was coming in');
        slow.end(body.slice(20));
        assert.equal(await answered, 200);
        const deadline = Date.now() + 5_000;
        while (successes() === 0) {
          assert.ok(Date.now() < deadline, 'the follow-up work ran after the answer');
          await new Promise((r) => setTimeout(r, 10));
        }
      } finally {
        await s.stop();
      }
    });

    it('keeps eviction for a pause between hooks, and runs it in the first one', async () => {
      // A pause is 100 ms here (1 s for maintenance), so that back-to-back requests never make one by accident.
      const s = await startTestServer({
        quietMs: 100,
        prepare: async (store) => {
          for (let i = 1; i <= 4; i++) await store.store({ topic: `Busy ${i}`, content: `Content ${i}.` });
        },
      });
      try {
        setConfig(s.project, { max_memories: 2, eviction_batch_size: 1 });
        await postHook(s.port, s.token, 'session_start', sessionStartPayload('busy'));
        await postHook(s.port, s.token, 'session_end', endPayload('busy'), { 'X-LTM-Wait': undefined });
        // Hooks keep coming for well past the 250 ms that other follow-up work waits at most.
        const until = Date.now() + 600;
        while (Date.now() < until) {
          const answer = await postHook(s.port, s.token, 'post_tool_use', postToolUsePayload('other', 'ok'), { 'X-LTM-Wait': undefined });
          assert.equal(answer.status, 200);
        }
        assert.equal(readState(s.project).last_eviction, null, 'no eviction while hooks keep coming');
        assert.ok(Number(readState(s.project).sessions.other?.tool_successes ?? 0) > 0, 'other follow-up work (the tool call counts) was written meanwhile');
        const deadline = Date.now() + 5_000;
        while (readState(s.project).last_eviction === null) {
          assert.ok(Date.now() < deadline, 'the eviction ran in the pause');
          await new Promise((r) => setTimeout(r, 20));
        }
      } finally {
        await s.stop();
      }
    });

    it('writes what hooks report together while they keep coming: a few writes of state.json, not one per session', async () => {
      // No pause here (100 ms of quiet would be one): only the 250 ms limit makes follow-up work run.
      const s = await startTestServer({ quietMs: 100 });
      const stateWrites: number[] = [];
      // Every write of state.json is an atomic rename onto it: one event each.
      const watcher = fs.watch(ltmRoot(s.project), (event, name) => {
        if (event === 'rename' && name === 'state.json') stateWrites.push(Date.now());
      });
      try {
        const started = Date.now();
        let sessions = 0;
        while (Date.now() - started < 800) {
          const id = `steady-${++sessions}`;
          assert.equal((await postHook(s.port, s.token, 'session_start', sessionStartPayload(id), { 'X-LTM-Wait': undefined })).status, 200);
          assert.equal((await postHook(s.port, s.token, 'post_tool_use', postToolUsePayload(id, 'ok'), { 'X-LTM-Wait': undefined })).status, 200);
        }
        const duringHooks = stateWrites.length;
        await s.idle();
        assert.ok(sessions >= 20, `only ${sessions} sessions in 800 ms`);
        assert.ok(duringHooks >= 1, 'the counts were written while hooks kept coming');
        // Each entry reaching its own 250 ms limit would write once per session (one more every few ms).
        assert.ok(duringHooks <= 6, `${duringHooks} writes of state.json for ${sessions} sessions in 800 ms`);
        assert.equal(readState(s.project).session_count, sessions, 'every session was counted');
      } finally {
        watcher.close();
        await s.stop();
      }
    });

    it('recomputes priorities, runs one eviction cycle over max_memories, records last_eviction, removes the counters', async () => {
      setConfig(t.project, { max_memories: 3, eviction_batch_size: 2 });
      await postHook(t.port, t.token, 'session_start', sessionStartPayload('busy'));
      await postHook(t.port, t.token, 'post_tool_use', postToolUsePayload('busy', { error: 'x' }));
      // Another session starts (injecting nothing): the stored priorities of busy's memories are now stale,
      // because recency counts sessions.
      setConfig(t.project, { memories_to_load: 0 });
      const later = await postHook(t.port, t.token, 'session_start', sessionStartPayload('later'));
      assert.deepEqual(hookInfo(later).injected, []);
      const stale = readStats(t.project);
      const startedAt = new Date().toISOString();

      const answer = await postHook(t.port, t.token, 'session_end', endPayload('busy'));
      assert.equal(answer.status, 200, answer.text);
      const info = hookInfo(answer);
      assert.equal(info.session, 2);
      assert.equal(info.eviction_ran, true);
      assert.equal(info.evicted, 2, 'one cycle: one batch of eviction_batch_size');

      const state = readState(t.project);
      assert.equal(state.sessions.busy, undefined, 'the ended session’s counters are removed');
      assert.ok(state.sessions.later, 'another session’s counters stay');
      assert.equal(typeof state.last_eviction, 'string');
      assert.ok((state.last_eviction as string) >= startedAt, `last_eviction ${String(state.last_eviction)}`);

      // The two lowest-priority memories advanced one phase, their full text archived; nothing left memories/.
      const memoriesDir = path.join(ltmRoot(t.project), 'memories');
      const phaseOf = (id: string) => Number(/^phase: (\d)$/m.exec(fs.readFileSync(path.join(memoriesDir, `${id}.md`), 'utf8'))![1]);
      assert.deepEqual(ids.map(phaseOf), [1, 1, 0, 0, 0]);
      assert.deepEqual(fs.readdirSync(path.join(ltmRoot(t.project), 'archives')).sort(), [`${ids[0]}.md`, `${ids[1]}.md`].sort());
      assert.match(fs.readFileSync(path.join(ltmRoot(t.project), 'archives', `${ids[0]}.md`), 'utf8'), /Content of memory 1\. It has two sentences\./);

      const after = readStats(t.project);
      const computed = new Map(t.store.list({ limit: 10 }).memories.map((m) => [m.id, m.priority]));
      for (const id of ids) {
        assert.ok(after[id]!.priority < stale[id]!.priority, `${id}: priority not recomputed (${stale[id]!.priority} → ${after[id]!.priority})`);
        assert.equal(after[id]!.priority, computed.get(id), `${id}: stored priority is the computed one`);
      }
    });

    it('recomputes priorities also when stats.json was rewritten on disk since the server last wrote it', async () => {
      const s = await startTestServer({
        prepare: async (store) => {
          await store.store({ topic: 'One', content: 'First memory.', difficulty: 0.2 });
          await store.store({ topic: 'Two', content: 'Second memory.', difficulty: 0.7 });
        },
      });
      try {
        await postHook(s.port, s.token, 'session_start', sessionStartPayload('edited'));
        // Someone else (a hand edit, a backup, another tool) leaves wrong stored priorities. A rewrite of
        // stats.json outdates the stats journal, so it is made on a whole stats.json, as after a server stopped.
        await s.store.compactStats();
        const statsFile = path.join(ltmRoot(s.project), 'stats.json');
        const stats = readJson<{ memories: Record<string, { priority: number }> }>(statsFile);
        for (const entry of Object.values(stats.memories)) entry.priority = 0.001;
        replaceFile(statsFile, `${JSON.stringify(stats, null, 2)}\n`);
        const answer = await postHook(s.port, s.token, 'session_end', endPayload('edited'));
        assert.equal(answer.status, 200, answer.text);
        const computed = new Map(s.store.list({ limit: 10 }).memories.map((m) => [m.id, m.priority]));
        const after = readStats(s.project);
        for (const [id, priority] of computed) assert.equal(after[id]!.priority, priority, `${id}: stats.json priority after session_end`);
      } finally {
        await s.stop();
      }
    });
  });

  describe('X-LTM-Project', () => {
    let t: TestServer;
    let other: string;
    before(async () => {
      t = await startTestServer();
      other = makeTempProject('ltm-other-');
    });
    after(async () => {
      await t?.stop();
      removeDir(other);
    });

    for (const event of ['session_start', 'post_tool_use', 'pre_compact', 'session_end']) {
      it(`refuses ${event} from another project with 409 and changes nothing`, async () => {
        // index.json and the counts of earlier calls are written just after they answered: not this call's changes.
        await t.idle();
        const before = snapshotFiles(ltmRoot(t.project));
        const answer = await postHook(t.port, t.token, event, postToolUsePayload('foreign', { error: 'x' }), { 'X-LTM-Project': other });
        assert.equal(answer.status, 409, answer.text);
        assert.ok((answer.json().error as string).includes(other));
        assert.deepEqual(snapshotDiff(before, snapshotFiles(ltmRoot(t.project))), []);
      });
    }

    it('accepts the project itself, also through a symbolic link', async () => {
      const link = path.join(other, 'link-to-project');
      fs.symlinkSync(t.project, link);
      for (const claimed of [t.project, link]) {
        const answer = await postHook(t.port, t.token, 'post_tool_use', postToolUsePayload('mine', { stdout: 'ok' }), { 'X-LTM-Project': claimed });
        assert.equal(answer.status, 200, answer.text);
      }
      assert.equal(readState(t.project).sessions.mine!.tool_successes, 2);
    });
  });

  // What Claude Code's http hooks send (see hookSettings.ts): the project in the URL's query, as
  // Claude Code cannot expand $CLAUDE_PROJECT_DIR in headers, and `Bearer $LTM_TOKEN` expanded.
  describe('http hooks: the project in the URL, and sessions without LTM_TOKEN', () => {
    let t: TestServer;
    let other: string;
    before(async () => {
      t = await startTestServer();
      other = makeTempProject('ltm-other-');
    });
    after(async () => {
      await t?.stop();
      removeDir(other);
    });
    const inProject = (event: string, project: string) => `${event}?project=${encodeURIComponent(project)}`;

    for (const event of ['pre_tool_use', 'post_tool_use']) {
      it(`refuses ${event} whose URL names another project with 409 and changes nothing`, async () => {
        // index.json and the counts of earlier calls are written just after they answered: not this call's changes.
        await t.idle();
        const before = snapshotFiles(ltmRoot(t.project));
        const answer = await postHook(t.port, t.token, inProject(event, other), postToolUsePayload('foreign', { error: 'x' }), { 'X-LTM-Wait': undefined });
        assert.equal(answer.status, 409, answer.text);
        assert.ok((answer.json().error as string).includes(other));
        await t.idle();
        assert.deepEqual(snapshotDiff(before, snapshotFiles(ltmRoot(t.project))), []);
      });
    }

    it('accepts its own project in the URL, percent-encoded, also through a symbolic link with spaces and non-ASCII letters', async () => {
      const link = path.join(other, 'Projekt größe & co');
      fs.symlinkSync(t.project, link);
      for (const claimed of [t.project, link]) {
        const answer = await postHook(t.port, t.token, inProject('post_tool_use', claimed), postToolUsePayload('url', { stdout: 'ok' }));
        assert.equal(answer.status, 200, answer.text);
        assert.equal(answer.text, '{}', 'an empty JSON object: nothing for Claude Code to do');
      }
      assert.equal(readState(t.project).sessions.url!.tool_successes, 2);
    });

    it('answers `Authorization: Bearer` with no token (LTM_TOKEN unset) with an empty 200 and does nothing', async () => {
      // index.json and the counts of earlier calls are written just after they answered: not this call's changes.
      await t.idle();
      const before = snapshotFiles(ltmRoot(t.project));
      for (const auth of ['Bearer', 'Bearer ']) {
        for (const event of ['user_prompt_submit', 'pre_tool_use', 'post_tool_use', 'session_end']) {
          const answer = await postHook(t.port, t.token, inProject(event, t.project), postToolUsePayload('tokenless', { error: 'x' }), { Authorization: auth });
          assert.equal(answer.status, 200, answer.text);
          assert.equal(answer.text, '{}');
          assert.match(String(hookInfo(answer).ignored), /LTM_TOKEN/);
        }
      }
      await t.idle();
      assert.deepEqual(snapshotDiff(before, snapshotFiles(ltmRoot(t.project))), [], 'nothing recorded');
      // Only hooks: MCP, and a wrong token anywhere, are still refused.
      const mcp = await rawRequest(t.port, { method: 'POST', path: '/mcp', headers: { Authorization: 'Bearer', 'Content-Type': 'application/json' }, body: '{}' });
      assert.equal(mcp.status, 401);
      const unknown = await postHook(t.port, t.token, 'no_such_event', {}, { Authorization: 'Bearer' });
      assert.equal(unknown.status, 401, 'not for paths that are no hook');
      const wrong = await postHook(t.port, 'wrong', inProject('post_tool_use', t.project), postToolUsePayload('tokenless', {}));
      assert.equal(wrong.status, 401);
    });
  });
});

describe('hook script (sh hooks/ltm-hook.sh)', function () {
  this.timeout(30_000);
  let t: TestServer;
  let empty: TestServer;

  before(async function () {
    assert.equal(spawnSync('sh', ['-c', 'command -v curl']).status, 0, 'curl is needed by the hook script');
    t = await startTestServer({
      prepare: async (store) => {
        await store.store({ topic: 'Hook script memory', content: 'Injected through the hook script.', tags: ['hooks'] });
      },
    });
    empty = await startTestServer();
  });
  after(async () => {
    await t?.stop();
    await empty?.stop();
  });

  const envFor = (s: TestServer) => ({ CLAUDE_PROJECT_DIR: s.project, LTM_PORT: String(s.port), LTM_TOKEN: s.token });

  it("session_start prints exactly the server's JSON (with LTM_PORT/LTM_TOKEN)", async () => {
    // An empty store answers the same text every time, so the script's output can be compared byte for byte.
    const direct = await postHook(empty.port, empty.token, 'session_start', sessionStartPayload('direct'));
    assert.equal(direct.status, 200);
    const run = await runHookScript(HOOK_SCRIPT, 'session_start', sessionStartPayload('via-script'), envFor(empty));
    assert.deepEqual([run.status, run.stderr], [0, '']);
    assert.equal(run.stdout, `${direct.text}\n`);
    await empty.idle(); // the server writes the session just after answering
    assert.equal(readState(empty.project).sessions['via-script']?.number, 2, 'the script reached the server');
  });

  it('session_start with memories prints the SessionStart JSON and nothing else', async () => {
    const run = await runHookScript(HOOK_SCRIPT, 'session_start', sessionStartPayload('with-memories'), envFor(t));
    assert.deepEqual([run.status, run.stderr], [0, '']);
    assert.ok(run.stdout.endsWith('}\n') && run.stdout.indexOf('\n') === run.stdout.length - 1, 'one line of JSON');
    const parsed = JSON.parse(run.stdout) as { hookSpecificOutput: { hookEventName: string; additionalContext: string } };
    assert.equal(run.stdout, `${JSON.stringify(parsed)}\n`);
    assert.deepEqual(Object.keys(parsed), ['hookSpecificOutput']);
    assert.equal(parsed.hookSpecificOutput.hookEventName, 'SessionStart');
    assert.match(parsed.hookSpecificOutput.additionalContext, /### Hook script memory\n/);
  });

  it('user_prompt_submit prints the UserPromptSubmit JSON when memories are offered, and nothing otherwise', async () => {
    const offered = await runHookScript(HOOK_SCRIPT, 'user_prompt_submit', { session_id: 'prompt-script', prompt: 'what did the hook script memory say about hooks?' }, envFor(t));
    assert.deepEqual([offered.status, offered.stderr], [0, '']);
    const parsed = JSON.parse(offered.stdout) as { hookSpecificOutput: { hookEventName: string; additionalContext: string } };
    assert.equal(parsed.hookSpecificOutput.hookEventName, 'UserPromptSubmit');
    assert.match(parsed.hookSpecificOutput.additionalContext, /### Hook script memory\n/);
    // No context: no output at all (the server's `{}` is not printed).
    const nothing = await runHookScript(HOOK_SCRIPT, 'user_prompt_submit', { session_id: 'prompt-script', prompt: 'write a haiku about autumn' }, envFor(t));
    assert.deepEqual([nothing.status, nothing.stdout, nothing.stderr], [0, '', '']);
  });

  it("subagent_start prints the SubagentStart JSON with the memories about the task the parent's Agent call gave", async () => {
    const task = { session_id: 'agent-script', hook_event_name: 'PreToolUse', tool_name: 'Agent', tool_input: { description: 'Hooks', prompt: 'what did the hook script memory say about hooks?' }, tool_use_id: 'toolu_a' };
    const call = await runHookScript(HOOK_SCRIPT, 'pre_tool_use', task, envFor(t));
    assert.deepEqual([call.status, call.stdout, call.stderr], [0, '', '']);
    const start = await runHookScript(HOOK_SCRIPT, 'subagent_start', { session_id: 'agent-script', hook_event_name: 'SubagentStart', agent_id: 'a1', agent_type: 'general-purpose' }, envFor(t));
    assert.deepEqual([start.status, start.stderr], [0, '']);
    const parsed = JSON.parse(start.stdout) as { hookSpecificOutput: { hookEventName: string; additionalContext: string } };
    assert.equal(parsed.hookSpecificOutput.hookEventName, 'SubagentStart');
    assert.match(parsed.hookSpecificOutput.additionalContext, /### Hook script memory\n/);
  });

  it('finds the server through server.json alone (no LTM_PORT/LTM_TOKEN)', async () => {
    const run = await runHookScript(HOOK_SCRIPT, 'session_start', sessionStartPayload('by-file'), { CLAUDE_PROJECT_DIR: t.project });
    assert.deepEqual([run.status, run.stderr], [0, '']);
    assert.match(JSON.parse(run.stdout).hookSpecificOutput.additionalContext as string, /Hook script memory/);
    const post = await runHookScript(HOOK_SCRIPT, 'post_tool_use', postToolUsePayload('by-file', 'Error: x'), { CLAUDE_PROJECT_DIR: t.project });
    assert.deepEqual([post.status, post.stdout, post.stderr], [0, '', '']);
    await t.idle(); // the server writes counts just after answering
    assert.equal(readState(t.project).sessions['by-file']!.tool_failures, 1);
  });

  it('finds the project from the working directory when CLAUDE_PROJECT_DIR is not set (even with a stale PWD)', async () => {
    const run = await runHookScript(HOOK_SCRIPT, 'post_tool_use', postToolUsePayload('by-cwd', { stdout: 'ok' }), { PWD: '/' }, t.project);
    assert.deepEqual([run.status, run.stdout, run.stderr], [0, '', '']);
    await t.idle(); // the server writes counts just after answering
    assert.equal(readState(t.project).sessions['by-cwd']!.tool_successes, 1);
  });

  it('other events print nothing, and reach the server', async () => {
    const env = envFor(t);
    const runs = [
      await runHookScript(HOOK_SCRIPT, 'session_start', sessionStartPayload('quiet'), env),
      await runHookScript(HOOK_SCRIPT, 'pre_tool_use', { session_id: 'quiet', hook_event_name: 'PreToolUse', tool_name: 'mcp__ltm__store_memory', tool_input: {}, tool_use_id: 'toolu_q' }, env),
      await runHookScript(HOOK_SCRIPT, 'post_tool_use', postToolUsePayload('quiet', [{ type: 'text', text: 'Error: nope' }]), env),
      await runHookScript(HOOK_SCRIPT, 'pre_compact', { session_id: 'quiet', hook_event_name: 'PreCompact', trigger: 'manual', custom_instructions: '' }, env),
    ];
    for (const run of runs.slice(1)) assert.deepEqual([run.status, run.stdout, run.stderr], [0, '', '']);
    await t.idle(); // the server writes counts just after answering
    const counters = readState(t.project).sessions.quiet!;
    assert.deepEqual([counters.tool_failures, counters.compacted], [1, true]);
    const end = await runHookScript(HOOK_SCRIPT, 'session_end', { session_id: 'quiet', hook_event_name: 'SessionEnd', reason: 'other' }, env);
    assert.deepEqual([end.status, end.stdout, end.stderr], [0, '', '']);
    await t.idle(); // the server writes counts just after answering
    assert.equal(readState(t.project).sessions.quiet, undefined);
  });

  it('prints nothing and changes nothing when the server serves another project (409)', async () => {
    const elsewhere = makeTempProject('ltm-elsewhere-');
    try {
      await t.idle(); // the server writes counts just after answering
      const before = snapshotFiles(ltmRoot(t.project));
      const run = await runHookScript(HOOK_SCRIPT, 'session_start', sessionStartPayload('lost'), { CLAUDE_PROJECT_DIR: elsewhere, LTM_PORT: String(t.port), LTM_TOKEN: t.token });
      assert.deepEqual([run.status, run.stdout, run.stderr], [0, '', '']);
      await t.idle(); // the server writes counts just after answering
      assert.deepEqual(snapshotDiff(before, snapshotFiles(ltmRoot(t.project))), []);
    } finally {
      removeDir(elsewhere);
    }
  });

  it('the copy `ltm init` installs works when run as the command written in settings.local.json', async () => {
    ensureCliBuilt();
    const project = makeTempProject('ltm-hook-init-');
    let s: TestServer | undefined;
    try {
      const init = spawnSync(process.execPath, [CLI, 'init', '--project', project], { encoding: 'utf8' });
      assert.equal(init.status, 0, init.stderr);
      const installed = path.join(ltmRoot(project), 'hooks', 'ltm-hook.sh');
      assert.ok(fs.readFileSync(installed).equals(fs.readFileSync(HOOK_SCRIPT)));
      // Read before the server starts: while it runs, the tool-call hooks are http hooks (see hookSettings.ts).
      const settings = readJson<{ hooks: Record<string, { hooks: { command: string }[] }[]> }>(path.join(project, '.claude', 'settings.local.json'));
      s = await startTestServer({ project, prepare: (store) => store.store({ topic: 'Installed hook memory', content: 'Seen through the installed script.' }).then(() => undefined) });
      const command = (event: string) => settings.hooks[event]!.flatMap((g) => g.hooks).find((h) => h.command.includes('ltm-hook.sh'))!.command;
      const run = (event: string, payload: Json) => runHookScript('-c', command(event), payload, { CLAUDE_PROJECT_DIR: project });
      const start = await run('SessionStart', sessionStartPayload('installed'));
      assert.deepEqual([start.status, start.stderr], [0, '']);
      assert.match(JSON.parse(start.stdout).hookSpecificOutput.additionalContext as string, /### Installed hook memory/);
      const fail = await run('PostToolUseFailure', { session_id: 'installed', hook_event_name: 'PostToolUseFailure', tool_name: 'Bash', tool_input: {}, tool_use_id: 'toolu_1', error: 'exit 1' });
      assert.deepEqual([fail.status, fail.stdout, fail.stderr], [0, '', '']);
      await s.idle(); // the server writes counts just after answering
      assert.equal(readState(project).sessions.installed!.tool_failures, 1);
    } finally {
      await s?.stop();
      removeDir(project);
    }
  });

  describe('with no server it exits 0 at once and prints nothing', () => {
    let project: string;
    beforeEach(() => {
      project = makeTempProject('ltm-noserver-');
      fs.mkdirSync(ltmRoot(project), { recursive: true });
    });
    afterEach(() => removeDir(project));

    async function assertSilentAndQuick(env: Record<string, string>): Promise<void> {
      for (const [event, payload] of [
        ['session_start', sessionStartPayload('nobody')],
        ['post_tool_use', postToolUsePayload('nobody', { error: 'x' })],
        ['session_end', { session_id: 'nobody', hook_event_name: 'SessionEnd', reason: 'other' }],
      ] as const) {
        const run = await runHookScript(HOOK_SCRIPT, event, payload, env);
        assert.deepEqual([run.status, run.stdout, run.stderr], [0, '', ''], `${event}`);
        assert.ok(run.ms < 300, `${event} took ${run.ms.toFixed(0)} ms`);
      }
    }

    it('a stale server.json (dead pid, closed port)', async () => {
      const port = await closedPort();
      const info = { port, token: 'stale-token-stale-token-stale-token', pid: deadPid(), version: '0.1.0', started_at: new Date().toISOString(), url: `http://127.0.0.1:${port}`, project };
      fs.writeFileSync(path.join(ltmRoot(project), 'server.json'), `${JSON.stringify(info, null, 2)}\n`);
      await assertSilentAndQuick({ CLAUDE_PROJECT_DIR: project });
    });

    it('no server.json', async () => {
      await assertSilentAndQuick({ CLAUDE_PROJECT_DIR: project });
    });

    it('LTM_PORT pointing to a closed port', async () => {
      await assertSilentAndQuick({ CLAUDE_PROJECT_DIR: project, LTM_PORT: String(await closedPort()), LTM_TOKEN: 'whatever-token' });
    });
  });
});
