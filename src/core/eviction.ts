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
  return [...pool].sort(byEvictionOrder).slice(0, config.eviction_batch_size);
}

function byEvictionOrder(a: EvictionCandidate, b: EvictionCandidate): number {
  return (
    a.priority - b.priority ||
    (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : 0) ||
    (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
  );
}
