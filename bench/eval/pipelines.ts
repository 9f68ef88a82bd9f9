/**
 * The search pipelines `npm run eval:recall` compares. A pipeline turns a
 * query into memory IDs, best first; add one here (stemming, identifier
 * splitting, a semantic layer…) and the script scores it beside the others.
 */
import { MemorySearchIndex, blendedScore } from '../../src/core/search';
import type { MemoryStore } from '../../src/core/store';

export interface Pipeline {
  name: string;
  description: string;
  /** Memory IDs, best first, at most `limit`. */
  search(store: MemoryStore, query: string, limit: number): string[] | Promise<string[]>;
}

/** Per store: the index without word forms (only the words as written, and identifier parts). */
const lexicalIndexes = new WeakMap<MemoryStore, MemorySearchIndex>();

function lexicalIndex(store: MemoryStore): MemorySearchIndex {
  let index = lexicalIndexes.get(store);
  if (!index) {
    index = new MemorySearchIndex({ wordForms: false });
    for (const m of store.list({ limit: 1_000_000 }).memories) index.upsert(m);
    lexicalIndexes.set(store, index);
  }
  return index;
}

export const pipelines: readonly Pipeline[] = [
  {
    name: 'lexical',
    description: 'the words as written only (no other word forms), blended with priority as the store does',
    search: (store, query, limit) => {
      const hits: { id: string; score: number }[] = [];
      for (const hit of lexicalIndex(store).search(query)) {
        hits.push({ id: hit.id, score: blendedScore(hit.relevance, store.peek(hit.id).priority) });
        if (hits.length >= 50) break;
      }
      return hits.sort((a, b) => b.score - a.score).slice(0, limit).map((h) => h.id);
    },
  },
  {
    name: 'store',
    description: 'MemoryStore.search as shipped (BM25+ over topic, tags, summary and content with identifier parts and word forms, blended with priority)',
    search: (store, query, limit) => store.search(query, { limit }).map((hit) => hit.id),
  },
];
