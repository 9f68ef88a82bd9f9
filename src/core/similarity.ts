/**
 * Near-duplicates: the memories that say nearly what a memory says, found by
 * the store's own search (BM25+ with word forms and the developer vocabulary,
 * search.ts and relatedTerms.ts), relevance only, never priority.
 *
 * A search score means nothing on its own: it grows with the length of the
 * query and the rarity of its words. So the memory's whole text (topic,
 * summary, content) is the query, the memory itself is indexed, and each
 * other memory's score is measured against the memory's own score for the
 * same query: 1 for a copy, near 0 for a memory sharing a common word or two.
 * The measure is taken both ways (A's text against B, B's text against A) and
 * the two are averaged, so that a short memory is not a duplicate of every
 * long one that happens to contain its few words.
 */
import type { MemorySearchIndex, SearchableMemory } from './search';
import type { Expansions } from './relatedTerms';

/**
 * A memory at least this similar (see similarityScore) is named as a possible
 * duplicate. Calibrated on the pairs of test/unit/similarityPairs.ts (10
 * rewordings of the same lesson and 10 memories on the same subject that teach
 * something else, each incoming memory measured against all 20 existing ones
 * and 8 unrelated ones): the rewordings scored 0.37 to 0.70 against their pair,
 * the related memories 0.004 to 0.13, and no memory scored above 0.09 against
 * any other. 0.2 leaves a factor of 1.5 below the lowest duplicate and above
 * the highest related pair, leaning towards naming a looser rewording: naming
 * costs a line in the answer, a missed duplicate costs a second memory.
 */
export const SIMILARITY_THRESHOLD = 0.2;

/** At most this many similar memories are named. */
export const MAX_SIMILAR = 3;

/**
 * How much of a memory's text is its query: the topic, the summary and the
 * start of the content say what the lesson is. Each search costs with its
 * words: with 4,000 characters and 8 candidates, finding the similar memories
 * took about 100 ms at 10,000 memories (bench corpus), with 1,000 and 3 about
 * 33 ms, and the calibration pairs keep their margin (similarity.test.ts).
 */
const QUERY_CHARS = 1_000;
/** Hits read per direction: the memory itself and its nearest neighbours come first. */
const LOOKAHEAD = 20;
/** The nearest this many by the forward measure are measured the other way too (a search each); as many as are named. */
const CANDIDATES = 3;

export interface SimilarHit {
  id: string;
  /** 0 to 1: the mean of both directions' score ratios (see the header). */
  score: number;
}

/** The text a memory is searched for by: topic, summary and the start of its content. */
export function similarityQuery(memory: Pick<SearchableMemory, 'topic' | 'summary' | 'content'>): string {
  return `${memory.topic}\n${memory.summary}\n${memory.content}`.slice(0, QUERY_CHARS);
}

/**
 * How much of `memory`'s own score each other memory reaches for its text, at
 * most LOOKAHEAD of them, by ID. Empty when the memory is not in the index.
 */
function scoreRatios(
  index: MemorySearchIndex,
  memory: SearchableMemory,
  accept: (id: string) => boolean,
  expand: (query: string) => Expansions | undefined,
): Map<string, number> {
  const query = similarityQuery(memory);
  const scores = new Map<string, number>();
  let own = 0;
  let read = 0;
  for (const hit of index.search(query, (id) => id === memory.id || accept(id), expand(query))) {
    if (hit.id === memory.id) own = hit.score;
    else scores.set(hit.id, hit.score);
    if (++read > LOOKAHEAD) break;
  }
  if (own <= 0) {
    // The memory scores best for its own text; past the lookahead means the index does not hold it.
    return new Map();
  }
  const ratios = new Map<string, number>();
  for (const [id, score] of scores) ratios.set(id, Math.min(1, score / own));
  return ratios;
}

/**
 * The similarity of two indexed memories, 0 to 1 (see the header). Both must
 * be in `index`; `expand` gives the developer vocabulary's expansions of a query.
 */
export function similarityScore(
  index: MemorySearchIndex,
  a: SearchableMemory,
  b: SearchableMemory,
  expand: (query: string) => Expansions | undefined = () => undefined,
): number {
  const forward = scoreRatios(index, a, (id) => id === b.id, expand).get(b.id) ?? 0;
  const backward = scoreRatios(index, b, (id) => id === a.id, expand).get(a.id) ?? 0;
  return (forward + backward) / 2;
}

/**
 * The memories of `index` at least `threshold` similar to `memory` (which the
 * index holds), most similar first, at most `limit`. `accept` says which other
 * memories count (active ones, say); `memoryOf` gives a candidate's text for
 * the way back.
 */
export function findSimilar(
  index: MemorySearchIndex,
  memory: SearchableMemory,
  options: {
    accept: (id: string) => boolean;
    memoryOf: (id: string) => SearchableMemory | undefined;
    expand?: (query: string) => Expansions | undefined;
    threshold?: number;
    limit?: number;
  },
): SimilarHit[] {
  const expand = options.expand ?? (() => undefined);
  const threshold = options.threshold ?? SIMILARITY_THRESHOLD;
  const forward = scoreRatios(index, memory, (id) => id !== memory.id && options.accept(id), expand);
  const hits: SimilarHit[] = [];
  const nearest = [...forward].sort((x, y) => y[1] - x[1]).slice(0, CANDIDATES);
  for (const [id, ratio] of nearest) {
    const other = options.memoryOf(id);
    if (!other) continue;
    const backward = scoreRatios(index, other, (candidate) => candidate === memory.id, expand).get(memory.id) ?? 0;
    const score = (ratio + backward) / 2;
    if (score >= threshold) hits.push({ id, score: Math.round(score * 1000) / 1000 });
  }
  return hits.sort((x, y) => y.score - x.score || (x.id < y.id ? -1 : 1)).slice(0, options.limit ?? MAX_SIMILAR);
}
