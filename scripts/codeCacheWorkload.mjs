// The work the CLI bundle's code caches are made after (esbuild.mjs, writeCliCodeCache).
//
// V8 saves the code of the functions compiled by the time a cache is made; any other function is
// compiled at its first call, in every process. Made after the module initialisation alone, the
// cache left a server's first answers to compile the store's opening, the MCP SDK's server and the
// tools as they ran: ~25 ms of `ltm serve` start → first recall at 10,000 memories. So the cache is
// made in a process that has served what a Claude Code session sends first: `ltm serve` run through
// the bundle's own main(), on a small project an earlier server filled (so that it opens from its
// caches, as a project does), over real HTTP on 127.0.0.1; for the cache of the Claude Code plugin's
// `ltm mcp`, that command's session over its stdin and stdout instead.
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { PassThrough } from 'node:stream';

const LESSONS = [
  ['Postgres migration times out on staging', 'The migration holds a lock while the deploy retries; run it before the rollout.', ['postgres', 'deploy']],
  ['React component renders twice', 'StrictMode mounts effects twice in development; make the effect idempotent.', ['react']],
  ['Docker build cache permission error in CI', 'The cache directory belongs to root; build with --user or chown it first.', ['docker', 'ci']],
  ['Flaky auth test on CI', 'The token clock skew check used local time; freeze the clock in the test.', ['testing', 'auth']],
];

/** The project's server.json once a server of `pid` wrote it. */
async function serverInfo(projectDir, pid) {
  const file = path.join(projectDir, '.claude', 'ltm', 'server.json');
  for (let waited = 0; waited < 30_000; waited += 20) {
    try {
      const info = JSON.parse(fs.readFileSync(file, 'utf8'));
      if (pid === undefined || info.pid === pid) return info;
    } catch {
      // Not written yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`no server wrote ${file} within 30 s`);
}

/** A client of one server: its hooks, and one MCP session. */
function clientOf(info, projectDir) {
  const base = `http://127.0.0.1:${info.port}`;
  const headers = { Authorization: `Bearer ${info.token}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
  let session = null;
  let id = 0;
  const post = async (route, body, extra = {}) => {
    const res = await fetch(base + route, { method: 'POST', headers: { ...headers, ...extra }, body: JSON.stringify(body) });
    const text = await res.text();
    if (!res.ok) throw new Error(`POST ${route} answered ${res.status}: ${text.slice(0, 200)}`);
    return { res, text };
  };
  const mcpHeaders = () => (session ? { 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' } : {});
  return {
    hook: (event, payload) => post(`/hook/${event}`, { session_id: 'code-cache', cwd: projectDir, ...payload }),
    async connect() {
      const { res } = await post('/mcp', { jsonrpc: '2.0', id: ++id, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'code-cache', version: '1' } } });
      session = res.headers.get('mcp-session-id');
      await post('/mcp', { jsonrpc: '2.0', method: 'notifications/initialized' }, mcpHeaders());
    },
    call: (name, args) => post('/mcp', { jsonrpc: '2.0', id: ++id, method: 'tools/call', params: { name, arguments: args } }, mcpHeaders()),
    list: () => post('/mcp', { jsonrpc: '2.0', id: ++id, method: 'tools/list', params: {} }, mcpHeaders()),
  };
}

/** What a session sends first: its start, a prompt, the tools listed, a recall, a store, a tool call's hooks. */
async function session(client) {
  await client.hook('session_start', { hook_event_name: 'SessionStart', source: 'startup' });
  await client.hook('user_prompt_submit', { hook_event_name: 'UserPromptSubmit', prompt: 'The postgres migration keeps timing out on the staging deploy' });
  await client.connect();
  await client.list();
  await client.call('recall', { query: 'postgres migration timeout' });
  await client.call('store_memory', { topic: 'Idle sockets close after 5 s', content: 'Keep-alive sockets of the hook server close after 5 s idle.', tags: ['networking'] });
  await client.hook('pre_tool_use', { hook_event_name: 'PreToolUse', tool_name: 'Read', tool_input: { file_path: 'src/db.ts' }, tool_use_id: 'toolu_1' });
  await client.hook('post_tool_use', { hook_event_name: 'PostToolUse', tool_name: 'Bash', tool_input: { command: 'npm test' }, tool_response: { stdout: '', stderr: 'Error: connect ECONNREFUSED', exit_code: 1 }, tool_use_id: 'toolu_2' });
  await client.hook('session_end', { hook_event_name: 'SessionEnd', reason: 'other' });
}

/** Fills `projectDir` through a server of its own (`node <launcher> serve`): memories, and the caches a stopped server leaves. */
export async function prepareProject(launcher, projectDir) {
  const child = spawn(process.execPath, [launcher, 'serve', '--project', projectDir], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (s) => (stderr += s));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  try {
    const client = clientOf(await serverInfo(projectDir, child.pid), projectDir);
    await client.connect();
    for (const [topic, content, tags] of LESSONS) await client.call('store_memory', { topic, content, tags });
  } catch (error) {
    throw new Error(`${error.message}\n${stderr}`);
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
}

/**
 * Runs `ltm serve` on `projectDir` in this process (`main`: the bundle's), sends it a session, and
 * resolves once the answers came; the server keeps running (the caller makes the cache, then exits).
 */
export async function serveSession(main, projectDir) {
  process.argv = [process.argv[0], 'ltm', 'serve', '--project', projectDir];
  void main();
  await session(clientOf(await serverInfo(projectDir, process.pid), projectDir));
}

/**
 * Runs `ltm mcp` on `projectDir` in this process (`main`: the bundle's), as the Claude Code plugin
 * starts it, with its stdin and stdout replaced by this function's: the MCP handshake, the tools
 * listed, a recall and a store. Resolves once they were answered; the command keeps running.
 */
export async function mcpSession(main, projectDir) {
  const input = new PassThrough();
  Object.defineProperty(process, 'stdin', { value: input, configurable: true });
  const waiting = new Map();
  let output = '';
  process.stdout.write = (chunk) => {
    output += String(chunk);
    for (let end = output.indexOf('\n'); end >= 0; end = output.indexOf('\n')) {
      const line = output.slice(0, end);
      output = output.slice(end + 1);
      try {
        const message = JSON.parse(line);
        waiting.get(message.id)?.(message);
      } catch {
        // Not a message of ours.
      }
    }
    return true;
  };
  process.argv = [process.argv[0], 'ltm', 'mcp', '--project', projectDir];
  void main();
  let id = 0;
  const send = (message) => input.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`);
  const request = (method, params) =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`ltm mcp did not answer ${method} within 30 s`)), 30_000);
      waiting.set(++id, (message) => {
        clearTimeout(timer);
        if (message.error) reject(new Error(`ltm mcp answered ${method} with ${JSON.stringify(message.error)}`));
        else resolve(message);
      });
      send({ id, method, params });
    });
  await request('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'code-cache', version: '1' } });
  send({ method: 'notifications/initialized' });
  await request('tools/list', {});
  await request('tools/call', { name: 'recall', arguments: { query: 'postgres migration timeout' } });
  await request('tools/call', { name: 'store_memory', arguments: { topic: 'Idle sockets close after 5 s', content: 'Keep-alive sockets of the hook server close after 5 s idle.', tags: ['networking'] } });
}
