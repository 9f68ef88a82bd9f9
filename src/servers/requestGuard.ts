/**
 * The checks every request passes before any route sees it. The server binds
 * 127.0.0.1 only, but any local process or web page can still reach it:
 * - Host must name the loopback address and our port (DNS rebinding),
 * - an Origin header must be explicitly allowed (browsers always send one),
 * - the per-project bearer token is required,
 * - bodies are capped and must be JSON.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { timingSafeEqual, createHash } from 'node:crypto';
import type { LtmErrorCode } from '../core/errors';

export const MAX_BODY_BYTES = 1024 * 1024;

export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The answer to an engine error, by whose fault it is: the request's (4xx) or
 * the store's (5xx, also logged: a person has to act on it, and the hook that
 * asked only reports it). A record, so a new code cannot go unmapped.
 */
const STATUS_OF_ERROR: Record<LtmErrorCode, number> = {
  invalid_input: 400,
  not_found: 404,
  busy: 503,
  // The store directory went away under a running server.
  no_store: 503,
  unreadable: 500,
};

export function httpStatusOf(code: LtmErrorCode): number {
  return STATUS_OF_ERROR[code];
}

/**
 * `Authorization: Bearer` with no token: what a Claude Code http hook sends
 * when the variable named in its header is not set. Refused like any missing
 * token; the hook routes answer it quietly (see ltmServer.ts).
 */
export class EmptyBearerError extends HttpError {
  constructor() {
    super(401, 'missing or wrong bearer token');
  }
}

export interface GuardOptions {
  port: () => number;
  token: string;
  allowedOrigins: readonly string[];
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

export class RequestGuard {
  private readonly tokenDigest: Buffer;

  constructor(private readonly options: GuardOptions) {
    this.tokenDigest = digest(options.token);
  }

  /** Throws an HttpError for the first check a request fails. */
  check(req: IncomingMessage): void {
    const port = this.options.port();
    const host = req.headers.host;
    if (host !== `127.0.0.1:${port}` && host !== `localhost:${port}`) {
      throw new HttpError(403, `forbidden host ${JSON.stringify(host ?? '')}: use 127.0.0.1:${port}`);
    }
    const origin = req.headers.origin;
    if (origin !== undefined && !this.options.allowedOrigins.includes(origin)) {
      throw new HttpError(403, `forbidden origin ${JSON.stringify(origin)}`);
    }
    const auth = req.headers.authorization ?? '';
    if (/^Bearer\s*$/.test(auth)) throw new EmptyBearerError();
    const match = /^Bearer (.+)$/.exec(auth);
    // Comparing digests keeps the comparison constant-time whatever the length.
    if (!match || !timingSafeEqual(digest(match[1]!), this.tokenDigest)) {
      throw new HttpError(401, 'missing or wrong bearer token');
    }
  }
}

/** Reads a JSON body of at most MAX_BODY_BYTES; an empty body reads as {}. */
export async function readJsonBody(req: IncomingMessage): Promise<unknown> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > MAX_BODY_BYTES) throw new HttpError(413, `request body over ${MAX_BODY_BYTES} bytes`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new HttpError(413, `request body over ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (!text.trim()) return {};
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new HttpError(400, `malformed JSON body: ${(error as Error).message}`);
  }
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(text),
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
  });
  res.end(text);
}

export function sendError(res: ServerResponse, error: HttpError, headers: Record<string, string> = {}): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
  sendJson(res, error.status, { error: error.message });
}
