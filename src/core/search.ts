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

/** Prefixes of one or two letters match too much to mean anything. */
function prefixOf(term: string): boolean {
  return term.length >= 3;
}

/**
 * Words too common to tell memories apart. Leaving them out of the index makes
 * it smaller and faster to build, and keeps them from diluting relevance.
 */
const STOP_WORDS = new Set(
  ('a an and are as at be been but by can did do does for from had has have he her his how i if in into is it its ' +
    'just may me more most my no not of on or our she so than that the their them then there these they this those ' +
    'to too was we were what when where which while who why will with would you your')
    .split(' '),
);

function indexTerm(term: string): string | null {
  const lower = term.toLowerCase();
  return lower.length > 64 || STOP_WORDS.has(lower) ? null : lower;
}

export class MemorySearchIndex {
  private readonly index = new MiniSearch<IndexedDocument>({
    fields: ['topic', 'tags', 'summary', 'content'],
    storeFields: [],
    processTerm: indexTerm,
    searchOptions: {
      boost: { topic: 3, tags: 2, summary: 1.5 },
      prefix: prefixOf,
      fuzzy: fuzziness,
      // At most two typos per word: enough for "postgress" or "deadlok", and
      // it bounds the work of a fuzzy lookup in a large vocabulary.
      maxFuzzy: 2,
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
    const filter = (r: { id: unknown }) => accept(r.id as string);
    // Typo tolerance is the expensive part of a search. When every word of the
    // query already matches as a word or a prefix, there is no typo to forgive.
    let results = this.index.search(query, { filter, fuzzy: false });
    const matched = new Set(results.flatMap((r) => r.queryTerms));
    const words = queryWords(query);
    if (words.some((w) => !matched.has(w))) {
      // Only the words that matched nothing are looked up with typos.
      results = this.index.search(query, { filter, fuzzy: (term) => (matched.has(term) ? false : fuzziness(term)) });
    }
    const best = results[0]?.score ?? 0;
    if (best <= 0) return [];
    return results.map((r) => ({ id: r.id as string, relevance: r.score / best }));
  }
}

const tokenize = MiniSearch.getDefault('tokenize') as (text: string) => string[];

/** The query's words as the index sees them (lower case, stop words dropped). */
function queryWords(query: string): string[] {
  return tokenize(query).flatMap((t) => {
    const term = indexTerm(t);
    return term ? [term] : [];
  });
}

export const RELEVANCE_WEIGHT = 0.75;

/** The rank of a search hit: mostly relevance, with priority breaking near-ties. */
export function blendedScore(relevance: number, priority: number): number {
  return relevance * RELEVANCE_WEIGHT + priority * (1 - RELEVANCE_WEIGHT);
}
