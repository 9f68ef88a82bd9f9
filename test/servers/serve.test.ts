/**
 * `ltm serve` as a process: server.json, signals, a stale or live previous
 * server, the remembered port and token, and `ltm env`.
 */
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { ensureCliBuilt, ltmRoot, makeTempProject, removeDir } from '../unit/storeTestKit';
import {
  CLI,
  HOOK_SCRIPT,
  closedPort,
  deadPid,
  rawRequest,
  serverJsonPath,
  sessionStartPayload,
  spawnLtm,
  stopProcess,
  waitForServerJson,
  type ServeProcess,
} from './serverKit';

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
    assert.equal(info.version, '0.1.0');
    assert.match(info.started_at, ISO_RE);
    assert.ok(Date.parse(info.started_at) >= before - 1000 && Date.parse(info.started_at) <= Date.now());
    assert.equal(info.url, `http://127.0.0.1:${info.port}`);
    assert.equal(fs.statSync(serverJsonPath(project)).mode & 0o777, 0o600);
    // The token is a secret: the identity file that keeps it across restarts is owner-only too.
    assert.equal(fs.statSync(path.join(ltmRoot(project), 'server-identity.json')).mode & 0o777, 0o600);
    assert.equal(await health(info.port, info.token), 200);
    assert.equal(await health(info.port, 'wrong'), 401);
    assert.match(proc.stdout(), new RegExp(`MCP: +http://127\\.0\\.0\\.1:${info.port}/mcp`));
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

  it('replaces a stale server.json whose process is gone', async () => {
    const port = await closedPort();
    fs.mkdirSync(ltmRoot(project), { recursive: true });
    const stale = { port, token: 'stale-token-stale-token-stale-token', pid: deadPid(), version: '0.0.1', started_at: '2020-01-01T00:00:00.000Z', url: `http://127.0.0.1:${port}`, project };
    fs.writeFileSync(serverJsonPath(project), `${JSON.stringify(stale, null, 2)}\n`);
    const proc = serve();
    const info = await waitForServerJson(project, proc);
    assert.equal(info.pid, proc.child.pid);
    assert.notEqual(info.token, stale.token);
    assert.equal(info.version, '0.1.0');
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
