/**
 * `ltm mcp`: the MCP tools (mcpTools.ts) over standard input and output, for
 * one Claude Code session, as the Claude Code plugin runs them. No port and
 * no token: Claude Code starts the process and is its only client. Sessions
 * running at once are as many processes on one store; its cross-process
 * lock keeps their writes (and those of a server or a hook) apart, and the
 * watcher shows each one what the others wrote. Like a server, it writes
 * index.json in a pause after its changes (index-pending.json marks it as
 * behind meanwhile), not with each one.
 */
import { SessionTracker } from '../core/sessions';
import { MemoryStore } from '../core/store';
import type { Readable, Writable } from 'node:stream';
import { gitRenameLookup } from './gitRenames';
import { IndexFlushSchedule } from './indexFlush';
import { holdUntilReady } from './mcpMessages';

export interface StdioMcpOptions {
  projectDir: string;
  version: string;
  /** The Claude Code session this process serves (Claude Code sets CLAUDE_CODE_SESSION_ID for it). */
  sessionId?: string;
  /** When index.json is written (defaults in indexFlush.ts; tests shorten them). */
  indexFlush?: { pauseMs?: number; maxDeferMs?: number };
  /** Standard input and output unless given (tests pass their own). */
  input?: Readable;
  output?: Writable;
  /** Settles when the process is asked to stop (SIGTERM, SIGINT): the session then ends as when its input closes. */
  stopRequested?: Promise<void>;
  /**
   * The search index worker's script (OpenOptions.searchIndexWorker; the CLI gives it): a store without a
   * saved search index (the first session in a fresh clone) has it built on another thread.
   */
  searchIndexWorker?: string;
}

/**
 * Serves until the client closes standard input (Claude Code does when the
 * session ends). The handshake is answered at once; the store opens after it,
 * in steps (its search index loaded, its caches saved for the next process),
 * while the client waits for its model's first answer, so that the first
 * tool call finds it open. A tool call that comes sooner waits for the
 * opening. A project without memories gets `.claude/ltm/` at its first write
 * only.
 */
export async function serveStdioMcp(options: StdioMcpOptions): Promise<void> {
  // The memory files are statted on a worker thread while the MCP server is made (a large store only).
  const store = MemoryStore.prepare(
    options.projectDir,
    { watch: true, renames: gitRenameLookup(options.projectDir), searchIndexWorker: options.searchIndexWorker },
    { sweepAhead: true },
  );
  // As in a server, index.json is written in a pause after changes (the last change starts the pause),
  // not rewritten whole by every store: see indexFlush.ts.
  let lastChangeAt = 0;
  const indexFlush = new IndexFlushSchedule({ flush: () => store.flushIndex(), lastRequestAt: () => lastChangeAt, ...options.indexFlush });
  store.deferIndexWrites(() => {
    lastChangeAt = Date.now();
    indexFlush.request();
  });
  const sessions = new SessionTracker(store);
  // The MCP SDK is imported only now: initialising it (its schemas, its validator: ~15–20 ms) would
  // otherwise come before MemoryStore.prepare, and so delay the worker that stats the memory files,
  // which a first tool call waits for.
  const [{ StdioServerTransport }, { createMcpServer }] = await Promise.all([import('@modelcontextprotocol/sdk/server/stdio.js'), import('./mcpTools')]);
  const server = createMcpServer({
    store,
    sessions,
    version: options.version,
    // Every tool call of this process is the session's: its difficulty and number apply.
    sessionForToolUse: () => options.sessionId,
  });
  const transport = new StdioServerTransport(options.input, options.output);
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    (options.input ?? process.stdin).once('end', () => resolve());
    void options.stopRequested?.then(resolve);
  });
  let opening: Promise<void> = Promise.resolve();
  let ended = false;
  try {
    await server.connect(transport);
    holdUntilReady(transport, () => store.isReady, () => store.untilSearchIndexReady());
    opening = openAhead(store, () => ended);
    await closed;
  } finally {
    ended = true;
    await server.close().catch(() => undefined);
    await opening;
    await store.settled();
    // What is deferred is written now, and whoever writes next writes index.json at once.
    store.deferIndexWrites(null);
    await indexFlush.close();
    await store.flushIndex().catch(() => undefined);
    // stats.json whole for readers of the reference format when the session ends.
    if (store.isOpen) await store.compactStats().catch(() => undefined);
    if (store.isOpen) store.flushCaches();
    store.dispose();
  }
}

/**
 * Opens the store in steps, then saves its caches (a store that had none
 * opens faster next time) and prepares the first store, as a server does
 * once it listens; what follows the opening is skipped once the session has
 * `ended` (its end saves the caches, and no store will come). Settles when
 * done, never rejecting: a store that cannot be read says why to the tool
 * call that reads it.
 */
async function openAhead(store: MemoryStore, ended: () => boolean): Promise<void> {
  try {
    await store.openInSteps();
    if (ended()) return;
    store.flushCaches();
    await store.prepareForStores();
  } catch {
    // Reported by the next tool call, which reads the store again.
  }
}
