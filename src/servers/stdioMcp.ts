/**
 * `ltm mcp`: the MCP tools (mcpTools.ts) over standard input and output, for
 * one Claude Code session, as the Claude Code plugin runs them. No port and
 * no token: Claude Code starts the process and is its only client. Sessions
 * running at once are as many processes on one store; its cross-process
 * lock keeps their writes (and those of a server or a hook) apart, and the
 * watcher shows each one what the others wrote. Like a server, it writes
 * index.json in a pause after its changes (index-pending.json marks it as
 * behind meanwhile), not with each one. Beside a running server of the same
 * version, a session is relayed to it instead (stdioRelay.ts).
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { SessionTracker } from '../core/sessions';
import { MemoryStore } from '../core/store';
import type { Readable, Writable } from 'node:stream';
import { gitRenameLookup } from './gitRenames';
import { IndexFlushSchedule } from './indexFlush';
import { holdUntilReady } from './mcpMessages';
import { storePaths } from '../core/storeFiles';
import { relayTargetOf, type RelayTarget } from './serverInfo';
import type { LocalSession } from './stdioRelay';

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
  /** The server to relay the session to; null: none, serve it here (by default, the project's server when it runs this version: relayTargetOf). */
  relayTo?: RelayTarget | null;
}

/**
 * Serves until the client closes standard input (Claude Code does when the
 * session ends), or until `stopRequested`.
 *
 * When the project's server runs this version of LTM, the session's messages
 * are relayed to it (stdioRelay.ts) and no store is opened here; should
 * the server stop during the session, the session goes on here.
 *
 * Otherwise the handshake is answered at once; the store opens after it, in
 * steps (its search index loaded, its caches saved for the next process),
 * while the client waits for its model's first answer, so that the first
 * tool call finds it open. A tool call that comes sooner waits for the
 * opening. A project without memories gets `.claude/ltm/` at its first write
 * only.
 */
export async function serveStdioMcp(options: StdioMcpOptions): Promise<void> {
  const target = options.relayTo !== undefined ? options.relayTo : relayTargetOf(storePaths(options.projectDir), options.version);
  // Without a server, the memory files are statted on a worker thread from now on, while the MCP server is made.
  const local = target ? null : LocalMcp.prepare(options);
  // Awaited below; handled now, so that a store that cannot be prepared is this call's error, not an unhandled rejection meanwhile.
  local?.catch(() => undefined);
  const { StdioServerTransport } = await import('@modelcontextprotocol/sdk/server/stdio.js');
  const transport = new StdioServerTransport(options.input, options.output);
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    (options.input ?? process.stdin).once('end', () => resolve());
    void options.stopRequested?.then(resolve);
  });
  // Only a relayed session loads the relay, and with it the SDK's message schemas, before it starts.
  const relay = target ? new (await import('./stdioRelay')).StdioRelay(transport, target, () => LocalMcp.prepare(options)) : null;
  try {
    if (relay) await relay.start();
    else await (await local!).serve(transport);
    await closed;
  } finally {
    if (relay) await relay.close();
    else await (await local!).close();
  }
}

/**
 * The MCP tools on this process's own copy of the store: for a session
 * without a server, or whose server went away.
 */
class LocalMcp implements LocalSession {
  private opening: Promise<void> = Promise.resolve();
  private ended = false;

  private constructor(
    private readonly store: MemoryStore,
    private readonly server: McpServer,
    private readonly indexFlush: IndexFlushSchedule,
  ) {}

  static async prepare(options: StdioMcpOptions): Promise<LocalMcp> {
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
    const { createMcpServer } = await import('./mcpTools');
    const server = createMcpServer({
      store,
      sessions,
      version: options.version,
      // Every tool call of this process is the session's: its difficulty and number apply.
      sessionForToolUse: () => options.sessionId,
    });
    return new LocalMcp(store, server, indexFlush);
  }

  /** Answers `transport`'s messages; the store opens meanwhile, and a tool call waits for it. */
  async serve(transport: Transport): Promise<void> {
    await this.server.connect(transport);
    holdUntilReady(transport, () => this.store.isReady, () => this.store.untilSearchIndexReady());
    this.opening = openAhead(this.store, () => this.ended);
  }

  /** Ends the session: what is deferred is written now, and the caches are saved for the next process. */
  async close(): Promise<void> {
    const { store } = this;
    this.ended = true;
    await this.server.close().catch(() => undefined);
    await this.opening;
    await store.settled();
    // Whoever writes next writes index.json at once.
    store.deferIndexWrites(null);
    await this.indexFlush.close();
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
    await store.flushCachesInSlices();
    if (ended()) return;
    await store.prepareForStores();
  } catch {
    // Reported by the next tool call, which reads the store again.
  }
}
