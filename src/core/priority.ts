/**
 * Priority scoring (seed 001 FR-7, FE-3) and session difficulty (section 9).
 */
import type { MemoryStats, SessionCounters } from './model';

export const DIFFICULTY_WEIGHT = 0.4;
export const RECENCY_WEIGHT = 0.3;
export const FREQUENCY_WEIGHT = 0.3;
/** Accesses beyond this count do not raise frequency further. */
export const FREQUENCY_CAP = 10;

export type Importance = 'critical' | 'important' | 'normal' | 'low';

const IMPORTANCE_BOOST: Record<Importance, number> = {
  critical: 0.5,
  important: 0.25,
  normal: 0,
  low: -0.25,
};

/** The strongest `importance:` tag wins, so a memory tagged both critical and low is critical. */
export function importanceOf(tags: readonly string[]): Importance {
  if (tags.includes('importance:critical')) return 'critical';
  if (tags.includes('importance:important')) return 'important';
  if (tags.includes('importance:low')) return 'low';
  return 'normal';
}

export function importanceBoost(tags: readonly string[]): number {
  return IMPORTANCE_BOOST[importanceOf(tags)];
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
  const importanceBoost = IMPORTANCE_BOOST[importance];
  return { difficulty, recency, frequency, importance, importanceBoost, priority: combine(difficulty, recency, frequency, importanceBoost) };
}

export function recencyOf(sessionCount: number, lastSession: number): number {
  return 1 / (1 + Math.max(0, sessionCount - lastSession));
}

export function frequencyOf(accessCount: number): number {
  return Math.min(1, accessCount / FREQUENCY_CAP);
}

export function combine(difficulty: number, recency: number, frequency: number, importanceBoost: number): number {
  return clamp01(difficulty * DIFFICULTY_WEIGHT + recency * RECENCY_WEIGHT + frequency * FREQUENCY_WEIGHT + importanceBoost);
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
