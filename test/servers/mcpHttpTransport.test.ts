/**
 * LTM's Streamable HTTP transport (src/servers/mcpHttpTransport.ts) under the
 * real MCP SDK server: what it answers to each POST and DELETE, how it refuses
 * what the spec refuses, and that it lets go of every request it answered.
 * (Through real HTTP and the SDK client: mcpSessions.test.ts, mcp.test.ts,
 * security.test.ts.)
 */
import { strict as assert } from 'node:assert';
import type { IncomingHttpHeaders } from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { McpHttpTransport, type McpHttpAnswer } from '../../src/servers/mcpHttpTransport';

const SESSION = 'session-1';
const BASE: IncomingHttpHeaders = { accept: 'application/json, text/event-stream', 'content-type': 'application/json' };
const inSession = (more: IncomingHttpHeaders = {}): IncomingHttpHeaders => ({ ...BASE, 'mcp-session-id': SESSION, 'mcp-protocol-version': LATEST_PROTOCOL_VERSION, ...more });

const initialize = (id: number | string = 0) => ({
  jsonrpc: '2.0',
  id,
  method: 'initialize',
  params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'test', version: '1' } },
});
const call = (id: number | string, name: string, args: Record<string, unknown> = {}) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });

/** The body of a JSON answer, as the client reads it. */
function bodyOf(answer: McpHttpAnswer): any {
  return JSON.parse(JSON.stringify(answer.body));
}

function assertRefused(answer: McpHttpAnswer, status: number, code: number, message: RegExp): void {
  assert.equal(answer.status, status, JSON.stringify(answer));
  assert.equal(bodyOf(answer).error.code, code);
  assert.match(bodyOf(answer).error.message, message);
}

describe('McpHttpTransport (MCP SDK server)', () => {
  let server: McpServer;
  let transport: McpHttpTransport;
  /** Releases the calls of the `hold` tool waiting. */
  let release: () => void;
  let closed = 0;

  beforeEach(async () => {
    closed = 0;
    let held = new Promise<void>((resolve) => (release = resolve));
    server = new McpServer({ name: 'transport-test', version: '1' }, { capabilities: { logging: {} } });
    server.registerTool('echo', { description: 'echo', inputSchema: { text: z.string() } }, ({ text }) => ({ content: [{ type: 'text', text }] }));
    server.registerTool('hold', { description: 'answers once released' }, async () => {
      await held;
      held = new Promise<void>((resolve) => (release = resolve));
      return { content: [{ type: 'text', text: 'released' }] };
    });
    server.registerTool('chatty', { description: 'logs, then answers' }, async (extra) => {
      await server.server.sendLoggingMessage({ level: 'info', data: 'unasked' });
      await extra.sendNotification({ method: 'notifications/message', params: { level: 'info', data: 'about this call' } });
      return { content: [{ type: 'text', text: 'said' }] };
    });
    transport = new McpHttpTransport(() => SESSION);
    transport.onclose = () => (closed += 1);
    await server.connect(transport);
  });

  afterEach(async () => {
    release();
    await server.close();
  });

  async function handshake(): Promise<void> {
    const answer = await transport.handlePost(BASE, initialize());
    assert.equal(answer.status, 200);
    assert.equal(answer.headers['mcp-session-id'], SESSION);
    assert.equal(bodyOf(answer).result.protocolVersion, LATEST_PROTOCOL_VERSION);
    const initialized = await transport.handlePost(inSession(), { jsonrpc: '2.0', method: 'notifications/initialized' });
    assert.deepEqual([initialized.status, initialized.body], [202, undefined]);
  }

  it('starts a session at initialize, answers a call in it, and a batch with an array in the order of its requests', async () => {
    await handshake();
    assert.equal(transport.sessionId, SESSION);
    const answer = await transport.handlePost(inSession(), call(7, 'echo', { text: 'hello' }));
    assert.equal(answer.status, 200);
    assert.equal(answer.headers['Content-Type'], 'application/json');
    assert.equal(answer.headers['mcp-session-id'], SESSION);
    assert.deepEqual(bodyOf(answer), { jsonrpc: '2.0', id: 7, result: { content: [{ type: 'text', text: 'hello' }] } });

    const batch = await transport.handlePost(inSession(), [call('b', 'echo', { text: 'second' }), { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'gone' } }, { jsonrpc: '2.0', id: 'a', method: 'ping' }]);
    assert.equal(batch.status, 200);
    assert.deepEqual(
      bodyOf(batch).map((m: { id: string }) => m.id),
      ['b', 'a'],
    );
    assert.equal(bodyOf(batch)[0].result.content[0].text, 'second');
    assert.equal(transport.requestsInFlight, 0, 'every answered request is let go');
  });

  it('answers a tool error and an unknown method as JSON-RPC answers (200), as the SDK server words them', async () => {
    await handshake();
    const wrong = await transport.handlePost(inSession(), call(1, 'echo', { text: 42 }));
    assert.equal(wrong.status, 200);
    assert.equal(bodyOf(wrong).result.isError, true);
    const unknown = await transport.handlePost(inSession(), { jsonrpc: '2.0', id: 2, method: 'no/such/method' });
    assert.equal(bodyOf(unknown).error.code, -32601);
  });

  it('drops what the server sends unasked or about a call (logging): there is no stream to carry it, and the call is answered', async () => {
    await handshake();
    const answer = await transport.handlePost(inSession(), call(3, 'chatty'));
    assert.deepEqual(bodyOf(answer), { jsonrpc: '2.0', id: 3, result: { content: [{ type: 'text', text: 'said' }] } });
  });

  it('refuses what the spec refuses, with the status and JSON-RPC error of the SDK transport', async () => {
    assertRefused(await transport.handlePost({ ...BASE, accept: 'application/json' }, initialize()), 406, -32000, /Not Acceptable/);
    assertRefused(await transport.handlePost({ ...BASE, accept: undefined }, initialize()), 406, -32000, /Not Acceptable/);
    for (const type of ['text/plain', 'application/jsonl', 'text/plain; x=application/json', undefined]) {
      assertRefused(await transport.handlePost({ ...BASE, 'content-type': type }, initialize()), 415, -32000, /Content-Type must be application\/json/);
    }
    assertRefused(await transport.handlePost(inSession(), call(1, 'echo', { text: 'x' })), 400, -32000, /Server not initialized/);
    for (const odd of [42, 'text', null, {}, [1], { jsonrpc: '1.0', id: 1, method: 'ping' }, [initialize(), 7]]) {
      assertRefused(await transport.handlePost(BASE, odd), 400, -32700, /Invalid JSON-RPC message/);
    }
    const tooMany = Array.from({ length: 101 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'ping' }));
    assertRefused(await transport.handlePost(BASE, tooMany), 400, -32600, /Batch must not exceed 100/);
    assertRefused(await transport.handlePost(BASE, [initialize(1), { jsonrpc: '2.0', id: 2, method: 'ping' }]), 400, -32600, /Only one initialization/);
    assert.equal(transport.sessionId, undefined, 'no refusal started the session');

    await handshake();
    assertRefused(await transport.handlePost(BASE, initialize(9)), 400, -32600, /already initialized/);
    assertRefused(await transport.handlePost(BASE, call(1, 'echo', { text: 'x' })), 400, -32000, /Mcp-Session-Id header is required/);
    assertRefused(await transport.handlePost(inSession({ 'mcp-session-id': 'another' }), call(1, 'echo', { text: 'x' })), 404, -32001, /Session not found/);
    assertRefused(await transport.handlePost(inSession({ 'mcp-protocol-version': '1999-01-01' }), call(1, 'echo', { text: 'x' })), 400, -32000, /Unsupported protocol version: 1999-01-01/);
    const charset = await transport.handlePost(inSession({ 'content-type': 'Application/JSON; charset=utf-8', 'mcp-protocol-version': undefined }), call(2, 'echo', { text: 'ok' }));
    assert.equal(charset.status, 200, 'a charset parameter and no protocol version header are accepted');
  });

  it('refuses a request whose ID is already being answered in the session, and answers the first', async () => {
    await handshake();
    const first = transport.handlePost(inSession(), call(5, 'hold'));
    assertRefused(await transport.handlePost(inSession(), call(5, 'echo', { text: 'x' })), 400, -32600, /already being answered/);
    assertRefused(await transport.handlePost(inSession(), [call(6, 'echo', { text: 'x' }), call(6, 'echo', { text: 'y' })]), 400, -32600, /already being answered/);
    assert.equal(transport.requestsInFlight, 1);
    release();
    assert.equal(bodyOf(await first).result.content[0].text, 'released');
    assert.equal(transport.requestsInFlight, 0);
  });

  it('answers the requests it holds with an error when it closes, rather than never', async () => {
    await handshake();
    const pending = transport.handlePost(inSession(), [call(1, 'hold'), call(2, 'echo', { text: 'done' })]);
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(transport.requestsInFlight, 1, 'echo answered, hold waits');
    await transport.close();
    const answer = await pending;
    assert.equal(answer.status, 200);
    assert.deepEqual(bodyOf(answer)[0], { jsonrpc: '2.0', id: 1, error: { code: -32000, message: 'the MCP session closed before answering' } });
    assert.equal(bodyOf(answer)[1].result.content[0].text, 'done');
    assert.equal(transport.requestsInFlight, 0);
    assert.equal(closed, 1);
  });

  it('ends the session on DELETE with its ID (onclose once); later requests are told Session not found', async () => {
    await handshake();
    assertRefused(await transport.handleDelete(inSession({ 'mcp-session-id': 'another' })), 404, -32001, /Session not found/);
    assert.equal(closed, 0);
    assert.deepEqual(await transport.handleDelete(inSession()), { status: 200, headers: {} });
    assert.equal(closed, 1);
    assertRefused(await transport.handlePost(inSession(), call(1, 'echo', { text: 'x' })), 404, -32001, /Session not found/);
    assertRefused(await transport.handleDelete(inSession()), 404, -32001, /Session not found/);
    await transport.close();
    assert.equal(closed, 1, 'closing again calls onclose no more');
  });

  it('without sessions: serves a call with no handshake and no session ID, and names no session in its answer', async () => {
    const stateless = new McpHttpTransport(undefined);
    const statelessServer = new McpServer({ name: 'stateless', version: '1' });
    statelessServer.registerTool('echo', { description: 'echo', inputSchema: { text: z.string() } }, ({ text }) => ({ content: [{ type: 'text', text }] }));
    await statelessServer.connect(stateless);
    try {
      const answer = await stateless.handlePost(BASE, call(1, 'echo', { text: 'alone' }));
      assert.equal(answer.status, 200);
      assert.equal(answer.headers['mcp-session-id'], undefined);
      assert.equal(bodyOf(answer).result.content[0].text, 'alone');
    } finally {
      await statelessServer.close();
    }
  });
});
