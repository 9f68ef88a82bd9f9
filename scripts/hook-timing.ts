/**
 * What a tool call's hook costs, end to end, with the real Claude Code CLI
 * (the pinned one of scripts/setup-test-deps.sh) against `ltm serve` and the
 * tests' fake model: the same `claude -p` turn of N Read calls, each with
 * LTM's PostToolUse hook as an http hook (as a running server sets it), as a
 * command hook (hooks/ltm-hook.sh as `ltm init` writes it: bash over /dev/tcp
 * where there is a bash, else sh + curl), and with no hooks at all.
 * Runs alternate between the three so that load on the machine hits all alike.
 * Then the hook mechanism alone, without the CLI's own jitter: the installed
 * command run through `sh -c` with the payload on stdin (as Claude Code runs a
 * command hook) against one POST on a new connection (as it sends an http hook).
 *
 *   npm run build && node --import tsx scripts/hook-timing.ts [tool calls = 20] [runs = 7]
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { setHookTransport } from '../src/servers/claudeSetup';
import { commandHostNow } from '../src/servers/hookShell';
import { FakeAnthropic } from '../test/support/fakeAnthropic';
import { runClaude } from '../test/support/claudeCode';
import { ltm, requireBuiltCli, startServe } from '../test/support/ltmProcess';

const calls = Number(process.argv[2] ?? 20);
const runs = Number(process.argv[3] ?? 7);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  requireBuiltCli();
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ltm-hook-timing-'));
  const project = path.join(root, 'project');
  const home = path.join(root, 'home');
  fs.mkdirSync(project);
  fs.mkdirSync(home);
  for (let i = 0; i < calls; i++) fs.writeFileSync(path.join(project, `file-${i}.txt`), `file ${i}\n`);
  const init = ltm(['init', '--project', project]);
  if (init.status !== 0) throw new Error(init.stderr);
  const fake = new FakeAnthropic((req) => {
    const done = req.messages.filter((m) => JSON.stringify(m.content).includes('"tool_result"')).length;
    return done < calls ? { toolUse: { name: 'Read', input: { file_path: path.join(project, `file-${done}.txt`) } } } : { text: 'done' };
  });
  await fake.start();
  const server = await startServe(project);
  const settingsFile = path.join(project, '.claude', 'settings.local.json');
  // The server switches the hooks just after it writes server.json, which startServe waits for.
  const deadline = Date.now() + 10_000;
  while (!fs.readFileSync(settingsFile, 'utf8').includes('"type": "http"')) {
    if (Date.now() > deadline) throw new Error('the server did not switch the tool-call hooks to http hooks');
    await new Promise((r) => setTimeout(r, 20));
  }
  const withHttp = fs.readFileSync(settingsFile, 'utf8');
  setHookTransport(project, { kind: 'command', ...commandHostNow() });
  const withCommand = fs.readFileSync(settingsFile, 'utf8');
  const modes: Record<string, string> = { http: withHttp, command: withCommand, none: '{}\n' };
  const times: Record<string, number[]> = { http: [], command: [], none: [] };
  let direct: { command: number; http: number } | undefined;
  try {
    direct = await hookAlone(project, server.port, server.token, withCommand, withHttp);
    for (let r = 0; r < runs; r++) {
      for (const mode of Object.keys(modes)) {
        fs.writeFileSync(settingsFile, modes[mode]!);
        const run = await runClaude('read the files', {
          cwd: project,
          home,
          modelUrl: fake.url,
          env: { LTM_PORT: String(server.port), LTM_TOKEN: server.token },
        });
        if (run.status !== 0 || run.result?.result !== 'done') throw new Error(`${mode}: ${run.stderr || run.stdout}`);
        times[mode]!.push(run.durationMs);
      }
    }
  } finally {
    fs.writeFileSync(settingsFile, withHttp);
    await server.stop();
    await fake.stop();
    fs.rmSync(root, { recursive: true, force: true });
  }
  const m = Object.fromEntries(Object.entries(times).map(([k, v]) => [k, median(v)])) as Record<string, number>;
  for (const [mode, v] of Object.entries(times)) console.log(`${mode.padEnd(8)} median ${m[mode]} ms  runs ${v.join(' ')}`);
  if (direct) console.log(`one PostToolUse hook alone (median of 50): command ${direct.command.toFixed(1)} ms, http ${direct.http.toFixed(1)} ms`);
  const perCall = (a: string, b: string) => ((m[a]! - m[b]!) / calls).toFixed(1);
  console.log(`per tool call: command hook ${perCall('command', 'none')} ms, http hook ${perCall('http', 'none')} ms, saved ${perCall('command', 'http')} ms (${calls} calls, median of ${runs} runs)`);
}

type Settings = { hooks: Record<string, { hooks: { command?: string; url?: string }[] }[]> };

/** Median times of one PostToolUse hook delivered each way to the running server. */
async function hookAlone(project: string, port: number, token: string, withCommand: string, withHttp: string): Promise<{ command: number; http: number }> {
  const command = (JSON.parse(withCommand) as Settings).hooks.PostToolUse![0]!.hooks[0]!.command!;
  const url = new URL((JSON.parse(withHttp) as Settings).hooks.PostToolUse![0]!.hooks[0]!.url!);
  const payload = JSON.stringify({ session_id: 'timing', hook_event_name: 'PostToolUse', tool_name: 'Read', tool_input: {}, tool_response: { ok: true }, tool_use_id: 'toolu_t' });
  const env = { ...process.env, CLAUDE_PROJECT_DIR: project, LTM_PORT: String(port), LTM_TOKEN: token };
  const commandTimes: number[] = [];
  const httpTimes: number[] = [];
  for (let i = 0; i < 50; i++) {
    let t = process.hrtime.bigint();
    const r = spawnSync('/bin/sh', ['-c', command], { input: payload, env, cwd: project });
    if (r.status !== 0) throw new Error(`command hook failed: ${r.stderr.toString()}`);
    commandTimes.push(Number(process.hrtime.bigint() - t) / 1e6);
    t = process.hrtime.bigint();
    await new Promise<void>((resolve, reject) => {
      const req = http.request(url, { method: 'POST', agent: false, headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' } }, (res) => {
        res.resume();
        res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`http hook got ${res.statusCode}`))));
      });
      req.on('error', reject);
      req.end(payload);
    });
    httpTimes.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  return { command: median(commandTimes), http: median(httpTimes) };
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
