/**
 * Run in a fresh Node process: the least an MCP SDK server can do, one no-op
 * tool over Streamable HTTP (JSON answers, as ltm serve gives them), to show
 * the floor under LTM's MCP times. Two ways:
 * - `per-request`: a new McpServer and stateless transport for every request
 *   (what LTM did before its MCP sessions);
 * - `reused`: one McpServer and transport per MCP session, kept between requests.
 *
 *   node mcpNoopServer.js per-request|reused      (prints {"port": N}, serves until killed)
 */
import { randomUUID } from 'node:crypto';
import * as http from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

const mode = process.argv[2];
if (mode !== 'per-request' && mode !== 'reused') throw new Error('usage: mcpNoopServer.js per-request|reused');

function noopServer(): McpServer {
  const server = new McpServer({ name: 'noop', version: '1.0.0' });
  server.registerTool('noop', { description: 'Does nothing', inputSchema: z.object({ text: z.string().optional() }) }, () => ({ content: [{ type: 'text', text: 'ok' }] }));
  return server;
}

const sessions = new Map<string, StreamableHTTPServerTransport>();

async function handle(req: http.IncomingMessage, res: http.ServerResponse, body: unknown): Promise<void> {
  if (mode === 'per-request') {
    const server = noopServer();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => void server.close());
    await server.connect(transport);
    return transport.handleRequest(req, res, body);
  }
  const id = req.headers['mcp-session-id'];
  let transport = typeof id === 'string' ? sessions.get(id) : undefined;
  if (!transport) {
    const created = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      enableJsonResponse: true,
      onsessioninitialized: (sessionId) => void sessions.set(sessionId, created),
    });
    await noopServer().connect(created);
    transport = created;
  }
  return transport.handleRequest(req, res, body);
}

const httpServer = http.createServer((req, res) => {
  if (req.method !== 'POST') {
    res.writeHead(405, { Allow: 'POST' }).end();
    return;
  }
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    handle(req, res, JSON.parse(Buffer.concat(chunks).toString('utf8'))).catch((error: unknown) => {
      console.error(error);
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
});
httpServer.keepAliveTimeout = 5_000;
httpServer.listen(0, '127.0.0.1', () => {
  const address = httpServer.address();
  if (address === null || typeof address === 'string') throw new Error('no TCP address');
  process.stdout.write(`${JSON.stringify({ port: address.port })}\n`);
});
process.on('SIGTERM', () => httpServer.close(() => process.exit(0)));
