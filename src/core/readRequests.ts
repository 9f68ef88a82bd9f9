/**
 * The list and search requests callers make of a store, checked and then
 * answered from its queries (storeQueries.ts): a bad filter, limit or query
 * gets invalid_input naming it and reads nothing further. A search for one
 * need asked several ways fuses the rankings of its phrasings (rankFusion.ts).
 * The caller (MemoryStore) refreshed the store first.
 */
import { invalidInput } from './errors';
import { DEFAULT_LIST_LIMIT, DEFAULT_SEARCH_LIMIT } from './model';
import { reciprocalRankFusion } from './rankFusion';
import type { StoreParts } from './storeParts';
import type { ListFilter, ListResult, SearchOptions, SearchResultItem } from './storeTypes';
import { LIST_SORTS, isListSort } from './usage';

type QueryParts = Pick<StoreParts, 'queries'>;

/** How many hits each phrasing of searchAny() brings at least: a memory at rank 12 of two phrasings can beat one at rank 1 of one. */
const FUSION_DEPTH = 20;

/** A page of memories (active by priority, or archived), the filter checked first. */
export function listMemories({ queries }: QueryParts, filter: ListFilter): ListResult {
  const offset = filter.offset ?? 0;
  const limit = checkedLimit(filter.limit ?? DEFAULT_LIST_LIMIT);
  if (!Number.isInteger(offset) || offset < 0) throw invalidInput('offset must be a whole number ≥ 0');
  if (filter.phase !== undefined && ![0, 1, 2, 3].includes(filter.phase)) {
    throw invalidInput('phase must be 0 (full), 1 (hint), 2 (abstract) or 3 (archived)');
  }
  if (filter.status !== undefined && filter.status !== 'approved' && filter.status !== 'proposed') {
    throw invalidInput('status must be approved or proposed');
  }
  if (filter.status === 'proposed' && filter.phase === 3) throw invalidInput('archived memories are not awaiting review (phase 3 has no status)');
  if (filter.sort !== undefined && !isListSort(filter.sort)) throw invalidInput(`sort must be ${LIST_SORTS.join(', ')}`);
  return queries.list(filter, offset, limit);
}

/** Ranked search (relevance blended with priority), the query and limit checked first. */
export function searchMemories({ queries }: QueryParts, query: string, options: SearchOptions): SearchResultItem[] {
  if (!query.trim()) throw invalidInput('the search query is empty');
  const limit = checkedLimit(options.limit ?? DEFAULT_SEARCH_LIMIT);
  return queries.search(query, limit, options.scope ?? 'active', options.tag?.trim().toLowerCase());
}

/**
 * Ranked search for one need asked several ways (the first phrasing and its
 * alternatives; blank ones are left out), the rankings fused by reciprocal
 * rank: a memory that several phrasings find comes first. One phrasing is a
 * plain search.
 */
export function searchAnyPhrasing(parts: QueryParts, phrasings: readonly string[], options: SearchOptions): SearchResultItem[] {
  const asked = phrasings.filter((q) => q.trim());
  if (asked.length === 0) throw invalidInput('the search query is empty');
  if (asked.length === 1) return searchMemories(parts, asked[0]!, options);
  // Checked here too: each phrasing is searched deeper than the limit, so its own check would pass a bad one.
  const limit = checkedLimit(options.limit ?? DEFAULT_SEARCH_LIMIT);
  const lists = asked.map((q) => searchMemories(parts, q, { ...options, limit: Math.max(limit * 2, FUSION_DEPTH) }));
  const itemOf = new Map<string, SearchResultItem>();
  for (const item of lists.flat()) if (!itemOf.has(item.id)) itemOf.set(item.id, item);
  return reciprocalRankFusion(lists.map((list) => list.map((i) => i.id)))
    .slice(0, limit)
    .map((id) => itemOf.get(id)!);
}

/** A limit of results as given, refused unless it is a whole number ≥ 1. */
function checkedLimit(limit: number): number {
  if (!Number.isInteger(limit) || limit < 1) throw invalidInput('limit must be a whole number ≥ 1');
  return limit;
}
