/**
 * Ranked full-text search over memories: MiniSearch's BM25+ relevance with
 * prefix and typo tolerance, blended with priority by the store.
 */
import MiniSearch from 'minisearch';

export interface SearchableMemory {
  id: string;
  topic: string;
  tags: readonly string[];
  summary: string;
  content: string;
}

interface IndexedDocument {
  id: string;
  topic: string;
  tags: string;
  summary: string;
  content: string;
}

export interface SearchHit {
  id: string;
  /** Relevance relative to the best hit of the same query, in (0, 1]. */
  relevance: number;
}

/** Typos are tolerated in longer terms only: a fuzzy "go" would match half the vocabulary. */
function fuzziness(term: string): number | false {
  return term.length > 3 ? 0.2 : false;
}

export class MemorySearchIndex {
  private readonly index = new MiniSearch<IndexedDocument>({
    fields: ['topic', 'tags', 'summary', 'content'],
    storeFields: [],
    searchOptions: {
      boost: { topic: 3, tags: 2, summary: 1.5 },
      prefix: true,
      fuzzy: fuzziness,
      combineWith: 'OR',
    },
  });

  get size(): number {
    return this.index.documentCount;
  }

  upsert(memory: SearchableMemory): void {
    const doc: IndexedDocument = {
      id: memory.id,
      topic: memory.topic,
      tags: memory.tags.join(' '),
      summary: memory.summary,
      content: memory.content,
    };
    if (this.index.has(memory.id)) this.index.replace(doc);
    else this.index.add(doc);
  }

  remove(id: string): void {
    if (this.index.has(id)) this.index.discard(id);
  }

  search(query: string, accept: (id: string) => boolean = () => true): SearchHit[] {
    const results = this.index.search(query, { filter: (r) => accept(r.id as string) });
    const best = results[0]?.score ?? 0;
    if (best <= 0) return [];
    return results.map((r) => ({ id: r.id as string, relevance: r.score / best }));
  }
}

export const RELEVANCE_WEIGHT = 0.75;

/** The rank of a search hit: mostly relevance, with priority breaking near-ties. */
export function blendedScore(relevance: number, priority: number): number {
  return relevance * RELEVANCE_WEIGHT + priority * (1 - RELEVANCE_WEIGHT);
}
