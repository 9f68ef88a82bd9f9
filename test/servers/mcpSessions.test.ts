/**
 * MCP sessions (src/servers/mcpSessions.ts) through the real MCP SDK client
 * over real HTTP: one McpServer per session, reused for every call; the
 * bound on live sessions and their idle expiry; sessions resumed after they
 * were dropped or the server restarted (Claude Code does not re-initialize
 * after a 404); clients without a session; closing on stop.
 */
import { strict as assert } from 'node:assert';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { makeTempProject, removeDir } from '../support/storeKit';
import {
  mcpClient,
  rawRequest,
  spawnLtm,
  startTestServer,
  stopProcess,
  waitForServerJson,
  type HttpAnswer,
  type Json,
  type TestServer,
} from '../support/serverKit';

function sessionIdOf(client: Client): string | undefined {
  return (client.transport as StreamableHTTPClientTransport | undefined)?.sessionId;
}

/** The number of memories recall finds for `query`, through `client`. */
async function recallTotal(client: Client, query = 'anything'): Promise<number> {
  const result = await client.callTool({ name: 'recall', arguments: { query } });
  assert.notEqual(result.isError, true, JSON.stringify(result));
  return (result.structuredContent as { total: number }).total;
}

/** A raw JSON-RPC POST to /mcp with the headers the SDK client sends, plus `headers`. */
function postMcp(t: TestServer, message: Json, headers: Record<string, string> = {}): Promise<HttpAnswer> {
  const body = JSON.stringify(message);
  return rawRequest(t.port, {
    method: 'POST',
    path: '/mcp',
    headers: { ...t.auth, Accept: 'application/json, text/event-stream', 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body), ...headers },
    body,
  });
}

const toolsCall = (id: number, query: string): Json => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'recall', arguments: { query } } });

describe('MCP sessions (MCP SDK client)', function () {
  this.timeout(20_000);
  let t: TestServer;
  const clients: Client[] = [];
  /** Temp projects of tests that restart a server or run `ltm serve`, removed after the server stops. */
  const projects: string[] = [];

  async function connect(name = 'session-test'): Promise<Client> {
    const client = await mcpClient(t.port, t.token, name);
    clients.push(client);
    return client;
  }

  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
    await t?.stop();
    t = undefined as unknown as TestServer;
    for (const project of projects.splice(0)) removeDir(project);
  });

  it('serves every call of one client with one server: one session, its ID on every answer, no answer held after it is sent', async () => {
    t = await startTestServer();
    const client = await connect();
    const sessionId = sessionIdOf(client);
    assert.match(sessionId ?? '', /^[0-9a-f-]{36}$/, 'the initialize answer carries an Mcp-Session-Id');
    await client.listTools();
    for (let i = 0; i < 25; i += 1) assert.equal(await recallTotal(client, `query ${i}`), 0);
    await Promise.all(Array.from({ length: 10 }, (_, i) => recallTotal(client, `concurrent ${i}`)));
    assert.deepEqual(t.server.mcpStats, { live: 1, serversBuilt: 1, resumed: 0, held: 0 });
    assert.equal(sessionIdOf(client), sessionId);
  });

  it('loads MCP at the first MCP request: two clients connecting at once to a fresh server are each served by a session of their own', async () => {
    t = await startTestServer();
    assert.deepEqual(t.server.mcpStats, { live: 0, serversBuilt: 0, resumed: 0, held: 0 }, 'nothing before the first MCP request');
    const [first, second] = await Promise.all([connect('first'), connect('second')]);
    assert.notEqual(sessionIdOf(first), sessionIdOf(second));
    assert.deepEqual(await Promise.all([recallTotal(first), recallTotal(second)]), [0, 0]);
    assert.deepEqual(t.server.mcpStats, { live: 2, serversBuilt: 2, resumed: 0, held: 0 });
  });

  it('gives each client its own session', async () => {
    t = await startTestServer();
    const a = await connect('a');
    const b = await connect('b');
    assert.notEqual(sessionIdOf(a), sessionIdOf(b));
    await recallTotal(a);
    await recallTotal(b);
    assert.deepEqual(t.server.mcpStats, { live: 2, serversBuilt: 2, resumed: 0, held: 0 });
  });

  it('holds at most maxSessions: the least recently used is dropped, and resumed when its client comes back', async () => {
    t = await startTestServer({ mcpSessions: { maxSessions: 2 } });
    const a = await connect('a');
    const b = await connect('b');
    await recallTotal(a); // a is now more recently used than b
    const c = await connect('c');
    assert.equal(t.server.mcpStats.live, 2, 'the bound holds');
    // b was dropped, not a: a's call is served by its live session.
    await recallTotal(a);
    await recallTotal(c);
    assert.deepEqual(t.server.mcpStats, { live: 2, serversBuilt: 3, resumed: 0, held: 0 });
    // b's next call resumes its session under the same ID (dropping the least recently used, a).
    const bSession = sessionIdOf(b);
    assert.equal(await recallTotal(b), 0);
    assert.equal(sessionIdOf(b), bSession);
    assert.deepEqual(t.server.mcpStats, { live: 2, serversBuilt: 4, resumed: 1, held: 0 });
    // New sessions still open, and the bound still holds.
    const d = await connect('d');
    assert.equal(await recallTotal(d), 0);
    assert.equal(t.server.mcpStats.live, 2);
  });

  it('closes sessions idle for longer than idleMs; their clients are served again, by resumed sessions', async () => {
    t = await startTestServer({ mcpSessions: { idleMs: 100 } });
    const client = await connect();
    await recallTotal(client);
    assert.equal(t.server.mcpStats.live, 1);
    await new Promise((r) => setTimeout(r, 400));
    assert.equal(t.server.mcpStats.live, 0, 'the idle session was closed');
    assert.equal(await recallTotal(client), 0);
    assert.deepEqual(t.server.mcpStats, { live: 1, serversBuilt: 2, resumed: 1, held: 0 });
  });

  it("keeps serving a client across a server restart (the new server resumes the old server's session ID)", async () => {
    const project = makeTempProject('ltm-mcp-restart-');
    projects.push(project);
    t = await startTestServer({ project });
    const client = await connect();
    const stored = await client.callTool({ name: 'store_memory', arguments: { topic: 'Restart', content: 'Survives a server restart.' } });
    assert.notEqual(stored.isError, true);
    const port = t.port;
    await t.stop();
    // Lets the client's HTTP pool see that the stopped server closed its keep-alive connection.
    await new Promise((r) => setTimeout(r, 100));
    t = await startTestServer({ project });
    assert.equal(t.port, port, 'the restarted server has the same port');
    assert.equal(await recallTotal(client, 'restart'), 1);
    assert.deepEqual(t.server.mcpStats, { live: 1, serversBuilt: 1, resumed: 1, held: 0 });
  });

  it('ends a session on DELETE (the SDK client terminateSession)', async () => {
    t = await startTestServer();
    const client = await connect();
    await recallTotal(client);
    const transport = client.transport as StreamableHTTPClientTransport;
    await transport.terminateSession();
    assert.equal(t.server.mcpStats.live, 0);
    assert.equal(transport.sessionId, undefined, 'the server accepted the DELETE');
  });

  it('serves a client that sends no session ID statelessly, and keeps no session for it', async () => {
    t = await startTestServer();
    const answer = await postMcp(t, toolsCall(7, 'stateless'));
    assert.equal(answer.status, 200, answer.text);
    assert.equal(answer.headers['mcp-session-id'], undefined);
    const reply = answer.json();
    assert.equal(reply.id, 7);
    assert.equal(((reply.result as Json).structuredContent as Json).total, 0);
    assert.deepEqual(t.server.mcpStats, { live: 0, serversBuilt: 1, resumed: 0, held: 0 });
  });

  it('answers a raw initialize with a session ID, and a call with that ID from the same session', async () => {
    t = await startTestServer();
    const init = await postMcp(t, { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
    assert.equal(init.status, 200, init.text);
    const sessionId = init.headers['mcp-session-id'];
    assert.equal(typeof sessionId, 'string');
    const call = await postMcp(t, toolsCall(2, 'raw'), { 'Mcp-Session-Id': sessionId as string, 'Mcp-Protocol-Version': '2025-11-25' });
    assert.equal(call.status, 200, call.text);
    assert.equal(call.headers['mcp-session-id'], sessionId);
    assert.deepEqual(t.server.mcpStats, { live: 1, serversBuilt: 1, resumed: 0, held: 0 });
  });

  it('refuses session IDs that are no visible ASCII or too long with 404 Session not found, and GET with 405', async () => {
    t = await startTestServer();
    const long = await postMcp(t, toolsCall(1, 'x'), { 'Mcp-Session-Id': 'x'.repeat(129) });
    assert.equal(long.status, 404);
    assert.deepEqual(long.json().error, { code: -32001, message: 'Session not found' });
    const unknownDelete = await rawRequest(t.port, { method: 'DELETE', path: '/mcp', headers: { ...t.auth, 'Mcp-Session-Id': 'no-such-session' } });
    assert.equal(unknownDelete.status, 404);
    const client = await connect();
    const get = await rawRequest(t.port, { path: '/mcp', headers: { ...t.auth, Accept: 'text/event-stream', 'Mcp-Session-Id': sessionIdOf(client)! } });
    assert.equal(get.status, 405);
    assert.equal(get.headers.allow, 'POST');
    assert.equal(t.server.mcpStats.live, 1);
  });

  it('closes every session when the server stops', async () => {
    t = await startTestServer();
    await connect('a');
    const b = await connect('b');
    await recallTotal(b);
    assert.equal(t.server.mcpStats.live, 2);
    await t.server.stop();
    assert.equal(t.server.mcpStats.live, 0);
  });

  it('`ltm serve` exits promptly on SIGTERM with MCP sessions open', async function () {
    this.timeout(30_000);
    const project = makeTempProject('ltm-mcp-serve-');
    projects.push(project);
    const serve = spawnLtm(['serve', '--project', project]);
    try {
      const info = await waitForServerJson(project, serve);
      const client = await mcpClient(info.port, info.token);
      clients.push(client);
      await recallTotal(client);
      const started = Date.now();
      const code = await Promise.race([stopProcess(serve), new Promise<string>((r) => setTimeout(() => r('still running'), 10_000))]);
      assert.equal(code, 0, `ltm serve did not exit: ${serve.output()}`);
      assert.ok(Date.now() - started < 5_000, `exit took ${Date.now() - started} ms`);
    } finally {
      await stopProcess(serve, 'SIGKILL');
    }
  });
});
