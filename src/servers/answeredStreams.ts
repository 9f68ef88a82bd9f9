/**
 * A workaround for the MCP SDK's JSON response mode, which keeps every answer
 * of a session until the session closes.
 *
 * WebStandardStreamableHTTPServerTransport (v1.x, up to at least 1.32.2)
 * registers each POST in its private `_streamMapping` with the function that
 * answers it (`resolveJson`). Once every response of the POST is ready it
 * answers, but in JSON mode it never removes the entry
 * (modelcontextprotocol/typescript-sdk#2559; the fix, #2747, is not
 * released). The entry holds the answer, its body and their closures: about
 * 12 KB a recall, measured on a 10,000-memory server. Claude Code keeps one
 * MCP session open for as long as it runs, so a server serving it held one
 * answer more after every call, for hours.
 *
 * `releaseAnsweredStreams` wraps each entry's answering function so that the
 * entry is removed once it has answered, as the upstream fix does.
 * `heldStreams` counts the entries left, for the server's stats and its tests.
 * Both rely on the private field's name: if an SDK update renames it, nothing
 * is wrapped and heldStreams reports -1, which the tests catch.
 */
import type { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';

/** What the transport registers for a POST: in JSON mode, the function that answers it. */
interface StreamEntry {
  resolveJson?: (answer: Response) => void;
}

function streamMappingOf(transport: WebStandardStreamableHTTPServerTransport): Map<string, StreamEntry> | null {
  const mapping = (transport as unknown as { _streamMapping?: unknown })._streamMapping;
  return mapping instanceof Map ? (mapping as Map<string, StreamEntry>) : null;
}

/** Makes `transport` remove each POST's entry once it has answered it (see the header). */
export function releaseAnsweredStreams(transport: WebStandardStreamableHTTPServerTransport): void {
  const mapping = streamMappingOf(transport);
  if (!mapping) return;
  const set = mapping.set.bind(mapping);
  mapping.set = (streamId: string, entry: StreamEntry) => {
    const answer = entry.resolveJson;
    if (typeof answer !== 'function') return set(streamId, entry);
    const wrapped: StreamEntry = {
      ...entry,
      resolveJson: (response) => {
        answer(response);
        // Only while the entry is still this one: one registered since under the same ID stays.
        if (mapping.get(streamId) === wrapped) mapping.delete(streamId);
      },
    };
    return set(streamId, wrapped);
  };
}

/** Entries `transport` holds: POSTs not answered yet (and, without the workaround, every answered one); -1 when it cannot be told. */
export function heldStreams(transport: WebStandardStreamableHTTPServerTransport): number {
  return streamMappingOf(transport)?.size ?? -1;
}
