/**
 * Which memories earn their place: how each memory was used, from its stats.
 *
 * Four ways a memory reaches Claude, counted apart in stats.json:
 * - injected: put in the context at a session's start (SessionStart). Counted
 *   once per session: a start again after a compaction in the same session
 *   does not count a second time.
 * - offered: put next to a prompt, a failed tool call, a file tool's call or a
 *   subagent's task, because it matched (promptContext.ts). Counted per offer.
 * - recalled: returned to Claude by the `recall` MCP tool. A person's search
 *   (`ltm recall`, the editor's search) counts nothing.
 * - read: read in full with `get_memory` or `ltm get`.
 *
 * Injected and offered memories were pushed to Claude; recalled and read ones
 * were asked for. "Last used" is the last session in which a memory was asked
 * for (read or recalled), not merely given.
 *
 * The access count that priority's frequency and recency come from is kept as
 * it was: injections, offers and reads are accesses; a recall is not.
 */
import type { MemoryStats } from './model';
import { importanceOf } from './priority';

/**
 * A memory injected at the start of this many sessions and never read nor
 * recalled is a candidate for demotion: it costs context in every session and
 * nothing shows Claude needing it. Five sessions rather than one or two,
 * because a memory is often injected into sessions about something else; at
 * five, a memory that matters has usually been asked for once. Nothing is
 * done automatically: the mark is a suggestion for a person.
 */
export const DEMOTION_MIN_INJECTED_SESSIONS = 5;

/** How a memory was used (all zero for a memory never used, or stats from before these counters). */
export interface MemoryUsage {
  /** Sessions whose start injected it. */
  injected_sessions: number;
  /** Times it was offered with a prompt, a failure, a file or a subagent's task. */
  offer_count: number;
  /** Times `recall` returned it to Claude. */
  recall_count: number;
  /** Times it was read in full (`get_memory`, `ltm get`). */
  read_count: number;
  /** The last session in which it was read or recalled; 0 for never. */
  last_used_session: number;
  /** When it was last read or recalled (ISO time); '' for never. */
  last_used_at: string;
}

export const NO_USAGE: Readonly<MemoryUsage> = Object.freeze({
  injected_sessions: 0,
  offer_count: 0,
  recall_count: 0,
  read_count: 0,
  last_used_session: 0,
  last_used_at: '',
});

/** What a use of memories is, as the store records it. */
export type UsageKind = 'injected' | 'offered' | 'recalled' | 'read';

export const USAGE_KINDS: readonly UsageKind[] = ['injected', 'offered', 'recalled', 'read'];

/** Whether a use counts as an access (priority's frequency and recency): all but a recall, as before these counters. */
export function countsAsAccess(kind: UsageKind): boolean {
  return kind !== 'recalled';
}

export function usageOf(stats: MemoryStats | undefined): MemoryUsage {
  if (!stats) return { ...NO_USAGE };
  return {
    injected_sessions: stats.injected_sessions ?? 0,
    offer_count: stats.offer_count ?? 0,
    recall_count: stats.recall_count ?? 0,
    read_count: stats.read_count ?? 0,
    last_used_session: stats.last_used_session ?? 0,
    last_used_at: stats.last_used_at ?? '',
  };
}

/**
 * Injected in DEMOTION_MIN_INJECTED_SESSIONS sessions or more, and never read
 * nor recalled. A memory tagged `importance:critical` never is: a person said
 * it must stay, and such memories (conventions, warnings) do their work by
 * being injected.
 */
export function isDemotionCandidate(usage: MemoryUsage, tags: readonly string[]): boolean {
  return (
    usage.injected_sessions >= DEMOTION_MIN_INJECTED_SESSIONS &&
    usage.read_count === 0 &&
    usage.recall_count === 0 &&
    importanceOf(tags) !== 'critical'
  );
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
const times = (n: number) => (n === 1 ? 'once' : n === 2 ? 'twice' : `${n} times`);

/** "2 days ago", "3 hours ago", "just now"; '' for an unknown time. */
export function timeAgo(iso: string, now: number = Date.now()): string {
  const at = Date.parse(iso);
  if (!iso || Number.isNaN(at)) return '';
  const seconds = Math.max(0, Math.round((now - at) / 1000));
  if (seconds < 60) return 'just now';
  const units: [number, string][] = [
    [365 * 86400, 'year'],
    [30 * 86400, 'month'],
    [7 * 86400, 'week'],
    [86400, 'day'],
    [3600, 'hour'],
    [60, 'minute'],
  ];
  for (const [size, unit] of units) if (seconds >= size) return `${plural(Math.floor(seconds / size), unit)} ago`;
  return 'just now';
}

/** When it was last used, in words: "in session 40 (2 days ago)", or "never". */
export function lastUsedText(usage: MemoryUsage, now: number = Date.now()): string {
  if (usage.last_used_session === 0 && !usage.last_used_at) return 'never';
  const ago = timeAgo(usage.last_used_at, now);
  return `in session ${usage.last_used_session}${ago ? ` (${ago})` : ''}`;
}

/**
 * The counters in plain words, for tooltips, the panel and `ltm get`:
 * "injected in 12 sessions, offered twice, read 3 times, recalled 5 times, last used in session 40 (2 days ago)".
 */
export function usageText(usage: MemoryUsage, now: number = Date.now()): string {
  const parts = [
    `injected in ${plural(usage.injected_sessions, 'session')}`,
    ...(usage.offer_count > 0 ? [`offered ${times(usage.offer_count)}`] : []),
    usage.read_count > 0 ? `read ${times(usage.read_count)}` : 'never read',
    usage.recall_count > 0 ? `recalled ${times(usage.recall_count)}` : 'never recalled',
    `last used ${lastUsedText(usage, now)}`,
  ];
  return parts.join(', ');
}

/** Why a memory is a demotion candidate, in words. */
export function demotionText(usage: MemoryUsage): string {
  return `candidate for demotion: injected in ${plural(usage.injected_sessions, 'session')}, never read nor recalled`;
}

/** How a list of memories can be ordered. */
export const LIST_SORTS = ['priority', 'used', 'created'] as const;
export type ListSort = (typeof LIST_SORTS)[number];

export function isListSort(value: string): value is ListSort {
  return (LIST_SORTS as readonly string[]).includes(value);
}
