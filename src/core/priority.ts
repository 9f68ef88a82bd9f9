/**
 * Priority scoring and session difficulty (the formulas are in the README, "How it works").
 *
 * The importance levels, the tags that set them and the weights of the
 * priority formula are defined here once; the MCP tools' schema, the CLI, the
 * tree view and the memory panel (which is sent PRIORITY_WEIGHTS) take theirs
 * from here.
 */
import type { MemoryStats, SessionCounters } from './model';

/** The importance a memory can have, strongest first (the order in which their tags win). */
export const IMPORTANCE_LEVELS = ['critical', 'important', 'normal', 'low'] as const;
export type Importance = (typeof IMPORTANCE_LEVELS)[number];

export function isImportance(value: string): value is Importance {
  return (IMPORTANCE_LEVELS as readonly string[]).includes(value);
}

/** The importance of a memory without an `importance:` tag. */
export const DEFAULT_IMPORTANCE = 'normal' satisfies Importance;

/** A memory's importance is a tag: `importance:critical`, `importance:important`, `importance:low`. */
export const IMPORTANCE_TAG_PREFIX = 'importance:';

export function importanceTag(level: Importance): string {
  return `${IMPORTANCE_TAG_PREFIX}${level}`;
}

export function isImportanceTag(tag: string): boolean {
  return tag.startsWith(IMPORTANCE_TAG_PREFIX);
}

/** The levels a tag sets (all but the default), strongest first, with their tags. */
const IMPORTANCE_MARKERS = IMPORTANCE_LEVELS.filter((level) => level !== DEFAULT_IMPORTANCE).map((level) => ({ level, tag: importanceTag(level) }));

/** The tags that set an importance, strongest first. */
export const IMPORTANCE_TAGS: readonly string[] = IMPORTANCE_MARKERS.map((m) => m.tag);

export interface PriorityWeights {
  readonly difficulty: number;
  readonly recency: number;
  readonly frequency: number;
  /** Accesses beyond this count do not raise frequency further. */
  readonly frequencyCap: number;
  /** What each importance adds to the weighted sum (before it is clamped to 0–1). */
  readonly importance: Readonly<Record<Importance, number>>;
}

/** priority = clamp01(difficulty·w + recency·w + frequency·w + importance boost). */
export const PRIORITY_WEIGHTS: PriorityWeights = Object.freeze({
  difficulty: 0.4,
  recency: 0.3,
  frequency: 0.3,
  frequencyCap: 10,
  importance: Object.freeze({ critical: 0.5, important: 0.25, normal: 0, low: -0.25 }),
});

/** The strongest `importance:` tag wins, so a memory tagged both critical and low is critical. */
export function importanceOf(tags: readonly string[]): Importance {
  for (const { level, tag } of IMPORTANCE_MARKERS) if (tags.includes(tag)) return level;
  return DEFAULT_IMPORTANCE;
}

export function importanceBoost(tags: readonly string[]): number {
  return PRIORITY_WEIGHTS.importance[importanceOf(tags)];
}

/** The tags with their importance set to `level`: other `importance:` tags removed, the level's tag (if any) last. */
export function withImportance(tags: readonly string[], level: Importance): string[] {
  const kept = tags.filter((t) => !isImportanceTag(t));
  return level === DEFAULT_IMPORTANCE ? kept : [...kept, importanceTag(level)];
}

export function clamp01(value: number): number {
  return Math.min(1, Math.max(0, value));
}

export interface PriorityBreakdown {
  difficulty: number;
  recency: number;
  frequency: number;
  importance: Importance;
  importanceBoost: number;
  priority: number;
}

export interface PriorityInputs {
  difficulty: number;
  tags: readonly string[];
  /** From stats.json; absent for a memory never accessed on this machine. */
  stats: Pick<MemoryStats, 'access_count' | 'last_session'> | undefined;
  /** Used for recency when there are no stats (e.g. after a fresh clone). */
  created_session: number | null;
  session_count: number;
}

export function priorityBreakdown(inputs: PriorityInputs): PriorityBreakdown {
  const difficulty = clamp01(inputs.difficulty);
  const recency = recencyOf(inputs.session_count, inputs.stats?.last_session ?? inputs.created_session ?? 0);
  const frequency = frequencyOf(inputs.stats?.access_count ?? 0);
  const importance = importanceOf(inputs.tags);
  const importanceBoost = PRIORITY_WEIGHTS.importance[importance];
  return { difficulty, recency, frequency, importance, importanceBoost, priority: combine(difficulty, recency, frequency, importanceBoost) };
}

export function recencyOf(sessionCount: number, lastSession: number): number {
  return 1 / (1 + Math.max(0, sessionCount - lastSession));
}

export function frequencyOf(accessCount: number): number {
  return Math.min(1, accessCount / PRIORITY_WEIGHTS.frequencyCap);
}

export function combine(difficulty: number, recency: number, frequency: number, importanceBoost: number): number {
  const w = PRIORITY_WEIGHTS;
  return clamp01(difficulty * w.difficulty + recency * w.recency + frequency * w.frequency + importanceBoost);
}

/**
 * The same priority as priorityBreakdown, without allocating: ranking 10,000
 * memories at every session start must take a millisecond, not ten.
 */
export function priorityScore(inputs: PriorityInputs): number {
  return combine(
    clamp01(inputs.difficulty),
    recencyOf(inputs.session_count, inputs.stats?.last_session ?? inputs.created_session ?? 0),
    frequencyOf(inputs.stats?.access_count ?? 0),
    importanceBoost(inputs.tags),
  );
}


export const SESSION_TOOL_CAP = 50;

/** difficulty = failure_rate·0.5 + min(1, calls/50)·0.3 + 0.2 if the session was compacted. */
export function sessionDifficulty(
  counters: Pick<SessionCounters, 'tool_successes' | 'tool_failures' | 'compacted'>,
): number {
  const calls = counters.tool_successes + counters.tool_failures;
  const failureRate = calls === 0 ? 0 : counters.tool_failures / calls;
  const volume = Math.min(1, calls / SESSION_TOOL_CAP);
  return clamp01(failureRate * 0.5 + volume * 0.3 + (counters.compacted ? 0.2 : 0));
}

/** Rounds a score for storage and display (stable diffs, no 0.30000000000000004). */
export function roundScore(value: number): number {
  return Math.round(value * 1e6) / 1e6;
}
