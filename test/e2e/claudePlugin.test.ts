/**
 * LTM as a Claude Code plugin, with the real pinned CLI and a fake model:
 * the repository's marketplace added from its folder, the plugin installed,
 * a session that stores a memory through the plugin's MCP server, a next
 * session that starts with it, a session while `ltm serve` runs (the plugin's
 * MCP server then relays to it), and the plugin uninstalled. No `ltm init`, no
 * environment: nothing but the plugin.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { FakeAnthropic, lastToolResult, textOf, type MessagesRequest } from '../support/fakeAnthropic';
import { claudeBinary, claudeCommand, hookAttachments, runClaude } from '../support/claudeCode';
import { REPO_ROOT, ltmJson, requireBuiltCli, startServe } from '../support/ltmProcess';
import { buildPlugin } from '../../scripts/buildPlugin';
import { PLUGIN_NAME, PLUGIN_TOOL_PREFIX } from '../../src/shared/toolNames';

const MARKETPLACE = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, '.claude-plugin', 'marketplace.json'), 'utf8')) as { name: string };
const PLUGIN_ID = `${PLUGIN_NAME}@${MARKETPLACE.name}`;

function seen(request: MessagesRequest): string {
  return textOf(request.messages) + textOf(request.system);
}

describe('Claude Code plugin end to end (real CLI, fake model)', function () {
  this.timeout(240_000);
  let root: string;
  let project: string;
  let home: string;
  let fake: FakeAnthropic;
  let storeTool = '';

  const claude = (prompt: string) =>
    runClaude(prompt, { cwd: project, home, modelUrl: fake.url, allowedTools: `${PLUGIN_TOOL_PREFIX.slice(0, -2)},Read` });
  const plugin = (...args: string[]) => claudeCommand(['plugin', ...args], { home, cwd: project });
  const readState = () => JSON.parse(fs.readFileSync(path.join(project, '.claude/ltm/state.json'), 'utf8')) as { session_count: number };

  before(async () => {
    requireBuiltCli();
    claudeBinary();
    // The marketplace at the repository root points at the staged plugin (dist/claude-plugin).
    buildPlugin();
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'ltm-plugin-'));
    project = path.join(root, 'project');
    home = path.join(root, 'home');
    fs.mkdirSync(project);
    fs.mkdirSync(home);
    fake = new FakeAnthropic(() => ({ text: 'ok' }));
    await fake.start();
  });

  after(async () => {
    await fake?.stop();
    if (root) fs.rmSync(root, { recursive: true, force: true });
  });

  it('installs from the repository folder as a marketplace', () => {
    const added = plugin('marketplace', 'add', REPO_ROOT);
    assert.equal(added.status, 0, added.stderr + added.stdout);
    const installed = plugin('install', PLUGIN_ID);
    assert.equal(installed.status, 0, installed.stderr + installed.stdout);
    const listed = plugin('list');
    assert.match(listed.stdout, new RegExp(PLUGIN_ID.replace('.', '\\.')));
  });

  it('session 1 stores a memory with the plugin store_memory tool, and the project gets nothing but its memories', async () => {
    fake.setScript((req) => {
      const result = lastToolResult(req);
      if (result) return { text: `Stored. ${result.content}` };
      storeTool = req.tools?.map((t) => t.name).find((n) => n.startsWith('mcp__plugin_') && n.endsWith('__store_memory')) ?? '';
      return storeTool
        ? { toolUse: { name: storeTool, input: { topic: 'Plugin sessions share the store', content: 'Every Claude Code session runs its own ltm mcp process on .claude/ltm/.', tags: ['plugin'] } } }
        : { text: 'no store_memory tool offered' };
    });
    const run = await claude('remember how the plugin works');
    assert.equal(run.status, 0, run.stderr);
    assert.equal(storeTool, `${PLUGIN_TOOL_PREFIX}store_memory`, 'the tool is named after the plugin and its server');
    assert.match(run.result?.result ?? '', /^Stored\. .*"success":\s*true/s, run.stdout);
    const listed = ltmJson<{ memories: { topic: string }[] }>(['list', '--project', project]);
    assert.deepEqual(listed.memories.map((m) => m.topic), ['Plugin sessions share the store']);
    // No port, no token, no setup in the project: only the memory store.
    assert.deepEqual(fs.readdirSync(project), ['.claude']);
    assert.deepEqual(fs.readdirSync(path.join(project, '.claude')), ['ltm']);
    assert.ok(!fs.existsSync(path.join(project, '.claude/ltm/server.json')), 'no server ran');
    const hooks = hookAttachments(home, run.result?.session_id ?? '');
    assert.ok(hooks.some((h) => h.hookEvent === 'SessionStart' && h.type === 'hook_success'), JSON.stringify(hooks));
    assert.deepEqual(hooks.filter((h) => /error|cancelled/.test(h.type)), [], 'no hook error');
  });

  it("session 2's first model request carries that memory, injected by the plugin's SessionStart hook", async () => {
    fake.setScript(() => ({ text: 'hello back' }));
    const before = fake.requests.length;
    const run = await claude('hello');
    assert.equal(run.status, 0, run.stderr);
    const first = fake.requests[before]!;
    assert.match(seen(first), /## Long-term memory \(LTM\)/);
    assert.match(seen(first), /Plugin sessions share the store/);
    assert.match(seen(first), /Every Claude Code session runs its own ltm mcp process/);
    assert.ok(seen(first).includes(`${PLUGIN_TOOL_PREFIX}store_memory`), 'the injected text names the tools as this session has them');
    // A session start creates no store: session 1 began before its memory did, so session 2 is the first counted.
    const state = JSON.parse(fs.readFileSync(path.join(project, '.claude/ltm/state.json'), 'utf8')) as { session_count: number; sessions: object };
    assert.equal(state.session_count, 1);
    assert.deepEqual(state.sessions, {}, "the plugin's SessionEnd hook closed the session's counters");
    const hooks = hookAttachments(home, run.result?.session_id ?? '');
    assert.deepEqual(hooks.filter((h) => /error|cancelled/.test(h.type)), [], 'no hook error');
  });

  it("with `ltm serve` running in the project, the plugin's tools are the server's: its ltm mcp relays the session there", async () => {
    const server = await startServe(project);
    try {
      fake.setScript((req) => {
        const result = lastToolResult(req);
        if (result) return { text: `Stored. ${result.content}` };
        return { toolUse: { name: storeTool, input: { topic: 'Relayed to the running server', content: 'With ltm serve up, ltm mcp opens no store of its own.', tags: ['plugin'] } } };
      });
      const run = await claude('remember this while the server runs');
      assert.equal(run.status, 0, run.stderr);
      assert.match(run.result?.result ?? '', /^Stored\. .*"success":\s*true/s, run.stdout);
      const health = (await (await fetch(`http://127.0.0.1:${server.port}/health`, { headers: { Authorization: `Bearer ${server.token}` } })).json()) as { mcp: { live: number; serversBuilt: number } };
      assert.ok(health.mcp.serversBuilt >= 1, `the server opened no MCP session for the plugin's session: ${JSON.stringify(health)}`);
      assert.equal(health.mcp.live, 0, 'the relay ended its MCP session with the Claude Code session');
      const listed = ltmJson<{ memories: { topic: string }[] }>(['list', '--project', project]);
      assert.ok(listed.memories.some((m) => m.topic === 'Relayed to the running server'), JSON.stringify(listed));
      // The server knew the call's session (the plugin's PreToolUse hook told it): the memory names it.
      const id = /"id":\s*"(mem_[0-9a-f]+)"/.exec(run.result?.result ?? '')?.[1];
      assert.ok(id, run.stdout);
      const { session_count: session } = readState();
      assert.match(fs.readFileSync(path.join(project, '.claude/ltm/memories', `${id}.md`), 'utf8'), new RegExp(`\\ncreated_session: ${session}\\n`));
      const hooks = hookAttachments(home, run.result?.session_id ?? '');
      assert.deepEqual(hooks.filter((h) => /error|cancelled/.test(h.type)), [], 'no hook error');
    } finally {
      await server.stop();
    }
  });

  it('after uninstall no LTM hook or MCP server runs', async () => {
    const removed = plugin('uninstall', PLUGIN_ID);
    assert.equal(removed.status, 0, removed.stderr + removed.stdout);
    const countBefore = readState().session_count;
    fake.setScript(() => ({ text: 'plain' }));
    const before = fake.requests.length;
    const run = await claude('hello again');
    assert.equal(run.status, 0, run.stderr);
    const first = fake.requests[before]!;
    assert.ok(!first.tools?.some((t) => t.name.startsWith(PLUGIN_TOOL_PREFIX)), 'no plugin tool is offered');
    assert.doesNotMatch(seen(first), /Long-term memory \(LTM\)/);
    assert.deepEqual(hookAttachments(home, run.result?.session_id ?? '').filter((h) => /ltm/i.test(`${h.command ?? ''} ${h.hookName}`)), []);
    assert.equal(readState().session_count, countBefore, 'no session was counted');
  });
});
