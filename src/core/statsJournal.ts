/**
 * The stats journal (`stats.log`): changes to stats.json not yet written into it.
 *
 * Rewriting stats.json (1.5 MB at 10,000 memories) for every stored memory and
 * every access made a write's cost grow with the store. Instead a write appends
 * one JSON line per memory whose stats it changed, holding that memory's whole
 * entry after the change (or null: removed), and every reader in LTM applies the
 * lines on top of stats.json. Now and then (compactionDue) the store writes
 * stats.json with the lines applied and removes the journal.
 *
 * Why this is safe to replay and to crash in:
 * - A line holds absolute values, never an increment: applying it twice gives
 *   the same entry, so nothing is counted twice.
 * - The first line names the stats.json the journal applies to (its inode,
 *   size and mtime). Compaction writes stats.json first, then removes the journal: a
 *   crash between leaves a journal that names the previous stats.json, which
 *   readers ignore; its changes are in the new stats.json already. stats.json
 *   rewritten by anyone else (an older LTM, the reference implementation, a
 *   hand edit) makes the journal stale the same way: the newer file wins.
 *   A rename always brings another inode, so no rewrite can pass for the
 *   file the journal names (a copy of the store loses the journal's changes:
 *   priority hints, never a memory).
 * - A line cut short by a kill cannot parse and is skipped; the next append
 *   starts on a line of its own.
 */
import type { FileSignature } from './files';
import { isMemoryId, type MemoryStats } from './model';
import { statsEntryFrom, statsEntryJson } from './storeFiles';

/** Marks the first line of a journal (and its format). */
const JOURNAL_FORMAT = 'ltm-stats-journal-1';

/** The journal's first line, naming the stats.json it applies to by its signature. */
export function journalHeader(base: FileSignature): string {
  return `${JSON.stringify({ format: JOURNAL_FORMAT, stats_json: { ino: base.ino, size: base.size, mtime_ms: base.mtimeMs } })}\n`;
}

/** One line: a memory's whole stats entry after a change, or its removal (undefined). */
export function journalLine(id: string, stats: MemoryStats | undefined): string {
  return `${JSON.stringify({ id, stats: stats ? statsEntryJson(stats) : null })}\n`;
}

/** What a journal's complete lines say. */
export interface JournalRead {
  /** The changes in order: an entry, or null for a removal. */
  changes: [string, MemoryStats | null][];
}

/**
 * Whether the journal's text (from its start) applies to the stats.json
 * whose signature is `base`: its header names that very file.
 */
export function journalAppliesTo(text: string, base: FileSignature | null): boolean {
  if (base === null) return false;
  const end = text.indexOf('\n');
  if (end < 0) return false;
  try {
    const header = JSON.parse(text.slice(0, end)) as { format?: unknown; stats_json?: { ino?: unknown; size?: unknown; mtime_ms?: unknown } };
    const named = header.stats_json;
    return header.format === JOURNAL_FORMAT && named?.ino === base.ino && named.size === base.size && named.mtime_ms === base.mtimeMs;
  } catch {
    return false;
  }
}

/**
 * Parses the complete lines of `text` (a journal, or what was appended to it
 * since the last read). A line that does not parse (cut short by
 * a kill) or names no memory ID is skipped; the header is not a change.
 */
export function readJournalLines(text: string): JournalRead {
  const changes: [string, MemoryStats | null][] = [];
  let start = 0;
  for (;;) {
    const end = text.indexOf('\n', start);
    if (end < 0) break;
    const line = text.slice(start, end);
    start = end + 1;
    if (line.trim() === '') continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      continue;
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) continue;
    const { id, stats } = parsed as { id?: unknown; stats?: unknown };
    if (typeof id !== 'string' || !isMemoryId(id)) continue;
    if (stats === null) changes.push([id, null]);
    else {
      const entry = statsEntryFrom(stats);
      if (entry) changes.push([id, entry]);
    }
  }
  return { changes };
}

/** Applies read changes to a stats map, in order. */
export function applyJournal(stats: Map<string, MemoryStats>, changes: readonly [string, MemoryStats | null][]): void {
  for (const [id, entry] of changes) {
    if (entry) stats.set(id, entry);
    else stats.delete(id);
  }
}

/**
 * Whether the journal is long enough to write into stats.json: at most a
 * quarter of the entries (at least 256 lines), so compaction's full rewrite
 * costs O(1) per line on average and a fresh process reads a bounded journal.
 */
export function compactionDue(lines: number, entries: number): boolean {
  return lines > Math.max(256, Math.floor(entries / 4));
}
