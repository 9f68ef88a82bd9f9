/**
 * The HTTP side of a relayed `ltm mcp` session (stdioRelay.ts): each MCP
 * message goes to the project's server as any MCP client of it would send it
 * (Streamable HTTP on 127.0.0.1, the server's token, the MCP session it
 * opened at initialize), and McpForwarder says what became of it: answered,
 * not taken (the server never acted on it), or taken and not answered. The
 * relay decides what to do in each case.
 */
import * as http from 'node:http';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { projectHeaderValue, type RelayTarget } from './serverInfo';

/**
 * What became of a message sent to the server:
 * - answered: the server took it; `answer` is its response to a request (null for a notification);
 * - unreached: the server did not take it (nothing listens, it is stopping, it refused the token or
 *   does not know the session): it was not acted on, and may be handled elsewhere;
 * - failed: it was sent, and no usable answer came back: the server may have acted on it.
 */
export type ForwardResult = { kind: 'answered'; answer: JSONRPCMessage | null } | { kind: 'unreached' } | { kind: 'failed'; reason: string };

/** How long ending the server's MCP session may take when the session ends (the server drops an idle one anyway). */
const CLOSE_TIMEOUT_MS = 1_000;

/** Statuses with which the server says it did not act on the message (see ForwardResult); 409: it serves another project. */
const NOT_TAKEN = new Set([401, 403, 404, 409, 503]);

export class McpForwarder {
  /** The MCP session the server opened for this relay (Mcp-Session-Id), once initialize is answered. */
  private sessionId: string | null = null;
  /** The protocol version agreed at initialize, sent with every later message as the spec asks. */
  private protocolVersion: string | null = null;

  constructor(private readonly target: RelayTarget) {}

  /** Sends `message`; `timeoutMs`: how long to wait for the answer (none by default: a tool call takes its time). */
  async forward(message: JSONRPCMessage, timeoutMs?: number): Promise<ForwardResult> {
    const reply = await this.request('POST', JSON.stringify(message), timeoutMs);
    if (reply.kind !== 'replied') return reply;
    const { status, headers, body } = reply;
    if (NOT_TAKEN.has(status)) return { kind: 'unreached' };
    if (status === 202) return { kind: 'answered', answer: null };
    let answer: unknown;
    try {
      answer = JSON.parse(body);
    } catch {
      return { kind: 'failed', reason: `the LTM server answered ${status} with a body that is not JSON` };
    }
    if (!isJsonRpcAnswer(answer)) return { kind: 'failed', reason: `the LTM server answered ${status} with no JSON-RPC response` };
    if (status !== 200) {
      // A refusal words its error for no particular request (id null): it is this request's answer.
      return 'id' in message && 'method' in message ? { kind: 'answered', answer: { ...answer, id: message.id } as JSONRPCMessage } : { kind: 'answered', answer: null };
    }
    // The server answered an initialize: what follows belongs to the session it opened.
    if ((message as { method?: unknown }).method === 'initialize' && isInitializeResult(answer)) {
      const session = headers['mcp-session-id'];
      this.sessionId = typeof session === 'string' ? session : null;
      this.protocolVersion = answer.result.protocolVersion;
    }
    return { kind: 'answered', answer: answer as JSONRPCMessage };
  }

  /** Ends the server's MCP session, when there is one. Never throws. */
  async close(): Promise<void> {
    if (this.sessionId !== null) await this.request('DELETE', null, CLOSE_TIMEOUT_MS);
    this.sessionId = null;
  }

  private headers(body: string | null): http.OutgoingHttpHeaders {
    return {
      Authorization: `Bearer ${this.target.token}`,
      'X-LTM-Project': projectHeaderValue(this.target.project),
      Accept: 'application/json, text/event-stream',
      ...(body === null ? {} : { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) }),
      ...(this.sessionId === null ? {} : { 'Mcp-Session-Id': this.sessionId }),
      ...(this.protocolVersion === null ? {} : { 'Mcp-Protocol-Version': this.protocolVersion }),
    };
  }

  /**
   * One request on a connection of its own (on 127.0.0.1, cheap beside a tool call): a connection kept alive
   * for the next message could be one the server has just closed, and a message lost that way cannot
   * be told from one the server read before it stopped, which must not be sent twice.
   */
  private request(method: 'POST' | 'DELETE', body: string | null, timeoutMs: number | undefined): Promise<Reply | { kind: 'unreached' } | { kind: 'failed'; reason: string }> {
    return new Promise((resolve) => {
      const req = http.request({ host: '127.0.0.1', port: this.target.port, path: '/mcp', method, agent: false, headers: this.headers(body), timeout: timeoutMs }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ kind: 'replied', status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', (error) => resolve({ kind: 'failed', reason: error.message }));
      });
      req.on('timeout', () => req.destroy(new Error(`no answer from the LTM server within ${timeoutMs} ms`)));
      req.on('error', (error: NodeJS.ErrnoException) => {
        // Nothing listens: the server is gone, and never saw the message.
        resolve(error.code === 'ECONNREFUSED' ? { kind: 'unreached' } : { kind: 'failed', reason: error.message });
      });
      req.end(body ?? undefined);
    });
  }
}

interface Reply {
  kind: 'replied';
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

function isJsonRpcAnswer(value: unknown): value is { jsonrpc: '2.0' } & ({ result: unknown } | { error: unknown }) {
  return value !== null && typeof value === 'object' && !Array.isArray(value) && (value as { jsonrpc?: unknown }).jsonrpc === '2.0' && ('result' in value || 'error' in value);
}

function isInitializeResult(value: object): value is { result: { protocolVersion: string } } {
  const result = (value as { result?: { protocolVersion?: unknown } }).result;
  return typeof result?.protocolVersion === 'string';
}
