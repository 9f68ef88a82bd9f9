/**
 * What `ltm status`, the ltm_status tool and the status views show: the
 * store's counts (memories by phase, awaiting review, archived, stale,
 * demotion candidates), its configuration and where it is. Reads only; the
 * caller (MemoryStore) refreshed the store first. Staleness stats every
 * anchored file: views that show only the number of memories ask for
 * memoryCount() instead.
 */
import * as fs from 'node:fs';
import type { StoreConfig } from './model';
import { staleMemories, type OfferParts } from './memoryOffers';
import type { StoreParts } from './storeParts';
import type { StatusResult } from './storeTypes';
import { isDemotionCandidate, usageOf } from './usage';

/** The store's configuration as callers see it: state.json's `config`, its known fields only. */
export function storeConfigOf({ mirror }: Pick<StoreParts, 'mirror'>): StoreConfig {
  const { max_memories, memories_to_load, eviction_batch_size, review_new_memories, stale_memories } = mirror.state.config;
  return { max_memories, memories_to_load, eviction_batch_size, review_new_memories, stale_memories };
}

/** The store's counts, configuration and place. */
export function storeStatus(parts: OfferParts): StatusResult {
  const { mirror, queries, paths } = parts;
  const byPhase = { full: 0, hint: 0, abstract: 0 };
  let awaitingReview = 0;
  let demotionCandidates = 0;
  for (const [id, { memory }] of mirror.files) {
    if (memory.status === 'proposed') awaitingReview++;
    if (memory.phase === 0) byPhase.full++;
    else if (memory.phase === 1) byPhase.hint++;
    else byPhase.abstract++;
    if (isDemotionCandidate(usageOf(mirror.stats.get(id)), memory.tags)) demotionCandidates++;
  }
  return {
    total_memories: byPhase.full + byPhase.hint + byPhase.abstract,
    awaiting_review: awaitingReview,
    by_phase: byPhase,
    total_archived: queries.archivedIds().length,
    session_count: mirror.state.session_count,
    last_eviction: mirror.state.last_eviction,
    storage_size_bytes: mirror.storageSize(),
    config: storeConfigOf(parts),
    store_path: paths.root,
    exists: fs.existsSync(paths.root),
    invalid_files: mirror.invalidFiles.size,
    stale_memories: staleMemories(parts).length,
    demotion_candidates: demotionCandidates,
  };
}
