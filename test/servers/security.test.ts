/**
 * The request guard and body limits of the real server on 127.0.0.1: every
 * refused request changes nothing on disk, and the server keeps serving.
 */
import { strict as assert } from 'node:assert';
import * as net from 'node:net';
import * as os from 'node:os';
import { ltmRoot, snapshotDiff, snapshotFiles } from '../support/storeKit';
import { TOOL_NAMES, rawRequest, sessionStartPayload, startTestServer, type HttpAnswer, type RawRequest, type TestServer } from '../support/serverKit';

const MiB = 1024 * 1024;

/** A tools/call that would store a memory if it got through. */
const STORE_CALL = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: { name: 'store_memory', arguments: { topic: 'intruder', content: 'should never be stored' } },
});
const MCP_HEADERS = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
const SESSION_START = JSON.stringify(sessionStartPayload('sess-intruder'));

function nonLoopbackIPv4(): string | undefined {
  for (const addresses of Object.values(os.networkInterfaces())) {
    for (const a of addresses ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  return undefined;
}

function connects(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(2_000, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

describe('server security', function () {
  this.timeout(20_000);
  let t: TestServer;
  /** Every answer seen, to check that none carries CORS headers. */
  let answers: HttpAnswer[];

  before(async () => {
    t = await startTestServer({
      prepare: async (store) => {
        await store.store({ topic: 'Existing memory', content: 'Something learned earlier.' });
      },
    });
  });
  after(async () => t?.stop());
  beforeEach(() => (answers = []));
  afterEach(() => {
    for (const a of answers) {
      const cors = Object.keys(a.headers).filter((h) => h.startsWith('access-control-'));
      assert.deepEqual(cors, [], `CORS headers on a ${a.status} answer: ${cors.join(', ')}`);
    }
  });

  async function send(req: RawRequest): Promise<HttpAnswer> {
    const answer = await rawRequest(t.port, req);
    answers.push(answer);
    return answer;
  }

  /** A valid request still succeeds: the health route and a real MCP tools/list. */
  async function assertStillServes(): Promise<void> {
    const health = await send({ path: '/health', headers: t.auth });
    assert.equal(health.status, 200, health.text);
    assert.equal(health.json().ok, true);
    const body = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} });
    const list = await send({ method: 'POST', path: '/mcp', headers: { ...t.auth, ...MCP_HEADERS }, body });
    assert.equal(list.status, 200, list.text);
    assert.equal(((list.json().result as { tools: unknown[] }).tools).length, TOOL_NAMES.length);
  }

  /** Sends a request that must be refused with `status`; nothing on disk may change. */
  async function assertRefused(req: RawRequest, status: number, message?: RegExp): Promise<HttpAnswer> {
    // index.json and the counts of earlier calls are written just after they answered: not this call's changes.
    await t.idle();
    const before = snapshotFiles(ltmRoot(t.project));
    const answer = await send(req);
    assert.equal(answer.status, status, `expected ${status}, got ${answer.status}: ${answer.text.slice(0, 300)}`);
    assert.match(String(answer.headers['content-type']), /^application\/json/);
    const error = answer.json().error;
    assert.equal(typeof error, 'string', `no error message: ${answer.text}`);
    if (message) assert.match(error as string, message);
    assert.deepEqual(snapshotDiff(before, snapshotFiles(ltmRoot(t.project))), [], 'files changed after a refused request');
    await assertStillServes();
    return answer;
  }

  it('answers a valid request (the baseline the other tests rely on)', async () => {
    await assertStillServes();
  });

  it('refuses a request without Authorization with 401', async () => {
    await assertRefused({ method: 'POST', path: '/mcp', headers: MCP_HEADERS, body: STORE_CALL }, 401, /token/);
    await assertRefused({ method: 'POST', path: '/hook/session_start', headers: { 'Content-Type': 'application/json' }, body: SESSION_START }, 401);
  });

  it('refuses a wrong token with 401 (also a token that is a prefix of the right one, and another scheme)', async () => {
    await assertRefused({ method: 'POST', path: '/mcp', headers: { ...MCP_HEADERS, Authorization: 'Bearer not-the-token' }, body: STORE_CALL }, 401);
    await assertRefused({ method: 'POST', path: '/hook/session_start', headers: { Authorization: `Bearer ${t.token.slice(0, -1)}` }, body: SESSION_START }, 401);
    await assertRefused({ method: 'POST', path: '/hook/session_start', headers: { Authorization: `Basic ${t.token}` }, body: SESSION_START }, 401);
  });

  it('refuses Origin: http://evil.example with 403 even with the right token', async () => {
    await assertRefused({ method: 'POST', path: '/mcp', headers: { ...t.auth, ...MCP_HEADERS, Origin: 'http://evil.example' }, body: STORE_CALL }, 403, /origin/);
    await assertRefused({ method: 'POST', path: '/hook/session_start', headers: { ...t.auth, Origin: 'http://evil.example' }, body: SESSION_START }, 403, /origin/);
  });

  it('refuses a foreign Host (DNS rebinding) with 403 even with the right token', async () => {
    await assertRefused({ method: 'POST', path: '/mcp', headers: { ...t.auth, ...MCP_HEADERS, Host: `evil.example:${t.port}` }, body: STORE_CALL }, 403, /host/);
    await assertRefused({ method: 'POST', path: '/hook/session_start', headers: { ...t.auth, Host: `evil.example:${t.port}` }, body: SESSION_START }, 403, /host/);
    // The loopback address on another port is a different origin too.
    await assertRefused({ method: 'POST', path: '/hook/session_start', headers: { ...t.auth, Host: `127.0.0.1:${t.port + 1}` }, body: SESSION_START }, 403, /host/);
  });

  it('refuses a body over 1 MiB with 413, with Content-Length', async () => {
    const payload = JSON.stringify({ ...sessionStartPayload('sess-big'), padding: 'x'.repeat(MiB) });
    assert.ok(Buffer.byteLength(payload) > MiB);
    await assertRefused(
      { method: 'POST', path: '/hook/session_start', headers: { ...t.auth, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(payload) }, body: payload },
      413,
      /1048576 bytes/,
    );
    const mcpPayload = JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'store_memory', arguments: { topic: 'big', content: 'y'.repeat(MiB) } } });
    await assertRefused({ method: 'POST', path: '/mcp', headers: { ...t.auth, ...MCP_HEADERS, 'Content-Length': Buffer.byteLength(mcpPayload) }, body: mcpPayload }, 413);
  });

  it('refuses a body over 1 MiB with 413, sent chunked without Content-Length', async () => {
    const prefix = Buffer.from(JSON.stringify(sessionStartPayload('sess-chunked')).slice(0, -1) + ',"padding":"');
    const chunks = [prefix, ...Array.from({ length: 18 }, () => Buffer.alloc(64 * 1024, 'x')), Buffer.from('"}')];
    assert.ok(chunks.reduce((n, c) => n + c.length, 0) > MiB);
    await assertRefused({ method: 'POST', path: '/hook/session_start', headers: { ...t.auth, 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' }, chunks }, 413, /1048576 bytes/);
    const mcpPrefix = Buffer.from('{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"store_memory","arguments":{"topic":"big","content":"');
    const mcpChunks = [mcpPrefix, ...Array.from({ length: 18 }, () => Buffer.alloc(64 * 1024, 'y')), Buffer.from('"}}}')];
    await assertRefused({ method: 'POST', path: '/mcp', headers: { ...t.auth, ...MCP_HEADERS, 'Transfer-Encoding': 'chunked' }, chunks: mcpChunks }, 413);
  });

  it('accepts a body of just under 1 MiB (the limit is not lower than documented)', async () => {
    const base = JSON.stringify({ ...sessionStartPayload('sess-almost'), padding: '' });
    const payload = JSON.stringify({ ...sessionStartPayload('sess-almost'), padding: 'x'.repeat(MiB - Buffer.byteLength(base) - 10) });
    assert.ok(Buffer.byteLength(payload) <= MiB);
    const answer = await send({ method: 'POST', path: '/hook/pre_tool_use', headers: { ...t.auth, 'Content-Type': 'application/json' }, body: payload });
    assert.equal(answer.status, 200, answer.text);
  });

  it('refuses malformed JSON with 400 and a message naming the problem', async () => {
    await assertRefused({ method: 'POST', path: '/hook/session_start', headers: { ...t.auth, 'Content-Type': 'application/json' }, body: '{"session_id": "a",' }, 400, /malformed JSON body: .+/);
    await assertRefused({ method: 'POST', path: '/mcp', headers: { ...t.auth, ...MCP_HEADERS }, body: '{"jsonrpc":"2.0", id: 1}' }, 400, /malformed JSON body: .+/);
  });

  /** Sends a body to /mcp that is JSON but no JSON-RPC message: a 4xx JSON-RPC error, nothing changed. */
  async function assertJsonRpcRefused(body: string): Promise<{ status: number; error: { code: number; message: string } }> {
    // index.json and the counts of earlier calls are written just after they answered: not this call's changes.
    await t.idle();
    const before = snapshotFiles(ltmRoot(t.project));
    const answer = await send({ method: 'POST', path: '/mcp', headers: { ...t.auth, ...MCP_HEADERS }, body });
    const what = `POST /mcp ${body}: ${answer.status} ${JSON.stringify(answer.text)}`;
    assert.ok(answer.status >= 400 && answer.status < 500, what);
    assert.match(String(answer.headers['content-type']), /^application\/json/, what);
    const json = answer.json();
    assert.equal(json.jsonrpc, '2.0', what);
    assert.equal(json.id, null, what);
    const error = json.error as { code: number; message: string };
    assert.ok(error && Number.isInteger(error.code) && error.code >= -32700 && error.code <= -32000, what);
    assert.equal(typeof error.message, 'string', what);
    assert.deepEqual(snapshotDiff(before, snapshotFiles(ltmRoot(t.project))), [], `files changed after ${what}`);
    await assertStillServes();
    return { status: answer.status, error };
  }

  it('answers an empty JSON-RPC batch with 400 Invalid Request (not 202)', async () => {
    const answer = await send({ method: 'POST', path: '/mcp', headers: { ...t.auth, ...MCP_HEADERS }, body: '[]' });
    assert.equal(answer.status, 400, answer.text);
    assert.match(String(answer.headers['content-type']), /^application\/json/);
    assert.equal(answer.text, '{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: empty batch"}}');
    await assertJsonRpcRefused('[]');
    await assertJsonRpcRefused(' [ ] ');
  });

  it('answers bodies that are no JSON-RPC message (a number, a string, null, {}, [1], …) with a 4xx JSON-RPC error', async () => {
    for (const body of ['42', '"tools/list"', 'null', 'true', '{}', '[1]', '[null]', '[[]]', '{"jsonrpc":"2.0"}', '{"jsonrpc":"1.0","id":1,"method":"tools/list"}']) {
      const { status } = await assertJsonRpcRefused(body);
      assert.equal(status, 400, body);
    }
  });

  it('answers 404 for unknown paths and unknown hook events', async () => {
    await assertRefused({ path: '/nope', headers: t.auth }, 404, /\/nope/);
    await assertRefused({ method: 'POST', path: '/hook/subagent_stop', headers: t.auth, body: '{}' }, 404, /subagent_stop/);
    await assertRefused({ method: 'POST', path: '/mcp/extra', headers: t.auth, body: '{}' }, 404);
  });

  it('answers 405 with an Allow header for GET on a hook and on /mcp', async () => {
    const hook = await assertRefused({ path: '/hook/session_start', headers: t.auth }, 405);
    assert.equal(hook.headers.allow, 'POST');
    const mcp = await assertRefused({ path: '/mcp', headers: { ...t.auth, Accept: 'text/event-stream' } }, 405);
    assert.equal(mcp.headers.allow, 'POST');
    const del = await assertRefused({ method: 'DELETE', path: '/mcp', headers: t.auth }, 405);
    assert.equal(del.headers.allow, 'POST');
  });

  it('sends no CORS headers, not even to a preflight OPTIONS request', async () => {
    const preflight = {
      Origin: 'http://evil.example',
      'Access-Control-Request-Method': 'POST',
      'Access-Control-Request-Headers': 'authorization, content-type',
    };
    // A browser's preflight carries no Authorization.
    const answer = await assertRefused({ method: 'OPTIONS', path: '/mcp', headers: preflight }, 403);
    assert.equal(answer.headers['access-control-allow-origin'], undefined);
    const withToken = await assertRefused({ method: 'OPTIONS', path: '/mcp', headers: t.auth }, 405);
    assert.equal(withToken.headers['access-control-allow-origin'], undefined);
    // Successful answers carry none either (checked for every answer in afterEach).
    const ok = await send({ method: 'POST', path: '/hook/pre_tool_use', headers: t.auth, body: '{}' });
    assert.equal(ok.status, 200);
  });

  it('listens on the IPv4 loopback address only', async () => {
    assert.equal(await connects('127.0.0.1', t.port), true);
    assert.equal(await connects('::1', t.port), false, 'reachable on [::1]');
  });

  const external = nonLoopbackIPv4();
  (external ? it : it.skip)(
    `is not reachable on the machine's non-loopback IPv4 address${external ? ` (${external})` : ' (skipped: this machine has no non-loopback IPv4 address)'}`,
    async () => {
      assert.equal(await connects(external!, t.port), false, `the server answers on ${external}`);
    },
  );
});
