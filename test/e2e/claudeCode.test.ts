/**
 * The real Claude Code CLI against `ltm serve` and a fake model the test owns.
 * Sessions run in order and build on each other, as a person's would.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { FakeAnthropic, lastToolResult, textOf, type MessagesRequest, type ReplyScript } from '../support/fakeAnthropic';
import { claudeBinary, hookAttachments, runClaude, type ClaudeRun, type HookAttachment } from '../support/claudeCode';
import { ltm, ltmJson, requireBuiltCli, startServe, type RunningServer } from '../support/ltmProcess';
import { setHookTransport } from '../../src/servers/claudeSetup';
import { commandHostNow } from '../../src/servers/hookShell';

/** Everything the model saw in a request, flattened. */
function seen(request: MessagesRequest): string {
  return textOf(request.messages) + textOf(request.system);
}

interface StateFile {
  session_count: number;
  compaction_count: number;
  last_eviction: string | null;
  sessions: Record<string, { compacted: boolean; tool_failures: number }>;
  config: Record<string, number>;
}

/** A script that reads `count` files with the Read tool, one call per model turn, then answers `done`. */
function readFiles(dir: string, count: number): ReplyScript {
  return (req) => {
    const done = req.messages.filter((m) => JSON.stringify(m.content).includes('"tool_result"')).length;
    return done < count ? { toolUse: { name: 'Read', input: { file_path: path.join(dir, `file-${done}.txt`) } } } : { text: 'done' };
  };
}

/** The hook results that are errors (Claude Code shows these in red as "<event> hook error"). */
function hookErrors(hooks: HookAttachment[]): HookAttachment[] {
  return hooks.filter((h) => /error|cancelled/.test(h.type));
}

/** Text of Claude Code's errors about hooks, as stdout, stderr or the terminal would show them. */
const HOOK_ERROR = /hook error|hook \[.*\] failed|ECONNREFUSED|HTTP \d{3} from/i;

describe('Claude Code end to end (real CLI, fake model, ltm serve)', function () {
  this.timeout(240_000);
  let root: string;
  let project: string;
  let home: string;
  let fake: FakeAnthropic;
  let server: RunningServer;
  let baseline: ClaudeRun;

  const readState = () => JSON.parse(fs.readFileSync(path.join(project, '.claude/ltm/state.json'), 'utf8')) as StateFile;
  const claude = (prompt: string, args: string[] = [], env?: Record<string, string | undefined>) =>
    runClaude(prompt, {
      cwd: project,
      home,
      modelUrl: fake.url,
      args,
      env: env ?? { LTM_PORT: String(server.port), LTM_TOKEN: server.token },
    });
  const script = (s: ReplyScript) => fake.setScript(s);
  /** Store limits in state.json, as a person sets them. */
  const setConfig = (config: Partial<StateFile['config']>) => {
    const state = readState();
    Object.assign(state.config, config);
    fs.writeFileSync(path.join(project, '.claude/ltm/state.json'), JSON.stringify(state, null, 2));
  };
  /** Stores a memory with the CLI, as a person would; returns its ID. */
  const storeWithCli = (topic: string, content: string, tags: string): string => {
    const stored = ltm(['store', '--project', project, '--json', '--topic', topic, '--content', content, '--tags', tags]);
    assert.equal(stored.status, 0, stored.stderr);
    return (JSON.parse(stored.stdout) as { id: string }).id;
  };

  before(async () => {
    requireBuiltCli();
    claudeBinary();
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'ltm-e2e-'));
    project = path.join(root, 'project');
    home = path.join(root, 'home');
    fs.mkdirSync(project);
    fs.mkdirSync(home);
    const init = ltm(['init', '--project', project]);
    assert.equal(init.status, 0, init.stderr);
    fake = new FakeAnthropic(() => ({ text: 'ok' }));
    await fake.start();
    server = await startServe(project);
  });

  after(async () => {
    await server?.stop();
    await fake?.stop();
    if (root) fs.rmSync(root, { recursive: true, force: true });
  });

  it('session 1 stores a memory through mcp__ltm__store_memory', async () => {
    script((req) => {
      const toolResult = lastToolResult(req);
      if (toolResult) return { text: `Stored. ${toolResult.content}` };
      assert.ok(req.tools?.some((t) => t.name === 'mcp__ltm__store_memory'), 'the ltm MCP tools are offered to the model');
      return {
        toolUse: {
          name: 'mcp__ltm__store_memory',
          input: {
            topic: 'Hook curl must use 127.0.0.1',
            content: 'curl to localhost resolved to ::1 while the server bound IPv4 only.\n\nAlways use 127.0.0.1 in hook scripts.',
            tags: ['networking', 'hooks'],
            difficulty: 0.9,
          },
        },
      };
    });
    const run = await claude('remember the localhost lesson');
    assert.equal(run.status, 0, run.stderr);
    assert.equal(run.result?.is_error, false, run.stdout);
    // Claude Code hands the model the tool's structuredContent: the store_memory response shape.
    const toolResult = JSON.parse((run.result?.result ?? '').replace(/^Stored\. /, '')) as { success: boolean; id: string; topic: string };
    assert.equal(toolResult.success, true);
    assert.match(toolResult.id, /^mem_[0-9a-f]{8}$/);
    assert.equal(toolResult.topic, 'Hook curl must use 127.0.0.1');
    const listed = ltmJson<{ memories: { id: string; topic: string; tags: string[] }[] }>(['list', '--project', project]);
    assert.deepEqual(listed.memories.map((m) => [m.topic, m.tags]), [['Hook curl must use 127.0.0.1', ['networking', 'hooks']]]);
    // The server answers SessionEnd at once and closes the session's counters in its next quiet moment (≤ 250 ms).
    const closedBy = Date.now() + 5_000;
    while (Object.keys(readState().sessions).length > 0 && Date.now() < closedBy) await new Promise((r) => setTimeout(r, 50));
    const state = readState();
    assert.equal(state.session_count, 1, 'the first session is session 1');
    assert.deepEqual(state.sessions, {}, 'session_end closed the session counters');
    // The tool-call hooks went to the server as http hooks, and it answered them.
    const hooks = hookAttachments(home, run.result?.session_id ?? '');
    const viaHttp = (event: string) => hooks.filter((h) => h.hookEvent === event && h.type === 'hook_success' && h.command?.startsWith(`http://127.0.0.1:${server.port}/hook/`));
    assert.equal(viaHttp('PreToolUse').length, 1, JSON.stringify(hooks));
    assert.equal(viaHttp('PostToolUse').length, 1, JSON.stringify(hooks));
    assert.deepEqual(hookErrors(hooks), [], 'no hook error');
  });

  it('while the server runs, the tool-call hooks are http hooks to its port; the others stay command hooks', () => {
    const settings = JSON.parse(fs.readFileSync(path.join(project, '.claude/settings.local.json'), 'utf8')) as {
      hooks: Record<string, { hooks: { type: string; url?: string; command?: string; headers?: Record<string, string> }[] }[]>;
    };
    for (const [event, endpoint] of [['UserPromptSubmit', 'user_prompt_submit'], ['PreToolUse', 'pre_tool_use'], ['PostToolUse', 'post_tool_use'], ['PostToolUseFailure', 'post_tool_use']] as const) {
      const [hook] = settings.hooks[event]!.flatMap((g) => g.hooks);
      assert.equal(hook!.type, 'http', event);
      assert.equal(hook!.url, `http://127.0.0.1:${server.port}/hook/${endpoint}?project=${encodeURIComponent(project)}`);
      assert.deepEqual(hook!.headers, { Authorization: 'Bearer $LTM_TOKEN' });
    }
    for (const event of ['SessionStart', 'PreCompact', 'SessionEnd']) assert.equal(settings.hooks[event]![0]!.hooks[0]!.type, 'command', event);
    assert.ok(!JSON.stringify(settings).includes(server.token), 'the token is never written');
  });

  it("session 2's first model request carries that memory in its injected context", async () => {
    script(() => ({ text: 'hello back' }));
    const before = fake.requests.length;
    baseline = await claude('hello');
    assert.equal(baseline.status, 0, baseline.stderr);
    const first = fake.requests[before]!;
    assert.match(seen(first), /SessionStart hook additional context: ## Long-term memory \(LTM\)/);
    assert.match(seen(first), /Hook curl must use 127\.0\.0\.1/);
    assert.match(seen(first), /Always use 127\.0\.0\.1 in hook scripts\./, 'a full memory is injected with its content');
    assert.equal(readState().session_count, 2);
    const stats = ltmJson<{ memories: { access_count: number }[] }>(['get', ltmJson<{ memories: { id: string }[] }>(['list', '--project', project]).memories[0]!.id, '--project', project]);
    assert.ok((stats as unknown as { access_count: number }).access_count >= 2, 'injection counted as an access');
  });

  let failingSession = '';
  it('failing tool calls raise the difficulty of what the session stores', async () => {
    script((req) => {
      const toolResult = lastToolResult(req);
      const reads = req.messages.filter((m) => textOf(m.content).includes('does not exist')).length;
      if (!toolResult || (toolResult.is_error && reads < 2)) {
        return { toolUse: { name: 'Read', input: { file_path: path.join(project, `missing-${reads}.txt`) } } };
      }
      if (toolResult.is_error) {
        return {
          toolUse: {
            name: 'mcp__ltm__store_memory',
            input: { topic: 'Config lives in settings.yaml', content: 'After two failed reads: the config file is settings.yaml, not config.txt.' },
          },
        };
      }
      return { text: `Noted. ${toolResult.content}` };
    });
    const run = await claude('FAIL twice then remember');
    assert.equal(run.status, 0, run.stderr);
    failingSession = run.result?.session_id ?? '';
    assert.ok(failingSession, 'claude reported its session id');
    const stored = ltmJson<{ memories: { id: string; topic: string }[] }>(['list', '--keyword', 'settings.yaml', '--project', project]);
    assert.equal(stored.memories.length, 1);
    const memory = ltmJson<{ difficulty: number }>(['get', stored.memories[0]!.id, '--project', project]);
    // Two failures and no success before the store: 1.0·0.5 + (2/50)·0.3.
    assert.ok(Math.abs(memory.difficulty - 0.512) < 1e-9, `difficulty ${memory.difficulty} reflects the failures`);
    // Counted from PostToolUseFailure http hooks (and the store's session from a PreToolUse one).
    const failures = hookAttachments(home, failingSession).filter((h) => h.hookEvent === 'PostToolUseFailure');
    assert.equal(failures.length, 2);
    for (const h of failures) assert.deepEqual([h.type, h.command?.split('?')[0]], ['hook_success', `http://127.0.0.1:${server.port}/hook/post_tool_use`]);
  });

  it('/compact marks the session compacted and injects the memories again without counting a session', async () => {
    const before = readState();
    const requestsBefore = fake.requests.length;
    script(() => ({ text: 'compacted' }));
    const run = await claude('/compact keep the lessons', ['--resume', failingSession]);
    assert.equal(run.status, 0, run.stderr);
    const after = readState();
    assert.equal(after.compaction_count, before.compaction_count + 1, 'pre_compact counted');
    const compactRequests = fake.requests.slice(requestsBefore);
    assert.ok(compactRequests.some((r) => /detailed summary of the conversation/i.test(seen(r))), 'the CLI really compacted');
    // The resumed session had ended, so resuming it starts a new count (source "resume");
    // the SessionStart that follows the compaction (source "compact") must not count again.
    assert.equal(after.session_count, before.session_count + 1);
  });

  it('session_end evicts when the store is over its threshold', async () => {
    // The earlier sessions' end-of-session maintenance runs in the server's first pause of 150 ms
    // between hooks; let it finish before the limit is lowered, or it would evict under the new limit too.
    await new Promise((r) => setTimeout(r, 1_000));
    const state = readState();
    setConfig({ max_memories: 1, eviction_batch_size: 1 });
    const beforeList = ltmJson<{ memories: { id: string; phase: number; priority: number }[] }>(['list', '--project', project]);
    assert.equal(beforeList.memories.length, 2);
    const lowest = beforeList.memories[beforeList.memories.length - 1]!;
    script(() => ({ text: 'bye' }));
    const run = await claude('short session');
    assert.equal(run.status, 0, run.stderr);
    // The server answers SessionEnd at once and evicts right after: wait for it.
    const deadline = Date.now() + 10_000;
    while (readState().last_eviction === state.last_eviction && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const after = readState();
    assert.ok(after.last_eviction && after.last_eviction !== state.last_eviction, 'last_eviction recorded');
    const evicted = ltmJson<{ phase: number }>(['get', lowest.id, '--project', project]);
    assert.equal(evicted.phase, 1, 'the lowest-priority memory advanced to a hint');
    assert.ok(fs.existsSync(path.join(project, '.claude/ltm/archives', `${lowest.id}.md`)), 'its full text was archived');
  });

  it('a prompt about a low-priority memory gets it in the very next model request; an unrelated prompt gets nothing', async () => {
    // Only the top memory is injected at session start: the one the prompt is about must come from the prompt.
    setConfig({ max_memories: 100, memories_to_load: 1 });
    const id = storeWithCli(
      'Gradle build cache serves stale Kotlin classes',
      'After switching branches the Gradle build cache served stale Kotlin classes. Fix: ./gradlew --stop, then delete ~/.gradle/caches/build-cache-1.',
      'gradle,kotlin,importance:low',
    );

    script(() => ({ text: 'looking' }));
    let before = fake.requests.length;
    const asked = await claude('The gradle build keeps picking up stale kotlin classes after I switch branches, any idea?');
    assert.equal(asked.status, 0, asked.stderr);
    const first = seen(fake.requests[before]!);
    assert.match(first, /related to this prompt/);
    assert.match(first, /Gradle build cache serves stale Kotlin classes/);
    assert.match(first, new RegExp(`${id} · matched: [^_]*gradle`), 'says why it is offered');
    const injectedAtStart = first.slice(0, first.indexOf('related to this prompt'));
    assert.ok(!/SessionStart hook additional context:[^]*Gradle build cache/.test(injectedAtStart), 'it was not injected at session start');
    const hooks = hookAttachments(home, asked.result?.session_id ?? '');
    // Delivered by the UserPromptSubmit hook (an http hook while the server runs: see the settings test).
    assert.ok(hooks.some((h) => h.hookEvent === 'UserPromptSubmit' && h.type === 'hook_additional_context'), JSON.stringify(hooks));
    assert.deepEqual(hookErrors(hooks), []);

    before = fake.requests.length;
    const unrelated = await claude('Write a haiku about autumn leaves falling on a quiet pond');
    assert.equal(unrelated.status, 0, unrelated.stderr);
    assert.doesNotMatch(seen(fake.requests[before]!), /related to this prompt/);
  });

  it('a prompt that says it in other words still gets that low-priority memory, and says which words stood for which', async () => {
    // memories_to_load is 1 since the test above, so this memory can only come from the prompt.
    const id = storeWithCli(
      'API pods OOMKilled at the 512Mi memory limit',
      'Pods restarted with reason OOMKilled and exit code 137: Node sized its heap from the host, not the container limit. NODE_OPTIONS=--max-old-space-size=384 fixes it.',
      'kubernetes,node,importance:low',
    );

    script(() => ({ text: 'looking' }));
    const before = fake.requests.length;
    // Not one of the memory's own words but "keeps"/"check": the semantic layer (src/core/relatedTerms.ts) bridges them.
    const asked = await claude('My workload keeps getting terminated for hogging RAM, what should I check?');
    assert.equal(asked.status, 0, asked.stderr);
    const first = seen(fake.requests[before]!);
    assert.match(first, /related to this prompt/);
    assert.match(first, /API pods OOMKilled at the 512Mi memory limit/);
    assert.match(first, new RegExp(`${id} · matched: [^_]*ram ~ memory`), 'says which word of the memory the prompt\'s word stood for');
    const sessionId = asked.result?.session_id ?? '';
    assert.deepEqual(hookErrors(hookAttachments(home, sessionId)), []);

    // The same session, resumed, asks again: the memory is in its conversation already, so it is not offered twice.
    const again = fake.requests.length;
    // The same words as before, which would bring it again if the session had not been given it.
    const resumed = await claude('Again: my workload keeps getting terminated for hogging RAM, what should I check?', ['--resume', sessionId]);
    assert.equal(resumed.status, 0, resumed.stderr);
    const request = fake.requests[again]!;
    // What this turn added: the new prompt and whatever hooks attached to it (the resume's SessionStart too).
    const asking = request.messages.findIndex((m) => textOf(m).includes('Again: my workload'));
    assert.ok(asking >= 0, 'the resumed request carries the new prompt');
    const latest = textOf(request.messages.slice(asking));
    assert.doesNotMatch(latest, /API pods OOMKilled at the 512Mi memory limit/, 'not offered a second time');
    assert.match(seen(request), /API pods OOMKilled at the 512Mi memory limit/, 'it is still in the conversation from the first offer');
  });

  it('storing the same lesson in other words answers with the similar memory, so Claude can update it', async () => {
    const oom = ltmJson<{ memories: { id: string; topic: string }[] }>(['list', '--project', project, '--limit', '100']).memories.find((m) => m.topic === 'API pods OOMKilled at the 512Mi memory limit')!;
    script((req) => {
      const toolResult = lastToolResult(req);
      if (toolResult) return { text: `Stored. ${toolResult.content}` };
      return {
        toolUse: {
          name: 'mcp__ltm__store_memory',
          input: {
            topic: 'API pods OOMKilled: Node heap sized from the host, not the 512Mi container limit',
            content: 'Pods restarted with reason OOMKilled, exit code 137. Node sized its heap from the host memory instead of the container limit; NODE_OPTIONS=--max-old-space-size=384 fixes it.',
          },
        },
      };
    });
    const run = await claude('remember why the API pods were OOMKilled');
    assert.equal(run.status, 0, run.stderr);
    const answer = JSON.parse((run.result?.result ?? '').replace(/^Stored\. /, '')) as { id: string; similar: { id: string; score: number }[] };
    assert.deepEqual(answer.similar.map((s) => s.id), [oom.id], 'the earlier memory is named as a possible duplicate');
    // Leave the store as it was for the tests that follow: the duplicate is forgotten (archived).
    assert.equal(ltm(['forget', answer.id, '--project', project]).status, 0);
  });

  it('a failing tool call whose error matches a memory gets it in the next model request', async () => {
    // Named without the file's name: what brings it is the failure, not the file (see the next test).
    storeWithCli(
      'Legacy settings ini replaced by settings.yaml',
      'The old legacy settings in ini format are gone since the v2 config loader; read settings.yaml instead.',
      'config,importance:low',
    );
    script((req) => (lastToolResult(req) ? { text: 'noted' } : { toolUse: { name: 'Read', input: { file_path: path.join(project, 'legacy-settings.ini') } } }));
    const before = fake.requests.length;
    const run = await claude('show me the startup options');
    assert.equal(run.status, 0, run.stderr);
    const afterFailure = fake.requests.slice(before).find((r) => lastToolResult(r)?.is_error);
    assert.ok(afterFailure, 'the Read failed and its result went back to the model');
    assert.match(seen(afterFailure), /related to this failure/);
    assert.match(seen(afterFailure), /Legacy settings ini replaced by settings\.yaml/);
    assert.deepEqual(hookErrors(hookAttachments(home, run.result?.session_id ?? '')), []);
  });

  it('reading a file that a memory names brings that memory along with the file', async () => {
    // As in the prompt test: only the top memory is injected at start, so this low-priority one is not.
    assert.equal(readState().config.memories_to_load, 1);
    storeWithCli(
      'Rate limits live in throttle-rules.yaml',
      'throttle-rules.yaml is read once at start: restart the API after editing it.',
      'api,importance:low',
    );
    fs.writeFileSync(path.join(project, 'throttle-rules.yaml'), 'limit: 10\n');
    script((req) => (lastToolResult(req) ? { text: 'read it' } : { toolUse: { name: 'Read', input: { file_path: path.join(project, 'throttle-rules.yaml') } } }));
    const before = fake.requests.length;
    const run = await claude('what is in the rules file?');
    assert.equal(run.status, 0, run.stderr);
    const afterRead = fake.requests.slice(before).find((r) => lastToolResult(r));
    assert.ok(afterRead, 'the Read ran');
    assert.match(seen(afterRead), /related to this file/, JSON.stringify(hookAttachments(home, run.result?.session_id ?? '').filter((h) => h.hookEvent === 'PreToolUse')));
    assert.match(seen(afterRead), /Rate limits live in throttle-rules\.yaml/);
  });

  it('through the command hook too (a session that started before the server switched the hooks), reading a file brings its memory', async () => {
    // Only the top memory at session start: this low-priority one can only come with the file.
    setConfig({ memories_to_load: 1 });
    storeWithCli(
      'Retry policy lives in backoff-rules.toml',
      'backoff-rules.toml caps retries at 5 with jitter; the client reads it at every request.',
      'http,importance:low',
    );
    fs.writeFileSync(path.join(project, 'backoff-rules.toml'), 'retries = 5\n');
    const settingsFile = path.join(project, '.claude/settings.local.json');
    const withHttp = fs.readFileSync(settingsFile, 'utf8');
    setHookTransport(project, { kind: 'command', ...commandHostNow() });
    try {
      script((req) => (lastToolResult(req) ? { text: 'read it' } : { toolUse: { name: 'Read', input: { file_path: path.join(project, 'backoff-rules.toml') } } }));
      const before = fake.requests.length;
      const run = await claude('what is in the backoff file?');
      assert.equal(run.status, 0, run.stderr);
      const hooks = hookAttachments(home, run.result?.session_id ?? '');
      const afterRead = fake.requests.slice(before).find((r) => lastToolResult(r));
      assert.ok(afterRead, 'the Read ran');
      assert.match(seen(afterRead), /related to this file/, JSON.stringify(hooks.filter((h) => h.hookEvent === 'PreToolUse')));
      assert.match(seen(afterRead), /Retry policy lives in backoff-rules\.toml/);
      assert.ok(hooks.some((h) => h.hookEvent === 'PreToolUse' && h.command?.includes('ltm-hook.sh')), `the PreToolUse hook was the command hook: ${JSON.stringify(hooks)}`);
      assert.deepEqual(hookErrors(hooks), []);
    } finally {
      fs.writeFileSync(settingsFile, withHttp);
    }
  });

  it('without LTM_PORT/LTM_TOKEN (a plain terminal) while the server runs, tool calls stay silent', async () => {
    const files = path.join(root, 'files');
    fs.mkdirSync(files, { recursive: true });
    for (let i = 0; i < 5; i++) fs.writeFileSync(path.join(files, `file-${i}.txt`), `file ${i}`);
    script(readFiles(files, 5));
    const run = await claude('read the files', ['--add-dir', files], {});
    assert.equal(run.status, 0, run.stderr);
    assert.equal(run.stderr, '');
    assert.doesNotMatch(run.stdout, HOOK_ERROR);
    const hooks = hookAttachments(home, run.result?.session_id ?? '');
    assert.deepEqual(hookErrors(hooks), [], 'the server answers a hook without token with an empty 200');
    assert.equal(hooks.filter((h) => h.hookEvent === 'PostToolUse').length, 5);
  });

  it('with the server stopped, a session still succeeds at once and silently', async () => {
    const { port, token } = server;
    await server.stop();
    assert.ok(!fs.existsSync(path.join(project, '.claude/ltm/server.json')), 'server.json removed on SIGTERM');
    const settings = fs.readFileSync(path.join(project, '.claude/settings.local.json'), 'utf8');
    assert.ok(!settings.includes('"http"') && !settings.includes(`:${port}`), 'the stopping server put the command hooks back');
    // The hook script alone, as Claude Code runs it, with the terminal's stale environment.
    const hook = path.join(project, '.claude/ltm/hooks/ltm-hook.sh');
    for (const env of [{ LTM_PORT: String(port), LTM_TOKEN: token }, {}]) {
      const started = Date.now();
      const r = spawnSync('sh', [hook, 'session_start'], {
        input: '{"session_id":"x","source":"startup"}',
        env: { PATH: process.env.PATH, CLAUDE_PROJECT_DIR: project, ...env },
        encoding: 'utf8',
      });
      assert.equal(r.status, 0);
      assert.equal(r.stdout, '');
      assert.equal(r.stderr, '');
      assert.ok(Date.now() - started < 500, `hook took ${Date.now() - started} ms`);
    }
    script(() => ({ text: 'still here' }));
    const run = await claude('hello without memory', [], { LTM_PORT: String(port), LTM_TOKEN: token });
    assert.equal(run.status, 0);
    assert.equal(run.stderr, '', 'no error output');
    assert.equal(run.result?.result, 'still here');
    assert.ok(run.durationMs < baseline.durationMs + 3000, `run took ${run.durationMs} ms, with the server ${baseline.durationMs} ms`);
  });

  it('with no server and no LTM_PORT/LTM_TOKEN, ten tool calls succeed silently and cost no more than ten process spawns', async () => {
    const files = path.join(root, 'files');
    const count = 10;
    fs.mkdirSync(files, { recursive: true });
    for (let i = 0; i < count; i++) fs.writeFileSync(path.join(files, `file-${i}.txt`), `file ${i}`);
    script(readFiles(files, count));
    // The same turn with no hooks at all: what Claude Code itself takes.
    const settingsFile = path.join(project, '.claude/settings.local.json');
    const settings = fs.readFileSync(settingsFile, 'utf8');
    fs.writeFileSync(settingsFile, '{}\n');
    const bare = await claude('read the files', ['--add-dir', files], {});
    fs.writeFileSync(settingsFile, settings);
    assert.equal(bare.status, 0, bare.stderr);
    const run = await claude('read the files', ['--add-dir', files], {});
    assert.equal(run.status, 0, run.stderr);
    assert.equal(run.result?.result, 'done');
    assert.equal(run.stderr, '', 'nothing on stderr');
    assert.doesNotMatch(run.stdout, HOOK_ERROR);
    // (A command hook that prints nothing leaves no trace in the transcript; an error would.)
    assert.deepEqual(hookErrors(hookAttachments(home, run.result?.session_id ?? '')), [], 'no hook error in the transcript');
    // With no server the command hooks exit at once: ten spawns of sh cost well under a second
    // (about 25 ms each). A hook that waited for a timeout (curl's 1 s connect timeout, the 3 s
    // http hook timeout) would add 10 s or more; 2.5 s leaves room for the CLI's own jitter.
    assert.ok(run.durationMs < bare.durationMs + 2500, `with LTM's hooks ${run.durationMs} ms, without hooks ${bare.durationMs} ms`);
  });

  it('in a git repository, session start puts the memory about a changed file first, saying why; a subagent starts with the memories about its task', async () => {
    // The server was stopped above; a new one reads the project's git situation at each session start.
    server = await startServe(project);
    assert.equal(readState().config.memories_to_load, 1, 'one memory at session start: the situation must win it');
    const git = (...args: string[]) => {
      const r = spawnSync('git', ['-c', 'user.name=T', '-c', 'user.email=t@t.invalid', '-c', 'commit.gpgsign=false', ...args], { cwd: project, encoding: 'utf8' });
      assert.equal(r.status, 0, r.stderr);
    };
    const poolId = storeWithCli(
      'Connection pool size',
      'src/db/pool.ts caps the pool at 10 connections: Postgres allows 20 across two services.',
      'postgres,importance:low',
    );
    git('init', '-q', '-b', 'feature/pool-sizing');
    fs.mkdirSync(path.join(project, 'src/db'), { recursive: true });
    fs.writeFileSync(path.join(project, 'src/db/pool.ts'), 'export const size = 10;\n');
    git('add', 'src/db/pool.ts');
    git('commit', '-q', '-m', 'pool');
    fs.writeFileSync(path.join(project, 'src/db/pool.ts'), 'export const size = 30;\n');
    // (LTM's own untracked files, CLAUDE.md and .mcp.json, are changed files too.)

    const task = 'Find where the Gradle build cache serves stale Kotlin classes after switching branches.';
    script((req) => {
      const all = seen(req);
      // The subagent's own requests: its task is its first message.
      if (all.includes(task) && !req.tools?.some((t) => t.name === 'Agent')) return { text: 'subagent done' };
      if (lastToolResult(req)) return { text: 'all done' };
      return { toolUse: { name: 'Agent', input: { description: 'Gradle cache', prompt: task, subagent_type: 'general-purpose' } } };
    });
    const before = fake.requests.length;
    const run = await claude('look into the gradle cache with a subagent', ['--allowedTools', 'Agent']);
    assert.equal(run.status, 0, run.stderr);
    const requests = fake.requests.slice(before);
    const first = seen(requests[0]!);
    assert.match(first, /SessionStart hook additional context: ## Long-term memory \(LTM\)\nWhat earlier sessions of this project learned, ranked by priority and by relevance to the current work \(branch feature\/pool-sizing, \d+ changed files\)/);
    assert.match(first, new RegExp(`### Connection pool size\\n_memory · ${poolId} · [^\\n]*related to changed file src/db/pool\\.ts`));
    // The subagent's first request carries the Gradle memory (stored earlier, low priority), as SubagentStart context.
    const subagent = requests.find((r) => seen(r).includes(task) && !r.tools?.some((t) => t.name === 'Agent'));
    const hooks = hookAttachments(home, run.result?.session_id ?? '');
    assert.ok(subagent, `no subagent request; hooks: ${JSON.stringify(hooks.map((h) => [h.hookEvent, h.type]))}`);
    assert.match(seen(subagent), /related to this subagent's task/);
    assert.match(seen(subagent), /Gradle build cache serves stale Kotlin classes/);
    assert.deepEqual(hookErrors(hooks), []);
  });

  it('with review on, a memory Claude stores awaits review: session 2 is not given it, at start or with a prompt about it; after ltm approve it is', async () => {
    const on = ltm(['review', '--on', '--project', project]);
    assert.equal(on.status, 0, on.stderr);
    // Room for every memory at session start: what keeps this one out must be its review, not the limit.
    setConfig({ memories_to_load: 50 });
    const content = 'Feature flags are read from config/flags.yaml once at boot: hot reload is disabled in production, so restart the worker after editing flags.';
    script((req) => {
      const toolResult = lastToolResult(req);
      if (toolResult) return { text: `Stored. ${toolResult.content}` };
      return { toolUse: { name: 'mcp__ltm__store_memory', input: { topic: 'Feature flags need a worker restart', content, tags: ['flags'] } } };
    });
    const stored = await claude('remember the feature flag lesson');
    assert.equal(stored.status, 0, stored.stderr);
    const answer = JSON.parse((stored.result?.result ?? '').replace(/^Stored\. /, '')) as { id: string; status: string; message: string };
    assert.equal(answer.status, 'proposed');
    assert.match(answer.message, /awaits review by a person before it is used$/);
    const review = ltmJson<{ memories: { id: string }[] }>(['review', '--project', project]);
    assert.deepEqual(review.memories.map((m) => m.id), [answer.id]);

    const prompt = 'why do the feature flags in config/flags.yaml not change until the worker restarts?';
    script(() => ({ text: 'no idea' }));
    let before = fake.requests.length;
    const waiting = await claude(prompt);
    assert.equal(waiting.status, 0, waiting.stderr);
    const unseen = fake.requests.slice(before).map(seen).join('\n');
    assert.match(unseen, /SessionStart hook additional context: ## Long-term memory \(LTM\)/, 'session start injected the other memories');
    assert.doesNotMatch(unseen, /hot reload is disabled|Feature flags need a worker restart/, 'the memory awaiting review is given neither at start nor with the prompt');

    const approve = ltm(['approve', answer.id, '--project', project]);
    assert.equal(approve.status, 0, approve.stderr);
    before = fake.requests.length;
    const approved = await claude(prompt);
    assert.equal(approved.status, 0, approved.stderr);
    const first = seen(fake.requests[before]!);
    const context = /## Long-term memory \(LTM\)[\s\S]*/.exec(first)?.[0] ?? '(no LTM context)';
    assert.match(first, /### Feature flags need a worker restart\n_memory · mem_[0-9a-f]{8}/, `injected at session start once approved; it was given:\n${context}`);
    assert.match(first, /hot reload is disabled in production/);
    assert.deepEqual(hookErrors(hookAttachments(home, approved.result?.session_id ?? '')), []);
    assert.equal(ltm(['review', '--off', '--project', project]).status, 0);
  });
});
