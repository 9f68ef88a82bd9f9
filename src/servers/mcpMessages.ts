/**
 * Which MCP messages need the store, for a server that answers while its
 * store opens: the handshake, pings and the list of tools are answered at
 * once, so that only a client's first tool call waits for the opening.
 */
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';

/** MCP methods answered without the store: the handshake, pings, the list of tools. */
const METHODS_WITHOUT_MEMORY = new Set(['initialize', 'ping', 'tools/list']);

/** Whether every JSON-RPC message of `body` (one, or a batch) is answered without the store (a notification is). */
export function needsNoMemory(body: unknown): boolean {
  const messages = Array.isArray(body) ? body : [body];
  return messages.every((message: unknown) => {
    const method = message !== null && typeof message === 'object' ? (message as { method?: unknown }).method : undefined;
    return typeof method === 'string' && (METHODS_WITHOUT_MEMORY.has(method) || method.startsWith('notifications/'));
  });
}

/**
 * Holds the messages a connected transport receives that need the store
 * until `untilReady()` settles, and every message after a held one, so that
 * they reach the server in the order they came. Once `isReady()` nothing is
 * held. A request held is then handled as if it had just come: a tool call
 * made while the store opens waits for the opening rather than reading the
 * files a second time.
 */
export function holdUntilReady(transport: Transport, isReady: () => boolean, untilReady: () => Promise<void>): void {
  const deliver = transport.onmessage;
  if (!deliver) throw new Error('holdUntilReady: the transport is not connected');
  let held: Promise<void> | null = null;
  transport.onmessage = (message, extra) => {
    if (!held && (isReady() || needsNoMemory(message))) return deliver(message, extra);
    // Whether the opening failed or not, the message goes on: a tool call then reports why the store cannot be read.
    const delivered = (held ?? untilReady().catch(() => undefined)).then(() => deliver(message, extra));
    held = delivered;
    void delivered.finally(() => {
      if (held === delivered) held = null;
    });
  };
}
