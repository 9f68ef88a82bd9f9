/**
 * The commands the Claude Code plugin runs, as the real built CLI
 * (dist/cli.js) in child processes: `ltm mcp` with the real MCP SDK client
 * over stdio, and `ltm hook <event>` with and without a running server.
 */
import { strict as assert } from 'node:assert';
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { PassThrough } from 'node:stream';
import { INDEX_ASIDE_MIN_MEMORIES } from '../../src/core/searchIndexAside';
import { MemoryStore } from '../../src/core/store';
import { storePaths } from '../../src/core/storeFiles';
import CLI_FILES from '../../src/shared/cliFiles.json';
import { runHookCommand } from '../../src/servers/hookCommand';
import { serveStdioMcp } from '../../src/servers/stdioMcp';
import { pluginHooks, pluginMcpLaunch } from '../../src/servers/pluginFiles';
import { PLUGIN_TOOL_PREFIX, PROJECT_TOOL_PREFIX } from '../../src/shared/toolNames';
import { CLI, REPO_ROOT, TOOL_NAMES, closedPort, deadPid, postHook, readState, serverJsonPath, sessionStartPayload, startTestServer, type Json } from '../support/serverKit';
import { upsertsDuring } from '../support/searchIndexCalls';
import { ensureCliBuilt, ltmRoot, makeTempProject, removeDir, sleep, snapshotDiff, snapshotFiles, testId, writeMemory } from '../support/storeKit';

/** `ltm hook <event>` as Claude Code runs it: the payload on stdin, the project in CLAUDE_PROJECT_DIR. */
function runHook(event: string, payload: string, project: string, env: Record<string, string | undefined> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, 'hook', event], {
      cwd: project,
      env: { ...process.env, CLAUDE_PROJECT_DIR: project, LTM_PORT: undefined, LTM_TOKEN: undefined, ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(payload);
  });
}

function contextOf(stdout: string): string {
  return ((JSON.parse(stdout) as { hookSpecificOutput: { additionalContext: string } }).hookSpecificOutput).additionalContext;
}

/** `ltm mcp` as the plugin's .mcp.json launches it, from the repository's build. */
const MCP_ARGS = pluginMcpLaunch(REPO_ROOT).args;

async function stdioClient(project: string, env: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: 'ltm-plugin-test', version: '1' });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: MCP_ARGS, cwd: project, env: { ...(process.env as Record<string, string>), CLAUDE_PROJECT_DIR: project, ...env }, stderr: 'pipe' }));
  return client;
}

function structured(result: unknown): Json {
  return (result as { structuredContent: Json }).structuredContent;
}

describe('ltm mcp (stdio, as the plugin runs it)', function () {
  this.timeout(60_000);
  let project: string;
  beforeEach(() => (project = makeTempProject('ltm-mcp-stdio-')));
  afterEach(() => removeDir(project));

  it('offers the same tools as the HTTP server, and creates the store only with the first memory', async () => {
    const client = await stdioClient(project);
    try {
      const { tools } = await client.listTools();
      assert.deepEqual(tools.map((t) => t.name).sort(), TOOL_NAMES);
      assert.ok(!fs.existsSync(ltmRoot(project)), 'starting creates nothing in the project');
      const stored = structured(await client.callTool({ name: 'store_memory', arguments: { topic: 'Stdio works', content: 'The plugin serves MCP over stdio.' } }));
      assert.equal(stored.success, true);
      const recalled = structured(await client.callTool({ name: 'recall', arguments: { query: 'stdio plugin' } }));
      assert.equal((recalled.memories as { id: string }[])[0]?.id, stored.id);
    } finally {
      await client.close();
    }
    const store = MemoryStore.open(project);
    try {
      assert.deepEqual(store.list({}).memories.map((m) => m.topic), ['Stdio works']);
    } finally {
      store.dispose();
    }
  });

  it('the project comes from CLAUDE_PROJECT_DIR when Claude Code starts it in a subfolder', async () => {
    const sub = path.join(project, 'packages', 'a');
    fs.mkdirSync(sub, { recursive: true });
    const client = await stdioClient(sub, { CLAUDE_PROJECT_DIR: project });
    try {
      await client.callTool({ name: 'store_memory', arguments: { topic: 'Root store', content: 'Stored at the project root.' } });
    } finally {
      await client.close();
    }
    assert.ok(fs.existsSync(path.join(ltmRoot(project), 'memories')));
    assert.ok(!fs.existsSync(path.join(sub, '.claude')));
  });

  it('writes index.json in a pause after its stores, not with each, and what is pending when the session ends', async () => {
    const toServer = new PassThrough();
    const fromServer = new PassThrough();
    // No pause comes while the session runs: index.json is written when it ends.
    const serving = serveStdioMcp({ projectDir: project, version: 'test', input: toServer, output: fromServer, indexFlush: { pauseMs: 60_000, maxDeferMs: 60_000 } });
    const client = new Client({ name: 'ltm-plugin-test', version: '1' });
    // A stdio transport is lines of JSON either way: the server's kind serves the client too.
    await client.connect(new StdioServerTransport(fromServer, toServer));
    const ids: string[] = [];
    try {
      for (let i = 0; i < 3; i++) {
        const stored = structured(await client.callTool({ name: 'store_memory', arguments: { topic: `Deferred ${i}`, content: `Stored in a burst, number ${i}.` } }));
        ids.push(stored.id as string);
      }
      const indexFile = path.join(ltmRoot(project), 'index.json');
      const index = fs.existsSync(indexFile) ? fs.readFileSync(indexFile, 'utf8') : '';
      for (const id of ids) assert.ok(!index.includes(id), `index.json was rewritten for ${id}`);
      assert.ok(fs.existsSync(path.join(ltmRoot(project), 'index-pending.json')), 'index.json is marked as behind');
    } finally {
      await client.close();
      toServer.end();
      await serving;
    }
    const index = fs.readFileSync(path.join(ltmRoot(project), 'index.json'), 'utf8');
    for (const id of ids) assert.ok(index.includes(id), `${id} is not in index.json after the session`);
    assert.ok(!fs.existsSync(path.join(ltmRoot(project), 'index-pending.json')));
    const store = MemoryStore.open(project);
    try {
      assert.equal(store.check().healthy, true, JSON.stringify(store.check()));
    } finally {
      store.dispose();
    }
  });

  it('opens the store after the handshake, before any tool call, and leaves its caches for the next session', async () => {
    const seeded = MemoryStore.open(project);
    let firstId: string;
    try {
      firstId = (await seeded.store({ topic: 'Webpack cache key', content: 'The build cache is keyed on the lockfile hash.' })).memory.id;
      for (let i = 0; i < 20; i++) await seeded.store({ topic: `Lesson ${i}`, content: `Something learned about module ${i}.` });
    } finally {
      seeded.dispose();
    }
    // A store whose caches are gone (a fresh clone): only an opening writes them.
    const caches = [seeded.paths.parseCache, seeded.paths.searchIndex];
    for (const file of caches) fs.rmSync(file, { force: true });
    const client = await stdioClient(project);
    try {
      await client.listTools();
      for (let waited = 0; !caches.every((file) => fs.existsSync(file)); waited += 50) {
        assert.ok(waited < 20_000, `the session did not open the store on its own: ${caches.filter((f) => !fs.existsSync(f)).join(', ')} missing`);
        await sleep(50);
      }
      const recalled = structured(await client.callTool({ name: 'recall', arguments: { query: 'webpack cache' } }));
      assert.equal((recalled.memories as { id: string }[])[0]?.id, firstId);
    } finally {
      await client.close();
    }
  });

  it('carries out a store sent just before the session ends, also while the store still opens', async () => {
    const seeded = MemoryStore.open(project);
    try {
      for (let i = 0; i < 30; i++) await seeded.store({ topic: `Lesson ${i}`, content: `Something learned about module ${i}.` });
    } finally {
      seeded.dispose();
    }
    for (const waitFirst of [false, true]) {
      const toServer = new PassThrough();
      const fromServer = new PassThrough().resume();
      const serving = serveStdioMcp({ projectDir: project, version: 'test', input: toServer, output: fromServer });
      // As Claude Code's lines of JSON-RPC: the handshake, a tool call, and the end of the session right after it.
      const send = (message: object) => toServer.write(`${JSON.stringify(message)}\n`);
      send({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'test', version: '1' } } });
      send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      // The store opens after the handshake: sent at once, the call is held until it has opened; sent later, it runs at once.
      if (waitFirst) await sleep(500);
      const topic = `Stored as the session ended (${waitFirst ? 'after' : 'while'} the opening)`;
      send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'store_memory', arguments: { topic, content: 'Sent, then stdin closed.' } } });
      toServer.end();
      await serving;
      const store = MemoryStore.open(project);
      try {
        assert.ok(store.list({ limit: 100 }).memories.some((m) => m.topic === topic), `"${topic}" was not stored`);
        assert.ok(fs.readFileSync(path.join(ltmRoot(project), 'index.json'), 'utf8').includes(topic), 'index.json does not list it');
        assert.equal(store.check().healthy, true, JSON.stringify(store.check()));
      } finally {
        store.dispose();
      }
    }
  });

  it('stopped by SIGTERM or SIGINT instead of the end of its input, it still writes index.json before it exits', async () => {
    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      const transport = new StdioClientTransport({ command: process.execPath, args: MCP_ARGS, cwd: project, env: { ...(process.env as Record<string, string>), CLAUDE_PROJECT_DIR: project }, stderr: 'pipe' });
      const client = new Client({ name: 'ltm-plugin-test', version: '1' });
      await client.connect(transport);
      const topic = `Stored before ${signal}`;
      const stored = structured(await client.callTool({ name: 'store_memory', arguments: { topic, content: 'The session was stopped by a signal.' } }));
      assert.equal(stored.success, true);
      // index.json waits for a pause after the store (see indexFlush.ts): the signal comes before it.
      const pid = transport.pid!;
      const exited = new Promise<number | null>((resolve) => {
        const poll = setInterval(() => {
          try {
            process.kill(pid, 0);
          } catch {
            clearInterval(poll);
            resolve(null);
          }
        }, 20);
      });
      process.kill(pid, signal);
      await exited;
      await client.close();
      const index = fs.readFileSync(path.join(ltmRoot(project), 'index.json'), 'utf8');
      assert.ok(index.includes(stored.id as string), `index.json does not list the memory stored before ${signal}`);
      assert.ok(!fs.existsSync(path.join(ltmRoot(project), 'index-pending.json')), 'index.json is still marked as behind');
    }
  });

  it('in a store without a saved search index (a fresh clone), the index is built on a worker; a recall meanwhile waits for it', async () => {
    ensureCliBuilt();
    const writer = MemoryStore.open(project);
    writer.init();
    writer.dispose();
    for (let n = 1; n <= INDEX_ASIDE_MIN_MEMORIES + 100; n++) {
      writeMemory(ltmRoot(project), testId(n), { topic: n === 700 ? 'Rotate the zeppelin credentials' : `Build step ${n}`, content: `Run the build step number ${n}.` });
    }
    assert.ok(!fs.existsSync(storePaths(project).searchIndex));
    const toServer = new PassThrough();
    const fromServer = new PassThrough();
    let recalled: Json = {};
    const indexedHere = await upsertsDuring(async () => {
      const serving = serveStdioMcp({ projectDir: project, version: 'test', input: toServer, output: fromServer, searchIndexWorker: path.join(REPO_ROOT, CLI_FILES.indexWorker) });
      const client = new Client({ name: 'ltm-plugin-test', version: '1' });
      await client.connect(new StdioServerTransport(fromServer, toServer));
      try {
        // Sent at once: held while the store opens and the worker indexes.
        recalled = structured(await client.callTool({ name: 'recall', arguments: { query: 'zeppelin credentials' } }));
      } finally {
        await client.close();
        toServer.end();
        await serving;
      }
    });
    assert.equal(indexedHere, 0, `${indexedHere} memories were indexed on the session's thread`);
    assert.equal((recalled.memories as { id: string }[])[0]?.id, testId(700));
    assert.ok(fs.existsSync(storePaths(project).searchIndex), 'the index built was saved for the next session');
  });

  it('a session that stores nothing creates nothing, though it opens the store', async () => {
    const client = await stdioClient(project);
    try {
      await client.listTools();
      const listed = structured(await client.callTool({ name: 'list_memories', arguments: {} }));
      assert.deepEqual(listed.memories, []);
    } finally {
      await client.close();
    }
    assert.ok(!fs.existsSync(path.join(project, '.claude')));
  });

  it('many sessions at once are many processes on one store: every write lands, the store stays healthy', async () => {
    const clients = await Promise.all([0, 1, 2].map(() => stdioClient(project)));
    try {
      const results = await Promise.all(
        clients.flatMap((client, c) =>
          [0, 1, 2, 3, 4].map((i) => client.callTool({ name: 'store_memory', arguments: { topic: `Session ${c} lesson ${i}`, content: `Lesson ${i} learned by session ${c} about topic ${c * 10 + i}.` } })),
        ),
      );
      assert.ok(results.every((r) => structured(r).success === true), JSON.stringify(results.find((r) => structured(r).success !== true)));
      // Each process sees what the others wrote.
      const listed = structured(await clients[0]!.callTool({ name: 'list_memories', arguments: { limit: 50 } }));
      assert.equal((listed.memories as unknown[]).length, 15);
    } finally {
      await Promise.all(clients.map((c) => c.close()));
    }
    const store = MemoryStore.open(project);
    try {
      assert.equal(store.list({ limit: 50 }).memories.length, 15);
      assert.equal(store.check().healthy, true, JSON.stringify(store.check()));
    } finally {
      store.dispose();
    }
  });
});

describe('ltm hook <event> (as the plugin runs it)', function () {
  this.timeout(60_000);
  let project: string;
  beforeEach(() => (project = makeTempProject('ltm-hook-cmd-')));
  afterEach(() => removeDir(project));

  const seed = async (topic: string) => {
    const store = MemoryStore.open(project);
    try {
      await store.store({ topic, content: `${topic}: the details.`, tags: [] });
    } finally {
      store.dispose();
    }
  };

  it("in a project set up with `ltm init`, the plugin's hooks leave the events to the project's own: nothing twice", async () => {
    await seed('Injected once');
    const init = spawnSync(process.execPath, [CLI, 'init', '--project', project], { encoding: 'utf8' });
    assert.equal(init.status, 0, init.stderr);
    for (const event of ['session_start', 'pre_compact', 'session_end']) {
      const result = await runHookCommand({ event: event as 'session_start', payload: JSON.stringify(sessionStartPayload('plug-init')), projectDir: project, env: {} });
      assert.deepEqual(result, { stdout: '', answeredBy: 'project hooks' }, event);
    }
    const start = await runHook('session_start', JSON.stringify(sessionStartPayload('plug-init')), project);
    assert.equal(start.code, 0);
    assert.equal(start.stdout, '');
    const stateFile = path.join(ltmRoot(project), 'state.json');
    assert.ok(!fs.existsSync(stateFile) || readState(project).session_count === 0, 'the plugin counted no session');
    // Without the project's hooks (uninit), the plugin answers again.
    assert.equal(spawnSync(process.execPath, [CLI, 'uninit', '--project', project], { encoding: 'utf8' }).status, 0);
    assert.match(contextOf((await runHook('session_start', JSON.stringify(sessionStartPayload('plug-init')), project)).stdout), /Injected once/);
  });

  it('without a server, SessionStart injects the memories, counts the session and SessionEnd closes it', async () => {
    await seed('Injected without a server');
    const start = await runHook('session_start', JSON.stringify(sessionStartPayload('plug-1')), project);
    assert.equal(start.code, 0);
    assert.equal(start.stderr, '');
    const context = contextOf(start.stdout);
    assert.match(context, /Injected without a server/);
    assert.ok(context.includes(`${PLUGIN_TOOL_PREFIX}store_memory`), 'the plugin names its own tools');
    assert.equal(readState(project).session_count, 1);
    assert.ok(readState(project).sessions['plug-1'], 'the session is open');
    const end = await runHook('session_end', JSON.stringify({ session_id: 'plug-1', hook_event_name: 'SessionEnd', reason: 'other' }), project);
    assert.deepEqual([end.code, end.stdout, end.stderr], [0, '', '']);
    assert.deepEqual(readState(project).sessions, {});
  });

  it('in a project without memories, SessionStart says how to store one and creates nothing', async () => {
    const run = await runHook('session_start', JSON.stringify(sessionStartPayload('plug-2')), project);
    assert.equal(run.code, 0);
    assert.match(contextOf(run.stdout), /No memories yet/);
    assert.ok(!fs.existsSync(ltmRoot(project)));
  });

  it('the per-tool-call events are not answered without a server: nothing printed, nothing written', async () => {
    await seed('Tool call memory');
    const before = snapshotFiles(ltmRoot(project));
    for (const event of ['user_prompt_submit', 'pre_tool_use', 'post_tool_use', 'subagent_start']) {
      const run = await runHook(event, JSON.stringify({ session_id: 'plug-3', prompt: 'Tool call memory details please', tool_name: 'Read' }), project);
      assert.deepEqual([run.code, run.stdout, run.stderr], [0, '', ''], event);
    }
    assert.deepEqual(snapshotDiff(before, snapshotFiles(ltmRoot(project))), []);
  });

  it('never fails Claude Code: bad JSON, an unknown event, a stale server.json', async () => {
    await seed('Still injected');
    for (const [event, payload] of [['session_start', '{not json'], ['no_such_event', '{}'], ['session_start', '']] as const) {
      const run = await runHook(event, payload, project);
      assert.equal(run.code, 0, `${event} ${payload}`);
      assert.equal(run.stderr, '');
    }
    // server.json of a server that died: answered here, at once.
    fs.writeFileSync(serverJsonPath(project), JSON.stringify({ port: await closedPort(), token: 'x'.repeat(43), pid: deadPid(), version: 'old', started_at: new Date().toISOString(), url: 'http://127.0.0.1:1', project }));
    const run = await runHook('session_start', JSON.stringify(sessionStartPayload('plug-4')), project);
    assert.match(contextOf(run.stdout), /Still injected/);
    // LTM_PORT/LTM_TOKEN of a server that is gone: answered here too.
    const viaEnv = await runHook('session_start', JSON.stringify(sessionStartPayload('plug-5')), project, { LTM_PORT: String(await closedPort()), LTM_TOKEN: 'y'.repeat(43) });
    assert.match(contextOf(viaEnv.stdout), /Still injected/);
  });

  it('when the project has a server (VS Code, ltm serve), the hook goes to it: one set of counters, one store', async () => {
    const t = await startTestServer({ prepare: (store) => void store.store({ topic: 'Server memory', content: 'Answered by the running server.', tags: [] }) });
    try {
      await t.store.settled();
      const payload = JSON.stringify(sessionStartPayload('plug-6'));
      const answered = await runHookCommand({ event: 'session_start', payload, projectDir: t.project, env: {}, toolPrefix: PLUGIN_TOOL_PREFIX });
      assert.equal(answered.answeredBy, 'server');
      assert.match(contextOf(answered.stdout), /Server memory/);
      // The server names the tools as the plugin's session has them (the hook said how).
      assert.ok(contextOf(answered.stdout).includes(`${PLUGIN_TOOL_PREFIX}store_memory`), contextOf(answered.stdout));
      assert.ok(!contextOf(answered.stdout).includes(PROJECT_TOOL_PREFIX));
      // The CLI, found through server.json as the plugin finds it.
      const run = await runHook('session_start', JSON.stringify(sessionStartPayload('plug-7')), t.project);
      assert.match(contextOf(run.stdout), /Server memory/);
      assert.ok(contextOf(run.stdout).includes(`${PLUGIN_TOOL_PREFIX}store_memory`));
      // A prefix that is not one of LTM's is ignored: the server's own names.
      const odd = await postHook(t.port, t.token, 'session_start', sessionStartPayload('plug-odd'), { 'X-LTM-Tool-Prefix': 'mcp__evil__' });
      const oddText = ((odd.json().hookSpecificOutput as Json).additionalContext as string) ?? '';
      assert.ok(oddText.includes(`${PROJECT_TOOL_PREFIX}store_memory`) && !oddText.includes('mcp__evil__'), oddText);
      await t.idle();
      assert.equal(readState(t.project).session_count, 3);
      const offered = await runHookCommand({ event: 'user_prompt_submit', payload: JSON.stringify({ session_id: 'plug-8', prompt: 'why is the running server answering this memory' }), projectDir: t.project, env: {} });
      assert.equal(offered.answeredBy, 'server');
    } finally {
      await t.stop();
    }
  });

  it('a project whose path is not ASCII reaches its server too (the path is sent as UTF-8, as the hook script sends it)', async () => {
    const parent = makeTempProject('ltm-hook-utf8-');
    const accented = path.join(parent, 'café 日本 projet');
    fs.mkdirSync(accented);
    const t = await startTestServer({ project: accented });
    try {
      const answered = await runHookCommand({ event: 'session_start', payload: JSON.stringify(sessionStartPayload('plug-9')), projectDir: accented, env: {} });
      assert.equal(answered.answeredBy, 'server');
    } finally {
      await t.stop();
      removeDir(parent);
    }
  });

  it("the plugin's per-tool-call hook command runs the script under bash where there is one, else under sh, and brings the file's memory", async () => {
    const t = await startTestServer({
      prepare: async (store) => {
        await store.store({ topic: 'Retry rules live in backoff-rules.toml', content: 'backoff-rules.toml caps retries at 5.', tags: [] });
      },
    });
    // PATHs with every command of the machine but some: without curl, only bash (over /dev/tcp) can reach the
    // server, so the command must choose bash; without bash, it must fall back to sh (and curl).
    const without = (names: readonly string[]) => {
      const dir = makeTempProject('ltm-path-');
      for (const from of ['/usr/local/bin', '/usr/bin', '/bin']) {
        for (const name of fs.existsSync(from) ? fs.readdirSync(from) : []) {
          if (names.includes(name) || fs.existsSync(path.join(dir, name))) continue;
          fs.symlinkSync(path.join(from, name), path.join(dir, name));
        }
      }
      return dir;
    };
    const noCurl = without(['curl']);
    const noBash = without(['bash', 'rbash']);
    try {
      const group = (pluginHooks().hooks.PreToolUse as { hooks: { command: string }[] }[])[0]!;
      const command = group.hooks[0]!.command;
      for (const [name, searchPath] of [['bash without curl', noCurl], ['sh with curl, no bash', noBash]] as const) {
        const payload = { session_id: `plug-shell-${name.replace(/\W+/g, '-')}`, hook_event_name: 'PreToolUse', tool_name: 'Read', tool_input: { file_path: path.join(t.project, 'backoff-rules.toml') }, tool_use_id: `toolu_${name.replace(/\W+/g, '_')}` };
        // Spawned without blocking: the server answering it runs in this process.
        const run = await new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve, reject) => {
          const child = spawn('/bin/sh', ['-c', command], { env: { PATH: searchPath, CLAUDE_PLUGIN_ROOT: REPO_ROOT, CLAUDE_PROJECT_DIR: t.project, LTM_PORT: String(t.port), LTM_TOKEN: t.token } });
          let stdout = '';
          let stderr = '';
          child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
          child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
          child.on('error', reject);
          child.on('close', (status) => resolve({ status, stdout, stderr }));
          child.stdin.end(JSON.stringify(payload));
        });
        assert.equal(run.status, 0, `${name}: ${run.stderr}`);
        assert.match(run.stdout, /Retry rules live in backoff-rules\.toml/, `${name}: the file's memory is offered`);
      }
    } finally {
      await t.stop();
      removeDir(noCurl);
      removeDir(noBash);
    }
  });
});
