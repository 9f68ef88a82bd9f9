/**
 * The MCP SDK Transport of one MCP session of `ltm serve` (or of one request
 * without a session): Streamable HTTP in JSON-response mode, read from Node's
 * own request headers and answered as plain values that mcpSessions.ts writes.
 *
 * The SDK's transports for Node (StreamableHTTPServerTransport and the
 * WebStandardStreamableHTTPServerTransport under it) speak web Request and
 * Response objects. Node builds those with undici, which it loads at their
 * first use: ~25 ms of CPU that a server's first MCP request paid, in the
 * middle of its store's opening (serve start → first recall ~310 ms at 10,000
 * memories, against a target of 300). Each call also built a Request, a
 * Headers and a Response and read the answer back through a web stream. In
 * JSON mode the SDK's transport also kept every answer of a session until the
 * session closed (modelcontextprotocol/typescript-sdk#2559), which LTM had to
 * work around through a private field.
 *
 * This transport does what the spec asks of a server that answers in JSON and
 * opens no event streams, with the SDK's own message schema, protocol
 * versions and error answers:
 * - POST: Accept must list application/json and text/event-stream (406),
 *   Content-Type must be application/json (415); each message must be a
 *   JSON-RPC message (400, -32700); at most MAX_BATCH_SIZE of them (400).
 * - initialize starts the session (its ID comes back in Mcp-Session-Id); a
 *   second one, or one in a batch, is refused (400, -32600).
 * - Any other POST needs the session's ID (400 without, 404 for another) and a
 *   supported MCP-Protocol-Version when it sends one (400).
 * - Only notifications or responses: 202 without a body. Requests: 200 with
 *   their responses, one object or an array for a batch.
 * - DELETE ends the session.
 * Messages the server sends unasked, or about a request (progress, logging),
 * have no stream to go in: they are dropped, as the SDK's transport drops them
 * in JSON mode without a GET stream.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import { MAX_BATCH_SIZE } from '@modelcontextprotocol/sdk/server/requestBody.js';
import { JSONRPCMessageSchema, SUPPORTED_PROTOCOL_VERSIONS, isInitializeRequest, type JSONRPCMessage, type MessageExtraInfo, type RequestId } from '@modelcontextprotocol/sdk/types.js';

/** What to write back: a status, headers, and a JSON body or none. */
export interface McpHttpAnswer {
  status: number;
  headers: Record<string, string>;
  /** Written as JSON; undefined: no body (202, a DELETE's 200). */
  body?: unknown;
}

/** A JSON-RPC error answer, as the SDK's transport words its own (id null: it answers no particular request). */
export function jsonRpcErrorAnswer(status: number, code: number, message: string): McpHttpAnswer {
  return { status, headers: { 'Content-Type': 'application/json' }, body: { jsonrpc: '2.0', error: { code, message }, id: null } };
}

export function sessionNotFound(): McpHttpAnswer {
  return jsonRpcErrorAnswer(404, -32001, 'Session not found');
}

/** The JSON-RPC error answering a request its session closed under (the SDK's transport left such a request unanswered). */
const CLOSED_BEFORE_ANSWER = { code: -32000, message: 'the MCP session closed before answering' };

type ResponseMessage = Extract<JSONRPCMessage, { result: unknown } | { error: unknown }>;

/** The responses one POST waits for, by request ID, in the order of its requests. */
interface PendingPost {
  readonly responses: Map<RequestId, ResponseMessage | undefined>;
  missing: number;
  readonly answer: () => void;
}

export class McpHttpTransport implements Transport {
  sessionId: string | undefined = undefined;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage, extra?: MessageExtraInfo) => void;
  private initialized = false;
  private closed = false;
  /** The POST waiting for each request being answered. */
  private readonly waiting = new Map<RequestId, PendingPost>();

  /** `newSessionId`: the ID an initialize starts the session under; undefined for a transport without sessions. */
  constructor(private readonly newSessionId: (() => string) | undefined) {}

  /** Requests being answered now. */
  get requestsInFlight(): number {
    return this.waiting.size;
  }

  async start(): Promise<void> {}

  async send(message: JSONRPCMessage, _options?: TransportSendOptions): Promise<void> {
    // An error answering no particular request (no ID) has no POST to go to.
    if (!isResponse(message) || message.id === undefined) return;
    const post = this.waiting.get(message.id);
    if (!post) return;
    this.waiting.delete(message.id);
    post.responses.set(message.id, message);
    post.missing -= 1;
    if (post.missing === 0) post.answer();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const [id, post] of [...this.waiting]) {
      this.waiting.delete(id);
      post.responses.set(id, { jsonrpc: '2.0', id, error: CLOSED_BEFORE_ANSWER });
      post.missing -= 1;
      if (post.missing === 0) post.answer();
    }
    this.onclose?.();
  }

  /** Answers a POST whose body (already read, size-checked and parsed) is `body`. */
  async handlePost(headers: IncomingHttpHeaders, body: unknown): Promise<McpHttpAnswer> {
    const accept = headerValue(headers.accept);
    if (!accept.includes('application/json') || !accept.includes('text/event-stream')) {
      return jsonRpcErrorAnswer(406, -32000, 'Not Acceptable: Client must accept both application/json and text/event-stream');
    }
    if (!isJsonMediaType(headerValue(headers['content-type']))) {
      return jsonRpcErrorAnswer(415, -32000, 'Unsupported Media Type: Content-Type must be application/json');
    }
    if (Array.isArray(body) && body.length > MAX_BATCH_SIZE) {
      return jsonRpcErrorAnswer(400, -32600, `Invalid Request: Batch must not exceed ${MAX_BATCH_SIZE} messages`);
    }
    const messages: JSONRPCMessage[] = [];
    for (const raw of Array.isArray(body) ? body : [body]) {
      const parsed = JSONRPCMessageSchema.safeParse(raw);
      if (!parsed.success) return jsonRpcErrorAnswer(400, -32700, 'Parse error: Invalid JSON-RPC message');
      messages.push(parsed.data);
    }
    if (this.closed) return sessionNotFound();
    const refusal = messages.some(isInitialize) ? this.initialize(messages) : this.checkSession(headers);
    if (refusal) return refusal;

    const extra: MessageExtraInfo = { requestInfo: { headers } };
    const requests = messages.filter(isRequest);
    if (requests.length === 0) {
      for (const message of messages) this.onmessage?.(message, extra);
      return { status: 202, headers: {} };
    }
    if (requests.some((request) => this.waiting.has(request.id)) || new Set(requests.map((request) => request.id)).size < requests.length) {
      return jsonRpcErrorAnswer(400, -32600, 'Invalid Request: a request ID is already being answered in this session');
    }
    const responses = await new Promise<Map<RequestId, ResponseMessage | undefined>>((resolve) => {
      const post: PendingPost = { responses: new Map(), missing: requests.length, answer: () => resolve(post.responses) };
      for (const request of requests) {
        post.responses.set(request.id, undefined);
        this.waiting.set(request.id, post);
      }
      for (const message of messages) this.onmessage?.(message, extra);
    });
    const answerHeaders: Record<string, string> = { 'Content-Type': 'application/json' };
    if (this.sessionId !== undefined) answerHeaders['mcp-session-id'] = this.sessionId;
    const answers = [...responses.values()];
    return { status: 200, headers: answerHeaders, body: Array.isArray(body) ? answers : answers[0] };
  }

  /** Answers a DELETE: the client ends its session. */
  async handleDelete(headers: IncomingHttpHeaders): Promise<McpHttpAnswer> {
    const refusal = this.checkSession(headers);
    if (refusal) return refusal;
    await this.close();
    return { status: 200, headers: {} };
  }

  /** Starts the session, or says why not. */
  private initialize(messages: readonly JSONRPCMessage[]): McpHttpAnswer | undefined {
    if (this.initialized && this.sessionId !== undefined) return jsonRpcErrorAnswer(400, -32600, 'Invalid Request: Server already initialized');
    if (messages.length > 1) return jsonRpcErrorAnswer(400, -32600, 'Invalid Request: Only one initialization request is allowed');
    this.sessionId = this.newSessionId?.();
    this.initialized = true;
    return undefined;
  }

  /** Why a request after the handshake cannot be served here, if it cannot. */
  private checkSession(headers: IncomingHttpHeaders): McpHttpAnswer | undefined {
    if (this.closed) return sessionNotFound();
    if (this.newSessionId !== undefined) {
      if (!this.initialized) return jsonRpcErrorAnswer(400, -32000, 'Bad Request: Server not initialized');
      const sessionId = headerValue(headers['mcp-session-id']);
      if (!sessionId) return jsonRpcErrorAnswer(400, -32000, 'Bad Request: Mcp-Session-Id header is required');
      if (sessionId !== this.sessionId) return sessionNotFound();
    }
    const version = headers['mcp-protocol-version'];
    if (version !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(headerValue(version))) {
      return jsonRpcErrorAnswer(400, -32000, `Bad Request: Unsupported protocol version: ${headerValue(version)} (supported versions: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')})`);
    }
    return undefined;
  }
}

function headerValue(value: string | string[] | undefined): string {
  return Array.isArray(value) ? value.join(', ') : (value ?? '');
}

/** application/json with any parameters (charset), compared as a media type, not as a substring. */
function isJsonMediaType(value: string): boolean {
  return value.split(';', 1)[0]!.trim().toLowerCase() === 'application/json';
}

/* The message is known to be JSON-RPC (JSONRPCMessageSchema): its shape tells its kind. */
function isRequest(message: JSONRPCMessage): message is Extract<JSONRPCMessage, { method: string; id: RequestId }> {
  return 'method' in message && 'id' in message;
}

function isResponse(message: JSONRPCMessage): message is ResponseMessage {
  return 'id' in message && ('result' in message || 'error' in message);
}

/** Whether a JSON-RPC message, parsed or not, is an initialize request, params included (the method is looked at first: the schema check costs more). */
export function isInitialize(message: unknown): boolean {
  return (message as { method?: unknown } | null)?.method === 'initialize' && isInitializeRequest(message);
}
