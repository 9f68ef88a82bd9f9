/**
 * What ranking by priority needs of each active memory, in flat typed arrays.
 *
 * Priority changes with the session count, so every session start ranks every
 * memory again. Walking 10,000 memory objects scattered over the heap costs
 * milliseconds in cache misses alone; walking these arrays costs a fraction
 * of one. The store keeps the table in step with its memories and stats.
 */
import type { EvictionCandidate } from './eviction';
import { IMPORTANCE_LEVELS, PRIORITY_WEIGHTS, clamp01, combine, frequencyOf, importanceOf, recencyOf, roundScore } from './priority';

export interface RankingInputs {
  difficulty: number;
  tags: readonly string[];
  created_at: string;
  /** stats.last_session, else created_session, else 0 (as priorityBreakdown does). */
  lastSession: number;
  accessCount: number;
}

export interface RankedEntry {
  id: string;
  priority: number;
  created_at: string;
}

/** Above this many entries, top() sorts instead of inserting. */
const TOP_BY_INSERTION = 500;

export class RankingTable {
  private ids: string[] = [];
  private createdAt: string[] = [];
  private difficulty = new Float64Array(64);
  private boost = new Float64Array(64);
  private lastSession = new Float64Array(64);
  private frequency = new Float64Array(64);
  /** Index in IMPORTANCE_LEVELS. */
  private importance = new Uint8Array(64);
  private readonly slotOf = new Map<string, number>();

  get size(): number {
    return this.ids.length;
  }

  set(id: string, inputs: RankingInputs): void {
    let slot = this.slotOf.get(id);
    if (slot === undefined) {
      slot = this.ids.length;
      if (slot === this.difficulty.length) this.grow();
      this.slotOf.set(id, slot);
      this.ids.push(id);
      this.createdAt.push(inputs.created_at);
    } else {
      this.createdAt[slot] = inputs.created_at;
    }
    // The importance read from the tags once: its boost and its level come from it.
    const importance = importanceOf(inputs.tags);
    this.difficulty[slot] = clamp01(inputs.difficulty);
    this.boost[slot] = PRIORITY_WEIGHTS.importance[importance];
    this.lastSession[slot] = inputs.lastSession;
    this.frequency[slot] = frequencyOf(inputs.accessCount);
    this.importance[slot] = IMPORTANCE_LEVELS.indexOf(importance);
  }

  delete(id: string): void {
    const slot = this.slotOf.get(id);
    if (slot === undefined) return;
    // The last entry moves into the freed slot.
    const last = this.ids.length - 1;
    if (slot !== last) {
      const moved = this.ids[last]!;
      this.ids[slot] = moved;
      this.createdAt[slot] = this.createdAt[last]!;
      this.difficulty[slot] = this.difficulty[last]!;
      this.boost[slot] = this.boost[last]!;
      this.lastSession[slot] = this.lastSession[last]!;
      this.frequency[slot] = this.frequency[last]!;
      this.importance[slot] = this.importance[last]!;
      this.slotOf.set(moved, slot);
    }
    this.ids.pop();
    this.createdAt.pop();
    this.slotOf.delete(id);
  }

  clear(): void {
    this.ids = [];
    this.createdAt = [];
    this.slotOf.clear();
  }

  /**
   * The `k` highest-priority entries, in list order: priority (rounded as
   * everywhere else), then the newest, then by ID.
   */
  top(k: number, sessionCount: number): RankedEntry[] {
    const top: RankedEntry[] = [];
    if (k <= 0) return top;
    const n = this.ids.length;
    // The same arithmetic as priorityScore, so the two always agree to the last bit.
    const rawAt = (i: number) => combine(this.difficulty[i]!, recencyOf(sessionCount, this.lastSession[i]!), this.frequency[i]!, this.boost[i]!);
    if (k > TOP_BY_INSERTION) {
      // Inserting one by one costs k per entry; past a few hundred, sorting everything is cheaper.
      const all = Array.from({ length: n }, (_, i) => ({ id: this.ids[i]!, priority: roundScore(rawAt(i)), created_at: this.createdAt[i]! }));
      return all.sort(compareRanked).slice(0, k);
    }
    let floor = -1;
    for (let i = 0; i < n; i++) {
      const raw = rawAt(i);
      // Cheap rejection before rounding and allocating: rounding moves a score by < 1e-6.
      if (top.length === k && raw < floor - 1e-6) continue;
      const entry = { id: this.ids[i]!, priority: roundScore(raw), created_at: this.createdAt[i]! };
      let at = top.length;
      while (at > 0 && before(entry, top[at - 1]!)) at--;
      if (at === k) continue;
      top.splice(at, 0, entry);
      if (top.length > k) top.pop();
      floor = top.length === k ? top[k - 1]!.priority : -1;
    }
    return top;
  }

  /** Every entry as an eviction candidate, from the arrays alone (no memory object is touched). */
  evictionCandidates(sessionCount: number): EvictionCandidate[] {
    const candidates: EvictionCandidate[] = new Array(this.ids.length);
    for (let i = 0; i < this.ids.length; i++) {
      const raw = combine(this.difficulty[i]!, recencyOf(sessionCount, this.lastSession[i]!), this.frequency[i]!, this.boost[i]!);
      candidates[i] = { id: this.ids[i]!, priority: roundScore(raw), importance: IMPORTANCE_LEVELS[this.importance[i]!]!, created_at: this.createdAt[i]! };
    }
    return candidates;
  }

  private grow(): void {
    const size = this.difficulty.length * 2;
    const grow = (a: Float64Array) => {
      const b = new Float64Array(size);
      b.set(a);
      return b;
    };
    this.difficulty = grow(this.difficulty);
    this.boost = grow(this.boost);
    this.lastSession = grow(this.lastSession);
    this.frequency = grow(this.frequency);
    const importance = new Uint8Array(size);
    importance.set(this.importance);
    this.importance = importance;
  }
}

/** List order: priority, highest first; then the newest; then by ID, so the order is total. */
export function before(a: RankedEntry, b: RankedEntry): boolean {
  if (a.priority !== b.priority) return a.priority > b.priority;
  if (a.created_at !== b.created_at) return a.created_at > b.created_at;
  return a.id < b.id;
}

/** before() as a sort comparator. */
export function compareRanked(a: RankedEntry, b: RankedEntry): number {
  return before(a, b) ? -1 : before(b, a) ? 1 : 0;
}
