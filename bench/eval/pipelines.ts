/**
 * The search pipelines `npm run eval:recall` compares. A pipeline turns a
 * query into memory IDs, best first; add one here (stemming, identifier
 * splitting, a semantic layer…) and the script scores it beside the others.
 */
import { MemorySearchIndex, blendedScore, type SearchIndexOptions } from '../../src/core/search';
import type { MemoryStore } from '../../src/core/store';

export interface Pipeline {
  name: string;
  description: string;
  /** Memory IDs, best first, at most `limit`. */
  search(store: MemoryStore, query: string, limit: number): string[] | Promise<string[]>;
}

/** Per store and kind: an index of its memories built apart from the store's. */
const indexes = new WeakMap<MemoryStore, Map<string, MemorySearchIndex>>();

function indexOf(store: MemoryStore, options: SearchIndexOptions): MemorySearchIndex {
  let byKind = indexes.get(store);
  if (!byKind) indexes.set(store, (byKind = new Map()));
  const kind = JSON.stringify(options);
  let index = byKind.get(kind);
  if (!index) {
    index = new MemorySearchIndex(options);
    for (const m of store.list({ limit: 1_000_000 }).memories) index.upsert(m);
    byKind.set(kind, index);
  }
  return index;
}

/** The store's ranking (relevance blended with priority) over a search of `index`. */
function blended(store: MemoryStore, index: MemorySearchIndex, query: string, limit: number): string[] {
  const hits: { id: string; score: number }[] = [];
  for (const hit of index.search(query)) {
    hits.push({ id: hit.id, score: blendedScore(hit.relevance, store.peek(hit.id).priority) });
    if (hits.length >= 50) break;
  }
  return hits.sort((a, b) => b.score - a.score).slice(0, limit).map((h) => h.id);
}

export const pipelines: readonly Pipeline[] = [
  {
    name: 'lexical',
    description: 'the words as written only (no other word forms), ranked as MiniSearch ranks them, blended with priority as the store does',
    search: (store, query, limit) => blended(store, indexOf(store, { wordForms: false, coordination: 'words' }), query, limit),
  },
  {
    name: 'words',
    description: 'the query\'s own words only: as written, identifier parts and other forms of each word, ranked as the store ranks them (the store without the semantic layer), blended with priority',
    search: (store, query, limit) => blended(store, indexOf(store, {}), query, limit),
  },
  {
    name: 'store',
    description: 'MemoryStore.search as shipped: the words pipeline plus the semantic layer (words people use for the same thing, src/core/relatedTerms.ts), blended with priority',
    search: (store, query, limit) => store.search(query, { limit }).map((hit) => hit.id),
  },
];
