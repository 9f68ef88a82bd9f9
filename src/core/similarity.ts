/**
 * Near-duplicates: the memories that say nearly what a memory says, scored by
 * the store's own search index (BM25+ with word forms and the developer
 * vocabulary, search.ts and relatedTerms.ts), relevance only, never priority.
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
import type { MemorySearchIndex, ScoringDocument } from './search';
import type { SearchableMemory } from './searchedText';
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
 * start of the content say what the lesson is. The calibration above was
 * measured with this length; another would need the threshold measured again.
 */
const QUERY_CHARS = 1_000;
/**
 * Candidates are found by a search for this many of the query's heaviest
 * words (MemorySearchIndex.distinctiveWords: repeats times rarity), as "more
 * like this" does: a rewording keeps the names and unusual words that make a
 * lesson, and searching for every word would score most of the store (4 to
 * 10 ms at 10,000 memories). Of the settings tried on the bench corpus, 20
 * words and a pool of 10 found the best match most often (12 words: 0.25 ms
 * less, 56 best matches of 150 instead of 60); every setting found the
 * calibration pairs' rewordings among 10,000 memories.
 */
const DISTINCTIVE_WORDS = 20;
/**
 * The most postings entries the candidates' search may read: the heaviest
 * words are taken while they fit (the first always), and each reaches itself
 * and its other forms only (no prefixes, no related words: the pool is
 * measured with the whole text, expansions included, right after). So a
 * duplicate check costs about the same in any store: at 50,000 bench
 * memories the 20 words read ~164,000 entries, ~7 ms of a ~20 ms
 * store_memory. Rewordings share their rarest words (names, identifiers,
 * error codes), which come first: every calibration rewording is still named
 * first among 5,000 bench memories (similarity.test.ts), and was among 10,000
 * and 50,000 when measured. What it gives up is the best match of a memory
 * that has none (a bench memory's nearest, on the same generated subject and
 * far below the threshold): found for 7 of 60 at 10,000 instead of 24.
 */
const CANDIDATE_ENTRIES = 8_000;
/** Hits of that search measured with the whole query (one scoresOf for all): the nearest neighbours come first. */
const POOL = 10;
/** The nearest this many by the forward measure are measured the other way too (a scoresOf each); as many as are named. */
const CANDIDATES = 3;

export interface SimilarHit {
  id: string;
  /** 0 to 1: the mean of both directions' score ratios (see the header). */
  score: number;
}

/** The first of `words` whose searches read at most CANDIDATE_ENTRIES postings entries together (the first word always). */
function withinBudget(index: MemorySearchIndex, words: readonly string[]): string[] {
  const kept: string[] = [];
  let entries = 0;
  for (const word of words) {
    entries += index.entriesReached(word);
    if (kept.length > 0 && entries > CANDIDATE_ENTRIES) break;
    kept.push(word);
  }
  return kept;
}

/** The text a memory is searched for by: topic, summary and the start of its content. */
export function similarityQuery(memory: Pick<SearchableMemory, 'topic' | 'summary' | 'content'>): string {
  return `${memory.topic}\n${memory.summary}\n${memory.content}`.slice(0, QUERY_CHARS);
}

/**
 * How much of `memory`'s own score each of `others` reaches for its text, by
 * ID (the score search() would give; see scoresOf). Empty when the memory's
 * score is 0 (a text with no indexed word).
 */
function scoreRatios(
  index: MemorySearchIndex,
  memory: SearchableMemory,
  self: ScoringDocument,
  others: readonly ScoringDocument[],
  expand: (query: string) => Expansions | undefined,
): Map<string, number> {
  const query = similarityQuery(memory);
  const scores = index.scoresOf(query, [self, ...others], expand(query));
  const own = scores.get(self.id) ?? 0;
  const ratios = new Map<string, number>();
  if (own <= 0) return ratios;
  for (const other of others) ratios.set(other.id, Math.min(1, (scores.get(other.id) ?? 0) / own));
  return ratios;
}

/**
 * The similarity of two indexed memories, 0 to 1 (see the header); 0 when
 * either is not in `index` as given. `expand` gives the developer
 * vocabulary's expansions of a query.
 */
export function similarityScore(
  index: MemorySearchIndex,
  a: SearchableMemory,
  b: SearchableMemory,
  expand: (query: string) => Expansions | undefined = () => undefined,
): number {
  const [docA, docB] = [index.scoringDocument(a), index.scoringDocument(b)];
  if (!docA || !docB) return 0;
  const forward = scoreRatios(index, a, docA, [docB], expand).get(b.id) ?? 0;
  const backward = scoreRatios(index, b, docB, [docA], expand).get(a.id) ?? 0;
  return (forward + backward) / 2;
}

/**
 * The memories of `index` at least `threshold` similar to `memory` (which the
 * index holds), most similar first, at most `limit`. `accept` says which other
 * memories count (active ones, say); `memoryOf` gives a candidate's text, as
 * indexed, for measuring it.
 *
 * Candidates come from a search for the memory's rarest words (as written
 * and in their other forms); the nearest
 * POOL are measured with its whole text (forward), the nearest CANDIDATES of
 * those with each one's own text too (backward). Each measure scores only the
 * memories compared, never the whole store.
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
  const self = index.scoringDocument(memory);
  if (!self) return [];
  const distinctive = withinBudget(index, index.distinctiveWords(similarityQuery(memory), DISTINCTIVE_WORDS)).join(' ');
  const pool: { memory: SearchableMemory; document: ScoringDocument }[] = [];
  // The candidates' search reaches the words as written and their other forms only: the related words and
  // the longer words each begins (a prefix) more than doubled the postings it read at 10,000 memories, and
  // the pool is measured with the whole text, expansions included, right after.
  for (const hit of index.search(distinctive, (id) => id !== memory.id && options.accept(id), undefined, { prefixes: false })) {
    const other = options.memoryOf(hit.id);
    const document = other && index.scoringDocument(other);
    if (other && document) pool.push({ memory: other, document });
    if (pool.length >= POOL) break;
  }
  const forward = scoreRatios(
    index,
    memory,
    self,
    pool.map((p) => p.document),
    expand,
  );
  const nearest = pool
    .map((p) => ({ ...p, ratio: forward.get(p.document.id) ?? 0 }))
    .sort((x, y) => y.ratio - x.ratio)
    .slice(0, CANDIDATES);
  const hits: SimilarHit[] = [];
  for (const candidate of nearest) {
    const backward = scoreRatios(index, candidate.memory, candidate.document, [self], expand).get(self.id) ?? 0;
    const score = (candidate.ratio + backward) / 2;
    if (score >= threshold) hits.push({ id: candidate.document.id, score: Math.round(score * 1000) / 1000 });
  }
  return hits.sort((x, y) => y.score - x.score || (x.id < y.id ? -1 : 1)).slice(0, options.limit ?? MAX_SIMILAR);
}
