/**
 * Run in a fresh, small Node process (bundled by bench/lib/child.ts): starts
 * `ltm mcp` (MCP over stdio, as the Claude Code plugin runs it, one process
 * per session) again and again with the MCP SDK's stdio client, and times
 * from its spawn the handshake and the first recall: called at once after the
 * handshake, and, in another process, called after a pause as long as a
 * model's first answer, when the store has opened on its own.
 *
 *   node stdioStartup.js < job.json      (prints one JSON line: StdioStartupResult)
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { jobMain } from '../lib/jobMain';
import { callOk } from '../lib/mcpTraffic';

export interface StdioStartupJob {
  /** Node's arguments for `ltm mcp`, as the plugin launches it (pluginMcpLaunch). */
  args: string[];
  projectDir: string;
  /** Processes per kind of first recall. */
  runs: number;
  query: string;
  /** How long after the handshake the paused recall is called. */
  pauseMs: number;
}

export interface StdioStartupResult {
  /** spawn → initialize answered and initialized sent, over every process. */
  handshake: number[];
  /** spawn → the first recall answered, called as soon as the handshake was done. */
  recallAtOnce: number[];
  /** The first recall alone, called `pauseMs` after the handshake. */
  recallAfterPause: number[];
}

async function session(job: StdioStartupJob, result: StdioStartupResult, paused: boolean): Promise<void> {
  const client = new Client({ name: 'ltm-bench', version: '1.0.0' });
  const spawnedAt = performance.now();
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: job.args,
      cwd: job.projectDir,
      env: { ...(process.env as Record<string, string>), CLAUDE_PROJECT_DIR: job.projectDir },
      stderr: 'inherit',
    }),
  );
  try {
    result.handshake.push(performance.now() - spawnedAt);
    if (paused) {
      await new Promise((resolve) => setTimeout(resolve, job.pauseMs));
      const calledAt = performance.now();
      await callOk(client, 'recall', { query: job.query });
      result.recallAfterPause.push(performance.now() - calledAt);
    } else {
      await callOk(client, 'recall', { query: job.query });
      result.recallAtOnce.push(performance.now() - spawnedAt);
    }
  } finally {
    // Closing stdin ends the session: the process writes what is pending and exits.
    await client.close();
  }
}

jobMain(async (job: StdioStartupJob): Promise<StdioStartupResult> => {
  const result: StdioStartupResult = { handshake: [], recallAtOnce: [], recallAfterPause: [] };
  for (let i = 0; i < job.runs; i++) {
    await session(job, result, false);
    await session(job, result, true);
  }
  return result;
});
