/**
 * MCP over Streamable HTTP with sessions: one McpServer and transport per MCP
 * session, kept between requests. Building a server registers every tool and
 * its schemas, which costs more than serving a call (measured: 2.75 ms a call
 * with a server built per request, 1.09 ms with one reused); the SDK's
 * stateless transport cannot be reused ("Stateless transport cannot be reused
 * across requests"), so reuse needs sessions.
 *
 * How a POST is routed:
 * - `initialize` without Mcp-Session-Id: a new session, whose ID the answer carries;
 * - Mcp-Session-Id of a live session: that session;
 * - Mcp-Session-Id of no live session (this server expired or dropped it, or an
 *   earlier server process issued it): the session is resumed under the same
 *   ID. Claude Code does not start a new session when told 404 "Session not
 *   found" (anthropics/claude-code#8338, #50450, #60949): a restart of the
 *   server, or an expired session, would end its MCP tools until it restarts.
 *   A session here holds nothing the client could miss (no subscriptions, no
 *   event streams), so a resumed one is the same to the client;
 * - neither (a client that ignores session IDs): served statelessly, by a
 *   server built for that request, as before sessions.
 *
 * Live sessions are bounded (the least recently used is dropped first) and
 * expire when idle, so no client can make the server hold unbounded state.
 * Each session's transport is LTM's (mcpHttpTransport.ts), on Node's request
 * objects: the SDK's needs web Request and Response objects (see there).
 */
import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import { McpHttpTransport, isInitialize, jsonRpcErrorAnswer, sessionNotFound, type McpHttpAnswer } from './mcpHttpTransport';

export interface McpSessionLimits {
  /** The most live sessions; opening one more drops the least recently used. */
  maxSessions: number;
  /** A session unused this long is closed (it is resumed if its client comes back). */
  idleMs: number;
}

/** A few Claude Code windows and subagents per project, with room to spare. */
export const DEFAULT_MCP_SESSION_LIMITS: McpSessionLimits = { maxSessions: 32, idleMs: 30 * 60_000 };

/** What the session IDs this server accepts look like: the spec's visible ASCII, bounded. */
const SESSION_ID_PATTERN = /^[\x21-\x7e]{1,128}$/;

export interface McpSessionStats {
  /** Sessions open now. */
  live: number;
  /** McpServers built since the start: one per session opened or resumed, one per sessionless request. */
  serversBuilt: number;
  /** Sessions resumed under an ID this server did not hold. */
  resumed: number;
  /** Requests the live sessions' transports hold: those being answered (an answered one is let go at once). */
  held: number;
}

interface McpSession {
  readonly id: string;
  readonly server: McpServer;
  readonly transport: McpHttpTransport;
  lastUsed: number;
  /** Requests being answered: a dropped session is closed only once they are. */
  inFlight: number;
  dropped: boolean;
}

export interface McpSessionsOptions {
  /** Builds the McpServer of one session (the tools, bound to the store). */
  createServer: () => McpServer;
  limits?: Partial<McpSessionLimits>;
  log?: (message: string) => void;
}

export class McpSessions {
  /** Live sessions by ID, least recently used first (a used session is moved to the end). */
  private readonly sessions = new Map<string, McpSession>();
  /** Sessions being resumed: concurrent requests of one client share the resumed session. */
  private readonly resumes = new Map<string, Promise<McpSession | undefined>>();
  private readonly limits: McpSessionLimits;
  private readonly sweeper: NodeJS.Timeout;
  private closed = false;
  private serversBuilt = 0;
  private resumed = 0;

  constructor(private readonly options: McpSessionsOptions) {
    this.limits = { ...DEFAULT_MCP_SESSION_LIMITS, ...options.limits };
    // unref: an idle sweep must not keep `ltm serve` (or a test) alive.
    this.sweeper = setInterval(() => this.expireIdle(), Math.max(10, Math.min(this.limits.idleMs, 60_000)));
    this.sweeper.unref();
  }

  get stats(): McpSessionStats {
    let held = 0;
    for (const session of this.sessions.values()) held += session.transport.requestsInFlight;
    return { live: this.sessions.size, serversBuilt: this.serversBuilt, resumed: this.resumed, held };
  }

  /** Answers a POST whose body (already read and size-checked) is `body`. */
  async post(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    if (this.closed) return sendAnswer(res, stoppingAnswer());
    const sessionId = sessionIdOf(req);
    if (sessionId === undefined) {
      if (holdsInitialize(body)) return this.openSession(req, res, body);
      return this.serveSessionless(req, res, body);
    }
    if (!SESSION_ID_PATTERN.test(sessionId)) return sendAnswer(res, sessionNotFound());
    // A client re-initializing under an old ID gets a new session, as without one.
    if (holdsInitialize(body)) return this.openSession(req, res, body);
    const session = this.sessions.get(sessionId) ?? (await this.resuming(sessionId, req));
    if (!session) return sendAnswer(res, sessionNotFound());
    await this.serve(session, req, res, body);
  }

  /** Answers a DELETE: the client ends its session. Returns false when the request names no session. */
  async delete(req: IncomingMessage, res: ServerResponse): Promise<boolean> {
    const sessionId = sessionIdOf(req);
    if (sessionId === undefined) return false;
    const session = this.sessions.get(sessionId);
    if (!session) {
      sendAnswer(res, sessionNotFound());
      return true;
    }
    // The transport checks the request and closes itself; its onclose drops the session.
    await this.serve(session, req, res, undefined);
    return true;
  }

  /** Closes every session and stops the idle sweep; later requests are answered 503. */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.sweeper);
    const all = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.all(all.map((session) => this.closeSession(session)));
  }

  private async openSession(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    const session = await this.build(randomUUID());
    await this.serve(session, req, res, body);
    // An initialize the transport refused (e.g. in a batch) started no session.
    if (session.transport.sessionId !== session.id) this.drop(session);
  }

  private resuming(id: string, req: IncomingMessage): Promise<McpSession | undefined> {
    let resume = this.resumes.get(id);
    if (!resume) {
      resume = this.resume(id, req).finally(() => this.resumes.delete(id));
      this.resumes.set(id, resume);
    }
    return resume;
  }

  /**
   * A session with `id` that the SDK transport accepts: the transport answers
   * only requests of a session it initialized, so it is given an initialize
   * first (with the protocol version the client uses, from its header).
   */
  private async resume(id: string, req: IncomingMessage): Promise<McpSession | undefined> {
    const session = await this.build(id);
    const requested = req.headers['mcp-protocol-version'];
    const protocolVersion = typeof requested === 'string' && SUPPORTED_PROTOCOL_VERSIONS.includes(requested) ? requested : LATEST_PROTOCOL_VERSION;
    const initialize = {
      jsonrpc: '2.0',
      id: `ltm-resume-${id}`,
      method: 'initialize',
      params: { protocolVersion, capabilities: {}, clientInfo: { name: 'resumed-session', version: '0' } },
    };
    const headers: IncomingHttpHeaders = { accept: 'application/json, text/event-stream', 'content-type': 'application/json' };
    const answer = await session.transport.handlePost(headers, initialize);
    if (answer.status !== 200 || session.transport.sessionId !== id) {
      this.options.log?.(`could not resume MCP session ${id}: status ${answer.status}`);
      this.drop(session);
      return undefined;
    }
    this.resumed += 1;
    return session;
  }

  /** A server and a stateful transport for session `id`, registered as live (dropping the oldest if full). */
  private async build(id: string): Promise<McpSession> {
    const transport = new McpHttpTransport(() => id);
    const server = this.options.createServer();
    this.serversBuilt += 1;
    const session: McpSession = { id, server, transport, lastUsed: Date.now(), inFlight: 0, dropped: false };
    // Set before connect, which chains it: a DELETE closes the transport, and the session goes with it.
    transport.onclose = () => this.forget(session);
    await server.connect(transport);
    while (this.sessions.size >= this.limits.maxSessions) {
      const oldest = this.sessions.values().next().value as McpSession;
      this.drop(oldest);
    }
    this.sessions.set(id, session);
    return session;
  }

  private async serve(session: McpSession, req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    session.lastUsed = Date.now();
    if (!session.dropped) {
      this.sessions.delete(session.id);
      this.sessions.set(session.id, session);
    }
    session.inFlight += 1;
    try {
      const answer = req.method === 'DELETE' ? await session.transport.handleDelete(req.headers) : await session.transport.handlePost(req.headers, body);
      sendAnswer(res, answer);
    } finally {
      session.inFlight -= 1;
      if (session.dropped && session.inFlight === 0) void this.closeSession(session);
    }
  }

  /** A request without a session: a server and a stateless transport for it alone. */
  private async serveSessionless(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    const transport = new McpHttpTransport(undefined);
    const server = this.options.createServer();
    this.serversBuilt += 1;
    try {
      await server.connect(transport);
      sendAnswer(res, await transport.handlePost(req.headers, body));
    } finally {
      await server.close();
    }
  }

  /** Drops the least recently used sessions that have been idle for longer than the limit. */
  private expireIdle(): void {
    const cutoff = Date.now() - this.limits.idleMs;
    for (const session of [...this.sessions.values()]) {
      if (session.lastUsed > cutoff) break;
      if (session.inFlight === 0) this.drop(session);
    }
  }

  /** No longer live; closed now, or once its requests are answered (closing first would leave them unanswered). */
  private drop(session: McpSession): void {
    this.forget(session);
    if (session.inFlight === 0) void this.closeSession(session);
  }

  private forget(session: McpSession): void {
    session.dropped = true;
    if (this.sessions.get(session.id) === session) this.sessions.delete(session.id);
  }

  private async closeSession(session: McpSession): Promise<void> {
    session.dropped = true;
    try {
      await session.server.close();
    } catch (error) {
      this.options.log?.(`closing MCP session ${session.id} failed: ${(error as Error).message}`);
    }
  }
}

function sessionIdOf(req: IncomingMessage): string | undefined {
  const value = req.headers['mcp-session-id'];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** Whether the body (a message or a batch) holds an initialize request. */
function holdsInitialize(body: unknown): boolean {
  return (Array.isArray(body) ? body : [body]).some(isInitialize);
}

/** Writes the transport's answer: complete JSON, or no body (202, a DELETE's 200). */
function sendAnswer(res: ServerResponse, answer: McpHttpAnswer): void {
  const headers: Record<string, string | number> = { 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff', ...answer.headers };
  const text = answer.body === undefined ? '' : JSON.stringify(answer.body);
  headers['Content-Length'] = Buffer.byteLength(text);
  res.writeHead(answer.status, headers);
  res.end(text);
}

function stoppingAnswer(): McpHttpAnswer {
  return jsonRpcErrorAnswer(503, -32000, 'the server is stopping');
}
