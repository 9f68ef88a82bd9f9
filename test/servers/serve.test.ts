/**
 * `ltm serve` as a process: server.json, signals, a stale or live previous
 * server, the remembered port and token, and `ltm env`.
 */
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import type { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { version as PACKAGE_VERSION } from '../../package.json';
import { MemoryStore } from '../../src/core/store';
import { storePaths } from '../../src/core/storeFiles';
import { ServerRunningError } from '../../src/servers/serverInfo';
import { ensureCliBuilt, ltmRoot, makeTempProject, removeDir, testId, writeMemory } from '../support/storeKit';
import {
  CLI,
  HOOK_SCRIPT,
  closedPort,
  deadPid,
  mcpClient,
  rawRequest,
  serverJsonPath,
  sessionStartPayload,
  spawnLtm,
  spawnNode,
  startTestServer,
  stopProcess,
  waitForServerJson,
  type ServeProcess,
  type ServerJson,
} from '../support/serverKit';

const ISO_RE = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;

async function health(port: number, token: string): Promise<number> {
  try {
    return (await rawRequest(port, { path: '/health', headers: { Authorization: `Bearer ${token}` } })).status;
  } catch {
    return 0;
  }
}

/** Resolves with the exit code, or fails when the process does not exit in time. */
async function exitWithin(proc: ServeProcess, ms: number, what: string): Promise<number | null> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: still running after ${ms} ms\n${proc.output()}`)), ms);
  });
  try {
    return await Promise.race([proc.exited, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

describe('ltm serve (process)', function () {
  this.timeout(30_000);
  let project: string;
  const running: ServeProcess[] = [];

  before(() => ensureCliBuilt());
  beforeEach(() => (project = makeTempProject('ltm-serve-')));
  afterEach(async () => {
    for (const proc of running.splice(0)) {
      if (proc.child.exitCode === null && proc.child.signalCode === null) {
        proc.child.kill('SIGKILL');
        await proc.exited;
      }
    }
    removeDir(project);
  });

  function serve(...args: string[]): ServeProcess {
    const proc = spawnLtm(['serve', '--project', project, ...args]);
    running.push(proc);
    return proc;
  }

  it('writes server.json (port, token, pid, version, started_at) with mode 0600, and serves with that token', async () => {
    const before = Date.now();
    const proc = serve();
    const info = await waitForServerJson(project, proc);
    assert.equal(info.pid, proc.child.pid);
    assert.ok(Number.isInteger(info.port) && info.port > 0 && info.port < 65536);
    assert.match(info.token, /^[A-Za-z0-9_-]{32,}$/);
    assert.equal(info.version, PACKAGE_VERSION);
    assert.match(info.started_at, ISO_RE);
    assert.ok(Date.parse(info.started_at) >= before - 1000 && Date.parse(info.started_at) <= Date.now());
    assert.equal(info.url, `http://127.0.0.1:${info.port}`);
    assert.equal(fs.statSync(serverJsonPath(project)).mode & 0o777, 0o600);
    // The token is a secret: the identity file that keeps it across restarts is owner-only too.
    assert.equal(fs.statSync(path.join(ltmRoot(project), 'server-identity.json')).mode & 0o777, 0o600);
    assert.equal(await health(info.port, info.token), 200);
    assert.equal(await health(info.port, 'wrong'), 401);
    assert.match(proc.stdout(), new RegExp(`MCP: +http://127\\.0\\.0\\.1:${info.port}/mcp`));
    assert.equal(proc.stdout().match(/serving/g)?.length, 1, 'one banner');
    assert.equal(proc.stderr(), '', 'nothing on stderr (no second banner)');
  });

  it('saves the caches it opened without while it runs, in a pause between requests: a kill -9 afterwards leaves them', async () => {
    const writer = MemoryStore.open(project);
    writer.init();
    for (let i = 0; i < 20; i++) await writer.store({ topic: `Cache step ${i}`, content: `Warm the cache for step ${i}.` });
    writer.dispose();
    const paths = storePaths(project);
    fs.rmSync(paths.parseCache, { force: true });
    fs.rmSync(paths.searchIndex, { force: true });
    const proc = serve();
    await waitForServerJson(project, proc);
    const deadline = Date.now() + 10_000;
    while (!(fs.existsSync(paths.parseCache) && fs.existsSync(paths.searchIndex)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    assert.ok(fs.existsSync(paths.parseCache) && fs.existsSync(paths.searchIndex), `no caches after 10 s:\n${proc.output()}`);
    proc.child.kill('SIGKILL');
    await proc.exited;
    const reader = MemoryStore.open(project);
    try {
      assert.equal(reader.memoryCount(), 20);
      assert.ok(fs.statSync(paths.searchIndex).size > 0);
    } finally {
      reader.dispose();
    }
  });

  it("answers a first session start, and an MCP client's calls after it, without loading Node's web Request classes (undici)", async () => {
    // Read without caches, so that the session start below comes in while the store opens, and waits for it.
    const writer = MemoryStore.open(project);
    writer.init();
    writer.dispose();
    for (let i = 0; i < 2_000; i++) writeMemory(ltmRoot(project), testId(i + 1), { topic: `Start step ${i}`, content: `What session start ${i} brings.` });
    // Loaded before the CLI: notes, for each answer the server sends, whether Node had loaded undici (its
    // web Request, Response and Headers) by then, and the moment it has.
    const notes = path.join(project, 'undici-notes.jsonl');
    const preload = path.join(project, 'undici-probe.cjs');
    fs.writeFileSync(
      preload,
      `const fs = require('node:fs');
const http = require('node:http');
const notes = ${JSON.stringify(notes)};
const loaded = () => process.moduleLoadList.includes('NativeModule internal/deps/undici/undici');
const end = http.ServerResponse.prototype.end;
http.ServerResponse.prototype.end = function (...args) {
  fs.appendFileSync(notes, JSON.stringify({ answered: this.req && this.req.url, undici: loaded() }) + '\\n');
  return end.apply(this, args);
};
const poll = setInterval(() => {
  if (!loaded()) return;
  fs.appendFileSync(notes, JSON.stringify({ undici: true }) + '\\n');
  clearInterval(poll);
}, 5);
poll.unref();
`,
    );
    const proc = spawnNode(['--require', preload, CLI, 'serve', '--project', project]);
    running.push(proc);
    const info = await waitForServerJson(project, proc);
    const body = JSON.stringify(sessionStartPayload('first-start'));
    const answer = await rawRequest(info.port, {
      method: 'POST',
      path: '/hook/session_start',
      headers: { Authorization: `Bearer ${info.token}`, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) },
      body,
    });
    assert.equal(answer.status, 200, answer.text);
    assert.match(answer.text, /Start step/, 'the session start brought the memories');
    const read = () => (fs.existsSync(notes) ? fs.readFileSync(notes, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { answered?: string; undici: boolean }) : []);
    const started = read().find((note) => note.answered === '/hook/session_start');
    assert.deepEqual(started, { answered: '/hook/session_start', undici: false }, `the notes: ${JSON.stringify(read())}`);
    // Node loads undici at the first use of Request, Response or Headers: ~25 ms that a first MCP request paid with
    // the SDK's transport, in the middle of the store's opening (mcpHttpTransport.ts).
    const client = await mcpClient(info.port, info.token);
    try {
      const recalled = await client.callTool({ name: 'recall', arguments: { query: 'session start' } });
      assert.notEqual(recalled.isError, true, JSON.stringify(recalled));
      const stored = await client.callTool({ name: 'store_memory', arguments: { topic: 'Served over Node requests', content: 'No web Request objects.' } });
      assert.notEqual(stored.isError, true, JSON.stringify(stored));
      await (client.transport as StreamableHTTPClientTransport).terminateSession();
    } finally {
      await client.close();
    }
    const mcpAnswers = read().filter((note) => note.answered === '/mcp');
    assert.ok(mcpAnswers.length >= 5, `the MCP answers noted: ${JSON.stringify(read())}`);
    assert.deepEqual(
      read().filter((note) => note.undici),
      [],
      `undici was loaded: ${JSON.stringify(read())}\n${proc.output()}`,
    );
  });

  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    it(`removes server.json and stops listening on ${signal}, exiting 0`, async () => {
      const proc = serve();
      const info = await waitForServerJson(project, proc);
      proc.child.kill(signal);
      const code = await exitWithin(proc, 5_000, `ltm serve after ${signal}`);
      assert.equal(code, 0, proc.output());
      assert.equal(fs.existsSync(serverJsonPath(project)), false, 'server.json is still there');
      assert.equal(await health(info.port, info.token), 0, 'still answering');
      assert.match(proc.stdout(), /LTM server stopped\./);
    });
  }

  it('keeps serving when the reader of its output goes away, and still stops cleanly, exiting 0 without an error', async () => {
    const proc = serve();
    const info = await waitForServerJson(project, proc);
    // As `ltm serve | head -1` does once it has the first line.
    proc.child.stdout!.destroy();
    assert.equal(await health(info.port, info.token), 200);
    proc.child.kill('SIGTERM');
    const code = await exitWithin(proc, 5_000, 'ltm serve after SIGTERM');
    assert.equal(proc.stderr(), '');
    assert.equal(code, 0);
    assert.equal(fs.existsSync(serverJsonPath(project)), false, 'server.json is still there');
  });

  it('stops at once on SIGTERM while a request that waited for its store to open is never finished by its client', async () => {
    // Read without caches, so that the request below comes in while the store opens.
    const writer = MemoryStore.open(project);
    writer.init();
    writer.dispose();
    for (let i = 0; i < 2_000; i++) writeMemory(ltmRoot(project), testId(i + 1), { topic: `Opening step ${i}`, content: `Step ${i} of a slow opening.` });
    const proc = serve();
    const info = await waitForServerJson(project, proc);
    // A hook whose body never comes in full: in flight until the server's request timeout (30 s).
    const socket = net.connect(info.port, '127.0.0.1');
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    socket.write(
      `POST /hook/session_start HTTP/1.1\r\nHost: 127.0.0.1:${info.port}\r\nAuthorization: Bearer ${info.token}\r\n` +
        'Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"session_id": "s-',
    );
    try {
      // At once: the request is in when the store has opened (it reads 2,000 files first), and stopping waits for the opening.
      proc.child.kill('SIGTERM');
      const code = await exitWithin(proc, 5_000, 'ltm serve after SIGTERM with a request in flight');
      assert.equal(code, 0, proc.output());
    } finally {
      socket.destroy();
    }
  });

  it('a signal the moment server.json appears (while it starts) still stops it cleanly, removing server.json', async () => {
    for (let round = 0; round < 5; round++) {
      const proc = serve();
      const file = serverJsonPath(project);
      const deadline = Date.now() + 10_000;
      while (!fs.existsSync(file) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 1));
      proc.child.kill('SIGTERM');
      const code = await exitWithin(proc, 5_000, `ltm serve after an early SIGTERM (round ${round})`);
      assert.equal(code, 0, `round ${round}: ${proc.output()}`);
      assert.equal(fs.existsSync(file), false, `round ${round}: server.json is still there`);
    }
  });

  it('replaces a stale server.json whose process is gone', async () => {
    const port = await closedPort();
    fs.mkdirSync(ltmRoot(project), { recursive: true });
    const stale = { port, token: 'stale-token-stale-token-stale-token', pid: deadPid(), version: '0.0.1', started_at: '2020-01-01T00:00:00.000Z', url: `http://127.0.0.1:${port}`, project };
    fs.writeFileSync(serverJsonPath(project), `${JSON.stringify(stale, null, 2)}\n`);
    const proc = serve();
    const info = await waitForServerJson(project, proc);
    assert.equal(info.pid, proc.child.pid);
    assert.notEqual(info.token, stale.token);
    assert.equal(info.version, PACKAGE_VERSION);
    assert.equal(await health(info.port, info.token), 200);
  });

  it('replaces a stale server.json whose pid now belongs to another process (pid reuse after a reboot)', async () => {
    const port = await closedPort();
    fs.mkdirSync(ltmRoot(project), { recursive: true });
    // The test runner's own pid: alive, but not an LTM server, and nothing listens on the port.
    const stale = { port, token: 'stale-token-stale-token-stale-token', pid: process.pid, version: '0.1.0', started_at: '2020-01-01T00:00:00.000Z', url: `http://127.0.0.1:${port}`, project };
    fs.writeFileSync(serverJsonPath(project), `${JSON.stringify(stale, null, 2)}\n`);
    const proc = serve();
    const info = await waitForServerJson(project, proc);
    assert.equal(info.pid, proc.child.pid);
    assert.equal(await health(info.port, info.token), 200);
  });

  it('refuses a second server for the same project with a one-line message, and the first keeps serving', async () => {
    const first = serve();
    const info = await waitForServerJson(project, first);
    const bytes = fs.readFileSync(serverJsonPath(project));
    const second = serve();
    const code = await exitWithin(second, 10_000, 'the second ltm serve');
    assert.notEqual(code, 0);
    assert.equal(second.stdout(), '');
    assert.match(second.stderr(), /^ltm: [^\n]+\n$/, `one line on stderr: ${JSON.stringify(second.stderr())}`);
    assert.match(second.stderr(), new RegExp(`already running \\(pid ${info.pid}`));
    assert.ok(fs.readFileSync(serverJsonPath(project)).equals(bytes), 'server.json was changed');
    assert.equal(await health(info.port, info.token), 200);
  });

  /**
   * Starts two `ltm serve` at the same moment and waits for the outcome: one
   * exits (code, ms after the start) and the other serves, named in server.json.
   */
  async function startTwoAtOnce(): Promise<{ winner: ServeProcess; loser: ServeProcess; code: number | null; exitMs: number; info: ServerJson; serveMs: number }> {
    const started = Date.now();
    const a = serve();
    const b = serve();
    const first = await Promise.race([
      a.exited.then((code) => ({ loser: a, winner: b, code })),
      b.exited.then((code) => ({ loser: b, winner: a, code })),
      new Promise<never>((_, reject) =>
        setTimeout(() => reject(new Error(`both ltm serve still run after 8 s\n--- a:\n${a.output()}\n--- b:\n${b.output()}`)), 8_000),
      ),
    ]);
    const exitMs = Date.now() - started;
    const info = await waitForServerJson(project, first.winner);
    return { ...first, exitMs, info, serveMs: Date.now() - started };
  }

  function readIdentityFile(): { token: string; port: number | null } {
    return JSON.parse(fs.readFileSync(path.join(ltmRoot(project), 'server-identity.json'), 'utf8')) as { token: string; port: number | null };
  }

  it('of two `ltm serve` started at the same moment exactly one serves; the other exits 1 naming it (5 rounds)', async function () {
    this.timeout(120_000);
    for (let round = 1; round <= 5; round++) {
      // A new store each round: the identity (token) is created by whichever claims the project.
      fs.rmSync(path.join(project, '.claude'), { recursive: true, force: true });
      const { winner, loser, code, exitMs, info } = await startTwoAtOnce();
      const where = `round ${round}:\n--- winner:\n${winner.output()}\n--- loser:\n${loser.output()}`;
      assert.equal(code, 1, where);
      assert.ok(exitMs < 5_000, `the refused one exited after ${exitMs} ms`);
      assert.equal(loser.stdout(), '', where);
      assert.equal(loser.stderr(), `ltm: an LTM server for ${project} is already running (pid ${winner.child.pid}, http://127.0.0.1:${info.port})\n`, where);
      assert.equal(info.pid, winner.child.pid);
      assert.deepEqual(info.holder && { pid: info.holder.pid, host: info.holder.host }, { pid: winner.child.pid, host: os.hostname() }, 'server.json records the holder');
      // The one token every client can know: server.json's and the identity's, and the server takes it.
      assert.equal(readIdentityFile().token, info.token, where);
      assert.equal(readIdentityFile().port, info.port, where);
      assert.equal(await health(info.port, info.token), 200, where);
      // It keeps serving after the other gave up.
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(winner.child.exitCode, null, where);
      assert.equal(await health(info.port, info.token), 200, where);
      assert.equal(await stopProcess(winner), 0, where);
      assert.equal(fs.existsSync(serverJsonPath(project)), false, `server.json is still there after the server stopped (${where})`);
      assert.equal(await health(info.port, info.token), 0, 'still answering after it stopped');
    }
  });

  it('after a server is killed with SIGKILL the next `ltm serve` takes over at once, on the same port with the same token', async () => {
    const first = serve();
    const old = await waitForServerJson(project, first);
    first.child.kill('SIGKILL');
    await first.exited;
    const stale = JSON.parse(fs.readFileSync(serverJsonPath(project), 'utf8')) as ServerJson;
    assert.equal(stale.pid, old.pid, 'a killed server leaves its server.json behind');

    // Two take their chance at once: one takes over, the other is refused. "At once": well under
    // the 10 s after which a holder nobody can judge is given up (a start takes ~0.5–1 s here,
    // 3 s on a loaded 2-core machine).
    const { winner, loser, code, info, serveMs } = await startTwoAtOnce();
    const where = `--- winner:\n${winner.output()}\n--- loser:\n${loser.output()}`;
    assert.ok(serveMs < 6_000, `took over after ${serveMs} ms`);
    assert.equal(code, 1, where);
    assert.match(loser.stderr(), new RegExp(`already running \\(pid ${winner.child.pid}, http://127\\.0\\.0\\.1:${info.port}\\)`), where);
    assert.equal(info.pid, winner.child.pid);
    assert.equal(info.holder?.pid, winner.child.pid, 'server.json records the new holder');
    assert.equal(info.port, old.port, 'the same port: Claude Code sessions that knew it keep working');
    assert.equal(info.token, old.token, 'the same token');
    assert.equal(await health(info.port, info.token), 200);
    assert.equal(await stopProcess(winner), 0);
    assert.equal(fs.existsSync(serverJsonPath(project)), false);
  });

  it('in one process (an extension host) a second server for the project is refused until the first stops', async () => {
    const first = await startTestServer({ project });
    try {
      await assert.rejects(startTestServer({ project }), (error: unknown) => {
        assert.ok(error instanceof ServerRunningError, String(error));
        assert.deepEqual([error.code, error.running.pid, error.running.port], ['busy', process.pid, first.port]);
        return true;
      });
      assert.equal(await health(first.port, first.token), 200);
    } finally {
      await first.stop();
    }
    const again = await startTestServer({ project });
    assert.equal(again.port, first.port);
    assert.equal(again.token, first.token);
    await again.stop();
  });

  it('judges a server.json of an older version (no holder) by its answer: a live one is not replaced', async () => {
    const first = serve();
    const info = await waitForServerJson(project, first);
    // As an older version writes it: no process identity.
    const { holder: _holder, ...legacy } = info;
    fs.writeFileSync(serverJsonPath(project), `${JSON.stringify(legacy, null, 2)}\n`);
    const second = serve();
    const code = await exitWithin(second, 10_000, 'the second ltm serve');
    assert.equal(code, 1, second.output());
    assert.match(second.stderr(), new RegExp(`already running \\(pid ${info.pid}, `));
    assert.equal(await health(info.port, info.token), 200);
  });

  it('prefers the port it used last time (with the same token) after a restart, and falls back to a free port when it is taken', async () => {
    const first = serve();
    const one = await waitForServerJson(project, first);
    await stopProcess(first);

    const second = serve();
    const two = await waitForServerJson(project, second);
    assert.equal(two.port, one.port, 'the same port after a restart');
    assert.equal(two.token, one.token, 'the same token after a restart');
    await stopProcess(second);

    const blocker = net.createServer();
    await new Promise<void>((resolve, reject) => {
      blocker.once('error', reject);
      blocker.listen(one.port, '127.0.0.1', () => resolve());
    });
    try {
      const third = serve();
      const three = await waitForServerJson(project, third);
      assert.notEqual(three.port, one.port);
      assert.equal(three.token, one.token, 'the token stays when the port changes');
      assert.equal(await health(three.port, three.token), 200);
      assert.match(third.stderr(), new RegExp(`port ${one.port} is in use`));
      await stopProcess(third);
    } finally {
      await new Promise<void>((r) => blocker.close(() => r()));
    }
  });

  it('`ltm env` prints export lines that work in sh (curl and the hook script use them)', async () => {
    const proc = serve();
    const info = await waitForServerJson(project, proc);
    const env = spawnSync(process.execPath, [CLI, 'env', '--project', project], { encoding: 'utf8' });
    assert.equal(env.status, 0, env.stderr);
    assert.equal(env.stdout, `export LTM_PORT='${info.port}'\nexport LTM_TOKEN='${info.token}'\nexport LTM_MCP_URL='http://127.0.0.1:${info.port}/mcp'\n`);

    const script = [
      `eval "$("${process.execPath}" "${CLI}" env --project "${project}")"`,
      'printf "%s|%s|%s\\n" "$LTM_PORT" "$LTM_TOKEN" "$LTM_MCP_URL"',
      'curl --silent --fail -H "Authorization: Bearer $LTM_TOKEN" "http://127.0.0.1:$LTM_PORT/health"',
      'echo',
      `printf '%s' '${JSON.stringify(sessionStartPayload('from-env'))}' | CLAUDE_PROJECT_DIR="${project}" sh "${HOOK_SCRIPT}" session_start`,
    ].join('\n');
    const run = spawnSync('sh', ['-c', script], { encoding: 'utf8', cwd: '/', env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } });
    assert.equal(run.status, 0, run.stderr);
    const [vars, healthLine, hookLine] = run.stdout.split('\n');
    assert.equal(vars, `${info.port}|${info.token}|http://127.0.0.1:${info.port}/mcp`);
    assert.equal(JSON.parse(healthLine!).ok, true);
    assert.equal(JSON.parse(hookLine!).hookSpecificOutput.hookEventName, 'SessionStart');
  });

  it('`ltm env` without a running server fails with one line and prints no export', async () => {
    fs.mkdirSync(ltmRoot(project), { recursive: true });
    const env = spawnSync(process.execPath, [CLI, 'env', '--project', project], { encoding: 'utf8' });
    assert.notEqual(env.status, 0);
    assert.equal(env.stdout, '');
    assert.match(env.stderr, /^ltm: no LTM server is running for [^\n]+\n$/);
  });
});
