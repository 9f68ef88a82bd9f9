/**
 * Claude Code sessions as the engine sees them: a number, and counters of tool
 * calls kept per session_id, so that concurrent sessions never mix. All of it
 * lives in state.json, changed under the store's lock; what hooks report is
 * kept here first and written shortly after they have been answered.
 */
import { createHash } from 'node:crypto';
import type { SessionCounters } from './model';
import type { StoreState } from './storeFiles';
import { sessionDifficulty, roundScore } from './priority';
import { redactSecrets } from './secrets';
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

/** Claude Code's session IDs: kept as they are without looking further (no secret has this shape alone). */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Other plain IDs are kept too, unless they look like a secret. */
const PLAIN_SESSION_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * The key a session is kept under in state.json. Session IDs come from hook
 * payloads, which anything on the machine may send: one that is long, holds
 * odd characters or looks like a secret is kept as a digest, so that neither
 * a huge key nor a secret reaches the disk. The same ID always gives the same key.
 */
export function sessionKey(sessionId: string): string {
  // Every hook call comes here: the usual case must not pay for the secret patterns.
  if (UUID.test(sessionId)) return sessionId;
  if (PLAIN_SESSION_ID.test(sessionId) && redactSecrets(sessionId).redactions.length === 0) return sessionId;
  return `sha256-${createHash('sha256').update(sessionId).digest('hex').slice(0, 32)}`;
}

/** What happened in a session since its counters were last written to state.json. */
interface PendingCounts {
  /** A session start not written yet: the number it was given. */
  start?: { number: number; counted: boolean; at: string };
  successes: number;
  failures: number;
  compactions: number;
  at: string;
  ended: boolean;
}

/** Tool calls come in bursts; their counts are written together, this long after the first. */
const COUNTER_FLUSH_DELAY_MS = 25;

export class SessionTracker {
  private pending = new Map<string, PendingCounts>();
  /** Batches taken by a flush and not yet applied to the store's state: still counted here. */
  private readonly writing = new Set<Map<string, PendingCounts>>();
  /** The highest number start() gave out; state.json catches up at the next flush. */
  private lastNumberGiven = 0;
  private nextFlush: Promise<void> | null = null;
  private resolveNextFlush: (() => void) | null = null;

  /**
   * @param scheduleFlush when to write pending counts; by default shortly
   * after the first of a burst. A server passes its own scheduler, which waits
   * for a quiet moment between requests.
   */
  constructor(
    private readonly store: MemoryStore,
    private readonly scheduleFlushWork: (flush: () => Promise<void>) => void = (flush) => {
      setTimeout(() => void flush().catch(() => undefined), COUNTER_FLUSH_DELAY_MS);
    },
  ) {}

  /**
   * Counts a new session unless this session_id is already known or the start
   * follows a compaction (Claude Code starts the same session again then).
   *
   * Answers without the lock: the session gets the next number now and is
   * written to state.json with the next flush. Waiting for the lock here would
   * put a session start behind whatever maintenance holds it. The number is
   * the one the flush will write unless another process counts a session in
   * between; the flush then writes the next free number, and accesses already
   * recorded under the first one are one session off in recency, nothing more.
   */
  async start(rawSessionId: string, source: string | undefined): Promise<SessionStartResult> {
    const sessionId = sessionKey(rawSessionId);
    // A session resumed right after it ended: its end is written first, so it starts anew.
    if (this.pending.get(sessionId)?.ended) await this.flush();
    const known = this.countersOf(sessionId, { started: true });
    if (known) {
      this.pendingFor(sessionId);
      void this.scheduleFlush();
      return { number: known.number, counted: false };
    }
    const counted = source !== 'compact';
    const number = Math.max(1, this.latestNumber() + (counted ? 1 : 0));
    this.lastNumberGiven = Math.max(this.lastNumberGiven, number);
    // Re-inserted so that pending starts stay in the order their numbers were given.
    const counts = this.pendingFor(sessionId);
    counts.start = { number, counted, at: counts.at };
    this.pending.delete(sessionId);
    this.pending.set(sessionId, counts);
    void this.scheduleFlush();
    return { number, counted };
  }

  /** The highest session number counted so far, written or not. */
  private latestNumber(state: Readonly<StoreState> = this.store.currentState): number {
    return Math.max(state.session_count, this.lastNumberGiven);
  }

  /**
   * Counts a tool call. The count is kept here at once (difficultyFor sees it)
   * and written to state.json with the others of the burst shortly after; the
   * returned promise resolves once it is written.
   */
  recordToolCall(rawSessionId: string, failed: boolean): Promise<void> {
    const sessionId = sessionKey(rawSessionId);
    const counts = this.pendingFor(sessionId);
    if (failed) counts.failures += 1;
    else counts.successes += 1;
    return this.scheduleFlush();
  }

  markCompacted(rawSessionId: string): Promise<void> {
    const sessionId = sessionKey(rawSessionId);
    this.pendingFor(sessionId).compactions += 1;
    return this.scheduleFlush();
  }

  /** Ends a session: says what its difficulty was; its counters leave state.json with the next write. */
  close(rawSessionId: string): ClosedSession {
    const sessionId = sessionKey(rawSessionId);
    const counters = this.countersOf(sessionId);
    this.pendingFor(sessionId).ended = true;
    return { number: counters?.number ?? null, difficulty: counters ? roundScore(sessionDifficulty(counters)) : 0 };
  }

  /**
   * The maintenance the end of sessions calls for: their counters are written
   * away, the priorities of memories accessed in them are stored again, and one
   * eviction cycle per session runs when the store is over its limit. It may
   * take long; hooks do it after they have answered, several sessions at once.
   */
  async maintain(closed: readonly ClosedSession[]): Promise<EvictionResult[]> {
    await this.flush();
    return this.store.maintainAfterSessions(closed.map((c) => c.number ?? -1));
  }

  /**
   * Writes the pending counts under the store's lock, merged into state.json
   * as it is then: another server of the same project loses nothing. Resolves
   * once everything counted before the call is written, also what a flush
   * already under way took: a caller that waits for its session's count
   * (a session start's follow-up) must not return while that write runs.
   */
  async flush(): Promise<void> {
    const earlier = this.lastWrite;
    const write = this.writePending();
    this.lastWrite = write.catch(() => undefined);
    await Promise.all([earlier, write]);
  }

  /** The write of the flush under way, if any (never rejects). */
  private lastWrite: Promise<void> = Promise.resolve();

  private async writePending(): Promise<void> {
    const resolve = this.resolveNextFlush;
    this.nextFlush = null;
    this.resolveNextFlush = null;
    const batch = this.pending;
    this.pending = new Map();
    if (batch.size > 0) this.writing.add(batch);
    try {
      if (batch.size > 0) {
        await this.store.updateState((state) => {
          const cutoff = Date.now() - ABANDONED_SESSION_MS;
          for (const [id, s] of state.sessions) {
            if (Date.parse(s.last_activity) < cutoff) state.sessions.delete(id);
          }
          // Map order: starts come in the order their numbers were given.
          for (const [sessionId, counts] of batch) {
            if (counts.start && !state.sessions.has(sessionId)) {
              if (counts.start.counted) state.session_count += 1;
              state.sessions.set(sessionId, newCounters(Math.max(1, state.session_count), counts.start.at));
            }
            if (counts.ended) {
              state.sessions.delete(sessionId);
              continue;
            }
            let counters = state.sessions.get(sessionId);
            if (!counters) state.sessions.set(sessionId, (counters = newCounters(Math.max(1, state.session_count), counts.at)));
            counters.tool_successes += counts.successes;
            counters.tool_failures += counts.failures;
            if (counts.compactions > 0) counters.compacted = true;
            counters.last_activity = counts.at;
            state.compaction_count += counts.compactions;
          }
          // From here on the store's state holds the batch.
          this.writing.delete(batch);
        }, VOLATILE);
      }
    } finally {
      // A failed write (the lock busy for seconds) drops these counts: they are hints for priority, not memories.
      this.writing.delete(batch);
      resolve?.();
    }
  }

  private scheduleFlush(): Promise<void> {
    if (!this.nextFlush) {
      this.nextFlush = new Promise((resolve) => (this.resolveNextFlush = resolve));
      this.scheduleFlushWork(() => this.flush());
    }
    return this.nextFlush;
  }

  private pendingFor(sessionId: string): PendingCounts {
    let counts = this.pending.get(sessionId);
    if (!counts) this.pending.set(sessionId, (counts = { successes: 0, failures: 0, compactions: 0, at: nowIso(), ended: false }));
    counts.at = nowIso();
    return counts;
  }

  /**
   * A session's counters as state.json has them plus what is not written yet.
   * With `started`, only a session whose start was seen (written or not): tool
   * calls alone do not make a session known.
   */
  private countersOf(sessionId: string, options: { started?: boolean; state?: Readonly<StoreState> } = {}): SessionCounters | undefined {
    const state = options.state ?? this.store.currentState;
    let counters: SessionCounters | undefined = state.sessions.get(sessionId);
    // Replayed in the order flushes will apply them.
    for (const batch of [...this.writing, this.pending]) {
      const counts = batch.get(sessionId);
      if (!counts) continue;
      if (counts.start && !counters) counters = newCounters(counts.start.number, counts.start.at);
      if (counts.ended) {
        counters = undefined;
        continue;
      }
      if (!counters && options.started) continue;
      const base = counters ?? newCounters(Math.max(1, this.latestNumber(state)), counts.at);
      counters = {
        ...base,
        tool_successes: base.tool_successes + counts.successes,
        tool_failures: base.tool_failures + counts.failures,
        compacted: base.compacted || counts.compactions > 0,
        last_activity: counts.at,
      };
    }
    return counters;
  }

  /**
   * The difficulty given to a memory stored without one: its session's so far,
   * or the most recently active session's when the session is not known.
   */
  difficultyFor(sessionId: string | undefined): number {
    // Read once: each look at currentState checks the store's files on disk again.
    const state = this.store.currentState;
    let counters = sessionId ? this.countersOf(sessionKey(sessionId), { state }) : undefined;
    if (!counters) {
      const ids = new Set([...state.sessions.keys(), ...[...this.writing, this.pending].flatMap((b) => [...b.keys()])]);
      for (const id of ids) {
        const s = this.countersOf(id, { state });
        if (s && (!counters || s.last_activity > counters.last_activity)) counters = s;
      }
    }
    return counters ? roundScore(sessionDifficulty(counters)) : DEFAULT_DIFFICULTY;
  }

  sessionNumber(sessionId: string | undefined): number | undefined {
    return sessionId ? this.countersOf(sessionKey(sessionId))?.number : undefined;
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
