/**
 * Guards against: malformed or hostile input crashing or corrupting the server.
 * Property-based fuzz of every HTTP route, every MCP tool and every hook payload
 * against ONE real in-process LtmServer: wrong types, huge strings and bodies,
 * prototype key names (`__proto__`, `constructor`, ...) as JSON keys and as
 * values, control characters, lone surrogates, path traversal in IDs, odd
 * JSON-RPC bodies and batches, wrong methods, missing and duplicate headers.
 * Every answer must be < 500, the server must stay alive and keep serving MCP,
 * Object.prototype must stay untouched (prototype pollution), and invalid input
 * must leave the shared store files byte for byte as they were.
 * Regression: hooks with session_id "__proto__" once made every later MCP
 * request answer -32700.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import fc from 'fast-check';
import { runCli } from '../../src/cli';
import { MemoryStore } from '../../src/core/store';
import {
  TOOL_NAMES,
  mcpClient,
  postHook,
  rawRequest,
  startTestServer,
  type HttpAnswer,
  type RawRequest,
  type TestServer,
} from '../support/serverKit';
import { ltmRoot } from '../support/storeKit';
import { assertSnapshotUnchanged, checkProperty, rawHttp, sharedSnapshot } from './kit';

// --- a JSON syntax tree, serialised by hand so that "__proto__" is a real key ----------

type J = null | boolean | number | string | J[] | { o: [string, J][] } | { raw: string };

function jsonText(value: J): string {
  if (value === null || typeof value === 'boolean' || typeof value === 'number') return JSON.stringify(value);
  if (typeof value === 'string') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(jsonText).join(',')}]`;
  if ('raw' in value) return value.raw;
  return `{${value.o.map(([k, v]) => `${JSON.stringify(k)}:${jsonText(v)}`).join(',')}}`;
}

const obj = (entries: Record<string, J> | [string, J][]): { o: [string, J][] } => ({ o: Array.isArray(entries) ? entries : Object.entries(entries) });

const PROTO_NAMES = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf', '__defineGetter__', 'isPrototypeOf'] as const;

const TRAVERSAL_IDS = [
  '../../etc/passwd',
  'mem_../x',
  'mem_../../../../etc/passwd',
  '/etc/passwd',
  'C:\\Windows\\win.ini',
  'mem_1234567\u0000',
  'mem_12345678\u0000.md',
  'mem_12345678/../../x',
  'mem_ABCDEF12',
  ' mem_12345678',
  'mem_12345678 ',
  '%2e%2e%2fetc%2fpasswd',
  'mem_1234567g',
  'memories/mem_12345678',
  '..',
  '.',
  '',
];

const ODD_CONSTANTS = [
  ...PROTO_NAMES,
  ...TRAVERSAL_IDS,
  '\ud800',
  'a\udfffb',
  '\udc00\ud800',
  '\u0000',
  '\r\n',
  '\u2028\u2029',
  '\u001b[31mred',
  '\u0007\u0008\u000b\u000c',
  '\ufeff',
  '\uffff',
  '${LTM_TOKEN}',
  '$(id)',
  '`id`',
  '<script>alert(1)</script>',
  '---\nid: mem_00000000\n---',
  '## Summary',
  '\n## Content\n',
  'null',
  'undefined',
  'NaN',
  ' ',
  '🧠💾',
];

const oddString: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...ODD_CONSTANTS) },
  { weight: 2, arbitrary: fc.string({ maxLength: 24 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 24 }) },
  { weight: 1, arbitrary: fc.string({ unit: fc.integer({ min: 0, max: 0x1f }).map((c) => String.fromCharCode(c)), maxLength: 12 }) },
  {
    weight: 1,
    arbitrary: fc.array(fc.integer({ min: 0xd800, max: 0xdfff }), { minLength: 1, maxLength: 3 }).map((cs) => `x${String.fromCharCode(...cs)}y`),
  },
  { weight: 1, arbitrary: fc.integer({ min: 300, max: 20_000 }).map((n) => 'L'.repeat(n)) },
);

const keyArb: fc.Arbitrary<string> = fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...PROTO_NAMES) }, { weight: 1, arbitrary: oddString });

const rawNumbers = fc.constantFrom('1e400', '-0', '123456789012345678901234567890', '-1e-400', '0.0000000001');

const jValue: fc.Arbitrary<J> = fc.letrec<{ j: J }>((tie) => ({
  j: fc.oneof(
    { maxDepth: 3, depthSize: 'small' },
    fc.constant(null),
    fc.boolean(),
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    rawNumbers.map((raw) => ({ raw })),
    oddString,
    fc.array(tie('j'), { maxLength: 4 }),
    fc.array(fc.tuple(keyArb, tie('j')), { maxLength: 4 }).map((o) => ({ o })),
  ),
})).j;

/** `{"__proto__": {"polluted": ...}}`-style objects aimed at Object.prototype. */
const pollutionObject: fc.Arbitrary<J> = fc
  .tuple(fc.constantFrom('__proto__', 'constructor', 'prototype'), fc.constantFrom('polluted', 'tool_successes', 'tool_failures', 'isAdmin', 'memories', 'sessions', 'number'), jValue)
  .map(([outer, inner, v]) => (outer === 'constructor' ? obj([['constructor', obj([['prototype', obj([[inner, v]])]])]]) : obj([[outer, obj([[inner, v]])]])));

// --- the requests --------------------------------------------------------------------

const HOOK_EVENTS = ['session_start', 'pre_tool_use', 'post_tool_use', 'pre_compact', 'session_end', 'subagent_start'] as const;
const MCP_ACCEPT = 'application/json, text/event-stream';

interface Fuzzed {
  req: RawRequest;
  /** Invalid store_memory arguments sent as a proper tools/call: the answer must be an error. */
  expectToolError?: boolean;
  what: string;
}

/** Keys the fuzz watches on every object (set by pollution of Object.prototype). */
const WATCHED_KEYS = ['polluted', 'tool_successes', 'tool_failures', 'isAdmin', 'memories', 'sessions', 'number', 'compacted', 'started_at', 'last_activity', 'topic', 'id', 'tags'];

describe('adversarial: fuzz of every route, tool and hook payload (one in-process server)', function () {
  this.timeout(120_000);
  let t: TestServer;
  let ids: { active: string[]; archived: string[] };
  let protoNamesBefore: string[];
  let arrayProtoBefore: string[];
  let functionProtoBefore: string[];
  let requests = 0;
  /** What the server logged (failed requests and follow-up work): quoted when an assertion fails. */
  const serverLog: string[] = [];
  const originalToString = Object.prototype.toString;
  const originalHasOwn = Object.prototype.hasOwnProperty;

  before(async () => {
    protoNamesBefore = Object.getOwnPropertyNames(Object.prototype).sort();
    arrayProtoBefore = Object.getOwnPropertyNames(Array.prototype).sort();
    functionProtoBefore = Object.getOwnPropertyNames(Function.prototype).sort();
    t = await startTestServer({
      log: (message) => serverLog.push(message),
      prepare: async (store) => {
        const a = await store.store({ topic: 'Postgres pool exhaustion', content: 'Raised the pool to 50.\n\nBatch jobs held connections.', tags: ['database'] });
        const b = await store.store({ topic: 'Flaky auth test', content: 'The clock was mocked twice.', tags: ['testing', 'auth'] });
        const c = await store.store({ topic: 'Build cache key', content: 'Include the lockfile hash in the cache key.' });
        const d = await store.store({ topic: 'Old deployment note', content: 'Deploys went through the bastion host.' });
        await store.forget(d.memory.id);
        ids = { active: [a.memory.id, b.memory.id, c.memory.id], archived: [d.memory.id] };
      },
    });
  });

  after(async function () {
    console.log(`      fuzz: ${requests} requests tried against one server`);
    await t?.stop();
  });

  async function send(req: RawRequest): Promise<HttpAnswer> {
    requests++;
    return rawRequest(t.port, req);
  }

  /** The newest entry of the server's log, its first two lines. */
  function lastLog(): string {
    return (serverLog.at(-1) ?? '(empty)').split('\n').slice(0, 2).join(' ').slice(0, 600);
  }

  function describeReq(req: RawRequest): string {
    const body = req.body === undefined ? '' : Buffer.isBuffer(req.body) ? `<${req.body.length} bytes>` : req.body.length > 300 ? `${req.body.slice(0, 300)}…(${req.body.length})` : req.body;
    return `${req.method ?? 'GET'} ${req.path} ${JSON.stringify(req.headers ?? {}).slice(0, 300)} ${body}`;
  }

  function assertNot5xx(answer: HttpAnswer, req: RawRequest): void {
    assert.ok(
      answer.status >= 200 && answer.status < 500,
      `status ${answer.status} for ${describeReq(req)}\n→ ${answer.text.slice(0, 500)}\nserver log (last entry): ${lastLog()}`,
    );
  }

  async function assertAlive(): Promise<void> {
    const health = await send({ path: '/health', headers: t.auth });
    assert.equal(health.status, 200, `GET /health: ${health.status} ${health.text}`);
  }

  function assertPrototypeClean(where: string): void {
    // A polluted prototype would fail every later test of the run (the MCP client's own parsing included):
    // say what was added, then take it away again.
    const added = Object.getOwnPropertyNames(Object.prototype).filter((n) => !protoNamesBefore.includes(n));
    const values = added.map((n) => `${n}=${JSON.stringify((Object.prototype as Record<string, unknown>)[n])}`);
    for (const n of added) delete (Object.prototype as Record<string, unknown>)[n];
    assert.deepEqual(added, [], `${where}: Object.prototype gained properties: ${values.join(', ')}`);
    assert.deepEqual(Object.getOwnPropertyNames(Object.prototype).sort(), protoNamesBefore, `${where}: Object.prototype gained properties`);
    assert.deepEqual(Object.getOwnPropertyNames(Array.prototype).sort(), arrayProtoBefore, `${where}: Array.prototype changed`);
    assert.deepEqual(Object.getOwnPropertyNames(Function.prototype).sort(), functionProtoBefore, `${where}: Function.prototype changed`);
    const probe: Record<string, unknown> = {};
    for (const key of WATCHED_KEYS) assert.equal(probe[key], undefined, `${where}: ({}).${key} is ${String(probe[key])}`);
    assert.equal(Object.prototype.toString, originalToString, `${where}: Object.prototype.toString replaced`);
    assert.equal(Object.prototype.hasOwnProperty, originalHasOwn, `${where}: Object.prototype.hasOwnProperty replaced`);
    assert.equal(Object.getPrototypeOf({}), Object.prototype, `${where}: {} has another prototype`);
  }

  /** The real MCP SDK client still lists the tools and gets a valid ltm_status. */
  async function assertMcpWorks(where: string): Promise<void> {
    const client = await mcpClient(t.port, t.token, 'ltm-adversarial-fuzz');
    try {
      const tools = await client.listTools();
      assert.deepEqual(tools.tools.map((x) => x.name).sort(), TOOL_NAMES, `${where}: tools/list`);
      const status = await client.callTool({ name: 'ltm_status', arguments: {} });
      assert.notEqual(status.isError, true, `${where}: ltm_status failed: ${JSON.stringify(status.content)}`);
      const s = status.structuredContent as { total_memories: number; total_archived: number };
      assert.equal(typeof s.total_memories, 'number', `${where}: ltm_status shape ${JSON.stringify(s)}`);
      assert.ok(s.total_memories >= ids.active.length, `${where}: ltm_status counts ${s.total_memories} memories`);
    } finally {
      await client.close();
    }
    requests += 3;
  }

  function stateFiles(): { state: string; stats: string } {
    const root = ltmRoot(t.project);
    const read = (f: string) => (fs.existsSync(path.join(root, f)) ? fs.readFileSync(path.join(root, f), 'utf8') : '{}');
    return { state: read('state.json'), stats: read('stats.json') };
  }

  /** state.json and stats.json (per machine, allowed to change) stay valid JSON and small. */
  function assertStateSane(where: string, maxStateBytes = 64 * 1024): void {
    const { state, stats } = stateFiles();
    assert.ok(Buffer.byteLength(state) < maxStateBytes, `${where}: state.json is ${Buffer.byteLength(state)} bytes`);
    let parsed: { sessions?: Record<string, unknown> };
    try {
      parsed = JSON.parse(state) as { sessions?: Record<string, unknown> };
      JSON.parse(stats);
    } catch (error) {
      assert.fail(`${where}: state.json or stats.json is not valid JSON: ${(error as Error).message}`);
    }
    for (const key of Object.keys(parsed.sessions ?? {})) assert.ok(key.length <= 128, `${where}: a session key of ${key.length} characters in state.json`);
  }

  // --- generators that need the server (port, token, IDs) --------------------------------

  const idArb = (pool: () => string[]) =>
    fc.oneof(
      { weight: 3, arbitrary: fc.constantFrom(...TRAVERSAL_IDS) },
      { weight: 1, arbitrary: fc.constantFrom('mem_00000000', 'mem_ffffffff', 'mem_deadbeef') },
      {
        weight: 1,
        arbitrary: fc.nat().map((i) => {
          const p = pool();
          return p.length > 0 ? p[i % p.length]! : 'mem_00000000';
        }),
      },
      { weight: 1, arbitrary: jValue },
    );

  function toolArgs(): fc.Arbitrary<{ name: string; args: J; invalidStore: boolean }> {
    const anyValue = fc.oneof(oddString as fc.Arbitrary<J>, jValue, pollutionObject);
    const keyed = (keys: string[]) =>
      fc
        .tuple(
          fc.subarray(keys),
          fc.array(anyValue, { minLength: keys.length, maxLength: keys.length }),
          fc.array(fc.tuple(keyArb, anyValue), { maxLength: 2 }),
        )
        .map(([ks, vs, extra]) => obj([...ks.map((k, i): [string, J] => [k, vs[i]!]), ...extra]));
    // store_memory: always invalid in this phase (one breaker applied), so the store must not change.
    const breakers: ((o: [string, J][]) => [string, J][])[] = [
      (o) => o.filter(([k]) => k !== 'topic'),
      (o) => [...o.filter(([k]) => k !== 'topic'), ['topic', 123]],
      (o) => [...o.filter(([k]) => k !== 'topic'), ['topic', '   ']],
      (o) => [...o.filter(([k]) => k !== 'content'), ['content', '']],
      (o) => o.filter(([k]) => k !== 'content'),
      (o) => [...o.filter(([k]) => k !== 'tags'), ['tags', '__proto__']],
      (o) => [...o.filter(([k]) => k !== 'tags'), ['tags', [null]]],
      (o) => [...o.filter(([k]) => k !== 'difficulty'), ['difficulty', 2]],
      (o) => [...o.filter(([k]) => k !== 'topic'), ['topic', 'lone \ud800 surrogate']],
      (o) => [...o.filter(([k]) => k !== 'content'), ['content', 'x\udfff']],
      (o) => [...o.filter(([k]) => k !== 'summary'), ['summary', 's'.repeat(2_001)]],
      (o) => [...o.filter(([k]) => k !== 'topic'), ['topic', obj([['__proto__', 'x']])]],
    ];
    const storeArgs = fc
      .tuple(keyed(['topic', 'content', 'summary', 'tags', 'auto_tag', 'difficulty']), fc.integer({ min: 0, max: breakers.length - 1 }))
      .map(([args, b]) => ({ name: 'store_memory', args: obj(breakers[b]!((args as { o: [string, J][] }).o)), invalidStore: true }));
    const withIds = (name: string, idKey: string, pool: () => string[], others: string[]) =>
      fc
        .tuple(idArb(pool), keyed(others))
        .map(([id, rest]) => ({ name, args: obj([[idKey, id], ...(rest as { o: [string, J][] }).o]), invalidStore: false }));
    return fc.oneof(
      { weight: 3, arbitrary: storeArgs },
      { weight: 2, arbitrary: keyed(['query', 'limit', 'tag', 'scope']).map((args) => ({ name: 'recall', args, invalidStore: false })) },
      { weight: 1, arbitrary: keyed(['phase', 'tag', 'keyword', 'limit', 'offset']).map((args) => ({ name: 'list_memories', args, invalidStore: false })) },
      { weight: 2, arbitrary: withIds('get_memory', 'id', () => [...ids.active, ...ids.archived], []) },
      // Never a real ID: forgetting one is a valid change.
      { weight: 2, arbitrary: withIds('forget', 'id', () => [], ['purge']) },
      { weight: 1, arbitrary: keyed(['x']).map((args) => ({ name: 'ltm_status', args, invalidStore: false })) },
      { weight: 1, arbitrary: keyed(['x']).map((args) => ({ name: 'ltm_check', args, invalidStore: false })) },
      { weight: 1, arbitrary: keyed(['archive_orphans', 'clean_orphaned_archives']).map((args) => ({ name: 'ltm_fix', args, invalidStore: false })) },
      { weight: 1, arbitrary: keyed(['query', 'limit', 'tag']).map((args) => ({ name: 'search_archives', args, invalidStore: false })) },
      // Active IDs only: restoring the archived one is a valid change.
      { weight: 2, arbitrary: withIds('restore_memory', 'memory_id', () => ids.active, ['importance']) },
      { weight: 1, arbitrary: fc.tuple(fc.oneof(fc.constantFrom(...PROTO_NAMES), oddString), jValue).map(([name, args]) => ({ name, args, invalidStore: false })) },
    );
  }

  function mcpHeaders(extra: Record<string, string | number | string[]> = {}): Record<string, string | number> {
    return { ...t.auth, 'Content-Type': 'application/json', Accept: MCP_ACCEPT, ...extra } as Record<string, string | number>;
  }

  /** A proper tools/call for each tool with fuzzed arguments. */
  function toolCalls(): fc.Arbitrary<Fuzzed> {
    return fc.tuple(toolArgs(), jValue, fc.boolean()).map(([{ name, args, invalidStore }, id, withMeta]) => {
      const params: [string, J][] = [
        ['name', name],
        ['arguments', args],
      ];
      if (withMeta) params.push(['_meta', obj([['claudecode/toolUseId', '__proto__'], ['__proto__', obj([['polluted', true]])]])]);
      const rpcId: J = typeof id === 'number' || typeof id === 'string' ? id : 7;
      const body = jsonText(obj([['jsonrpc', '2.0'], ['id', rpcId], ['method', 'tools/call'], ['params', obj(params)]]));
      return { req: { method: 'POST', path: '/mcp', headers: mcpHeaders(), body }, expectToolError: invalidStore, what: `tools/call ${name}` };
    });
  }

  const RPC_METHODS = ['initialize', 'tools/list', 'tools/call', 'ping', 'resources/list', 'prompts/list', 'notifications/initialized', 'completion/complete', 'logging/setLevel', 'resources/read'];

  /** Odd JSON-RPC envelopes, batches and bodies with odd MCP headers. */
  function rpcBodies(): fc.Arbitrary<Fuzzed> {
    const envelope: fc.Arbitrary<J> = fc
      .record(
        {
          jsonrpc: fc.oneof(fc.constant<J>('2.0'), jValue),
          id: jValue,
          method: fc.oneof(fc.constantFrom<J>(...RPC_METHODS), fc.constantFrom<J>(...PROTO_NAMES), jValue),
          params: fc.oneof(jValue, pollutionObject),
        },
        { requiredKeys: [] },
      )
      .chain((r) => fc.array(fc.tuple(keyArb, jValue), { maxLength: 2 }).map((extra) => obj([...(Object.entries(r) as [string, J][]), ...extra])));
    const body = fc.oneof(
      { weight: 2, arbitrary: fc.constantFrom('[]', '[1]', 'null', '1', '"x"', 'true', '{}', '[[]]', '[{}]', '[null]', '{"jsonrpc":"2.0"}', '[[],[]]', '{"__proto__":null}', '{"jsonrpc":"2.0","id":1,"method":"tools/list","__proto__":{"polluted":1}}') },
      { weight: 3, arbitrary: envelope.map(jsonText) },
      { weight: 2, arbitrary: fc.array(fc.oneof(envelope, jValue), { minLength: 0, maxLength: 4 }).map((a) => jsonText(a)) },
      { weight: 1, arbitrary: jValue.map(jsonText) },
      { weight: 1, arbitrary: fc.constantFrom('{', '{"a":', '\u0000', 'nul', '[1,]', '{"a":1}{"b":2}', '\ufeff{}', '{"a":"\\ud800"}') },
    );
    const headerSet = fc.record({
      accept: fc.constantFrom<string | undefined>(MCP_ACCEPT, 'application/json', 'text/event-stream', '*/*', undefined, 'text/html'),
      contentType: fc.constantFrom<string | undefined>('application/json', 'text/plain', undefined, 'application/json; charset=utf-16', 'multipart/form-data'),
      version: fc.constantFrom<string | undefined>(undefined, '2025-06-18', '2025-03-26', '1999-01-01', '__proto__', ''),
      sessionId: fc.constantFrom<string | undefined>(undefined, '__proto__', 'abc', ''),
    });
    return fc.tuple(body, headerSet).map(([b, h]) => {
      const headers: Record<string, string | number> = { ...t.auth };
      if (h.accept !== undefined) headers.Accept = h.accept;
      if (h.contentType !== undefined) headers['Content-Type'] = h.contentType;
      if (h.version !== undefined) headers['mcp-protocol-version'] = h.version;
      if (h.sessionId !== undefined) headers['mcp-session-id'] = h.sessionId;
      return { req: { method: 'POST', path: '/mcp', headers, body: b }, what: 'odd JSON-RPC body' };
    });
  }

  /** Hook payloads of every kind: wrong types, prototype keys and values, odd bodies. */
  function hookPayload(): fc.Arbitrary<J> {
    const field = (name: string, value: fc.Arbitrary<J>) => fc.option(value.map((v): [string, J] => [name, v]), { nil: undefined });
    const sessionValue: fc.Arbitrary<J> = fc.oneof({ weight: 3, arbitrary: fc.constantFrom<J>(...PROTO_NAMES) }, { weight: 2, arbitrary: oddString }, { weight: 1, arbitrary: jValue });
    const payload = fc
      .tuple(
        field('session_id', sessionValue),
        field('tool_use_id', sessionValue),
        field('source', fc.oneof(fc.constantFrom<J>('startup', 'resume', 'clear', 'compact'), jValue)),
        field('hook_event_name', fc.oneof(fc.constantFrom<J>('PostToolUse', 'PostToolUseFailure', 'SessionStart'), jValue)),
        field('tool_response', fc.oneof(jValue, pollutionObject, fc.constant<J>(obj([['is_error', true]])), fc.constant<J>([obj([['type', 'text'], ['text', 'Error: x']])]))),
        field('tool_input', jValue),
        // A subagent's fields, and the Agent tool whose task SubagentStart takes.
        field('agent_id', sessionValue),
        field('tool_name', fc.oneof(fc.constantFrom<J>('Agent', 'Task', 'Read'), jValue)),
        fc.array(fc.tuple(keyArb, fc.oneof(jValue, pollutionObject)), { maxLength: 3 }),
      )
      .map(([a, b, c, d, e, f, g, h, extra]) => obj([...[a, b, c, d, e, f, g, h].filter((x): x is [string, J] => x !== undefined), ...extra]));
    return fc.oneof({ weight: 5, arbitrary: payload }, { weight: 1, arbitrary: pollutionObject }, { weight: 1, arbitrary: fc.constantFrom<J>([], [1], null, 1, 'x', true) });
  }

  function hookRequests(): fc.Arbitrary<Fuzzed> {
    return fc.tuple(fc.constantFrom(...HOOK_EVENTS), hookPayload(), fc.boolean()).map(([event, payload, wait]) => {
      const headers: Record<string, string | number> = { ...t.auth, 'Content-Type': 'application/json' };
      if (wait) headers['X-LTM-Wait'] = '1';
      return { req: { method: 'POST', path: `/hook/${event}`, headers, body: jsonText(payload) }, what: `hook ${event}` };
    });
  }

  /** Wrong methods, paths, hosts, origins, tokens, duplicate and missing headers. */
  function routeRequests(): fc.Arbitrary<Fuzzed> {
    const pathArb = fc.oneof(
      fc.constantFrom('/mcp', '/health', '/', '/hook/', '/hook/unknown', '/hook/__proto__', '/hook/constructor', '/mcp/', '/MCP', '/health/', '/hook/session_start?x=1', '/mcp?__proto__[polluted]=1', '/hook/../mcp', '/%2e%2e/%2e%2e/etc/passwd', '//mcp', '/hook/session_start/..', '/hook/SESSION_START', `/${'a'.repeat(8_000)}`, '//', '/\\', '///'),
      fc.constantFrom(...HOOK_EVENTS).map((e) => `/hook/${e}`),
      fc.string({ unit: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 30 }).map((s) => `/${s}`),
    );
    const method = fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD', 'TRACE', 'FOO');
    const headerValue = fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 40 });
    const auth = fc.oneof(
      fc.constant<'good' | string | string[] | undefined>('good'),
      fc.constantFrom<string | string[] | undefined>(undefined, 'Bearer', 'Bearer ', 'bearer x', 'Basic Zm9vOmJhcg==', 'Bearer __proto__', 'Bearer constructor'),
      fc.constant<'dup'>('dup'),
      headerValue.map((v) => `Bearer ${v}`),
    );
    const host = fc.constantFrom<'good' | 'localhost' | string | undefined>('good', 'localhost', 'evil.example', '127.0.0.1', '127.0.0.1:1', '[::1]', '');
    const origin = fc.constantFrom<string | undefined>(undefined, undefined, 'http://evil.example', 'null', 'http://127.0.0.1', 'vscode-webview://x');
    const body = fc.oneof(fc.constant<string | undefined>(undefined), jValue.map(jsonText), fc.constantFrom('', '{', '\u0000\u0001'));
    const extraHeaders = fc.array(fc.tuple(fc.constantFrom('X-LTM-Wait', 'X-LTM-Project', 'Content-Type', 'Accept', 'Transfer-Encoding', 'Content-Length', 'Expect', 'Connection', 'X-Forwarded-Host', '__proto__', 'constructor'), headerValue), { maxLength: 3 });
    return fc.tuple(method, pathArb, auth, host, origin, body, extraHeaders).map(([m, p, a, h, o, b, extra]) => {
      const headers: Record<string, string | number | string[]> = {};
      if (a === 'good') headers.Authorization = `Bearer ${t.token}`;
      else if (a === 'dup') headers.Authorization = [`Bearer ${t.token}`, 'Bearer wrong-token'];
      else if (a !== undefined) headers.Authorization = a;
      if (h === 'good') headers.Host = `127.0.0.1:${t.port}`;
      else if (h === 'localhost') headers.Host = `localhost:${t.port}`;
      else if (h !== undefined) headers.Host = h;
      if (o !== undefined) headers.Origin = o;
      for (const [k, v] of extra) {
        // A Content-Length or Transfer-Encoding of our own would desynchronise the request; Node refuses those client-side.
        if (k === 'Content-Length' || k === 'Transfer-Encoding' || k === 'Expect' || k === 'Connection') continue;
        headers[k] = k === 'X-LTM-Project' ? v || t.project : v;
      }
      if (b !== undefined) headers['Content-Type'] ??= 'application/json';
      return { req: { method: m, path: p, headers: headers as Record<string, string | number>, body: m === 'GET' || m === 'HEAD' ? undefined : b }, what: `${m} ${p}` };
    });
  }

  /** Sends one fuzzed request and checks everything that must hold after it. */
  async function sendAndCheck(f: Fuzzed, shared: Map<string, Buffer>): Promise<void> {
    let answer: HttpAnswer;
    try {
      answer = await send(f.req);
    } catch (error) {
      assert.fail(`no answer (${(error as Error).message}) for ${describeReq(f.req)}`);
    }
    assertNot5xx(answer, f.req);
    if (f.expectToolError && answer.status === 200) {
      const rpc = JSON.parse(answer.text) as { error?: unknown; result?: { isError?: boolean } };
      assert.ok(rpc.error !== undefined || rpc.result?.isError === true, `${f.what}: invalid arguments were accepted: ${answer.text.slice(0, 400)}\n${describeReq(f.req)}`);
    }
    assertPrototypeClean(f.what);
    await t.idle();
    assertSnapshotUnchanged(shared, sharedSnapshot(t.project), `${describeReq(f.req)}`);
  }

  it('regression: session_id "__proto__" (and other prototype names) in every hook leaves MCP working', async () => {
    for (const name of PROTO_NAMES) {
      for (const event of ['session_start', 'post_tool_use', 'pre_tool_use', 'pre_compact', 'session_end']) {
        const payload = jsonText(obj({ session_id: name, tool_use_id: name, hook_event_name: 'PostToolUse', tool_response: obj({ stdout: 'ok' }) }));
        const answer = await send({ method: 'POST', path: `/hook/${event}`, headers: { ...t.auth, 'Content-Type': 'application/json', 'X-LTM-Wait': '1' }, body: payload });
        assert.equal(answer.status, 200, `hook ${event} with session_id ${name}: ${answer.status} ${answer.text}`);
        assertPrototypeClean(`hook ${event} with session_id ${name}`);
      }
      const list = await send({ method: 'POST', path: '/mcp', headers: mcpHeaders(), body: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}' });
      assert.equal(list.status, 200, `tools/list after session_id ${name}: ${list.status} ${list.text}`);
      const rpc = list.json() as { error?: { code: number }; result?: { tools: { name: string }[] } };
      assert.equal(rpc.error, undefined, `tools/list after session_id ${name} answered ${JSON.stringify(rpc.error)}`);
      assert.deepEqual(rpc.result!.tools.map((x) => x.name).sort(), TOOL_NAMES);
      await assertMcpWorks(`after session_id ${name}`);
    }
    await t.idle();
    assertStateSane('after prototype-named sessions');
    // A fresh store reads what the server wrote without trouble.
    const fresh = MemoryStore.open(t.project);
    try {
      assert.equal(fresh.check().healthy, true, JSON.stringify(fresh.check().problems));
      assert.ok(fresh.currentState.session_count >= 1);
    } finally {
      fresh.dispose();
    }
  });

  it('regression: a tool_use_id outside Latin-1 or with DEL does not make pre_tool_use fail with 500', async () => {
    for (const id of ['中文', '🧠', '\u007f', 'toolu_\u2028', 'é']) {
      const answer = await postHook(t.port, t.token, 'pre_tool_use', { session_id: 'latin1-test', tool_use_id: id, tool_name: 'Bash' });
      requests++;
      assert.ok(answer.status < 500, `pre_tool_use with tool_use_id ${JSON.stringify(id)}: ${answer.status} ${answer.text}\nserver log (last entry): ${lastLog()}`);
    }
    await assertAlive();
  });

  it('regression: request targets that are not valid URL paths ("//", "/\\") answer 4xx, not 500', async () => {
    for (const p of ['//', '/\\', '///', '//mcp', '/\\hook/session_start']) {
      for (const method of ['GET', 'POST']) {
        const req: RawRequest = { method, path: p, headers: { ...t.auth, 'Content-Type': 'application/json' }, body: method === 'POST' ? '{}' : undefined };
        const answer = await send(req);
        assertNot5xx(answer, req);
      }
    }
    await assertAlive();
  });

  it('a 200 KB and a 0.9 MB session_id keep state.json valid and small', async () => {
    for (const size of [200_000, 900_000]) {
      const id = `s${'x'.repeat(size)}`;
      for (const event of ['session_start', 'post_tool_use', 'pre_compact']) {
        const answer = await postHook(t.port, t.token, event, { session_id: id, tool_response: { stdout: 'ok' } });
        requests++;
        assert.equal(answer.status, 200, `${event} with a ${size}-character session_id: ${answer.status} ${answer.text.slice(0, 200)}`);
      }
      await t.idle();
      assertStateSane(`after a ${size}-character session_id`);
      const end = await postHook(t.port, t.token, 'session_end', { session_id: id });
      requests++;
      assert.equal(end.status, 200);
    }
    await assertAlive();
  });

  it('bodies around the 1 MiB cap: 413 above it (with Content-Length or chunked), no 5xx below it, store unchanged', async () => {
    await t.idle();
    const shared = sharedSnapshot(t.project);
    const MiB = 1024 * 1024;
    const big = (n: number) => jsonText(obj({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: obj({ name: 'store_memory', arguments: obj({ content: 'c'.repeat(n) }) }) }));
    const cases: { path: string; body: string; chunked: boolean; over: boolean }[] = [];
    for (const p of ['/mcp', '/hook/session_start', '/hook/post_tool_use']) {
      cases.push({ path: p, body: big(MiB - 300), chunked: false, over: false });
      cases.push({ path: p, body: big(MiB + 10), chunked: false, over: true });
      cases.push({ path: p, body: big(Math.round(1.2 * MiB)), chunked: true, over: true });
    }
    for (const c of cases) {
      const bytes = Buffer.from(c.body);
      const req: RawRequest = c.chunked
        ? { method: 'POST', path: c.path, headers: mcpHeaders(), chunks: Array.from({ length: Math.ceil(bytes.length / 65_536) }, (_, i) => bytes.subarray(i * 65_536, (i + 1) * 65_536)) }
        : { method: 'POST', path: c.path, headers: mcpHeaders({ 'Content-Length': bytes.length }), body: bytes };
      const answer = await send(req);
      if (c.over) assert.equal(answer.status, 413, `${c.path} with ${bytes.length} bytes${c.chunked ? ' chunked' : ''}: ${answer.status}`);
      else assertNot5xx(answer, req);
      if (c.path === '/mcp' && !c.over) {
        const rpc = JSON.parse(answer.text) as { error?: unknown; result?: { isError?: boolean } };
        assert.ok(rpc.error !== undefined || rpc.result?.isError === true, 'store_memory without a topic was accepted');
      }
      await assertAlive();
    }
    await t.idle();
    assertSnapshotUnchanged(shared, sharedSnapshot(t.project), 'bodies around 1 MiB');
    assertStateSane('after bodies around 1 MiB');
    assertPrototypeClean('bodies around 1 MiB');
  });

  it('property: every MCP tool with fuzzed arguments answers < 500, invalid store_memory is an error, store unchanged', async () => {
    await t.idle();
    const shared = sharedSnapshot(t.project);
    await checkProperty('mcp tools/call', fc.array(toolCalls(), { minLength: 1, maxLength: 4 }), async (batch) => {
      for (const f of batch) await sendAndCheck(f, shared);
      await assertAlive();
    }, 120);
    await assertMcpWorks('after fuzzed tool calls');
  });

  it('property: odd JSON-RPC bodies, batches and MCP headers answer < 500, store unchanged', async () => {
    await t.idle();
    const shared = sharedSnapshot(t.project);
    await checkProperty('mcp bodies', fc.array(rpcBodies(), { minLength: 1, maxLength: 4 }), async (batch) => {
      for (const f of batch) await sendAndCheck(f, shared);
      await assertAlive();
    }, 120);
    // The empty batch is an Invalid Request in JSON-RPC 2.0: an error, not a silent 202.
    const empty = await send({ method: 'POST', path: '/mcp', headers: mcpHeaders(), body: '[]' });
    assert.ok(empty.status >= 400 && empty.status < 500, `[] answered ${empty.status} ${empty.text}`);
    assert.equal((JSON.parse(empty.text) as { error?: { code: number } }).error?.code, -32600, `[] answered ${empty.text}`);
    await assertMcpWorks('after odd JSON-RPC bodies');
  });

  it('property: wrong methods, paths, hosts, origins, tokens and duplicate headers answer < 500, store unchanged', async () => {
    await t.idle();
    const shared = sharedSnapshot(t.project);
    await checkProperty('routes and headers', fc.array(routeRequests(), { minLength: 1, maxLength: 6 }), async (batch) => {
      for (const f of batch) await sendAndCheck(f, shared);
      await assertAlive();
    }, 120);
    await assertMcpWorks('after fuzzed routes');
  });

  it('property: raw requests with duplicate, missing or malformed headers (Host, Content-Length, Transfer-Encoding) answer < 500', async () => {
    await t.idle();
    const shared = sharedSnapshot(t.project);
    const good = () => `127.0.0.1:${t.port}`;
    const headerLines = fc.subarray(
      [
        () => `Host: ${good()}`,
        () => 'Host: evil.example',
        () => `Host: ${good()}`,
        () => `Authorization: Bearer ${t.token}`,
        () => 'Authorization: Bearer wrong',
        () => `Authorization: Bearer ${t.token}`,
        () => 'Content-Type: application/json',
        () => 'Accept: application/json, text/event-stream',
        () => 'Content-Length: 2',
        () => 'Content-Length: 40',
        () => 'Transfer-Encoding: chunked',
        () => 'Transfer-Encoding: gzip, chunked',
        () => 'X-LTM-Wait: 1',
        () => `X-LTM-Project: ${t.project}`,
        () => ' folded-continuation',
        () => 'X-Bad: a\u0000b',
        () => `X-Long: ${'h'.repeat(20_000)}`,
        () => 'Origin: null',
        () => '__proto__: x',
      ],
      { minLength: 0, maxLength: 8 },
    );
    const startLine = fc.constantFrom(
      (p: string) => `POST ${p} HTTP/1.1`,
      (p: string) => `POST ${p} HTTP/1.0`,
      (p: string) => `GET ${p} HTTP/1.1`,
      (p: string) => `POST http://127.0.0.1:${t.port}${p} HTTP/1.1`,
      (p: string) => `POST ${p} HTTP/2.0`,
      (p: string) => `POST  ${p}  HTTP/1.1`,
      (p: string) => `post ${p} HTTP/1.1`,
    );
    const pathArb = fc.constantFrom('/mcp', '/hook/session_start', '/hook/post_tool_use', '/health', '/hook/__proto__');
    const bodyArb = fc.constantFrom('{}', '[]', '{"jsonrpc":"2.0","id":1,"method":"tools/list"}', '2\r\n{}\r\n0\r\n\r\n', '', '{"session_id":"__proto__"}');
    let statuses = 0;
    await checkProperty('raw header lines', fc.tuple(startLine, pathArb, headerLines, bodyArb, fc.shuffledSubarray([0, 1, 2])), async ([start, p, lines, body]) => {
      const text = `${start(p)}\r\n${lines.map((l) => l()).join('\r\n')}${lines.length ? '\r\n' : ''}\r\n${body}`;
      requests++;
      const answer = await rawHttp(t.port, text);
      const where = `raw request ${JSON.stringify(text.slice(0, 400))}`;
      assert.ok(answer.status !== 0, `${where}: the connection closed without an answer`);
      assert.ok(answer.status < 500, `${where}: ${answer.text.slice(0, 300)}\nserver log (last entry): ${lastLog()}`);
      statuses++;
      assertPrototypeClean('raw request');
      await t.idle();
      assertSnapshotUnchanged(shared, sharedSnapshot(t.project), where);
      await assertAlive();
    }, 150);
    assert.equal(statuses, 150);
  });

  it('property: hook payloads of every shape answer < 500; state.json stays valid and small; shared files unchanged', async () => {
    await t.idle();
    const shared = sharedSnapshot(t.project);
    await checkProperty('hook payloads', fc.array(hookRequests(), { minLength: 1, maxLength: 6 }), async (batch) => {
      for (const f of batch) await sendAndCheck(f, shared);
      // End every session the batch used, as Claude Code would, so that state.json does not only grow.
      for (const f of batch) {
        const sessionEnd = { ...f.req, path: '/hook/session_end', headers: { ...f.req.headers, 'X-LTM-Wait': '1' } };
        assertNot5xx(await send(sessionEnd), sessionEnd);
      }
      await t.idle();
      assertStateSane('after fuzzed hooks');
      assertPrototypeClean('after fuzzed hooks');
      await assertAlive();
    }, 120);
    await assertMcpWorks('after fuzzed hooks');
  });

  it('property: valid but odd store_memory (prototype names as tags and topic, control characters) round-trips exactly and stays healthy', async () => {
    const safeText = fc.oneof(
      fc.constantFrom(...PROTO_NAMES),
      fc.constantFrom('a\u0000b', 'tab\there', '\u001b[31mred', '---', '## Summary', 'x\n## Content\ny', '🧠 memory', 'line\r\nbreak', 'quote " and \' and \\'),
      fc.string({ unit: 'binary', minLength: 1, maxLength: 30 }),
    ).filter((s) => s.trim().length > 0);
    const tagArb = fc.oneof(fc.constantFrom(...PROTO_NAMES), fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 20 })).filter((s) => s.trim().length > 0 && !/[\r\n,]/.test(s));
    const created: string[] = [];
    const createdTags = new Set<string>();
    const client = await mcpClient(t.port, t.token, 'ltm-adversarial-odd-store');
    try {
      await checkProperty(
        'valid odd store_memory',
        fc.record({ topic: safeText, content: safeText, tags: fc.array(tagArb, { minLength: 1, maxLength: 4 }), toolUseId: fc.constantFrom(...PROTO_NAMES) }),
        async ({ topic, content, tags, toolUseId }) => {
          const pre = await postHook(t.port, t.token, 'pre_tool_use', { session_id: toolUseId, tool_use_id: toolUseId, tool_name: 'mcp__ltm__store_memory' });
          assert.equal(pre.status, 200);
          const res = await client.callTool({ name: 'store_memory', arguments: { topic, content, tags }, _meta: { 'claudecode/toolUseId': toolUseId } });
          requests += 2;
          assertPrototypeClean('odd store_memory');
          if (res.isError) {
            // Refusing is allowed (e.g. a character the codec will not keep), storing half is not.
            return;
          }
          const id = (res.structuredContent as { id: string }).id;
          created.push(id);
          for (const tag of tags) createdTags.add(tag.trim().toLowerCase());
          const fresh = MemoryStore.open(t.project);
          try {
            const m = fresh.peek(id);
            assert.equal(m.topic, topic.trim(), `topic of ${id} did not round-trip`);
            assert.equal(m.content, content, `content of ${id} did not round-trip`);
            assert.deepEqual([...m.tags].sort(), [...new Set(tags.map((x) => x.trim().toLowerCase()))].sort(), `tags of ${id}`);
            for (const tag of m.tags) {
              assert.ok(fresh.list({ tag, limit: 500 }).memories.some((x) => x.id === id), `list by tag ${JSON.stringify(tag)} misses ${id}`);
            }
          } finally {
            fresh.dispose();
          }
        },
        40,
      );
      assert.ok(created.length >= 20, `only ${created.length} of 40 odd but valid memories were accepted`);
      // Prototype-named tags are real tags: listing by them finds the memories, through MCP too.
      for (const tag of ['__proto__', 'constructor', 'tostring']) {
        const listed = await client.callTool({ name: 'list_memories', arguments: { tag, limit: 500 } });
        assert.notEqual(listed.isError, true, `list_memories by tag ${tag}: ${JSON.stringify(listed.content)}`);
      }
    } finally {
      await client.close();
    }
    await t.idle();
    const fresh = MemoryStore.open(t.project);
    try {
      const report = fresh.check();
      assert.equal(report.healthy, true, JSON.stringify(report.problems));
      const index = JSON.parse(fs.readFileSync(path.join(ltmRoot(t.project), 'index.json'), 'utf8')) as { tag_index: Record<string, string[]> };
      for (const tag of ['__proto__', 'constructor', 'prototype']) {
        if (createdTags.has(tag)) assert.ok(Object.prototype.hasOwnProperty.call(index.tag_index, tag), `index.json tag_index lost the ${JSON.stringify(tag)} tag`);
      }
    } finally {
      fresh.dispose();
    }
    assertPrototypeClean('after odd stores');
    await assertMcpWorks('after odd stores');
  });

  it('property: path-like IDs given to the CLI (get, forget, restore) and to updateSummary are refused and change nothing', async () => {
    await t.idle();
    const shared = sharedSnapshot(t.project);
    const store = MemoryStore.open(t.project);
    try {
      await checkProperty(
        'cli ids',
        fc.tuple(fc.constantFrom('get', 'forget', 'restore'), fc.oneof(fc.constantFrom(...TRAVERSAL_IDS.filter((x) => x !== '')), fc.constantFrom(...PROTO_NAMES)), fc.boolean()),
        async ([command, id, purge]) => {
          const out = await runCli([command, id, '--project', t.project, ...(purge && command === 'forget' ? ['--purge'] : [])]);
          assert.notEqual(out.exitCode, 0, `ltm ${command} ${JSON.stringify(id)} succeeded: ${out.stdout}`);
          assert.equal(out.stdout, '', `ltm ${command} ${JSON.stringify(id)} printed to stdout`);
          assert.match(out.stderr, /^ltm: [^\n]*\n$/, `ltm ${command} ${JSON.stringify(id)}: one line on stderr, got ${JSON.stringify(out.stderr)}`);
          await assert.rejects(store.updateSummary(id, 'new summary'), `updateSummary(${JSON.stringify(id)}) was accepted`);
          assertSnapshotUnchanged(shared, sharedSnapshot(t.project), `ltm ${command} ${JSON.stringify(id)}`);
          assertPrototypeClean(`ltm ${command}`);
        },
        40,
      );
    } finally {
      store.dispose();
    }
  });
});
