/**
 * `ltm mcp` beside a running server. The Claude Code plugin starts an `ltm mcp`
 * process for every session, and each one read the whole store into memory
 * (~120 MB at 10,000 memories, ~215 MB at 50,000), also in a project whose
 * server (VS Code's, or `ltm serve`) already held it and answered the same
 * tools. When that server runs the same version (serverInfo.relayTargetOf),
 * the session's messages are relayed to it (mcpForwarding.ts) and no store is
 * opened: one copy of the memories, the session's tool calls counted in the
 * process that gets its hooks, and a first tool call that need not wait for
 * a store to open.
 *
 * Loaded only for such a session: it brings the SDK's message schemas, which
 * a session served on its own store imports only after the store has begun to
 * open (stdioMcp.ts).
 */
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, type JSONRPCMessage, type JSONRPCRequest } from '@modelcontextprotocol/sdk/types.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpForwarder } from './mcpForwarding';
import type { RelayTarget } from './serverInfo';
import { isInitialize } from './mcpHttpTransport';

/** How long the project's server may take to answer the session's initialize before the session is served here. */
const INITIALIZE_TIMEOUT_MS = 2_000;

/** The MCP tools on this process's own store (stdioMcp.ts's LocalMcp), served on a transport until closed. */
export interface LocalSession {
  serve(transport: Transport): Promise<void>;
  close(): Promise<void>;
}

/** A LocalSession as a StdioRelay drives it: messages delivered as they come from the client. */
interface LocalHandle {
  deliver(message: JSONRPCMessage): Promise<void>;
  close(): Promise<void>;
}

/** The ID of the initialize request a StdioRelay repeats to a LocalSession: its answer is not the client's. */
const REPEATED_INITIALIZE_ID = 'ltm-initialize-repeated';

/**
 * A session relayed to the project's server. Its initialize goes first, and
 * what follows waits for its answer (the server's session ID comes with it);
 * later messages go as they come, each answered as the server answers it.
 *
 * A message the server did not take (it stopped, or never answered the
 * initialize) is handled here instead, by a LocalSession, and so is every message
 * after it: the LocalSession is told the client's initialize first, so that it
 * serves the session the client began. A request the server took but did not
 * answer (it failed or stopped while working on it) gets an error: it may
 * have been carried out, so it is not done a second time here.
 */
export class StdioRelay {
  /** The client's initialize request, once the server answered it. */
  private initialize: JSONRPCRequest | null = null;
  /** What later messages wait for: the initialize's answer. */
  private initialized: Promise<void> = Promise.resolve();
  /** The session served here, once the server did not take a message. */
  private local: Promise<LocalHandle> | null = null;
  private readonly inFlight = new Set<Promise<void>>();

  private readonly forwarder: McpForwarder;

  constructor(
    private readonly transport: Transport,
    target: RelayTarget,
    private readonly prepareLocal: () => Promise<LocalSession>,
  ) {
    this.forwarder = new McpForwarder(target);
  }

  async start(): Promise<void> {
    this.transport.onmessage = (message) => this.track(this.receive(message));
    await this.transport.start();
  }

  async close(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight]);
    await this.forwarder.close();
    const local = await this.local?.catch(() => null);
    await local?.close();
  }

  private track(work: Promise<void>): void {
    const tracked = work.catch(() => undefined).finally(() => this.inFlight.delete(tracked));
    this.inFlight.add(tracked);
  }

  private async receive(message: JSONRPCMessage): Promise<void> {
    if (this.local) return this.toLocal(message);
    if (isInitialize(message)) {
      this.initialized = this.forward(message, INITIALIZE_TIMEOUT_MS);
      return this.initialized;
    }
    await this.initialized;
    return this.forward(message);
  }

  private async forward(message: JSONRPCMessage, timeoutMs?: number): Promise<void> {
    const result = this.local ? ({ kind: 'unreached' } as const) : await this.forwarder.forward(message, timeoutMs);
    if (result.kind === 'answered') {
      if (isInitialize(message) && result.answer && 'result' in result.answer) this.initialize = message as JSONRPCRequest;
      if (result.answer) await this.transport.send(result.answer);
    } else if (result.kind === 'unreached' || isInitialize(message)) {
      // An initialize that failed is answered here: the session has not begun with the server.
      return this.toLocal(message);
    } else if ('id' in message && 'method' in message) {
      await this.transport.send({ jsonrpc: '2.0', id: message.id, error: { code: ErrorCode.InternalError, message: `the LTM server did not answer: ${result.reason}` } });
    }
  }

  private async toLocal(message: JSONRPCMessage): Promise<void> {
    this.local ??= this.startLocal();
    let local: LocalHandle;
    try {
      local = await this.local;
    } catch (error) {
      // No server and no store here (unreadable, say): every request says why rather than going unanswered.
      if ('id' in message && 'method' in message) {
        await this.transport.send({ jsonrpc: '2.0', id: message.id, error: { code: ErrorCode.InternalError, message: `the LTM server stopped, and the store could not be opened here: ${(error as Error).message}` } });
      }
      return;
    }
    await local.deliver(message);
  }

  /** A LocalMcp behind an in-memory transport, told the session's initialize when the server had answered it. */
  private async startLocal(): Promise<LocalHandle> {
    const local = await this.prepareLocal();
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    clientSide.onmessage = (answer) => {
      if ('id' in answer && answer.id === REPEATED_INITIALIZE_ID) return;
      void this.transport.send(answer).catch(() => undefined);
    };
    await local.serve(serverSide);
    await clientSide.start();
    if (this.initialize) {
      await clientSide.send({ ...this.initialize, id: REPEATED_INITIALIZE_ID });
      await clientSide.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    }
    return { deliver: (message) => clientSide.send(message), close: () => local.close() };
  }
}
