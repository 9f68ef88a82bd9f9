/**
 * Review before use through a real server: a memory Claude stores with the
 * real MCP SDK client while the project reviews new memories is proposed; the
 * MCP answer says it awaits review; no hook gives it (session start, prompt,
 * failure, file, subagent) and recall does not find it; `ltm approve` (the
 * CLI, another store on the same project) puts it in use; `ltm reject`
 * archives it.
 */
import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { runCli } from '../../src/cli';
import { hookInfo, mcpClient, postHook, postToolUsePayload, sessionStartPayload, setConfig, startTestServer, type Json, type TestServer } from '../support/serverKit';

interface ToolAnswer {
  text: string;
  structured: Json;
  isError: boolean;
}

async function call(client: Client, name: string, args: Json = {}): Promise<ToolAnswer> {
  const result = await client.callTool({ name, arguments: args });
  const content = result.content as { type: string; text?: string }[];
  return { text: content.map((c) => c.text ?? '').join('\n'), structured: (result.structuredContent ?? {}) as Json, isError: result.isError === true };
}

const POOL = {
  topic: 'Invoice import deadlocks in Postgres',
  summary: 'Two import workers deadlocked on the invoices table.',
  content: 'Both workers locked invoice rows in different orders in src/db/invoiceImport.ts. Fix: sort invoice IDs before locking.',
  tags: ['postgres'],
};
const DEADLOCK_PROMPT = 'The invoice import workers deadlocked again in postgres, can you look?';

describe('review before use (real server, MCP SDK client, hooks, CLI)', function () {
  this.timeout(30_000);
  let t: TestServer;
  let client: Client;
  let other = '';

  beforeEach(async () => {
    t = await startTestServer({
      prepare: async (store) => {
        other = (await store.store({ topic: 'Flaky websocket reconnect test', content: 'Await the open event before sending.', tags: ['testing'] })).memory.id;
      },
    });
    setConfig(t.project, { review_new_memories: true });
    client = await mcpClient(t.port, t.token);
  });
  afterEach(async () => {
    await client.close();
    await t.stop();
  });

  const cli = (...args: string[]) => runCli([...args, '--project', t.project]);

  async function claudeStores(): Promise<{ id: string; answer: ToolAnswer }> {
    const answer = await call(client, 'store_memory', POOL);
    assert.equal(answer.isError, false, answer.text);
    return { id: answer.structured.id as string, answer };
  }

  /**
   * What each hook gives Claude (IDs injected or offered), each in a session of its own so that
   * nothing is left out for having been given already.
   */
  async function byHook(session: string): Promise<Record<'start' | 'prompt' | 'file' | 'failure' | 'subagent', string[]>> {
    const start = await postHook(t.port, t.token, 'session_start', sessionStartPayload(session));
    const prompt = await postHook(t.port, t.token, 'user_prompt_submit', { session_id: `${session}-prompt`, hook_event_name: 'UserPromptSubmit', prompt: DEADLOCK_PROMPT });
    const file = await postHook(t.port, t.token, 'pre_tool_use', {
      session_id: `${session}-file`,
      hook_event_name: 'PreToolUse',
      tool_name: 'Read',
      tool_input: { file_path: path.join(t.project, 'src/db/invoiceImport.ts') },
      tool_use_id: `toolu_${session}_read`,
    });
    const failure = await postHook(
      t.port,
      t.token,
      'post_tool_use',
      postToolUsePayload(`${session}-fail`, 'Error: deadlock detected while importing invoices into postgres', { hook_event_name: 'PostToolUseFailure', tool_input: { command: 'npm run import:invoices' } }),
    );
    await postHook(t.port, t.token, 'pre_tool_use', {
      session_id: `${session}-agent`,
      hook_event_name: 'PreToolUse',
      tool_name: 'Agent',
      tool_input: { description: 'Investigate', prompt: 'Find out why the invoice import workers deadlock in Postgres.', subagent_type: 'Explore' },
      tool_use_id: `toolu_${session}_agent`,
    });
    const subagent = await postHook(t.port, t.token, 'subagent_start', { session_id: `${session}-agent`, hook_event_name: 'SubagentStart', agent_id: 'a1', agent_type: 'Explore' });
    return {
      start: hookInfo(start).injected as string[],
      prompt: hookInfo(prompt).offered as string[],
      file: hookInfo(file).offered as string[],
      failure: hookInfo(failure).offered as string[],
      subagent: hookInfo(subagent).offered as string[],
    };
  }

  async function givenByHooks(session: string): Promise<string[]> {
    return Object.values(await byHook(session)).flat();
  }

  it('store_memory answers that the memory awaits review by a person, as facts; ltm_status counts it; get_memory says so', async () => {
    const { id, answer } = await claudeStores();
    assert.equal(answer.structured.status, 'proposed');
    assert.equal(answer.structured.message, `Memory stored with ID ${id}; it awaits review by a person before it is used`);
    assert.match(answer.text, /awaits review by a person, and until it is approved it is not injected into sessions, offered with prompts or returned by recall\./);
    const status = await call(client, 'ltm_status');
    assert.equal(status.structured.awaiting_review, 1);
    assert.equal((status.structured.config as Json).review_new_memories, true);
    assert.match(status.text, /\*\*Awaiting review:\*\* 1 /);
    const got = await call(client, 'get_memory', { id });
    assert.equal(got.isError, false);
    assert.equal(got.structured.status, 'proposed');
    assert.match(got.text, /\*\*Status:\*\* proposed/);
  });

  it('until approved: given by no hook, found by no recall or list; after ltm approve: given and found', async () => {
    const { id } = await claudeStores();
    const before = await givenByHooks('before');
    assert.ok(!before.includes(id), `the proposed memory is given by no hook: ${JSON.stringify(before)}`);
    assert.ok(before.includes(other), 'session start still injects the approved memory');
    assert.deepEqual((await call(client, 'recall', { query: 'invoice import deadlock' })).structured.memories, []);
    assert.deepEqual((await call(client, 'recall', { query: 'invoice import deadlock', scope: 'all' })).structured.memories, []);
    const listed = (await call(client, 'list_memories')).structured.memories as { id: string }[];
    assert.deepEqual(listed.map((m) => m.id), [other]);

    const approved = await cli('approve', id);
    assert.equal(approved.exitCode, 0, approved.stderr);
    // Each hook gives it now: the check above left it out for being proposed, not for being irrelevant.
    const after = await byHook('after');
    for (const [hook, ids] of Object.entries(after)) assert.ok(ids.includes(id), `${hook} gives it after approval: ${JSON.stringify(after)}`);
    assert.equal(((await call(client, 'recall', { query: 'invoice import deadlock' })).structured.memories as { id: string }[])[0]?.id, id);
    assert.equal((await call(client, 'ltm_status')).structured.awaiting_review, 0);
  });

  it('ltm reject archives it: search_archives finds it, no hook gives it, the store stays healthy', async () => {
    const { id } = await claudeStores();
    const rejected = await cli('reject', id, '--json');
    assert.equal(rejected.exitCode, 0, rejected.stderr);
    assert.equal((JSON.parse(rejected.stdout) as Json).decision, 'rejected');
    assert.deepEqual((await givenByHooks('rejected')).filter((x) => x === id), []);
    assert.equal(((await call(client, 'search_archives', { query: 'invoice import deadlock' })).structured.memories as { id: string }[])[0]?.id, id);
    assert.equal((await call(client, 'ltm_check')).structured.healthy, true);
  });

  it('with review off, what Claude stores is used at once (nothing changes for existing projects)', async () => {
    setConfig(t.project, { review_new_memories: false });
    const { id, answer } = await claudeStores();
    assert.equal(answer.structured.status, 'approved');
    assert.doesNotMatch(answer.text, /review/);
    assert.ok((await givenByHooks('off')).includes(id));
  });
});
