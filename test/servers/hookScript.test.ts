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
import { HOOK_EVENTS } from '../../src/servers/hookRoutes';
import { HOOK_EVENTS as HOOK_SPECS, ltmHook } from '../../src/servers/hookSettings';
import { SHELL_COMMANDS, commandHostNow } from '../../src/servers/hookShell';
import { UNLESS_PROJECT_HOOKS } from '../../src/servers/pluginFiles';
import { sampleCmdlines, type CmdlineSampling } from '../support/cmdlineSampler';
import { ltmRoot, removeDir } from '../support/storeKit';
import {
  HOOK_SCRIPT,
  closedPort,
  postToolUsePayload,
  rawRequest,
  readState,
  runHookScript,
  serverJsonPath,
  sessionStartPayload,
  startTestServer,
  type HookRun,
  type TestServer,
} from '../support/serverKit';

const SCRIPT = process.env.LTM_HOOK_SCRIPT_UNDER_TEST || HOOK_SCRIPT;
const PROXY_DELAY_MS = 200;
const hasBash = spawnSync('sh', ['-c', 'command -v bash']).status === 0;
/** sh runs the script's curl path; bash (4.1 or later, started as `ltm init` writes where bash exists) its /dev/tcp path. */
const BASH = SHELL_COMMANDS.bash;
const SHELLS = hasBash ? ['sh', BASH] : ['sh'];

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

  /**
   * 20 runs: session_start and post_tool_use, through LTM_PORT/LTM_TOKEN and through server.json.
   * The sampling must see the process that holds the request: curl under sh; under bash, which
   * sends the request itself, bash running the script.
   */
  async function sampledRuns(shell: string, count: number): Promise<void> {
    const marker = shell === 'sh' ? `127.0.0.1:${proxy.port}/hook/` : SCRIPT;
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
    const markerSweeps = rows.map((r) => r.sampling.markerSweeps);
    const hitRuns = rows.filter((r) => r.sampling.hitSweeps > 0);
    console.log(
      `      ${shell}: ${count} runs, median ${median(rows.map((r) => r.run.ms)).toFixed(0)} ms; ` +
        `sweeps of /proc/*/cmdline per run min ${Math.min(...sweeps)} median ${median(sweeps)}; ` +
        `${shell === 'sh' ? 'curl' : 'bash'} seen in min ${Math.min(...markerSweeps)} median ${median(markerSweeps)} sweeps per run; ` +
        `token seen in ${hitRuns.length} of ${count} runs (${rows.reduce((n, r) => n + r.sampling.hitSweeps, 0)} sweeps)`,
    );
    assert.deepEqual(
      hitRuns.map((r) => r.sampling.hits),
      [],
      `the token was on a command line in ${hitRuns.length} of ${count} runs`,
    );
    // The sampling was not blind: each run's request-holding process was seen on its own command line.
    for (const [i, r] of rows.entries()) assert.ok(r.sampling.markerSweeps >= 1, `run ${i}: ${marker} was never sampled (${r.sampling.sweeps} sweeps)`);
    assert.deepEqual(fs.readdirSync(tmp), [], 'no file left in $TMPDIR');
  }

  it('sh (dash): 20 runs, the token is on no process command line, and still reaches the server', async () => {
    await sampledRuns('sh', 20);
  });

  it('bash (the request over /dev/tcp, written by builtins): 20 runs, the same', async function () {
    if (!hasBash) this.skip();
    await sampledRuns(BASH, 20);
  });

  it('a project path with spaces, quotes, a backslash, $ and a backtick reaches the server as X-LTM-Project', async () => {
    const project = fs.mkdtempSync(path.join(os.tmpdir(), `ltm hook "quoted" it's back\\slash $HOME \`x\` `));
    let s: TestServer | undefined;
    let p: SlowProxy | undefined;
    try {
      s = await startTestServer({ project });
      p = await startSlowProxy(() => s!.port, 0);
      for (const [shell, via] of SHELLS.flatMap((sh) => [[sh, 'env'], [sh, 'server.json']])) {
        const env: Record<string, string> = { CLAUDE_PROJECT_DIR: project, TMPDIR: tmp };
        if (via === 'env') Object.assign(env, { LTM_PORT: String(p.port), LTM_TOKEN: s.token });
        else pointServerJsonAt(project, p.port);
        const run = await runWith(shell!, 'session_start', sessionStartPayload(`odd-${via}`), env);
        assert.deepEqual([run.status, run.stderr], [0, ''], `${shell} ${via}`);
        const got: Recorded = p.requests.at(-1)!;
        assert.ok(got.headerLines.includes(`X-LTM-Project: ${project}`), `${via}: ${JSON.stringify(got.headerLines)}`);
        assert.ok(got.headerLines.includes(`Authorization: Bearer ${s.token}`), via);
        assert.equal(got.status, 200, `${via}: the server took it for its own project: ${got.answer}`);
        assert.equal(run.stdout, `${got.answer}\n`, via);
      }
      assert.equal(p.requests.length, 2 * SHELLS.length);
      assert.deepEqual(fs.readdirSync(tmp), [], 'no file left in $TMPDIR');
    } finally {
      await p?.close();
      await s?.stop();
      removeDir(project);
    }
  });

  it('with no server (closed port, or no server.json) it exits 0 at once and prints nothing, for every event, with sh and bash', async () => {
    const port = await closedPort();
    const project = fs.mkdtempSync(path.join(os.tmpdir(), 'ltm-hook-closed-'));
    const bare = fs.mkdtempSync(path.join(os.tmpdir(), 'ltm-hook-bare-'));
    try {
      fs.mkdirSync(ltmRoot(project), { recursive: true });
      fs.writeFileSync(serverJsonPath(project), `${JSON.stringify({ port, token: 'stale-token_stale-token', pid: 1, version: '0.1.0' }, null, 2)}\n`);
      const envs: [string, Record<string, string>][] = [
        ['stale LTM_PORT', { CLAUDE_PROJECT_DIR: project, TMPDIR: tmp, LTM_PORT: String(port), LTM_TOKEN: 'whatever-token' }],
        ['stale server.json', { CLAUDE_PROJECT_DIR: project, TMPDIR: tmp }],
        ['no server.json', { CLAUDE_PROJECT_DIR: bare, TMPDIR: tmp }],
      ];
      for (const shell of SHELLS) {
        for (const [how, env] of envs) {
          for (const event of HOOK_EVENTS) {
            const payload = event === 'session_start' ? sessionStartPayload('nobody') : postToolUsePayload('nobody', { error: 'x' });
            const run = await runWith(shell, event, payload, env);
            const where = `${shell} ${event} ${how}`;
            assert.deepEqual([run.status, run.stdout, run.stderr], [0, '', ''], where);
            assert.ok(run.ms < 1000, `${where} took ${run.ms.toFixed(0)} ms`);
          }
        }
      }
      assert.deepEqual(fs.readdirSync(tmp), [], 'no file left in $TMPDIR');
    } finally {
      removeDir(project);
      removeDir(bare);
    }
  });

  it('a token that is not base64url (it would change the curl config or the request), a port that is not a number or an event that is not a name is not used at all', async () => {
    const before = proxy.requests.length;
    for (const shell of SHELLS) {
      for (const token of [`${t.token}"\nheader = "X-Evil: 1`, `${t.token}\r\nX-Evil: 1`, `${t.token} x`, `${t.token}\\`]) {
        const run = await runWith(shell, 'session_start', sessionStartPayload('bad-token'), { CLAUDE_PROJECT_DIR: t.project, TMPDIR: tmp, LTM_PORT: String(proxy.port), LTM_TOKEN: token });
        assert.deepEqual([run.status, run.stdout, run.stderr], [0, '', ''], `${shell} ${JSON.stringify(token)}`);
      }
      for (const port of [`${proxy.port}/hook/x?`, `${proxy.port} `, `-${proxy.port}`]) {
        const run = await runWith(shell, 'session_start', sessionStartPayload('bad-port'), { CLAUDE_PROJECT_DIR: t.project, TMPDIR: tmp, LTM_PORT: port, LTM_TOKEN: t.token });
        assert.deepEqual([run.status, run.stdout, run.stderr], [0, '', ''], `${shell} ${JSON.stringify(port)}`);
      }
      for (const event of ['session_start HTTP/1.1\r\nX-Evil: 1\r\n', 'session_start?x=1', '../health', '']) {
        const run = await runWith(shell, event, sessionStartPayload('bad-event'), { CLAUDE_PROJECT_DIR: t.project, TMPDIR: tmp, LTM_PORT: String(proxy.port), LTM_TOKEN: t.token });
        assert.deepEqual([run.status, run.stdout, run.stderr], [0, '', ''], `${shell} event ${JSON.stringify(event)}`);
      }
    }
    assert.equal(proxy.requests.length, before, 'nothing reached the proxy');
  });
});

// --- what the script sends and prints, under sh (curl) and bash (/dev/tcp) ---------------

interface HookOutput {
  hookSpecificOutput: { hookEventName: string; additionalContext: string };
}

/** The one line of JSON a run printed, checked to be exactly that line. */
function printed(run: HookRun, where: string): HookOutput {
  assert.deepEqual([run.status, run.stderr], [0, ''], where);
  assert.ok(run.stdout.endsWith('}\n') && run.stdout.indexOf('\n') === run.stdout.length - 1, `${where}: one line of JSON: ${JSON.stringify(run.stdout.slice(0, 200))}`);
  const parsed = JSON.parse(run.stdout) as HookOutput;
  assert.deepEqual(Object.keys(parsed), ['hookSpecificOutput'], where);
  assert.deepEqual(Object.keys(parsed.hookSpecificOutput), ['hookEventName', 'additionalContext'], where);
  return parsed;
}

function silent(run: HookRun, where: string): void {
  assert.deepEqual([run.status, run.stdout, run.stderr], [0, '', ''], where);
}

/** A payload of exactly `bytes` bytes of UTF-8 (2-, 3- and 4-byte characters among ASCII), as JSON. */
function payloadOfBytes(bytes: number, sessionId: string): string {
  const base = { session_id: sessionId, hook_event_name: 'PostToolUse', tool_name: 'Read', tool_input: { file_path: '/tmp/x' }, tool_response: '' };
  const fixed = Buffer.byteLength(JSON.stringify(base));
  const unit = 'é日🙂ab'; // 2 + 3 + 4 + 2 bytes
  let text = unit.repeat(Math.floor((bytes - fixed) / Buffer.byteLength(unit)));
  text += 'x'.repeat(bytes - fixed - Buffer.byteLength(text));
  const payload = JSON.stringify({ ...base, tool_response: text });
  assert.equal(Buffer.byteLength(payload), bytes);
  return payload;
}

/** A server of this test's own on 127.0.0.1: `onRequest` gets the socket and body of each whole request. */
async function startRawServer(onRequest: (socket: net.Socket, body: Buffer) => void): Promise<{ port: number; close: () => Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    let buffer = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      const end = buffer.indexOf('\r\n\r\n');
      const length = Number(/^content-length:\s*(\d+)/im.exec(buffer.subarray(0, Math.max(end, 0)).toString('latin1'))?.[1] ?? 0);
      if (end >= 0 && buffer.length >= end + 4 + length) onRequest(socket, buffer.subarray(end + 4, end + 4 + length));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    port: (server.address() as net.AddressInfo).port,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

describe(`hook script: every event, any payload, odd servers, under ${SHELLS.join(' and ')} (${path.relative(process.cwd(), SCRIPT)})`, function () {
  this.timeout(60_000);
  let t: TestServer;
  let pool = '';
  let pnpm = '';
  const envFor = (s: { port: number }, token = t.token): Record<string, string> => ({ CLAUDE_PROJECT_DIR: t.project, LTM_PORT: String(s.port), LTM_TOKEN: token });

  before(async function () {
    if (process.platform === 'win32') this.skip();
    t = await startTestServer({
      prepare: async (store) => {
        pool = (await store.store({ topic: 'Connection pool size', content: 'src/db/pool.ts caps connections at 10: Postgres max_connections is 20 across two services.', tags: ['postgres'] })).memory.id;
        pnpm = (
          await store.store({
            topic: 'pnpm install fails with ERR_PNPM_OUTDATED_LOCKFILE in CI',
            content: 'CI runs pnpm install --frozen-lockfile; the lockfile was not updated after editing package.json. Run pnpm install locally and commit pnpm-lock.yaml.',
            tags: ['pnpm', 'ci'],
          })
        ).memory.id;
        for (let i = 0; i < 5; i++) await store.store({ topic: `Unrelated note ${i} on CSS grid`, content: `Grid gap ${i}.` });
      },
    });
  });
  after(async () => {
    await t?.stop();
  });

  for (const shell of SHELLS) {
    describe(shell, () => {
      // Session IDs of plain characters: state.json keeps odd ones by digest.
      const label = shell.replace(/\W+/g, '-');
      const run = (event: string, payload: unknown, env: Record<string, string> = envFor(t)) => runHookScript(SCRIPT, event, payload, env, undefined, shell);

      it("run by the plugin (--unless-project-hooks), it leaves an event to the project's own LTM hook, command or http: nothing sent, nothing printed", async () => {
        const settingsFile = path.join(t.project, '.claude', 'settings.local.json');
        const specOf = (event: string) => HOOK_SPECS.find((spec) => spec.event === event)!;
        const host = commandHostNow();
        // As `ltm init` writes them: a command hook for prompts, an http hook (a server ran) for tool calls.
        const settings = {
          hooks: {
            UserPromptSubmit: [{ hooks: [ltmHook(specOf('UserPromptSubmit'), { kind: 'command', ...host })] }],
            PreToolUse: [{ matcher: 'Read', hooks: [ltmHook(specOf('PreToolUse'), { kind: 'http', port: t.port, project: t.project, ...host })] }],
          },
        };
        fs.mkdirSync(path.dirname(settingsFile), { recursive: true });
        fs.writeFileSync(settingsFile, JSON.stringify(settings, null, 2));
        const plugin = (event: string, payload: unknown) => runHookScript(SCRIPT, event, payload, envFor(t), undefined, shell, [UNLESS_PROJECT_HOOKS]);
        try {
          const prompt = { session_id: `${label}-plugin`, hook_event_name: 'UserPromptSubmit', prompt: 'why does pnpm install fail with ERR_PNPM_OUTDATED_LOCKFILE?' };
          silent(await plugin('user_prompt_submit', prompt), 'the plugin with the project hooking UserPromptSubmit');
          const read = { session_id: `${label}-plugin`, hook_event_name: 'PreToolUse', tool_name: 'Read', tool_input: { file_path: path.join(t.project, 'src/db/pool.ts') }, tool_use_id: `toolu_${label}_plugin` };
          silent(await plugin('pre_tool_use', read), 'the plugin with the project hooking PreToolUse over http');
          // Nothing reached the server: the project's own hooks still get the offers, once.
          assert.match(printed(await run('user_prompt_submit', prompt), 'the project hook').hookSpecificOutput.additionalContext, /ERR_PNPM_OUTDATED_LOCKFILE in CI/);
          assert.ok(printed(await run('pre_tool_use', read), 'the project hook').hookSpecificOutput.additionalContext.includes(pool));
          // An event the project does not hook is the plugin's to forward.
          const failure = { session_id: `${label}-plugin-failure`, hook_event_name: 'PostToolUseFailure', tool_name: 'Bash', tool_input: { command: 'pnpm install --frozen-lockfile' }, error: 'ERR_PNPM_OUTDATED_LOCKFILE pnpm-lock.yaml is not up to date', is_interrupt: false };
          printed(await plugin('post_tool_use', failure), 'the plugin, for an event the project does not hook');
        } finally {
          fs.rmSync(settingsFile, { force: true });
        }
        // Without the project's hooks, the plugin forwards.
        const alone = { session_id: `${label}-plugin-alone`, hook_event_name: 'UserPromptSubmit', prompt: 'why does pnpm install fail with ERR_PNPM_OUTDATED_LOCKFILE?' };
        assert.match(printed(await plugin('user_prompt_submit', alone), 'the plugin alone').hookSpecificOutput.additionalContext, /ERR_PNPM_OUTDATED_LOCKFILE in CI/);
      });

      it('every event reaches the server; the ones that get context print it as Claude Code reads it, the others print nothing', async () => {
        const s = (name: string) => `${label}-${name}`;
        const start = printed(await run('session_start', sessionStartPayload(s('start'))), 'session_start');
        assert.equal(start.hookSpecificOutput.hookEventName, 'SessionStart');
        assert.match(start.hookSpecificOutput.additionalContext, /### Connection pool size\n/);

        const prompt = printed(await run('user_prompt_submit', { session_id: s('prompt'), hook_event_name: 'UserPromptSubmit', prompt: 'why does pnpm install fail with ERR_PNPM_OUTDATED_LOCKFILE?' }), 'user_prompt_submit');
        assert.equal(prompt.hookSpecificOutput.hookEventName, 'UserPromptSubmit');
        assert.match(prompt.hookSpecificOutput.additionalContext, /ERR_PNPM_OUTDATED_LOCKFILE in CI/);
        silent(await run('user_prompt_submit', { session_id: s('prompt'), hook_event_name: 'UserPromptSubmit', prompt: 'write a haiku about autumn' }), 'an unrelated prompt');

        // The file and failure offers: before, only the http hooks (a running server) brought them.
        const read = { session_id: s('file'), hook_event_name: 'PreToolUse', tool_name: 'Read', tool_input: { file_path: path.join(t.project, 'src/db/pool.ts') }, tool_use_id: `toolu_${shell}_read` };
        const file = printed(await run('pre_tool_use', read), 'pre_tool_use on a file a memory names');
        assert.equal(file.hookSpecificOutput.hookEventName, 'PreToolUse');
        assert.match(file.hookSpecificOutput.additionalContext, /related to this file/);
        assert.ok(file.hookSpecificOutput.additionalContext.includes(pool));
        silent(await run('pre_tool_use', { ...read, tool_input: { file_path: path.join(t.project, 'src/other.ts') } }), 'pre_tool_use on a file no memory names');

        const failure = { session_id: s('fail'), hook_event_name: 'PostToolUseFailure', tool_name: 'Bash', tool_input: { command: 'pnpm install --frozen-lockfile' }, error: 'Exit code 1\n ERR_PNPM_OUTDATED_LOCKFILE  Cannot install with "frozen-lockfile" because pnpm-lock.yaml is not up to date with package.json', is_interrupt: false };
        const failed = printed(await run('post_tool_use', failure), 'post_tool_use (PostToolUseFailure)');
        assert.equal(failed.hookSpecificOutput.hookEventName, 'PostToolUseFailure');
        assert.match(failed.hookSpecificOutput.additionalContext, /related to this failure/);
        assert.ok(failed.hookSpecificOutput.additionalContext.includes(pnpm));
        const asResponse = postToolUsePayload(s('fail-2'), 'Error: ERR_PNPM_OUTDATED_LOCKFILE pnpm-lock.yaml is not up to date', { tool_input: { command: 'pnpm install --frozen-lockfile' } });
        assert.equal(printed(await run('post_tool_use', asResponse), 'post_tool_use (an error response)').hookSpecificOutput.hookEventName, 'PostToolUse');
        silent(await run('post_tool_use', postToolUsePayload(s('fail'), { stdout: 'ok' })), 'a successful tool call');

        const agent = { session_id: s('agent'), hook_event_name: 'PreToolUse', tool_name: 'Agent', tool_input: { description: 'CI', prompt: 'find out why pnpm install fails with ERR_PNPM_OUTDATED_LOCKFILE in CI' }, tool_use_id: `toolu_${shell}_agent` };
        silent(await run('pre_tool_use', agent), "the Agent tool's pre_tool_use");
        const sub = printed(await run('subagent_start', { session_id: s('agent'), hook_event_name: 'SubagentStart', agent_id: 'a1', agent_type: 'general-purpose' }), 'subagent_start');
        assert.equal(sub.hookSpecificOutput.hookEventName, 'SubagentStart');
        assert.ok(sub.hookSpecificOutput.additionalContext.includes(pnpm));

        silent(await run('pre_compact', { session_id: s('fail'), hook_event_name: 'PreCompact', trigger: 'manual', custom_instructions: '' }), 'pre_compact');
        await t.idle(); // the server writes counts just after answering
        const counters = readState(t.project).sessions[s('fail')]!;
        assert.deepEqual([counters.tool_failures, counters.tool_successes, counters.compacted], [1, 1, true]);
        silent(await run('session_end', { session_id: s('fail'), hook_event_name: 'SessionEnd', reason: 'other' }), 'session_end');
        await t.idle();
        assert.equal(readState(t.project).sessions[s('fail')], undefined, 'the session ended');
      });

      it('multibyte text and a payload with line breaks (and a final one) arrive byte for byte; a multibyte project path is the project', async () => {
        const proxy = await startSlowProxy(() => t.port, 0);
        try {
          const payloads = [
            JSON.stringify({ session_id: `${label}-utf8`, hook_event_name: 'UserPromptSubmit', prompt: 'Zürich, 日本語, emoji 🙂, %s %d \\ "q" — no memory here' }),
            `{\n  "session_id": "${shell}-lines",\n  "hook_event_name": "UserPromptSubmit",\n  "prompt": "ça  va\\r\\n  "\n}\n\n`,
          ];
          for (const payload of payloads) {
            const before = proxy.requests.length;
            silent(await run('user_prompt_submit', payload, envFor(proxy)), payload);
            const got = proxy.requests[before]!;
            assert.ok(got.body.equals(Buffer.from(payload, 'utf8')), `sent ${JSON.stringify(got.body.toString('utf8'))}`);
            assert.equal(header(got, 'Content-Length'), String(Buffer.byteLength(payload)));
            assert.equal(got.status, 200, got.answer);
          }
        } finally {
          await proxy.close();
        }
        const project = fs.mkdtempSync(path.join(os.tmpdir(), 'ltm-hook-é日🙂-'));
        const s = await startTestServer({ project, prepare: async (store) => void (await store.store({ topic: 'Memory of a project with an accented path', content: 'Found.' })) });
        try {
          const envs: Record<string, string>[] = [{ CLAUDE_PROJECT_DIR: project, LTM_PORT: String(s.port), LTM_TOKEN: s.token }, { CLAUDE_PROJECT_DIR: project }];
          for (const env of envs) {
            const out = printed(await run('session_start', sessionStartPayload(`${label}-accented`), env), `accented project ${env.LTM_PORT ? 'env' : 'server.json'}`);
            assert.match(out.hookSpecificOutput.additionalContext, /accented path/);
          }
        } finally {
          await s.stop();
          removeDir(project);
        }
      });

      it('payloads on both sides of 64 KiB and just under the 1 MiB cap arrive intact; one over the cap is dropped silently', async () => {
        const proxy = await startSlowProxy(() => t.port, 0);
        try {
          for (const bytes of [65_536, 65_537, 200_000, 1_048_000]) {
            const payload = payloadOfBytes(bytes, `${label}-large-${bytes}`);
            const before = proxy.requests.length;
            silent(await run('post_tool_use', payload, envFor(proxy)), `${bytes} bytes`);
            assert.equal(proxy.requests.length, before + 1, `${bytes} bytes: one request`);
            const got = proxy.requests[before]!;
            assert.equal(got.body.length, bytes);
            assert.ok(got.body.equals(Buffer.from(payload, 'utf8')), `${bytes} bytes: the exact bytes`);
            assert.equal(got.status, 200, `${bytes} bytes: ${got.answer}`);
          }
        } finally {
          await proxy.close();
        }
        const over = payloadOfBytes(1_048_577, `${label}-over`);
        const dropped = await run('post_tool_use', over);
        silent(dropped, 'over the cap (the server answers 413)');
        await t.idle();
        assert.equal(readState(t.project).sessions[`${label}-over`], undefined, 'nothing was counted');
      });

      it('a server that accepts and never answers is given up after 2 s, silently, with small and large payloads', async () => {
        const stuck = await startRawServer(() => undefined);
        try {
          for (const payload of [sessionStartPayload(`${label}-stuck`), payloadOfBytes(300_000, `${label}-stuck-large`)]) {
            const where = typeof payload === 'string' ? 'a large payload' : 'a small payload';
            const r = await run('session_start', payload, envFor(stuck));
            silent(r, where);
            assert.ok(r.ms >= 1900 && r.ms < 3500, `${where}: gave up after ${r.ms.toFixed(0)} ms`);
          }
        } finally {
          await stuck.close();
        }
      });

      it('a startup file named by $BASH_ENV or $ENV adds nothing to what the hook prints', async () => {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ltm-hook-env-'));
        try {
          const startup = path.join(dir, 'startup.sh');
          fs.writeFileSync(startup, 'echo from a startup file\n');
          const r = await run('session_start', sessionStartPayload(`${label}-startup`), { ...envFor(t), BASH_ENV: startup, ENV: startup });
          printed(r, 'with BASH_ENV and ENV set');
        } finally {
          removeDir(dir);
        }
      });

      it('an answer that is cut short, not 200, or not JSON from LTM prints nothing', async () => {
        const context = JSON.stringify({ hookSpecificOutput: { hookEventName: 'SessionStart', additionalContext: 'x'.repeat(100) } });
        const answers = [
          // Content-Length says more than arrives before the connection closes.
          `HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ${context.length + 50}\r\nConnection: close\r\n\r\n${context}`,
          `HTTP/1.1 401 Unauthorized\r\nContent-Type: application/json\r\nContent-Length: ${context.length}\r\nConnection: close\r\n\r\n${context}`,
          `HTTP/1.1 500 Internal Server Error\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`,
          'not HTTP at all\r\n\r\n{"hookSpecificOutput":{}}',
          '',
        ];
        for (const answer of answers) {
          const fake = await startRawServer((socket) => socket.end(answer));
          try {
            silent(await run('session_start', sessionStartPayload(`${label}-cut`), envFor(fake)), JSON.stringify(answer.slice(0, 40)));
          } finally {
            await fake.close();
          }
        }
        // The same server with a whole answer: it is printed (so the cases above were refused for what they are).
        const whole = await startRawServer((socket) => socket.end(`HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ${context.length}\r\nConnection: close\r\n\r\n${context}`));
        try {
          const r = await run('session_start', sessionStartPayload(`${label}-whole`), envFor(whole));
          assert.deepEqual([r.status, r.stdout, r.stderr], [0, `${context}\n`, '']);
        } finally {
          await whole.close();
        }
      });
    });
  }

  it('under bash a hook starts no process of its own: with nothing but bash on PATH, every case still works', async function () {
    if (!hasBash) this.skip();
    const bin = fs.mkdtempSync(path.join(os.tmpdir(), 'ltm-hook-onlybash-'));
    try {
      fs.symlinkSync(spawnSync('sh', ['-c', 'command -v bash'], { encoding: 'utf8' }).stdout.trim(), path.join(bin, 'bash'));
      const only = (event: string, payload: unknown, env: Record<string, string>) => runHookScript(SCRIPT, event, payload, { ...env, PATH: bin }, undefined, `${path.join(bin, 'bash')} --posix`);
      const start = printed(await only('session_start', sessionStartPayload('only-bash'), envFor(t)), 'session_start, LTM_PORT/LTM_TOKEN');
      assert.match(start.hookSpecificOutput.additionalContext, /Connection pool size/);
      printed(await only('session_start', sessionStartPayload('only-bash-file'), { CLAUDE_PROJECT_DIR: t.project }), 'session_start, server.json');
      // Another session: the one that started was given every memory already.
      const failure = { session_id: 'only-bash-tools', hook_event_name: 'PostToolUseFailure', tool_name: 'Bash', tool_input: { command: 'pnpm install --frozen-lockfile' }, error: 'ERR_PNPM_OUTDATED_LOCKFILE pnpm-lock.yaml is not up to date' };
      assert.ok(printed(await only('post_tool_use', failure, envFor(t)), 'post_tool_use').hookSpecificOutput.additionalContext.includes(pnpm));
      silent(await only('session_end', { session_id: 'only-bash-tools', hook_event_name: 'SessionEnd', reason: 'other' }, envFor(t)), 'session_end');
      const port = await closedPort();
      silent(await only('session_start', sessionStartPayload('only-bash-none'), { ...envFor(t), LTM_PORT: String(port) }), 'no server');
      silent(await only('session_start', sessionStartPayload('only-bash-none'), { CLAUDE_PROJECT_DIR: bin }), 'no server.json');
    } finally {
      removeDir(bin);
    }
  });
});
