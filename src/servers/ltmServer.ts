/**
 * One project's server on 127.0.0.1: MCP (Streamable HTTP with sessions, see
 * mcpSessions.ts) at /mcp and the hook endpoints at /hook/<event>. The same
 * class runs inside the VS Code extension host and as `ltm serve`.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { LtmError } from '../core/errors';
import { currentProcess } from '../core/processIdentity';
import { SessionTracker } from '../core/sessions';
import type { MemoryStore } from '../core/store';
import { refreshInstalledHookScripts, setHookTransport } from './claudeSetup';
import { commandHostNow } from './hookShell';
import type { HookTransport } from './hookSettings';
import { HookRoutes, isHookEvent } from './hookRoutes';
import { FollowUpQueue } from './followUpQueue';
import { IndexFlushSchedule } from './indexFlush';
import { TOOL_PREFIX_HEADER, knownToolPrefix } from '../shared/toolNames';
import { cachedGitSituation, insideGitWorkTree } from './gitSituation';
import type { SessionSituation } from '../core/situation';
// Types only: the MCP modules (and the MCP SDK in them) are loaded when MCP is first needed (see mcpSessions()).
import type { McpSessions, McpSessionLimits, McpSessionStats } from './mcpSessions';
import { UsageBatch } from './usageBatch';
import { needsNoMemory } from './mcpMessages';
import { EmptyBearerError, HttpError, RequestGuard, httpStatusOf, readJsonBody, sendError, sendJson } from './requestGuard';
import {
  ServerRunningError,
  loadOrCreateIdentity,
  readServerInfo,
  removeServerInfo,
  sameDirectory,
  sameServer,
  serverAnswers,
  serverHolderState,
  writeIdentity,
  writeServerInfo,
  type ServerInfo,
} from './serverInfo';

export interface LtmServerOptions {
  store: MemoryStore;
  version: string;
  /** Port to try first; defaults to the port this project's server used last time. */
  preferredPort?: number;
  injectionBudgetTokens?: () => number;
  /** Token budget of the memories offered with a prompt, a failure or a file tool. */
  promptBudgetTokens?: () => number;
  /** Origins allowed to call the server (none by default: browsers are refused). */
  allowedOrigins?: readonly string[];
  log?: (message: string) => void;
  /** How long without a request counts as a pause for follow-up work (default QUIET_MS in followUpQueue.ts). */
  quietMs?: number;
  /** How many MCP sessions may be live, and for how long idle (default DEFAULT_MCP_SESSION_LIMITS in mcpSessions.ts). */
  mcpSessions?: Partial<McpSessionLimits>;
  /** When index.json is written (defaults in indexFlush.ts; tests shorten them). */
  indexFlush?: { pauseMs?: number; maxDeferMs?: number };
  /** How session start reads the project's situation (default: from git, cachedGitSituation; tests watch it). */
  readSituation?: () => Promise<SessionSituation | null>;
}

function listen(server: http.Server, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (error: Error) => {
      server.off('listening', onListening);
      reject(error);
    };
    const onListening = () => {
      server.off('error', onError);
      resolve();
    };
    server.once('error', onError);
    server.once('listening', onListening);
    server.listen(port, '127.0.0.1');
  });
}

export class LtmServer {
  private readonly http: http.Server;
  private readonly guard: RequestGuard;
  private readonly hooks: HookRoutes;
  private readonly sessions: SessionTracker;
  private readonly recalled: UsageBatch;
  /** Work done after answering: bookkeeping and maintenance, in the pauses between hooks. */
  private readonly followUps: FollowUpQueue;
  /** index.json is written in pauses between requests, not on every store. */
  private readonly indexFlush: IndexFlushSchedule;
  /** Whether a session start is expected to have a git situation to rank by (see handle). */
  private readonly situationExpected: boolean;
  /** The MCP sessions, once mcpSessions() loaded their modules. */
  private mcp: McpSessions | null = null;
  private mcpLoading: Promise<McpSessions> | null = null;
  /** Set by stop(): MCP sessions loaded after it are closed at once (their requests are answered 503). */
  private mcpStopped = false;
  private portNumber = 0;
  private info: ServerInfo | null = null;

  private constructor(
    private readonly options: LtmServerOptions,
    readonly token: string,
  ) {
    this.followUps = new FollowUpQueue({ quietMs: options.quietMs, log: options.log });
    this.indexFlush = new IndexFlushSchedule({
      flush: () => options.store.flushIndex(),
      lastRequestAt: () => this.followUps.lastRequestAt,
      ...options.indexFlush,
      log: options.log,
    });
    // Session counters are written when the server is quiet, with the other follow-up work.
    this.sessions = new SessionTracker(options.store, (flush) => this.followUps.queue('session counters', flush));
    // So are the uses of what recall returned: every recall since the last write, in one write.
    this.recalled = new UsageBatch(
      (batch) => options.store.recordUsageBySession(batch),
      (flush) => this.followUps.queue('recall usage', flush),
    );
    this.hooks = new HookRoutes(options.store, this.sessions, {
      injectionBudgetTokens: options.injectionBudgetTokens,
      promptBudgetTokens: options.promptBudgetTokens,
      // Session start ranks by the project's git situation too (branch, changed files).
      readSituation: options.readSituation ?? cachedGitSituation(options.store.paths.project),
    });
    this.situationExpected = options.readSituation === undefined && insideGitWorkTree(options.store.paths.project);
    this.guard = new RequestGuard({ port: () => this.portNumber, token, allowedOrigins: options.allowedOrigins ?? [] });
    this.http = http.createServer((req, res) => void this.handle(req, res));
    // Hooks are short-lived; idle keep-alive sockets should not hold the process open.
    this.http.keepAliveTimeout = 5_000;
    this.http.headersTimeout = 10_000;
    this.http.requestTimeout = 30_000;
  }

  /**
   * Claims the project and starts serving it: on the preferred port, or the
   * last one, or any free one. Throws ServerRunningError when another process
   * (or another server in this one) serves the project.
   *
   * The claim is made under the store's cross-process lock: reading
   * server.json, judging its holder, creating the identity, listening and
   * writing server.json happen as one step, so of two servers starting at
   * once the second sees the first's server.json and refuses.
   */
  static async start(options: LtmServerOptions): Promise<LtmServer> {
    const { store } = options;
    store.init();
    // A server.json of an older version records no process identity: only an answer from its
    // port tells whether it runs. Asked before taking the lock (it may take a second).
    const legacy = readServerInfo(store.paths);
    let legacyAnswered: boolean | null = null;
    if (legacy && !legacy.holder && legacy.pid !== process.pid && serverHolderState(legacy) === 'unknown') {
      legacyAnswered = await serverAnswers(legacy);
      if (legacyAnswered) throw new ServerRunningError(legacy);
    }
    // Under the lock, but without reading the memories: a prepared store (MemoryStore.prepare) stays unopened.
    return store.runLocked(async () => {
      const current = readServerInfo(store.paths);
      if (current && (await holderRuns(current, sameServer(current, legacy) ? legacyAnswered : null))) {
        throw new ServerRunningError(current);
      }
      const identity = loadOrCreateIdentity(store.paths);
      const server = new LtmServer(options, identity.token);
      const preferred = options.preferredPort ?? identity.port ?? 0;
      try {
        try {
          await listen(server.http, preferred);
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE' || preferred === 0) throw error;
          options.log?.(`port ${preferred} is in use; using a free port`);
          await listen(server.http, 0);
        }
      } catch (error) {
        await server.closeMcp();
        throw error;
      }
      server.portNumber = (server.http.address() as AddressInfo).port;
      if (identity.port !== server.portNumber) writeIdentity(store.paths, { ...identity, port: server.portNumber });
      const holder = currentProcess();
      server.info = {
        port: server.portNumber,
        token: identity.token,
        pid: holder.pid,
        version: options.version,
        started_at: new Date().toISOString(),
        url: server.url,
        project: store.paths.project,
        holder,
      };
      try {
        writeServerInfo(store.paths, server.info);
      } catch (error) {
        server.http.close();
        await server.closeMcp();
        throw error;
      }
      servingHere.add(server);
      store.deferIndexWrites(() => server.indexFlush.request());
      // The stats journal is compacted in a pause too, not by the write that finds it long (see StatsWriter.deferCompaction).
      store.deferStatsCompaction(() => server.inPause('stats journal compacted', () => store.compactStatsInSlices()));
      server.refreshHookScripts();
      server.setHookTransport({ kind: 'http', port: server.portNumber, project: store.paths.project, ...commandHostNow() });
      return server;
    });
  }

  /** Projects set up by an earlier version get the hook scripts of this one (see refreshInstalledHookScripts). */
  private refreshHookScripts(): void {
    try {
      for (const file of refreshInstalledHookScripts(this.options.store.paths.project)) {
        this.options.log?.(`updated ${file} to the hook script of this version`);
      }
    } catch (error) {
      // A read-only checkout, or scripts not shipped: the installed ones still work.
      this.options.log?.(`could not update the installed hook scripts: ${(error as Error).message}`);
    }
  }

  /**
   * While this server runs, Claude Code sessions that start in the project
   * reach it with http hooks (one request per tool call, no process); when it
   * stops, they get the command hooks again, which stay silent without a
   * server (see hookSettings.ts). Only LTM's own entries change.
   */
  private setHookTransport(transport: HookTransport): void {
    try {
      const file = setHookTransport(this.options.store.paths.project, transport);
      if (file) this.options.log?.(`${file}: LTM's tool-call hooks are now ${transport.kind} hooks`);
    } catch (error) {
      // Settings that are not valid JSON are the person's to fix; the hooks there still work.
      this.options.log?.(`could not update the hooks in settings.local.json: ${(error as Error).message}`);
    }
  }

  get port(): number {
    return this.portNumber;
  }

  /** Whether this server wrote `info` (server.json) and still serves. */
  servesAs(info: ServerInfo): boolean {
    return this.info !== null && this.info.pid === info.pid && this.info.port === info.port && this.info.token === info.token;
  }

  /** The MCP sessions' counts (for tests and the benchmark); all 0 before the first MCP request. */
  get mcpStats(): McpSessionStats {
    return this.mcp?.stats ?? { live: 0, serversBuilt: 0, resumed: 0, held: 0 };
  }

  /**
   * Loads what MCP requests need ahead of the first: the MCP modules (~15–20
   * ms). `ltm serve` and the extension call it in a pause once the store is
   * open; a hook never waits for it.
   */
  async prepareMcp(): Promise<void> {
    await this.mcpSessions();
  }

  /** Closes the MCP sessions, loaded or loading: a request that loads them later is answered 503. */
  private async closeMcp(): Promise<void> {
    this.mcpStopped = true;
    if (this.mcpLoading) await (await this.mcpLoading).close();
  }

  /**
   * The MCP sessions, built at the first MCP request (or prepareMcp). Their
   * modules are imported then, not with this one: initialising the MCP SDK
   * (its schemas, its validator) takes ~15–20 ms of a server's start, which a
   * first session start, waiting for the store to open, would otherwise wait
   * for too. Concurrent first requests share one import.
   */
  private mcpSessions(): Promise<McpSessions> {
    this.mcpLoading ??= Promise.all([import('./mcpSessions'), import('./mcpTools')]).then(([{ McpSessions }, { createMcpServer }]) => {
      this.mcp = new McpSessions({
        createServer: () =>
          createMcpServer({
            store: this.options.store,
            sessions: this.sessions,
            version: this.options.version,
            sessionForToolUse: (id) => this.hooks.sessionForToolUse(id),
            countRecalled: (session, ids) => this.recalled.add(session, 'recalled', ids),
          }),
        limits: this.options.mcpSessions,
        log: this.options.log,
      });
      if (this.mcpStopped) void this.mcp.close();
      return this.mcp;
    });
    return this.mcpLoading;
  }

  get url(): string {
    return `http://127.0.0.1:${this.portNumber}`;
  }

  get mcpUrl(): string {
    return `${this.url}/mcp`;
  }

  /**
   * Stops listening, ends open connections, removes server.json if it is
   * still ours and finishes follow-up work. The port is released before
   * server.json goes, so that whoever takes over can have the same port
   * (and the Claude Code sessions that knew it keep working).
   */
  async stop(): Promise<void> {
    // First, so that no session starting from now on calls a port about to close.
    if (this.info) this.setHookTransport({ kind: 'command', ...commandHostNow() });
    const closed = new Promise<void>((resolve) => {
      if (!this.http.listening) return resolve();
      this.http.close(() => resolve());
      this.http.closeAllConnections();
    });
    servingHere.delete(this);
    if (this.info) removeServerInfo(this.options.store.paths, this.info.pid, this.info.port);
    this.info = null;
    await this.closeMcp();
    await closed;
    await this.followUps.drain();
    await this.sessions.flush();
    // Whoever writes next writes index.json at once; what this server deferred is written now.
    this.options.store.deferIndexWrites(null);
    this.options.store.deferStatsCompaction(null);
    await this.indexFlush.close();
    await this.options.store.flushIndex().catch((error: unknown) => this.options.log?.(`could not write index.json: ${(error as Error).message}`));
    // stats.json whole for readers of the reference format (and a smaller journal for the next start).
    await this.options.store.compactStats().catch((error: unknown) => this.options.log?.(`could not compact the stats journal: ${(error as Error).message}`));
  }

  /**
   * Runs `work` in a longer pause between requests (as maintenance: at most
   * a minute later), or when the server stops; errors go to the log.
   */
  inPause(what: string, work: () => Promise<unknown>): void {
    this.followUps.queue(what, work, { maintenance: true });
  }

  /** Resolves once no request is being answered (at once when none is). */
  requestsAnswered(): Promise<void> {
    return this.followUps.requestsAnswered();
  }

  /** Resolves once the work done after answering, and the session counts, are written. */
  async idle(): Promise<void> {
    await this.followUps.drain();
    await this.sessions.flush();
    await this.indexFlush.flushNow();
    await this.options.store.settled();
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    // A request is coming in: queued follow-up work waits for a quiet moment after its answer.
    res.once('close', this.followUps.beginRequest());
    try {
      this.guard.check(req);
      const pathname = requestPath(req.url);
      // A store opening in steps is waited for, not read a second time by this request; so is the
      // search index a worker builds meanwhile, but by a session start (which searches only with a
      // git situation: see HookRoutes.sessionStart) and by MCP messages that need no memory (handleMcp).
      if (pathname === '/hook/session_start') {
        // git is asked now, while the store opens, rather than once it is open (git status stats every
        // tracked file: ~30 ms with 10,000 memory files here, far longer in a large working tree); the
        // session start then takes that answer.
        this.hooks.readSituationAhead();
        // In a git working tree the session start will rank by the situation, which searches: the opening
        // then reads the saved search index while the memory files are looked at, rather than after.
        await this.options.store.untilOpened({ thenSearches: this.situationExpected });
      } else if (pathname.startsWith('/hook/')) await this.options.store.untilSearchIndexReady();
      if (pathname === '/mcp') return await this.handleMcp(req, res);
      const hook = /^\/hook\/([a-z_]+)$/.exec(pathname);
      if (hook) {
        const event = hook[1]!;
        if (!isHookEvent(event)) throw new HttpError(404, `unknown hook event "${event}"`);
        if (req.method !== 'POST') throw new MethodNotAllowed('POST');
        const body = await readJsonBody(req);
        this.checkProject(req);
        const answer = await this.hooks.handle(event, body, { toolPrefix: knownToolPrefix(req.headers[TOOL_PREFIX_HEADER.toLowerCase()]) });
        let info = answer.info;
        // X-LTM-Wait: the caller (a test, a person debugging) waits for the follow-up work too.
        if (answer.after && req.headers['x-ltm-wait'] !== undefined) {
          info = { ...info, ...(await answer.after()) };
        } else if (answer.after) {
          this.followUps.queue(`${event} follow-up`, answer.after, { maintenance: answer.maintenance === true });
        }
        res.setHeader('X-LTM-Info', headerJson(info));
        return sendJson(res, 200, answer.body);
      }
      if (pathname === '/health') {
        if (req.method !== 'GET') throw new MethodNotAllowed('GET');
        // `ready`: the store is open, its search index loaded and its memories ranked (false while `ltm serve` opens it in steps).
        // `mcp`: its MCP sessions (the Claude Code plugin's `ltm mcp` relays its sessions here: see stdioRelay.ts).
        return sendJson(res, 200, { ok: true, version: this.options.version, project: this.options.store.paths.project, ready: this.options.store.isReady, mcp: this.mcpStats });
      }
      throw new HttpError(404, `no route for ${pathname}`);
    } catch (error) {
      if (error instanceof EmptyBearerError && req.method === 'POST' && isHookPath(req.url)) return ignoreTokenlessHook(res);
      this.fail(res, error);
    }
  }

  /**
   * Streamable HTTP: POST carries the messages; DELETE ends a session. GET (the
   * client's event stream) is 405, which the spec allows: this server sends
   * nothing unasked, and Claude Code carries on without the stream.
   */
  private async handleMcp(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    this.checkProject(req);
    const mcp = await this.mcpSessions();
    if (req.method === 'DELETE' && (await mcp.delete(req, res))) return;
    if (req.method !== 'POST') throw new MethodNotAllowed('POST');
    const body = await readJsonBody(req);
    // JSON-RPC 2.0: an empty batch is an invalid request (the SDK would answer 202, as to notifications).
    if (Array.isArray(body) && body.length === 0) {
      return sendJson(res, 400, { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid Request: empty batch' } });
    }
    // A client's handshake is answered while the store opens, so that only its first tool call waits.
    if (!needsNoMemory(body)) await this.options.store.untilSearchIndexReady();
    await mcp.post(req, res, body);
  }

  /**
   * A hook run from another project's directory (e.g. a terminal whose LTM_PORT
   * points elsewhere) must not count against this project, nor an `ltm mcp`
   * relay from another one (a copy of this project, server.json included).
   */
  private checkProject(req: http.IncomingMessage): void {
    // The hook script sends a header; an http hook has the project in its URL (see hookUrl).
    const header = req.headers['x-ltm-project'];
    const claimed = typeof header === 'string' && header ? utf8HeaderValue(header) : projectInQuery(req.url);
    if (!claimed) return;
    const mine = this.options.store.paths.project;
    if (!sameDirectory(claimed, mine)) throw new HttpError(409, `this server serves ${mine}, not ${claimed}`);
  }

  private fail(res: http.ServerResponse, error: unknown): void {
    if (error instanceof MethodNotAllowed) return sendError(res, error, { Allow: error.allow });
    if (error instanceof HttpError) return sendError(res, error, error.status === 413 ? { Connection: 'close' } : {});
    if (error instanceof LtmError) {
      const status = httpStatusOf(error.code);
      if (status >= 500) this.options.log?.(`request failed: ${error.message}`);
      return sendError(res, new HttpError(status, error.message));
    }
    this.options.log?.(`request failed: ${(error as Error).stack ?? String(error)}`);
    sendError(res, new HttpError(500, 'internal error'));
  }
}

/** The servers this process runs: a server.json naming this process is live only if one of them wrote it. */
const servingHere = new Set<LtmServer>();

function isServingHere(info: ServerInfo): boolean {
  return [...servingHere].some((s) => s.servesAs(info));
}

/**
 * Whether the server that server.json names still runs. With a recorded
 * process identity that is known at once; an older server.json's live pid
 * is asked at its port (`answered`: the answer already got for it).
 */
async function holderRuns(info: ServerInfo, answered: boolean | null): Promise<boolean> {
  // Only this process knows whether a server.json naming it is live (a pid on another machine is not this one).
  if (info.pid === process.pid && (!info.holder || info.holder.host === currentProcess().host)) return isServingHere(info);
  const state = serverHolderState(info);
  if (state !== 'unknown') return state === 'alive';
  return answered ?? (await serverAnswers(info));
}

/**
 * The path of an origin-form request target (`/hook/x?y`). Parsed by hand:
 * `new URL` reads `//x` as a host and throws on `//`, and a request target is
 * text from outside, so anything else is a 400, never an exception.
 */
function requestPath(target: string | undefined): string {
  const url = target ?? '/';
  if (!url.startsWith('/')) throw new HttpError(400, 'the request target must be a path');
  const end = url.search(/[?#]/);
  return end < 0 ? url : url.slice(0, end);
}

/** Whether a request target is one of the hook endpoints. */
function isHookPath(target: string | undefined): boolean {
  const event = /^\/hook\/([a-z_]+)(?:[?#]|$)/.exec(target ?? '')?.[1];
  return event !== undefined && isHookEvent(event);
}

/**
 * A header value as the UTF-8 text its bytes hold. Node reads header bytes as
 * Latin-1, while the hook script sends the project's path as it is: UTF-8 on
 * every system LTM runs on (/home/josé/app would otherwise be another project).
 */
function utf8HeaderValue(value: string): string {
  return /[\u0080-\u00ff]/.test(value) ? Buffer.from(value, 'latin1').toString('utf8') : value;
}

/** The `project` query parameter of a hook URL, or undefined. */
function projectInQuery(target: string | undefined): string | undefined {
  const query = target?.split('#', 1)[0]!.split('?')[1];
  if (query === undefined) return undefined;
  return new URLSearchParams(query).get('project') || undefined;
}

/**
 * An http hook in a session whose environment has no LTM_TOKEN (Claude Code
 * started outside an LTM terminal) sends `Authorization: Bearer` and nothing
 * more. It is answered with an empty 200 and does nothing: a 401 would show
 * as a hook error on every tool call, and without the token nothing is done
 * anyway (a wrong token still gets 401, a missing header too).
 */
function ignoreTokenlessHook(res: http.ServerResponse): void {
  res.setHeader('X-LTM-Info', headerJson({ ignored: 'no token: LTM_TOKEN is not set where Claude Code runs' }));
  sendJson(res, 200, {});
}

/** The largest X-LTM-Info header sent; what a hook reports is small unless it echoes outside text. */
const MAX_INFO_HEADER = 4096;

/**
 * `info` as a header value: JSON with every character outside printable
 * ASCII escaped (a header holds Latin-1 at most, and what a hook reports may
 * echo text from its payload, such as a tool_use_id), and bounded in size.
 */
function headerJson(info: Record<string, unknown>): string {
  const text = JSON.stringify(info).replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return text.length <= MAX_INFO_HEADER ? text : JSON.stringify({ truncated: true, keys: Object.keys(info) });
}

class MethodNotAllowed extends HttpError {
  constructor(readonly allow: string) {
    super(405, `method not allowed (use ${allow})`);
  }
}
