/**
 * Which memories an eviction cycle advances. The phase changes themselves are
 * made by the store, which archives before it reduces.
 */
import type { Importance } from './priority';
import type { StoreConfig } from './model';

export interface EvictionCandidate {
  id: string;
  priority: number;
  importance: Importance;
  created_at: string;
}

/**
 * The lowest-priority batch, once the store holds more than `max_memories`.
 * `importance:critical` memories are never chosen; `importance:important` ones
 * only when no other memory is left to choose. Ties break on age, then ID, so
 * the same store always evicts the same memories.
 */
export function selectEvictionBatch(
  candidates: readonly EvictionCandidate[],
  config: Pick<StoreConfig, 'max_memories' | 'eviction_batch_size'>,
): EvictionCandidate[] {
  if (candidates.length <= config.max_memories) return [];
  const ordinary = candidates.filter((c) => c.importance === 'normal' || c.importance === 'low');
  const pool = ordinary.length > 0 ? ordinary : candidates.filter((c) => c.importance === 'important');
  return firstInOrder(pool, config.eviction_batch_size);
}

/** The first `k` in eviction order: a batch of ten out of 50,000 needs no sort of the 50,000. */
function firstInOrder(pool: readonly EvictionCandidate[], k: number): EvictionCandidate[] {
  if (k <= 0) return [];
  if (k * 8 >= pool.length) return [...pool].sort(byEvictionOrder).slice(0, k);
  const first: EvictionCandidate[] = [];
  for (const c of pool) {
    if (first.length === k && byEvictionOrder(c, first[k - 1]!) >= 0) continue;
    let at = first.length;
    while (at > 0 && byEvictionOrder(c, first[at - 1]!) < 0) at--;
    first.splice(at, 0, c);
    if (first.length > k) first.pop();
  }
  return first;
}

function byEvictionOrder(a: EvictionCandidate, b: EvictionCandidate): number {
  return (
    a.priority - b.priority ||
    (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : 0) ||
    (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
  );
}
