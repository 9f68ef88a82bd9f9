/**
 * A fake of the Anthropic Messages API that the tests own, so the real Claude
 * Code CLI can run offline. Every request is recorded; the answer comes from
 * a script the test gives: plain text, or a tool call.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface MessagesRequest {
  model?: string;
  system?: unknown;
  messages: { role: string; content: unknown }[];
  tools?: { name: string }[];
  stream?: boolean;
}

export type FakeReply = { text: string } | { toolUse: { name: string; input: unknown } };

/** Decides the reply to one request; `index` counts requests since the fake started. */
export type ReplyScript = (request: MessagesRequest, index: number) => FakeReply;

/** All text of a message list, flattened, for assertions and scripts. */
export function textOf(value: unknown): string {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.map(textOf).join('\n');
  if (value && typeof value === 'object') {
    const v = value as Record<string, unknown>;
    if (typeof v.text === 'string') return v.text;
    if (v.content !== undefined) return textOf(v.content);
  }
  return '';
}

/** The last user message's blocks. */
export function lastUserContent(request: MessagesRequest): unknown[] {
  const last = [...request.messages].reverse().find((m) => m.role === 'user');
  if (!last) return [];
  return Array.isArray(last.content) ? last.content : [{ type: 'text', text: String(last.content) }];
}

export function lastToolResult(request: MessagesRequest): { content: string; is_error: boolean } | null {
  const block = lastUserContent(request).find((b) => (b as { type?: string }).type === 'tool_result') as
    | { content?: unknown; is_error?: boolean }
    | undefined;
  return block ? { content: textOf(block.content), is_error: Boolean(block.is_error) } : null;
}

/** Compaction requests ask for a summary of the conversation so far. */
export function isCompactionRequest(request: MessagesRequest): boolean {
  return /create a detailed summary of the conversation/i.test(textOf(lastUserContent(request)));
}

function sse(res: http.ServerResponse, event: string, data: unknown): void {
  res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

export class FakeAnthropic {
  readonly requests: MessagesRequest[] = [];
  private server: http.Server | null = null;
  private toolCounter = 0;

  constructor(private script: ReplyScript) {}

  setScript(script: ReplyScript): void {
    this.script = script;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
  }

  async start(): Promise<void> {
    this.server = http.createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
  }

  async stop(): Promise<void> {
    if (!this.server) return;
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server!.close(() => resolve()));
    this.server = null;
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    if (req.method !== 'POST' || !req.url?.startsWith('/v1/messages')) {
      // Claude Code probes the base URL (HEAD /) and may ask for other endpoints.
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(req.method === 'HEAD' ? undefined : JSON.stringify({ input_tokens: 10 }));
      return;
    }
    const request = JSON.parse(Buffer.concat(chunks).toString('utf8')) as MessagesRequest;
    if (req.url.startsWith('/v1/messages/count_tokens')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ input_tokens: 10 }));
      return;
    }
    const index = this.requests.length;
    this.requests.push(request);
    let reply: FakeReply;
    try {
      reply = isCompactionRequest(request) ? { text: '<summary>The user said hello and the assistant answered.</summary>' } : this.script(request, index);
    } catch (error) {
      reply = { text: `fake model script failed: ${(error as Error).message}` };
    }
    this.answer(res, reply, request.stream !== false);
  }

  private answer(res: http.ServerResponse, reply: FakeReply, stream: boolean): void {
    const id = `msg_${this.requests.length}`;
    const block =
      'text' in reply
        ? { type: 'text', text: reply.text }
        : { type: 'tool_use', id: `toolu_${++this.toolCounter}`, name: reply.toolUse.name, input: reply.toolUse.input };
    const stopReason = 'text' in reply ? 'end_turn' : 'tool_use';
    if (!stream) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({ id, type: 'message', role: 'assistant', model: 'fake', content: [block], stop_reason: stopReason, stop_sequence: null, usage: { input_tokens: 10, output_tokens: 5 } }),
      );
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    sse(res, 'message_start', {
      type: 'message_start',
      message: { id, type: 'message', role: 'assistant', model: 'fake', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 10, output_tokens: 1 } },
    });
    if (block.type === 'text') {
      sse(res, 'content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
      sse(res, 'content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: block.text } });
    } else {
      sse(res, 'content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} } });
      sse(res, 'content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) } });
    }
    sse(res, 'content_block_stop', { type: 'content_block_stop', index: 0 });
    sse(res, 'message_delta', { type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: 5 } });
    sse(res, 'message_stop', { type: 'message_stop' });
    res.end();
  }
}
