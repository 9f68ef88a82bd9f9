/**
 * The hook script keeps the bearer token off every command line: any local
 * user can read /proc/<pid>/cmdline. A real LtmServer sits behind a slow
 * proxy of this test (it answers ~200 ms late, so each hook's curl lives long
 * enough to be seen) while a worker thread reads the cmdline of every process
 * in a tight loop. The proxy also records the exact request, proving that the
 * Authorization header, the project header and the payload still arrive.
 *
 * LTM_HOOK_SCRIPT_UNDER_TEST=<file> runs these tests against another copy of
 * the script (e.g. `git show HEAD~1:hooks/ltm-hook.sh`), to see them fail.
 */
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { sampleCmdlines, type CmdlineSampling } from '../support/cmdlineSampler';
import { ltmRoot, removeDir } from '../unit/storeTestKit';
import {
  HOOK_SCRIPT,
  closedPort,
  postToolUsePayload,
  rawRequest,
  runHookScript,
  serverJsonPath,
  sessionStartPayload,
  startTestServer,
  type HookRun,
  type TestServer,
} from './serverKit';

const SCRIPT = process.env.LTM_HOOK_SCRIPT_UNDER_TEST || HOOK_SCRIPT;
const PROXY_DELAY_MS = 200;

// --- a slow proxy in front of the real server ---------------------------------------

interface Recorded {
  requestLine: string;
  /** Header lines exactly as received, without the final CRLF. */
  headerLines: string[];
  body: Buffer;
  /** What the real server answered (and the proxy relayed). */
  status: number;
  answer: string;
}

interface SlowProxy {
  port: number;
  requests: Recorded[];
  close: () => Promise<void>;
}

function header(r: Recorded, name: string): string | undefined {
  const line = r.headerLines.find((l) => l.toLowerCase().startsWith(`${name.toLowerCase()}:`));
  return line?.slice(name.length + 1).trim();
}

/**
 * Accepts a connection, reads one whole request (headers and Content-Length
 * body), waits `delayMs`, forwards it to `target` (Host rewritten, as the
 * server only accepts its own port) and relays the answer with Connection: close.
 */
async function startSlowProxy(target: () => number, delayMs = PROXY_DELAY_MS): Promise<SlowProxy> {
  const requests: Recorded[] = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    let buffer = Buffer.alloc(0);
    let done = false;
    socket.on('data', (chunk: Buffer) => {
      if (done) return;
      buffer = Buffer.concat([buffer, chunk]);
      const end = buffer.indexOf('\r\n\r\n');
      if (end < 0) return;
      const lines = buffer.subarray(0, end).toString('utf8').split('\r\n');
      const [requestLine, ...headerLines] = lines as [string, ...string[]];
      const length = Number(/^content-length:\s*(\d+)/im.exec(headerLines.join('\n'))?.[1] ?? 0);
      if (buffer.length < end + 4 + length) return;
      done = true;
      const body = buffer.subarray(end + 4, end + 4 + length);
      const record: Recorded = { requestLine, headerLines, body, status: 0, answer: '' };
      requests.push(record);
      setTimeout(() => {
        const forward: Record<string, string | number> = { 'Content-Length': body.length };
        for (const name of ['Authorization', 'Content-Type', 'X-LTM-Project']) {
          const value = header(record, name);
          if (value !== undefined) forward[name] = value;
        }
        rawRequest(target(), { method: requestLine.split(' ')[0], path: requestLine.split(' ')[1]!, headers: forward, body })
          .then(
            (a) => [a.status, a.text] as const,
            (e: Error) => [502, JSON.stringify({ error: e.message })] as const,
          )
          .then(([status, text]) => {
            record.status = status;
            record.answer = text;
            socket.end(`HTTP/1.1 ${status} Relayed\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`);
          });
      }, delayMs);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    port: (server.address() as net.AddressInfo).port,
    requests,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

// --- running the script ----------------------------------------------------------------

/** Runs the hook script with `shell`, the payload on stdin and exactly the given environment (plus PATH). */
function runWith(shell: string, event: string, payload: unknown, env: Record<string, string>): Promise<HookRun> {
  return runHookScript(SCRIPT, event, payload, env, undefined, shell);
}

/** Points the project's server.json at another port (one key per line, as LTM writes it). */
function pointServerJsonAt(project: string, port: number): void {
  const file = serverJsonPath(project);
  const info = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
  fs.writeFileSync(file, `${JSON.stringify({ ...info, port, url: `http://127.0.0.1:${port}` }, null, 2)}\n`, { mode: 0o600 });
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

describe(`hook script keeps the token off command lines (${path.relative(process.cwd(), SCRIPT)})`, function () {
  this.timeout(60_000);
  let t: TestServer;
  let proxy: SlowProxy;
  let tmp: string;

  before(async function () {
    if (process.platform !== 'linux') this.skip();
    assert.equal(spawnSync('sh', ['-c', 'command -v curl']).status, 0, 'curl is needed by the hook script');
    t = await startTestServer({
      prepare: async (store) => {
        await store.store({ topic: 'Token test memory', content: 'Seen through the slow proxy.' });
      },
    });
    proxy = await startSlowProxy(() => t.port);
    pointServerJsonAt(t.project, proxy.port);
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ltm-hook-tmpdir-'));
  });
  after(async () => {
    await proxy?.close();
    await t?.stop();
    removeDir(tmp);
  });

  /** 20 runs: session_start and post_tool_use, through LTM_PORT/LTM_TOKEN and through server.json. */
  async function sampledRuns(shell: string, count: number): Promise<void> {
    const marker = `127.0.0.1:${proxy.port}/hook/`;
    const rows: { event: string; via: string; run: HookRun; sampling: CmdlineSampling }[] = [];
    for (let i = 0; i < count; i++) {
      const event = i % 2 === 0 ? 'session_start' : 'post_tool_use';
      const via = i % 4 < 2 ? 'env' : 'server.json';
      const session = `${shell}-run-${i}`;
      const payload = event === 'session_start' ? sessionStartPayload(session) : postToolUsePayload(session, { stdout: `run ${i} "quoted" \\ back` });
      const env: Record<string, string> = { CLAUDE_PROJECT_DIR: t.project, TMPDIR: tmp };
      if (via === 'env') Object.assign(env, { LTM_PORT: String(proxy.port), LTM_TOKEN: t.token });
      const before = proxy.requests.length;
      const { result: run, sampling } = await sampleCmdlines(t.token, marker, () => runWith(shell, event, payload, env));
      rows.push({ event, via, run, sampling });
      const where = `run ${i} (${shell}, ${event} via ${via})`;
      assert.deepEqual([run.status, run.stderr], [0, ''], where);
      assert.equal(proxy.requests.length, before + 1, `${where}: one request reached the proxy`);
      const got = proxy.requests[before]!;
      assert.equal(got.requestLine, `POST /hook/${event} HTTP/1.1`, where);
      assert.ok(got.headerLines.includes(`Authorization: Bearer ${t.token}`), `${where}: Authorization header not received: ${JSON.stringify(got.headerLines.filter((l) => !l.startsWith('Authorization')))}`);
      assert.equal(header(got, 'X-LTM-Project'), t.project, where);
      assert.equal(header(got, 'Content-Type'), 'application/json', where);
      assert.equal(got.body.toString('utf8'), JSON.stringify(payload), `${where}: the exact payload`);
      assert.equal(got.status, 200, `${where}: the real server accepted it: ${got.answer}`);
      if (event === 'session_start') {
        assert.equal(run.stdout, `${got.answer}\n`, `${where}: prints the server's answer`);
        assert.match(run.stdout, /Token test memory/);
      } else {
        assert.equal(run.stdout, '', where);
      }
    }
    const sweeps = rows.map((r) => r.sampling.sweeps);
    const curlSweeps = rows.map((r) => r.sampling.markerSweeps);
    const hitRuns = rows.filter((r) => r.sampling.hitSweeps > 0);
    console.log(
      `      ${shell}: ${count} runs, median ${median(rows.map((r) => r.run.ms)).toFixed(0)} ms; ` +
        `sweeps of /proc/*/cmdline per run min ${Math.min(...sweeps)} median ${median(sweeps)}; ` +
        `curl seen in min ${Math.min(...curlSweeps)} median ${median(curlSweeps)} sweeps per run; ` +
        `token seen in ${hitRuns.length} of ${count} runs (${rows.reduce((n, r) => n + r.sampling.hitSweeps, 0)} sweeps)`,
    );
    assert.deepEqual(
      hitRuns.map((r) => r.sampling.hits),
      [],
      `the token was on a command line in ${hitRuns.length} of ${count} runs`,
    );
    // The sampling was not blind: each run's curl was seen on its own command line.
    for (const [i, r] of rows.entries()) assert.ok(r.sampling.markerSweeps >= 1, `run ${i}: curl was never sampled (${r.sampling.sweeps} sweeps)`);
    assert.deepEqual(fs.readdirSync(tmp), [], 'no file left in $TMPDIR');
  }

  it('sh (dash): 20 runs, the token is on no process command line, and still reaches the server', async () => {
    await sampledRuns('sh', 20);
  });

  it('bash: 8 runs, the same', async function () {
    if (spawnSync('sh', ['-c', 'command -v bash']).status !== 0) this.skip();
    await sampledRuns('bash', 8);
  });

  it('a project path with spaces, quotes, a backslash, $ and a backtick reaches the server as X-LTM-Project', async () => {
    const project = fs.mkdtempSync(path.join(os.tmpdir(), `ltm hook "quoted" it's back\\slash $HOME \`x\` `));
    let s: TestServer | undefined;
    let p: SlowProxy | undefined;
    try {
      s = await startTestServer({ project });
      p = await startSlowProxy(() => s!.port, 0);
      for (const via of ['env', 'server.json']) {
        const env: Record<string, string> = { CLAUDE_PROJECT_DIR: project, TMPDIR: tmp };
        if (via === 'env') Object.assign(env, { LTM_PORT: String(p.port), LTM_TOKEN: s.token });
        else pointServerJsonAt(project, p.port);
        const run = await runWith('sh', 'session_start', sessionStartPayload(`odd-${via}`), env);
        assert.deepEqual([run.status, run.stderr], [0, ''], via);
        const got: Recorded = p.requests.at(-1)!;
        assert.ok(got.headerLines.includes(`X-LTM-Project: ${project}`), `${via}: ${JSON.stringify(got.headerLines)}`);
        assert.ok(got.headerLines.includes(`Authorization: Bearer ${s.token}`), via);
        assert.equal(got.status, 200, `${via}: the server took it for its own project: ${got.answer}`);
        assert.equal(run.stdout, `${got.answer}\n`, via);
      }
      assert.equal(p.requests.length, 2);
      assert.deepEqual(fs.readdirSync(tmp), [], 'no file left in $TMPDIR');
    } finally {
      await p?.close();
      await s?.stop();
      removeDir(project);
    }
  });

  it('with no server (closed port) it exits 0 at once and prints nothing, with sh and bash', async () => {
    const port = await closedPort();
    const project = fs.mkdtempSync(path.join(os.tmpdir(), 'ltm-hook-closed-'));
    try {
      fs.mkdirSync(ltmRoot(project), { recursive: true });
      fs.writeFileSync(serverJsonPath(project), `${JSON.stringify({ port, token: 'stale-token_stale-token', pid: 1, version: '0.1.0' }, null, 2)}\n`);
      for (const shell of ['sh', 'bash']) {
        const envs: Record<string, string>[] = [
          { CLAUDE_PROJECT_DIR: project, TMPDIR: tmp, LTM_PORT: String(port), LTM_TOKEN: 'whatever-token' },
          { CLAUDE_PROJECT_DIR: project, TMPDIR: tmp },
        ];
        for (const env of envs) {
          for (const [event, payload] of [
            ['session_start', sessionStartPayload('nobody')],
            ['post_tool_use', postToolUsePayload('nobody', { error: 'x' })],
          ] as const) {
            const run = await runWith(shell, event, payload, env);
            const where = `${shell} ${event} ${env.LTM_PORT ? 'env' : 'server.json'}`;
            assert.deepEqual([run.status, run.stdout, run.stderr], [0, '', ''], where);
            assert.ok(run.ms < 1000, `${where} took ${run.ms.toFixed(0)} ms`);
          }
        }
      }
      assert.deepEqual(fs.readdirSync(tmp), [], 'no file left in $TMPDIR');
    } finally {
      removeDir(project);
    }
  });

  it('a token that is not base64url (it would change the curl config) is not sent at all', async () => {
    const before = proxy.requests.length;
    for (const token of [`${t.token}"\nheader = "X-Evil: 1`, `${t.token} x`, `${t.token}\\`]) {
      const run = await runWith('sh', 'session_start', sessionStartPayload('bad-token'), { CLAUDE_PROJECT_DIR: t.project, TMPDIR: tmp, LTM_PORT: String(proxy.port), LTM_TOKEN: token });
      assert.deepEqual([run.status, run.stdout, run.stderr], [0, '', ''], JSON.stringify(token));
    }
    assert.equal(proxy.requests.length, before, 'nothing reached the proxy');
  });
});
