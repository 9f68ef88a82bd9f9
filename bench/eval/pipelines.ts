/**
 * The search pipelines `npm run eval:recall` compares. A pipeline turns a
 * query into memory IDs, best first; add one here (stemming, identifier
 * splitting, a semantic layer…) and the script scores it beside the others.
 */
import type { MemoryStore } from '../../src/core/store';

export interface Pipeline {
  name: string;
  description: string;
  /** Memory IDs, best first, at most `limit`. */
  search(store: MemoryStore, query: string, limit: number): string[] | Promise<string[]>;
}

export const pipelines: readonly Pipeline[] = [
  {
    name: 'store',
    description: 'MemoryStore.search as shipped (BM25+ over topic, tags, summary and content, blended with priority)',
    search: (store, query, limit) => store.search(query, { limit }).map((hit) => hit.id),
  },
];
