/**
 * Guards against: the per-project bearer token leaking, and two servers serving
 * one project. The token must never be on a process command line while the
 * real hooks/ltm-hook.sh runs against `ltm serve` (any local user can read
 * /proc/<pid>/cmdline), never in a file git tracks or stages after `ltm init`,
 * serving, stores and `git add -A`, never in `ltm serve`'s output, and under
 * .claude/ only in files that are git-ignored and mode 0600. Two `ltm serve`
 * started at the same moment for one project: exactly one serves, the other
 * exits 1 naming the running one's pid, and server.json holds the token of the
 * one that runs.
 */
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { HOOK_SCRIPT, mcpClient, postToolUsePayload, rawRequest, serverJsonPath, sessionStartPayload, waitFor, type ServerJson } from '../support/serverKit';
import { ensureCliBuilt } from '../support/storeKit';
import { CLI, Processes, TempDirs, allFiles, git, runLtm, sampleCmdlines, startServe, type CmdlineSampling, type ServeProcess } from './kit';

const AT_ONCE = path.join(__dirname, 'serveAtOnce.cjs');
/** Races of two servers: the window is a few milliseconds wide, so a few rounds are needed to hit it. */
const ROUNDS = 6;

describe('adversarial: the bearer token never leaks; one server per project', function () {
  this.timeout(120_000);
  const procs = new Processes();
  const dirs = new TempDirs();

  before(function () {
    if (process.platform !== 'linux') this.skip();
    assert.equal(spawnSync('sh', ['-c', 'command -v curl']).status, 0, 'curl is needed by the hook script');
    ensureCliBuilt();
  });
  after(async () => {
    await procs.killAll();
    dirs.removeAll();
  });

  describe('a project set up with ltm init, served by ltm serve, used by hooks, MCP and the CLI', () => {
    let project: string;
    let serve: ServeProcess;
    let info: ServerJson;

    before(async () => {
      project = dirs.make('ltm-adv-exposure-');
      git(project, ['init', '-q']);
      const init = await runLtm(procs, ['init', '--project', project]);
      assert.equal(init.status, 0, init.stderr);
      ({ proc: serve, info } = await startServe(procs, project));
    });
    after(async () => {
      if (serve && serve.child.exitCode === null) {
        serve.child.kill('SIGTERM');
        await serve.exited;
      }
    });

    /**
     * 20 runs of the real script. The sampling must see the process holding the request, or it
     * proves nothing: curl under sh; under bash, which writes the request itself, bash running the script.
     */
    async function exposureRuns(shell: 'sh' | 'bash --posix'): Promise<void> {
      const marker = shell === 'sh' ? `127.0.0.1:${info.port}/hook/` : HOOK_SCRIPT;
      const rows: { i: number; event: string; via: string; sampling: CmdlineSampling }[] = [];
      const tmp = dirs.make('ltm-adv-exposure-tmp-');
      for (let i = 0; i < 20; i++) {
        const event = ['session_start', 'pre_tool_use', 'post_tool_use', 'pre_compact', 'session_end'][i % 5]!;
        const via = i % 2 === 0 ? 'env' : 'server.json';
        const session = `exposure-${Math.floor(i / 5)}`;
        const payload = event === 'session_start' ? sessionStartPayload(session) : { ...postToolUsePayload(session, { stdout: 'ok' }), hook_event_name: event };
        const env: Record<string, string> = { CLAUDE_PROJECT_DIR: project, TMPDIR: tmp };
        if (via === 'env') Object.assign(env, { LTM_PORT: String(info.port), LTM_TOKEN: info.token });
        const { result: run, sampling } = await sampleCmdlines(info.token, marker, () => procs.runHookScript(HOOK_SCRIPT, event, payload, env, project, shell));
        rows.push({ i, event, via, sampling });
        assert.deepEqual([run.status, run.stderr], [0, ''], `run ${i} (${event} via ${via})`);
        if (event === 'session_start') assert.match(run.stdout, /"hookEventName":"SessionStart"/, `run ${i}: the hook did not reach the server (via ${via}): ${JSON.stringify(run.stdout)}`);
      }
      const hits = rows.filter((r) => r.sampling.hits.length > 0);
      const seen = rows.filter((r) => r.sampling.markerSweeps > 0).length;
      console.log(
        `      exposure (${shell}): 20 hook runs, ${rows.reduce((n, r) => n + r.sampling.sweeps, 0)} sweeps of /proc/*/cmdline, ` +
          `${shell === 'sh' ? 'curl' : 'bash'} seen in ${seen} runs; token seen on a command line in ${hits.length} runs`,
      );
      assert.deepEqual(
        hits.map((r) => `run ${r.i} (${r.event} via ${r.via}): ${r.sampling.hits.join(' | ')}`),
        [],
        'the token was on a process command line',
      );
      // The sampling was not blind: the process holding the request was caught. A bash run starts no
      // process and is over in a few milliseconds, often within one sweep on a loaded machine, so here
      // it must be caught at least once; hookScript.test.ts catches every run, behind a slow proxy.
      const needed = shell === 'sh' ? 10 : 1;
      assert.ok(seen >= needed, `${marker} was caught in only ${seen} of 20 runs: the sampling cannot tell`);
      assert.deepEqual(fs.readdirSync(tmp), [], 'the hook script left files in $TMPDIR');
    }

    it('the real hook script (sh, through curl), run 20 times, never puts the token on a process command line', async () => {
      await exposureRuns('sh');
    });

    it('the real hook script (bash, over /dev/tcp, as ltm init writes it where bash exists), run 20 times, the same', async function () {
      if (spawnSync('sh', ['-c', 'command -v bash']).status !== 0) this.skip();
      await exposureRuns('bash --posix');
    });

    it('the token is in no tracked or staged file, not in ltm serve output, and under .claude/ only in git-ignored 0600 files', async () => {
      const client = await mcpClient(info.port, info.token, 'adv-exposure');
      try {
        for (let i = 0; i < 3; i++) {
          const res = await client.callTool({ name: 'store_memory', arguments: { topic: `exposure memory ${i}`, content: `text ${i}`, tags: ['exposure'] } });
          assert.notEqual(res.isError, true);
        }
      } finally {
        await client.close();
      }
      const stored = await runLtm(procs, ['store', '--project', project, '--topic', 'from the CLI', '--content', 'cli text']);
      assert.equal(stored.status, 0, stored.stderr);
      git(project, ['add', '-A']);

      const tracked = git(project, ['ls-files', '-z']).stdout.split('\0').filter(Boolean);
      assert.ok(tracked.some((f) => f.startsWith('.claude/ltm/memories/')), 'no memory is tracked: the check would be empty');
      const trackedWithToken = tracked.filter((f) => fs.readFileSync(path.join(project, f), 'latin1').includes(info.token));
      assert.deepEqual(trackedWithToken, [], 'tracked files hold the token');
      assert.ok(!git(project, ['diff', '--cached']).stdout.includes(info.token), 'the staged diff holds the token');
      assert.ok(!serve.stdout().includes(info.token) && !serve.stderr().includes(info.token), 'ltm serve printed the token');

      const claude = path.join(project, '.claude');
      const holding = allFiles(claude).filter((f) => fs.readFileSync(f, 'latin1').includes(info.token));
      // The token is somewhere (server.json, the identity): the scan is not blind.
      assert.ok(holding.includes(serverJsonPath(project)), `server.json does not hold the token: ${JSON.stringify(holding)}`);
      for (const file of holding) {
        const rel = path.relative(project, file);
        const ignored = git(project, ['check-ignore', '-q', rel], true).status === 0;
        const mode = fs.statSync(file).mode & 0o777;
        assert.ok(ignored && mode === 0o600, `${rel} holds the token but is ${ignored ? '' : 'not git-ignored and '}mode ${mode.toString(8)}`);
      }
      serve.child.kill('SIGTERM');
      assert.equal(await serve.exited, 0);
      assert.ok(!serve.stdout().includes(info.token) && !serve.stderr().includes(info.token), 'ltm serve printed the token while stopping');
    });
  });

  it(`two ltm serve started at the same moment for one project (${ROUNDS} times): exactly one serves, the other exits 1 naming its pid`, async () => {
    const outcomes: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      // A new project each round: the first start of a project (no identity yet) is the widest race.
      const project = dirs.make('ltm-adv-two-servers-');
      // Both load the CLI, then run `ltm serve` at the same instant.
      const startAt = String(Date.now() + 900);
      const a = procs.spawnNode([AT_ONCE, CLI, startAt, 'serve', '--project', project]);
      const b = procs.spawnNode([AT_ONCE, CLI, startAt, 'serve', '--project', project]);
      const pair = [a, b];
      // Wait until one has exited and the other has written server.json (or both did something wrong).
      const settled = await waitFor(
        () => {
          const exited = pair.filter((p) => p.child.exitCode !== null || p.child.signalCode !== null);
          if (exited.length === 2) return { winner: null, loser: null, both: 'exited' as const };
          // Both printed their banner: both serve the project.
          if (pair.every((p) => /^LTM \S+ serving /m.test(p.stdout()))) return { winner: null, loser: null, both: 'serving' as const };
          let json: ServerJson | null = null;
          try {
            json = JSON.parse(fs.readFileSync(serverJsonPath(project), 'utf8')) as ServerJson;
          } catch {
            json = null;
          }
          if (exited.length === 1 && json) {
            const winner = pair.find((p) => p !== exited[0])!;
            if (json.pid === winner.child.pid) return { winner, loser: exited[0]!, both: null };
          }
          return null;
        },
        20_000,
        `round ${round}: one ltm serve to exit and the other to serve (running: ${pair.filter((p) => p.child.exitCode === null).length})`,
      ).catch((error: Error) => {
        throw new Error(`${error.message}\nA: ${a.output()}\nB: ${b.output()}`);
      });
      assert.equal(settled.both, null, `round ${round}: both ${settled.both}:\nA (${a.child.exitCode}): ${a.output()}\nB (${b.child.exitCode}): ${b.output()}`);
      const { winner, loser } = settled as { winner: ServeProcess; loser: ServeProcess };
      const json = JSON.parse(fs.readFileSync(serverJsonPath(project), 'utf8')) as ServerJson;
      assert.equal(loser.child.exitCode, 1, `round ${round}: the refused ltm serve exited ${loser.child.exitCode}: ${loser.output()}`);
      assert.match(loser.stderr(), new RegExp(`\\b${winner.child.pid}\\b`), `round ${round}: the refusal does not name the running server's pid ${winner.child.pid}: ${loser.stderr()}`);
      assert.equal(winner.child.exitCode, null, `round ${round}: the winner is not running`);
      // server.json's token is the running server's: it answers with it on server.json's port.
      const health = await rawRequest(json.port, { path: '/health', headers: { Authorization: `Bearer ${json.token}` } });
      assert.equal(health.status, 200, `round ${round}: the running server refuses server.json's token (${health.status})`);
      assert.equal((health.json() as { project: string }).project, path.resolve(project), `round ${round}: the server on server.json's port serves another project`);
      // Still one server a moment later.
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(winner.child.exitCode, null, `round ${round}: the winner stopped`);
      outcomes.push(`${winner === a ? 'first' : 'second'} won`);
      winner.child.kill('SIGTERM');
      assert.equal(await winner.exited, 0, `round ${round}: the winner did not stop cleanly: ${winner.output()}`);
    }
    console.log(`      exposure: two servers at once, ${ROUNDS} rounds: ${outcomes.join(', ')}`);
  });
});
