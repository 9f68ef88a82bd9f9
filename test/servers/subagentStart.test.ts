/**
 * SubagentStart through a real server, with Claude Code's payloads: the
 * parent's PreToolUse of the Agent tool carries the task (SubagentStart's
 * payload does not: agent_id and agent_type only), and the subagent starts
 * with the memories about that task, in its own small budget.
 */
import { strict as assert } from 'node:assert';
import { DEFAULT_SUBAGENT_BUDGET_TOKENS } from '../../src/core/promptContext';
import { hookInfo, postHook, readStats, sessionStartPayload, setConfig, startTestServer, type HttpAnswer, type Json, type TestServer } from '../support/serverKit';

/** The context a SubagentStart answer adds ('' when none), checked for the shape Claude Code reads. */
function subagentContext(answer: HttpAnswer): string {
  assert.equal(answer.status, 200, answer.text);
  const body = answer.json();
  if (Object.keys(body).length === 0) return '';
  assert.deepEqual(Object.keys(body), ['hookSpecificOutput']);
  const out = body.hookSpecificOutput as Json;
  assert.deepEqual(Object.keys(out).sort(), ['additionalContext', 'hookEventName']);
  assert.equal(out.hookEventName, 'SubagentStart');
  return out.additionalContext as string;
}

/** The parent's PreToolUse of the Agent tool, as Claude Code 2.1.197 sends it. */
function agentCall(session: string, prompt: string, subagentType?: string, tool = 'Agent'): Json {
  return {
    session_id: session,
    transcript_path: `/tmp/${session}.jsonl`,
    cwd: '/tmp',
    permission_mode: 'default',
    hook_event_name: 'PreToolUse',
    tool_name: tool,
    tool_input: { description: 'Investigate', prompt, ...(subagentType ? { subagent_type: subagentType } : {}) },
    tool_use_id: `toolu_${Math.random().toString(16).slice(2, 10)}`,
  };
}

/** SubagentStart as Claude Code 2.1.197 sends it: the common fields, agent_id and agent_type; no task. */
function subagentStart(session: string, agentId: string, agentType = 'general-purpose'): Json {
  return { session_id: session, transcript_path: `/tmp/${session}.jsonl`, cwd: '/tmp', hook_event_name: 'SubagentStart', agent_id: agentId, agent_type: agentType };
}

describe('subagent_start: the memories about a subagent’s task', function () {
  this.timeout(20_000);
  let t: TestServer;
  const ids = { deadlock: '', flaky: '' };

  beforeEach(async () => {
    t = await startTestServer({
      prepare: async (store) => {
        ids.deadlock = (
          await store.store({
            topic: 'Invoice import deadlocks in Postgres',
            summary: 'Two import workers deadlocked on the invoices table.',
            content: 'Both workers locked invoice rows in different orders. Fix: sort invoice IDs before locking.',
            tags: ['postgres', 'importance:critical'],
          })
        ).memory.id;
        ids.flaky = (await store.store({ topic: 'Flaky websocket reconnect test', summary: 'The reconnect test awaited the wrong event.', content: 'Await the open event before sending.', tags: ['testing'] })).memory.id;
        for (let i = 0; i < 8; i++) await store.store({ topic: `Unrelated note ${i} about CSS grid gaps`, content: `Grid gap note ${i}.`, tags: ['css'] });
      },
    });
    setConfig(t.project, { memories_to_load: 1 });
  });
  afterEach(async () => t.stop());

  const deadlockTask = 'Find out why the invoice import workers deadlock in Postgres and propose a fix.';

  it('gives a subagent the memories about its task, saying why, in its own budget, counted as an access, even what its parent was given', async () => {
    // The parent session was given the deadlock memory at its start: the subagent's fresh context was not.
    const start = await postHook(t.port, t.token, 'session_start', sessionStartPayload('parent'));
    assert.deepEqual(hookInfo(start).injected, [ids.deadlock]);
    const call = await postHook(t.port, t.token, 'pre_tool_use', agentCall('parent', deadlockTask, 'Explore'));
    assert.equal(call.text, '{}', 'the parent is offered nothing for the call');
    const answer = await postHook(t.port, t.token, 'subagent_start', subagentStart('parent', 'agent-1', 'Explore'));
    const context = subagentContext(answer);
    assert.match(context, /^## Long-term memory \(LTM\): related to this subagent's task\n/);
    assert.match(context, new RegExp(`### Invoice import deadlocks in Postgres\\n_${ids.deadlock} · matched: [^_]*invoice`));
    assert.ok(!context.includes('Flaky') && !context.includes('CSS grid'), 'nothing unrelated');
    assert.ok(context.length <= DEFAULT_SUBAGENT_BUDGET_TOKENS * 4);
    assert.deepEqual(hookInfo(answer), { agent_type: 'Explore', task: true, offered: [ids.deadlock] });
    await t.idle();
    assert.equal(readStats(t.project)[ids.deadlock]?.access_count, 2, 'the start and the subagent');
    // The task was taken: the same subagent starting again (resumed) gets nothing twice.
    assert.equal(subagentContext(await postHook(t.port, t.token, 'subagent_start', subagentStart('parent', 'agent-1', 'Explore'))), '');
    // Another subagent has its own context: given the memory again for the same task.
    await postHook(t.port, t.token, 'pre_tool_use', agentCall('parent', deadlockTask));
    assert.deepEqual(hookInfo(await postHook(t.port, t.token, 'subagent_start', subagentStart('parent', 'agent-2'))).offered, [ids.deadlock]);
  });

  it("a subagent's own tool calls are offered only what its context was not given", async () => {
    await postHook(t.port, t.token, 'pre_tool_use', agentCall('p2', deadlockTask));
    assert.deepEqual(hookInfo(await postHook(t.port, t.token, 'subagent_start', subagentStart('p2', 'agent-x'))).offered, [ids.deadlock]);
    const failure = (agentId?: string) => ({
      session_id: 'p2',
      hook_event_name: 'PostToolUseFailure',
      tool_name: 'Bash',
      tool_input: { command: 'npm run import:invoices' },
      error: 'ERROR: deadlock detected while importing invoices in postgres',
      ...(agentId ? { agent_id: agentId, agent_type: 'general-purpose' } : {}),
    });
    assert.deepEqual(hookInfo(await postHook(t.port, t.token, 'post_tool_use', failure('agent-x'))).offered, [], 'the subagent has it');
    assert.deepEqual(hookInfo(await postHook(t.port, t.token, 'post_tool_use', failure())).offered, [ids.deadlock], 'the parent has not');
  });

  it('matches a task to the subagent of its type, oldest first, and takes the Task tool (the older name) too', async () => {
    await postHook(t.port, t.token, 'pre_tool_use', agentCall('p3', deadlockTask, 'Explore'));
    await postHook(t.port, t.token, 'pre_tool_use', agentCall('p3', 'The websocket reconnect test is flaky again; find the race.', 'Plan', 'Task'));
    assert.deepEqual(hookInfo(await postHook(t.port, t.token, 'subagent_start', subagentStart('p3', 'plan-1', 'Plan'))).offered, [ids.flaky]);
    assert.deepEqual(hookInfo(await postHook(t.port, t.token, 'subagent_start', subagentStart('p3', 'explore-1', 'Explore'))).offered, [ids.deadlock]);
  });

  it('offers nothing to a subagent whose task LTM did not see, or whose task is about nothing stored, and nothing in another session', async () => {
    const none = await postHook(t.port, t.token, 'subagent_start', subagentStart('p4', 'a-1'));
    assert.deepEqual([none.text, hookInfo(none)], ['{}', { agent_type: 'general-purpose', task: false, offered: [] }]);
    await postHook(t.port, t.token, 'pre_tool_use', agentCall('p4', 'Write a haiku about autumn leaves falling.'));
    const unrelated = await postHook(t.port, t.token, 'subagent_start', subagentStart('p4', 'a-2'));
    assert.deepEqual([unrelated.text, hookInfo(unrelated).task], ['{}', true]);
    await postHook(t.port, t.token, 'pre_tool_use', agentCall('p5', deadlockTask));
    assert.equal((await postHook(t.port, t.token, 'subagent_start', subagentStart('p6', 'a-3'))).text, '{}', "another session's task");
    // Payloads of other shapes never fail.
    for (const body of [{}, { session_id: 7, agent_id: ['x'] }, []]) assert.equal((await postHook(t.port, t.token, 'subagent_start', body)).status, 200);
  });
});
