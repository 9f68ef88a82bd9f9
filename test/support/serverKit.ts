/**
 * Helpers of the server tests: a real LtmServer on 127.0.0.1 (in-process or
 * as `ltm serve`), raw HTTP requests with any headers, the hook endpoints, the
 * real MCP SDK client, and the real hook script run by `sh`.
 */
import { strict as assert } from 'node:assert';
import type { ServerInfo } from '../../src/servers/serverInfo';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { MemoryStore } from '../../src/core/store';
import { LtmServer, type LtmServerOptions } from '../../src/servers/ltmServer';
import { REPO_ROOT, ltmRoot, makeTempProject, readJson, removeDir, statsOnDisk } from './storeKit';

export { REPO_ROOT };
export const CLI = path.join(REPO_ROOT, 'dist', 'cli.js');
export const HOOK_SCRIPT = path.join(REPO_ROOT, 'hooks', 'ltm-hook.sh');

export type Json = Record<string, unknown>;

/** The tools the MCP server offers (README, "Claude Code integration"). */
export const TOOL_NAMES = [
  'store_memory',
  'recall',
  'list_memories',
  'get_memory',
  'forget',
  'ltm_status',
  'ltm_check',
  'ltm_fix',
  'search_archives',
  'restore_memory',
  'update_memory',
].sort();

/** Asserts that `value` has each key with the given typeof ('array' and 'null' too). */
export function assertShape(value: unknown, shape: Record<string, string | string[]>, where: string): asserts value is Json {
  assert.ok(value && typeof value === 'object' && !Array.isArray(value), `${where} is not an object: ${JSON.stringify(value)}`);
  for (const [key, types] of Object.entries(shape)) {
    assert.ok(key in value, `${where} has no "${key}": ${JSON.stringify(value)}`);
    const v = (value as Json)[key];
    const actual = v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v;
    assert.ok((Array.isArray(types) ? types : [types]).includes(actual), `${where}.${key} is ${actual}, expected ${String(types)}`);
  }
}

export interface HttpAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  json: () => Json;
}

export interface RawRequest {
  method?: string;
  path: string;
  headers?: Record<string, string | number>;
  /** A string or bytes sent with Content-Length, or chunks sent chunked (no Content-Length). */
  body?: string | Buffer;
  chunks?: Buffer[];
  host?: string;
}

/**
 * One HTTP request on a fresh connection (no keep-alive), with exactly the
 * given headers (Node adds Host unless one is given). A server that answers
 * early and closes (413) may reset the connection while the body is still
 * being written: the answer counts as long as it arrived.
 */
export function rawRequest(port: number, req: RawRequest): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    let answered = false;
    const r = http.request(
      { host: req.host ?? '127.0.0.1', port, method: req.method ?? 'GET', path: req.path, headers: req.headers, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', () => undefined);
        res.on('end', () => {
          answered = true;
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: () => JSON.parse(text) as Json });
        });
        res.on('aborted', () => {
          if (!answered) reject(new Error('response aborted'));
        });
      },
    );
    r.on('error', (error) => {
      if (!answered) setTimeout(() => (answered ? undefined : reject(error)), 200);
    });
    if (req.chunks) {
      const write = (i: number): void => {
        if (i >= req.chunks!.length) {
          r.end();
          return;
        }
        if (r.destroyed) return;
        if (r.write(req.chunks![i]!)) setImmediate(() => write(i + 1));
        else r.once('drain', () => write(i + 1));
      };
      write(0);
    } else {
      r.end(req.body);
    }
  });
}

export interface TestServer {
  project: string;
  store: MemoryStore;
  server: LtmServer;
  port: number;
  token: string;
  auth: Record<string, string>;
  /** Waits for what the server writes after answering (see LtmServer.idle). */
  idle: () => Promise<void>;
  stop: () => Promise<void>;
}

/** A temp project with an in-process server. `prepare` runs on the store before the server starts. */
export async function startTestServer(
  options: Partial<Omit<LtmServerOptions, 'store'>> & { project?: string; prepare?: (store: MemoryStore, project: string) => Promise<void> | void } = {},
): Promise<TestServer> {
  const { project: given, prepare, ...serverOptions } = options;
  const project = given ?? makeTempProject('ltm-srv-');
  const store = MemoryStore.open(project);
  store.init();
  await prepare?.(store, project);
  const server = await LtmServer.start({ version: 'test', ...serverOptions, store });
  return {
    project,
    store,
    server,
    port: server.port,
    token: server.token,
    auth: { Authorization: `Bearer ${server.token}` },
    idle: () => server.idle(),
    stop: async () => {
      await server.stop();
      store.dispose();
      if (!given) removeDir(project);
    },
  };
}

/**
 * Posts a hook payload as the hook script does. By default with `X-LTM-Wait`, so that the work the
 * server does after answering (stats at session start, eviction at session
 * end) is done when this resolves; pass `{ 'X-LTM-Wait': undefined }` for the
 * answer alone, as the hook script gets it.
 */
export function postHook(port: number, token: string, event: string, payload: unknown, headers: Record<string, string | undefined> = {}): Promise<HttpAnswer> {
  const body = JSON.stringify(payload);
  const all: Record<string, string | number | undefined> = { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body), 'X-LTM-Wait': '1', ...headers };
  for (const key of Object.keys(all)) if (all[key] === undefined) delete all[key];
  return rawRequest(port, {
    method: 'POST',
    path: `/hook/${event}`,
    headers: all as Record<string, string | number>,
    body,
  });
}

/** The X-LTM-Info header of a hook answer. */
export function hookInfo(answer: HttpAnswer): Json {
  const raw = answer.headers['x-ltm-info'];
  assert.equal(typeof raw, 'string', `no X-LTM-Info header (status ${answer.status}: ${answer.text})`);
  return JSON.parse(raw as string) as Json;
}

/** A PostToolUse payload as Claude Code sends it. */
export function postToolUsePayload(sessionId: string, toolResponse: unknown, extra: Json = {}): Json {
  return {
    session_id: sessionId,
    transcript_path: `/tmp/${sessionId}.jsonl`,
    cwd: '/tmp',
    hook_event_name: 'PostToolUse',
    tool_name: 'Bash',
    tool_input: { command: 'npm test' },
    tool_response: toolResponse,
    tool_use_id: `toolu_${Math.random().toString(16).slice(2, 10)}`,
    ...extra,
  };
}

export function sessionStartPayload(sessionId: string, source = 'startup'): Json {
  return { session_id: sessionId, transcript_path: `/tmp/${sessionId}.jsonl`, cwd: '/tmp', hook_event_name: 'SessionStart', source };
}

/** A connected MCP SDK client with the bearer token. */
export async function mcpClient(port: number, token: string, name = 'ltm-server-test'): Promise<Client> {
  const client = new Client({ name, version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  return client;
}

/** state.json as it is on disk. */
export function readState(project: string): Json & { sessions: Record<string, Json>; session_count: number } {
  return readJson(path.join(ltmRoot(project), 'state.json')) as Json & { sessions: Record<string, Json>; session_count: number };
}

/** stats.json with its journal applied, as LTM reads them. */
export function readStats(project: string): Record<string, { access_count: number; accessed_at: string; last_session: number; priority: number }> {
  return statsOnDisk(ltmRoot(project));
}

/**
 * Writes a file as an editor that renames would: a new inode, so a running
 * store notices the change before its next read or write.
 */
export function replaceFile(file: string, text: string): void {
  const tmp = `${file}.test-tmp`;
  fs.writeFileSync(tmp, text);
  fs.renameSync(tmp, file);
}

/** Merges `config` into state.json. */
export function setConfig(project: string, config: Json): void {
  const file = path.join(ltmRoot(project), 'state.json');
  const state = fs.existsSync(file)
    ? (readJson(file) as Json)
    : { version: 1, session_count: 0, sessions: {}, compaction_count: 0, last_eviction: null, config: {} };
  state.config = { max_memories: 100, memories_to_load: 10, eviction_batch_size: 10, ...(state.config as Json), ...config };
  fs.mkdirSync(path.dirname(file), { recursive: true });
  replaceFile(file, `${JSON.stringify(state, null, 2)}\n`);
}

/** A port that nothing listens on (bound, then released). */
export async function closedPort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

/** The pid of a process that has exited. */
export function deadPid(): number {
  const r = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(r.stdout);
}

export interface HookRun {
  status: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/**
 * Runs a hook script with `shell` (sh by default; a shell with its options, as
 * `bash --posix`), the payload on stdin and exactly the given environment (plus PATH).
 */
export function runHookScript(script: string, event: string, payload: unknown, env: Record<string, string>, cwd?: string, shell = 'sh', args: readonly string[] = []): Promise<HookRun> {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const [program, ...options] = shell.split(' ') as [string, ...string[]];
    const child = spawn(program, [...options, script, event, ...args], { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env }, cwd, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.stdin.on('error', () => undefined);
    child.on('close', (status) => resolve({ status, stdout, stderr, ms: Number(process.hrtime.bigint() - started) / 1e6 }));
    child.stdin.end(typeof payload === 'string' ? payload : JSON.stringify(payload));
  });
}

// --- `ltm serve` as a process ----------------------------------------------------

export interface ServeProcess {
  child: ChildProcess;
  output: () => string;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
}

/** Spawns `node dist/cli.js <args>` without waiting for anything. */
export function spawnLtm(args: string[]): ServeProcess {
  return spawnNode([CLI, ...args]);
}

/** Spawns `node <args>` without waiting for anything, its output kept. */
export function spawnNode(args: string[]): ServeProcess {
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => stdout + stderr, stdout: () => stdout, stderr: () => stderr, exited };
}

export async function waitFor<T>(probe: () => T | null | undefined, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== null && value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** What server.json holds: the server's own type. */
export type ServerJson = ServerInfo;

export function serverJsonPath(project: string): string {
  return path.join(ltmRoot(project), 'server.json');
}

/** Waits until server.json names the given process. */
export async function waitForServerJson(project: string, proc: ServeProcess): Promise<ServerJson> {
  return waitFor(
    () => {
      if (proc.child.exitCode !== null) throw new Error(`ltm serve exited early (${proc.child.exitCode}): ${proc.output()}`);
      try {
        const info = JSON.parse(fs.readFileSync(serverJsonPath(project), 'utf8')) as ServerJson;
        return info.pid === proc.child.pid ? info : null;
      } catch {
        return null;
      }
    },
    15_000,
    'ltm serve to write server.json',
  );
}

export async function stopProcess(proc: ServeProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
  if (proc.child.exitCode === null && proc.child.signalCode === null) proc.child.kill(signal);
  return proc.exited;
}
