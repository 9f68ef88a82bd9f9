/**
 * Run in a fresh, small Node process (bundled by bench/lib/child.ts): runs a
 * hook command once per job as Claude Code runs a command hook (through a
 * shell, payload on stdin) and times each run. Spawning from the bench
 * process itself would add the cost of forking its large heap to every run.
 *
 *   node hookRunner.js < job.json      (prints one JSON line: the runs)
 */
import { spawnSync } from 'node:child_process';
import * as http from 'node:http';

export interface HookRunnerJob {
  command: string;
  cwd: string;
  env: Record<string, string>;
  /** A run may have a command and environment of its own, so that cases can alternate under one load. */
  runs: { stdin: string; sessionId: string; command?: string; env?: Record<string, string> }[];
  /** After each run, end its session on this server (untimed), as Claude Code's SessionEnd would. */
  endSessions?: { port: number; token: string; project: string };
}

export interface HookRunnerRun {
  ms: number;
  status: number | null;
  stdout: string;
  stderr: string;
}

function endSession(server: NonNullable<HookRunnerJob['endSessions']>, sessionId: string): Promise<void> {
  const body = Buffer.from(JSON.stringify({ session_id: sessionId, hook_event_name: 'SessionEnd', reason: 'other' }));
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port: server.port,
        method: 'POST',
        path: '/hook/session_end',
        headers: { Authorization: `Bearer ${server.token}`, 'Content-Type': 'application/json', 'Content-Length': body.length, 'X-LTM-Project': server.project },
      },
      (res) => {
        res.resume();
        res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`session_end answered ${res.statusCode}`))));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

async function main(): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  const job = JSON.parse(Buffer.concat(chunks).toString('utf8')) as HookRunnerJob;
  const runs: HookRunnerRun[] = [];
  for (const run of job.runs) {
    const t0 = performance.now();
    const result = spawnSync('/bin/sh', ['-c', run.command ?? job.command], {
      cwd: job.cwd,
      env: { ...(run.env ?? job.env), CLAUDE_CODE_SESSION_ID: run.sessionId },
      input: run.stdin,
      encoding: 'utf8',
      timeout: 10_000,
    });
    const ms = performance.now() - t0;
    if (result.error) throw result.error;
    runs.push({ ms, status: result.status, stdout: result.stdout, stderr: result.stderr });
    if (job.endSessions) await endSession(job.endSessions, run.sessionId);
  }
  process.stdout.write(`${JSON.stringify(runs)}\n`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
