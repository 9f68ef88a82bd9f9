/**
 * Run in a fresh, small Node process (bundled by bench/lib/child.ts): starts
 * `ltm serve` again and again and times, from its spawn, the first answer a
 * client gets: an MCP `recall` (the SDK client connects, then calls), or a
 * POST /hook/session_start as the hook script sends it (port and token from
 * .claude/ltm/server.json). Each server is stopped (SIGTERM) before the next.
 *
 *   node serveStartup.js < job.json      (prints one JSON line: StartupResult)
 */
import { HookClient, session, sessionStartContext, sessionStartPayload } from '../lib/hookTraffic';
import { jobMain } from '../lib/jobMain';
import { callOk, connectMcp } from '../lib/mcpTraffic';
import * as fs from 'node:fs';
import { storePaths } from '../../src/core/storeFiles';
import { startServer, stopServer, type ServerHandle } from '../lib/serveProcess';

export interface StartupJob {
  cliPath: string;
  projectDir: string;
  /** Fresh servers per kind of first request. */
  runs: number;
  query: string;
  /**
   * The caches a server starts from (parse-cache.json, search-index.bin):
   * - `kept` (default) as the last server left them;
   * - `deleted` before each start: everything is read and indexed from the memory files;
   * - `copied`: each server starts in a fresh copy of the project (fs.cpSync, as `cp -r`), whose caches are all there
   *   but name files that all have new inodes and times, so that every entry is stale. The copy is not timed.
   */
  caches?: 'kept' | 'deleted' | 'copied';
  /** The first requests timed; default both. */
  kinds?: readonly ('recall' | 'sessionStart')[];
}

export interface StartupResult {
  /** spawn → the first recall answered (connect included). */
  recall: number[];
  /** spawn → the first session_start answered. */
  sessionStart: number[];
  /** spawn → "serving" on stdout, over every run. */
  serving: number[];
}

async function firstRecall(server: ServerHandle, query: string): Promise<number> {
  const client = await connectMcp(`http://127.0.0.1:${server.port}/mcp`, server.token);
  try {
    await callOk(client, 'recall', { query });
    return performance.now() - server.spawnedAt;
  } finally {
    await client.close();
  }
}

async function firstSessionStart(server: ServerHandle, projectDir: string): Promise<number> {
  const client = new HookClient(server.port, server.token, projectDir);
  try {
    const reply = await client.hook('session_start', sessionStartPayload(session(projectDir)));
    const ms = performance.now() - server.spawnedAt;
    sessionStartContext(reply.body);
    return ms;
  } finally {
    client.close();
  }
}

jobMain(async (job: StartupJob): Promise<StartupResult> => {
  const result: StartupResult = { recall: [], sessionStart: [], serving: [] };
  for (let i = 0; i < job.runs; i++) {
    for (const kind of job.kinds ?? (['recall', 'sessionStart'] as const)) {
      const projectDir = job.caches === 'copied' ? `${job.projectDir}-copy` : job.projectDir;
      if (job.caches === 'deleted') {
        const paths = storePaths(projectDir);
        fs.rmSync(paths.parseCache, { force: true });
        fs.rmSync(paths.searchIndex, { force: true });
      }
      if (job.caches === 'copied') fs.cpSync(job.projectDir, projectDir, { recursive: true });
      try {
        const server = await startServer(job.cliPath, projectDir);
        try {
          result[kind].push(kind === 'recall' ? await firstRecall(server, job.query) : await firstSessionStart(server, projectDir));
          result.serving.push(server.startMs);
        } finally {
          await stopServer(server, projectDir);
        }
      } finally {
        if (job.caches === 'copied') fs.rmSync(projectDir, { recursive: true, force: true });
      }
    }
  }
  return result;
});
