/**
 * Claude Code sessions as the engine sees them: a number, and counters of tool
 * calls kept per session_id, so that concurrent sessions never mix. All of it
 * lives in state.json, changed under the store's lock.
 */
import type { SessionCounters } from './model';
import { sessionDifficulty, roundScore } from './priority';
import type { EvictionResult, MemoryStore } from './store';

/** Sessions that never sent session_end (a crash, a killed terminal) are dropped after this. */
const ABANDONED_SESSION_MS = 7 * 24 * 60 * 60 * 1000;

export const DEFAULT_DIFFICULTY = 0.5;

/** Session bookkeeping happens on every hook call; see MemoryStore.updateState. */
const VOLATILE = { durable: false } as const;

export interface SessionStartResult {
  /** The session's number; the first session of a store is 1. */
  number: number;
  /** False when the session was already known (resume, compaction). */
  counted: boolean;
}

export interface ClosedSession {
  number: number | null;
  difficulty: number;
}

function nowIso(): string {
  return new Date().toISOString();
}

function newCounters(number: number, at: string): SessionCounters {
  return { number, started_at: at, last_activity: at, tool_successes: 0, tool_failures: 0, compacted: false };
}

export class SessionTracker {
  constructor(private readonly store: MemoryStore) {}

  /**
   * Counts a new session unless this session_id is already known or the start
   * follows a compaction (Claude Code starts the same session again then).
   */
  async start(sessionId: string, source: string | undefined): Promise<SessionStartResult> {
    return this.store.updateState((state) => {
      const at = nowIso();
      const cutoff = Date.now() - ABANDONED_SESSION_MS;
      for (const [id, s] of Object.entries(state.sessions)) {
        if (Date.parse(s.last_activity) < cutoff) delete state.sessions[id];
      }
      const known = state.sessions[sessionId];
      if (known) {
        known.last_activity = at;
        return { number: known.number, counted: false };
      }
      const counted = source !== 'compact';
      if (counted) state.session_count += 1;
      state.sessions[sessionId] = newCounters(Math.max(1, state.session_count), at);
      return { number: state.sessions[sessionId].number, counted };
    }, VOLATILE);
  }

  async recordToolCall(sessionId: string, failed: boolean): Promise<void> {
    await this.store.updateState((state) => {
      const counters = this.countersFor(state.sessions, state.session_count, sessionId);
      if (failed) counters.tool_failures += 1;
      else counters.tool_successes += 1;
    }, VOLATILE);
  }

  async markCompacted(sessionId: string): Promise<void> {
    await this.store.updateState((state) => {
      this.countersFor(state.sessions, state.session_count, sessionId).compacted = true;
      state.compaction_count += 1;
    }, VOLATILE);
  }

  /** Ends a session's bookkeeping: drops its counters and says what its difficulty was. */
  async close(sessionId: string): Promise<ClosedSession> {
    const counters = await this.store.updateState((state) => {
      const closed = state.sessions[sessionId];
      delete state.sessions[sessionId];
      return closed ?? null;
    }, VOLATILE);
    return { number: counters?.number ?? null, difficulty: counters ? roundScore(sessionDifficulty(counters)) : 0 };
  }

  /**
   * The maintenance a session's end calls for: the priorities of memories
   * accessed in it are recomputed, and one eviction cycle runs when the store
   * is over its limit. It may take long; hooks do it after they have answered.
   */
  async maintain(closed: ClosedSession): Promise<EvictionResult> {
    if (closed.number !== null) await this.store.refreshPriorities(this.store.accessedInSession(closed.number));
    return this.store.evict();
  }

  /**
   * The difficulty given to a memory stored without one: its session's so far,
   * or the most recently active session's when the session is not known.
   */
  difficultyFor(sessionId: string | undefined): number {
    const sessions = this.store.currentState.sessions;
    let counters = sessionId ? sessions[sessionId] : undefined;
    if (!counters) {
      for (const s of Object.values(sessions)) {
        if (!counters || s.last_activity > counters.last_activity) counters = s;
      }
    }
    return counters ? roundScore(sessionDifficulty(counters)) : DEFAULT_DIFFICULTY;
  }

  sessionNumber(sessionId: string | undefined): number | undefined {
    return sessionId ? this.store.currentState.sessions[sessionId]?.number : undefined;
  }

  /** Counters for a session, created when the server first hears of it mid-session. */
  private countersFor(sessions: Record<string, SessionCounters>, sessionCount: number, sessionId: string): SessionCounters {
    const at = nowIso();
    const counters = (sessions[sessionId] ??= newCounters(Math.max(1, sessionCount), at));
    counters.last_activity = at;
    return counters;
  }
}

/**
 * Whether a PostToolUse `tool_response` reports a failure. Claude Code sends
 * objects (built-in tools), strings, or arrays of content blocks (MCP tools).
 */
export function isToolFailure(response: unknown): boolean {
  if (response === null || response === undefined) return false;
  if (typeof response === 'string') return looksLikeError(response);
  if (Array.isArray(response)) {
    return response.some((block) => {
      if (typeof block === 'string') return looksLikeError(block);
      if (block && typeof block === 'object') {
        const b = block as Record<string, unknown>;
        if (b.is_error === true || b.isError === true) return true;
        return b.type === 'text' && typeof b.text === 'string' && looksLikeError(b.text);
      }
      return false;
    });
  }
  if (typeof response === 'object') {
    const r = response as Record<string, unknown>;
    if (r.success === false || r.is_error === true || r.isError === true || r.interrupted === true) return true;
    if (r.error !== undefined && r.error !== null && r.error !== false && r.error !== '') return true;
    for (const key of ['exitCode', 'exit_code', 'returnCode', 'code']) {
      if (typeof r[key] === 'number' && r[key] !== 0) return true;
    }
    if (Array.isArray(r.content)) return isToolFailure(r.content);
    return false;
  }
  return false;
}

function looksLikeError(text: string): boolean {
  const head = text.trimStart().slice(0, 200);
  return /^(?:error\b|<tool_use_error>|traceback \(most recent call last\)|exception\b|fatal:|failed\b)/i.test(head);
}
