/**
 * StoreQueries: the read side of the store, derived from the mirror: each
 * memory's priority, the ranking table, the search indexes, and the pages and
 * results built from them.
 *
 * Everything here is a cache of what DiskMirror holds, kept in step lazily:
 * the mirror's events mark what changed and the next read brings it up to
 * date, so a write costs nothing here and a read of 10,000 memories ranks
 * numbers before it builds the few views it returns. Callers validate input
 * and refresh the mirror first; these methods only compute.
 */
import type { DiskMirror, LoadedFile } from './diskMirror';
import type { FileSignature } from './files';
import type { EvictionCandidate } from './eviction';
import { memoryOf } from './memoryFile';
import type { Memory } from './model';
import { priorityBreakdown, priorityScore, roundScore, type PriorityBreakdown, type PriorityInputs } from './priority';
import { RankingTable, compareRanked, type RankedEntry } from './ranking';
import { queryWords } from './analyzer';
import { passesGate, type RelevanceGate } from './promptContext';
import { developerVocabulary } from './relatedTerms';
import { MemorySearchIndex, RELEVANCE_WEIGHT, blendedScore } from './search';
import { INDEX_ASIDE_MIN_MEMORIES, SearchIndexFeed } from './searchIndexAside';
import { discardSearchIndex, loadSearchIndex, readSearchIndex, saveSearchIndex, saveSearchIndexInSlices, type SavedSearchIndex } from './searchIndexCache';
import { searchedTextDigest } from './searchedText';
import { findSimilar, type SimilarHit } from './similarity';
import type { ListFilter, ListResult, MemoryView, SearchResultItem, SearchScope } from './storeTypes';
import { NO_USAGE, isDemotionCandidate, usageOf } from './usage';
import type { SliceOptions } from './slices';

/** How many hits relevantTo() looks at before giving up. */
const RELEVANCE_LOOKAHEAD = 30;
/** Memories warmRanking ranks between two looks at the event loop: ~2.5 ms, at ~1.2 µs a memory here. */
const RANKING_SLICE = 2_048;

export class StoreQueries {
  private searchIndex: MemorySearchIndex | null = null;
  /** The search index changed since it was loaded or last saved to search-index.bin. */
  private searchIndexUnsaved = false;
  /** Whether the index holds most of its postings as built (see saveSearchIndex). */
  private searchIndexBuiltHere = false;
  /** The saved index read ahead by readSavedSearchIndex (null: none to use), until the index is first needed. */
  private savedSearchIndex: SavedSearchIndex | null | undefined = undefined;
  /** Whether savedSearchIndex is search-index.bin's (false: the worker's, which the next save writes). */
  private savedSearchIndexOnDisk = true;
  /**
   * Files read whose text is the one the saved index holds for them under another signature
   * (checkAgainstSavedIndex): by ID, the signature of the version read (a file read again has another).
   * Not a WeakSet: 50,000 weak entries made each full collection of a copied project's opening slower.
   */
  private sameTextAsSaved = new Map<string, FileSignature>();
  /** The worker the memories are handed to while the store opens without a saved index (searchIndexAside.ts), until it answered. */
  private indexFeed: SearchIndexFeed | null = null;
  /** The worker's index (serialized), asked for once the files were read. */
  private indexAside: Promise<Buffer | null> | null = null;
  private archiveSearchIndex: MemorySearchIndex | null = null;
  /** Ranking inputs of active memories (see RankingTable); kept in step lazily. */
  private readonly ranking = new RankingTable();
  private readonly rankingDirty = new Set<string>();
  private rankingStale = true;
  /** A ranking table being filled a slice at a time (warmRanking): the IDs to rank, and how many are done. */
  private rankingWarm: { ids: string[]; done: number } | null = null;

  constructor(private readonly mirror: DiskMirror) {}

  // --- keeping in step -----------------------------------------------------

  /** A memory file changed, appeared or went away. */
  memoryChanged(id: string, next: LoadedFile | undefined): void {
    this.rankingChanged(id);
    if (!this.searchIndex) {
      // Handed over as read; one changed or gone since is set right when the worker's index is loaded.
      if (next && !this.indexAside && this.indexFeed) {
        this.indexFeed.add(next.memory, next.signature);
        // Once the worker's index will be used (past the size below which it is built here, from the
        // texts), nothing in the opening reads this text again: let it go now, while it is young, rather
        // than at flushCaches, after the opening held every memory's text at once.
        if (this.indexFeed.size > INDEX_ASIDE_MIN_MEMORIES) next.releaseText();
      } else if (next && this.savedSearchIndex && next.knownText !== null) {
        // Only a file read whole holds a text to let go: one opened from its record has none.
        this.checkAgainstSavedIndex(next);
      }
      return;
    }
    if (next) this.searchIndex.upsert(next.memory);
    else this.searchIndex.remove(id);
    this.searchIndexUnsaved = true;
  }

  /**
   * A file read while the saved search index waits to be loaded (read ahead: a store with a large record
   * cache): when its entry there is of this version, or of this text under another signature (a copied
   * project: every record is stale, so every file is read), loading the index will not read the text
   * again, and it is let go now. Before, a copied project held every memory's text until flushCaches.
   */
  private checkAgainstSavedIndex(file: LoadedFile): void {
    const { index, versions } = this.savedSearchIndex!;
    const slot = index.slotOfDocument(file.memory.id);
    if (slot === undefined) return;
    if (!versions.isAt(slot, file.signature)) {
      if (index.textDigestAt(slot) !== searchedTextDigest(file.memory)) return;
      this.sameTextAsSaved.set(file.memory.id, file.signature);
    }
    file.releaseText();
  }

  /** A memory's ranking inputs (its stats, or whether it is registered) changed. */
  touched(id: string): void {
    this.rankingChanged(id);
  }

  private rankingChanged(id: string): void {
    // A stale table is made again from every memory: noting each one (every memory, while a store opens)
    // only kept a set of 50,000 IDs (~1.3 MB) until the first ranking.
    if (!this.rankingStale) this.rankingDirty.add(id);
  }

  /** stats.json was read again: every ranking input may have changed. */
  statsRead(): void {
    this.rankingStale = true;
    this.rankingWarm = null;
  }

  /** archives/ changed: the archive search index is built again when next needed. */
  archivesChanged(): void {
    this.archiveSearchIndex = null;
  }

  // --- priorities and views ------------------------------------------------

  /** The parts of a memory's priority, for people who ask why. */
  priorityOf(id: string, memory: Memory): PriorityBreakdown {
    return priorityBreakdown(this.priorityInputs(id, memory));
  }

  private priorityInputs(id: string, memory: Memory, sessionCount = this.mirror.state.session_count): PriorityInputs {
    return {
      difficulty: memory.difficulty,
      tags: memory.tags,
      stats: this.mirror.stats.get(id),
      created_session: memory.created_session,
      session_count: sessionCount,
    };
  }

  /** The priority as a rounded number, cheaply: for ranking many memories. */
  score(id: string, memory: Memory, sessionCount?: number): number {
    return roundScore(priorityScore(this.priorityInputs(id, memory, sessionCount)));
  }

  view(id: string, sessionCount?: number): MemoryView {
    const file = this.mirror.files.get(id)!;
    const m = file.memory;
    const stats = this.mirror.stats.get(id);
    const usage = usageOf(stats);
    // memoryOf, not a spread: a memory opened from its record has its Content behind a getter (see LoadedFile).
    return {
      ...memoryOf(m, m),
      priority: this.score(id, file.memory, sessionCount),
      access_count: stats?.access_count ?? 0,
      accessed_at: stats?.accessed_at ?? file.memory.created_at,
      last_session: stats?.last_session ?? file.memory.created_session ?? 0,
      usage,
      demotion_candidate: isDemotionCandidate(usage, m.tags),
    };
  }

  /** Every active memory as an eviction candidate, from the ranking table. */
  evictionCandidates(): EvictionCandidate[] {
    this.syncRanking();
    return this.ranking.evictionCandidates(this.mirror.state.session_count);
  }

  /** How many memories are active, from the ranking table (no walk over them all). */
  activeCount(): number {
    this.syncRanking();
    return this.ranking.size;
  }

  // --- lists ---------------------------------------------------------------

  /**
   * A page of memories by priority (phase 3: archived memories, latest first); the filter is valid.
   * Approved memories unless the filter asks for those awaiting review (`status: 'proposed'`).
   */
  list(filter: ListFilter, offset: number, limit: number): ListResult {
    if (filter.phase === 3) return this.listArchived(filter, offset, limit);
    const tag = filter.tag?.trim().toLowerCase();
    const keyword = filter.keyword?.trim().toLowerCase();
    const proposed = filter.status === 'proposed';
    // Rank on numbers first and build full views only for the page: a list of
    // 10,000 memories should not allocate 10,000 copies.
    const keep = offset + limit;
    const sort = filter.sort ?? 'priority';
    // Unfiltered (session start, the first page): from the ranking table, which holds approved memories only.
    if (filter.phase === undefined && !tag && !keyword && !proposed && sort === 'priority') return this.rankedPage(offset, limit, this.mirror.state.session_count);
    // Filtered, other orders or long lists (the tree asks for all): rank the matching memories by number, then sort.
    const ranked: (RankedEntry & { usedSession: number; usedAt: string })[] = [];
    for (const [id, file] of this.mirror.files) {
      const m = file.memory;
      if ((m.status === 'proposed') !== proposed) continue;
      if (filter.phase !== undefined && m.phase !== filter.phase) continue;
      if (tag && !m.tags.includes(tag)) continue;
      if (keyword && !m.topic.toLowerCase().includes(keyword)) continue;
      const stats = this.mirror.stats.get(id);
      ranked.push({ id, priority: this.score(id, m), created_at: m.created_at, usedSession: stats?.last_used_session ?? 0, usedAt: stats?.last_used_at ?? '' });
    }
    const total = ranked.length;
    const compare: (a: (typeof ranked)[number], b: (typeof ranked)[number]) => number =
      sort === 'used'
        ? // Last used first (by session, then time: concurrent sessions share numbers), never used last; then by priority.
          (a, b) => b.usedSession - a.usedSession || (a.usedAt < b.usedAt ? 1 : a.usedAt > b.usedAt ? -1 : 0) || compareRanked(a, b)
        : sort === 'created'
          ? (a, b) => (a.created_at < b.created_at ? 1 : a.created_at > b.created_at ? -1 : 0) || compareRanked(a, b)
          : compareRanked;
    const top = ranked.sort(compare).slice(0, keep);
    const page = top.slice(offset).map((r) => this.view(r.id));
    return { memories: page, total, has_more: offset + page.length < total };
  }

  private listArchived(filter: ListFilter, offset: number, limit: number): ListResult {
    const tag = filter.tag?.trim().toLowerCase();
    const keyword = filter.keyword?.trim().toLowerCase();
    const items = this.archivedIds()
      .map((id) => this.archivedView(id))
      .filter((m) => (!tag || m.tags.includes(tag)) && (!keyword || m.topic.toLowerCase().includes(keyword)))
      .sort((a, b) => (a.accessed_at < b.accessed_at ? 1 : a.accessed_at > b.accessed_at ? -1 : 0));
    const page = items.slice(offset, offset + limit);
    return { memories: page, total: items.length, has_more: offset + page.length < items.length };
  }

  /** IDs of memories that live only in archives/. */
  archivedIds(): string[] {
    return [...this.mirror.archiveIndex.memories.keys()].filter((id) => !this.mirror.isActive(id) && this.mirror.archiveFiles.has(id));
  }

  private archivedView(id: string): MemoryView {
    const entry = this.mirror.archiveIndex.memories.get(id)!;
    return {
      id,
      topic: entry.topic,
      tags: entry.tags,
      phase: 3,
      difficulty: 0,
      created_at: '',
      created_session: null,
      phase_history: [],
      keywords: [],
      anchors: [],
      summary: '',
      content: '',
      hasSections: false,
      priority: 0,
      access_count: 0,
      accessed_at: entry.archived_at,
      last_session: 0,
      usage: { ...NO_USAGE },
      demotion_candidate: false,
    };
  }

  /** The page of the ranking table at `offset`, as session number `sessionCount` sees it. */
  rankedPage(offset: number, limit: number, sessionCount: number): ListResult {
    this.syncRanking();
    const page = this.ranking
      .top(offset + limit, sessionCount)
      .slice(offset)
      .map((r) => this.view(r.id, sessionCount));
    return { memories: page, total: this.ranking.size, has_more: offset + page.length < this.ranking.size };
  }

  /**
   * Active and not awaiting review: what may be injected, offered, recalled,
   * counted against max_memories and evicted. The ranking table holds exactly
   * these, so session start, lists and eviction leave proposed memories out.
   */
  private inUse(id: string): boolean {
    return this.mirror.isActive(id) && this.mirror.files.get(id)?.memory.status !== 'proposed';
  }

  private syncRanking(): void {
    if (this.rankingStale) {
      this.rankingWarm = null;
      this.ranking.clear();
      for (const id of this.mirror.files.keys()) if (this.inUse(id)) this.rank(id);
      this.rankingStale = false;
    } else {
      // A table being filled in slices is finished first; what changed meanwhile is then applied.
      if (this.rankingWarm) this.rankSlice(this.rankingWarm, Infinity);
      for (const id of this.rankingDirty) {
        if (this.inUse(id)) this.rank(id);
        else this.ranking.delete(id);
      }
    }
    this.rankingDirty.clear();
  }

  /** Puts active memory `id`'s ranking inputs in the table, as they are now. */
  private rank(id: string): void {
    const memory = this.mirror.files.get(id)!.memory;
    const stats = this.mirror.stats.get(id);
    this.ranking.set(id, {
      difficulty: memory.difficulty,
      tags: memory.tags,
      created_at: memory.created_at,
      lastSession: stats?.last_session ?? memory.created_session ?? 0,
      accessCount: stats?.access_count ?? 0,
    });
  }

  // --- search --------------------------------------------------------------

  /**
   * Active memories relevant enough to offer unasked (see promptContext.ts),
   * most relevant first, leaving out `exclude`. Relevance alone ranks here:
   * what matters is what the text is about, not which memory matters most.
   * `leaveOut`: hits passed over however relevant (stale memories when the project skips them).
   */
  relevantTo(text: string, limit: number, exclude: ReadonlySet<string>, gate: RelevanceGate, leaveOut?: (id: string) => boolean): string[] {
    const textWords = new Set(queryWords(text)).size;
    const index = this.activeSearchIndex();
    const idfScale = index.idfScale();
    const ids: string[] = [];
    let looked = 0;
    const related = developerVocabulary().expand(text);
    for (const hit of index.search(text, (id) => this.inUse(id) && !exclude.has(id), related)) {
      // Hits come by score; the gate also weighs how many words matched, so a few more are looked at.
      if (++looked > RELEVANCE_LOOKAHEAD) break;
      if (!passesGate(hit, textWords, gate, idfScale)) continue;
      // Asked only of the hits that pass the gate: staleness reads anchored files.
      if (leaveOut?.(hit.id)) continue;
      ids.push(hit.id);
      if (ids.length >= limit) break;
    }
    return ids;
  }

  /**
   * Ranked search: relevance blended with priority. The query is not empty and `limit` ≥ 1.
   * `related`: whether query words also reach the words people use for the same thing (relatedTerms.ts).
   */
  search(query: string, limit: number, scope: SearchScope, tag: string | undefined, related = true): SearchResultItem[] {
    const results: SearchResultItem[] = [];
    const expansions = related ? developerVocabulary().expand(query) : undefined;
    if (scope !== 'archives') {
      // Hits come by relevance, best first. Priority adds at most 1 − RELEVANCE_WEIGHT,
      // so once a hit cannot beat the current top `limit`, neither can any later one.
      const scored: { id: string; score: number; priority: number }[] = [];
      for (const hit of this.activeSearchIndex().search(query, (id) => this.inUse(id), expansions)) {
        const floor = scored.length >= limit ? scored[limit - 1]!.score : -1;
        if (hit.relevance * RELEVANCE_WEIGHT + (1 - RELEVANCE_WEIGHT) < floor) break;
        const memory = this.mirror.files.get(hit.id)!.memory;
        if (tag && !memory.tags.includes(tag)) continue;
        const priority = this.score(hit.id, memory);
        const score = blendedScore(hit.relevance, priority);
        if (score <= floor) continue;
        let at = scored.length;
        while (at > 0 && scored[at - 1]!.score < score) at--;
        scored.splice(at, 0, { id: hit.id, score, priority });
        if (scored.length > limit) scored.pop();
      }
      scored.sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1));
      for (const { id, score, priority } of scored.slice(0, limit)) {
        const m = this.mirror.files.get(id)!.memory;
        results.push({ id, topic: m.topic, summary: m.summary, tags: m.tags, phase: m.phase, priority, score, archived: false });
      }
    }
    if (scope !== 'active') {
      for (const hit of this.archivedSearchIndex().search(query, undefined, expansions)) {
        const archived = this.mirror.readArchive(hit.id);
        if (!archived || archived.active) continue;
        if (tag && !archived.tags.includes(tag)) continue;
        results.push({
          id: archived.id,
          topic: archived.topic,
          summary: archived.summary,
          tags: archived.tags,
          phase: 3,
          priority: 0,
          score: blendedScore(hit.relevance, 0),
          archived: true,
        });
      }
    }
    return results.sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1)).slice(0, limit);
  }

  /**
   * Active memories nearly the same as active memory `id` (see similarity.ts),
   * by relevance alone: priority says nothing about what a memory says.
   */
  similarTo(id: string, limit: number): SimilarHit[] {
    const file = this.mirror.files.get(id);
    if (!file) return [];
    const vocabulary = developerVocabulary();
    return findSimilar(this.activeSearchIndex(), file.memory, {
      accept: (other) => this.mirror.isActive(other),
      memoryOf: (other) => this.mirror.files.get(other)?.memory,
      expand: (query) => vocabulary.expand(query),
      limit,
    });
  }

  /** Loads (or builds) the search index, and the vocabulary searches expand with, now rather than at the first search. */
  warmSearchIndex(): void {
    this.activeSearchIndex();
    // ~25 ms in a fresh process (its code not yet optimised): a server's first recall need not pay it.
    developerVocabulary();
  }

  /**
   * Fills the ranking table now rather than at the first session start, which
   * ranks every memory: ~12 ms at 10,000 memories and ~40 ms at 50,000 here,
   * that the first session start after opening need not pay. A `slice` of
   * memories at a time, with `pause()` before each, so that a request
   * meanwhile waits for one slice at most; one that needs the ranking
   * finishes the table itself (syncRanking).
   */
  async warmRanking(pause: () => Promise<void>, slice = RANKING_SLICE): Promise<void> {
    if (!this.rankingStale) return;
    // Not stale from now on: a change meanwhile is noted (rankingDirty) and applied after the last slice.
    this.ranking.clear();
    this.rankingDirty.clear();
    this.rankingStale = false;
    const warm = { ids: [...this.mirror.files.keys()], done: 0 };
    this.rankingWarm = warm;
    // A pause first too: the requests that waited for the opening are answered before any ranking.
    do await pause();
    while (this.rankingWarm === warm && !this.rankSlice(warm, slice));
  }

  /** Whether warmRanking is filling the table. */
  get rankingWarming(): boolean {
    return this.rankingWarm !== null;
  }

  /** Ranks the next `count` memories of `warm`; true once every one is (the warm is over). */
  private rankSlice(warm: { ids: string[]; done: number }, count: number): boolean {
    const end = Math.min(warm.ids.length, warm.done + count);
    for (; warm.done < end; warm.done++) {
      const id = warm.ids[warm.done]!;
      if (this.inUse(id)) this.rank(id);
    }
    if (warm.done < warm.ids.length) return false;
    this.rankingWarm = null;
    return true;
  }

  /** Saves the search index for the next process, when it changed since it was loaded. */
  saveSearchIndex(): void {
    if (!this.searchIndex || !this.searchIndexUnsaved) return;
    const saved = saveSearchIndex(this.mirror.paths.searchIndex, this.searchIndex, this.mirror.files, { keepBytes: this.searchIndexBuiltHere });
    if (!saved) return;
    this.searchIndexUnsaved = false;
    if (this.searchIndexBuiltHere && saved.bytes) {
      // Postings built from the memories' text are growable arrays of JS numbers; the saved form
      // holds them in one typed buffer: at 12,500 memories the heap is ~20 MB smaller with it
      // (net of the buffer, ~11 MB). A server started without caches goes on with what a warm
      // start would have loaded. Once: loading it at every save would stall a pause at 50,000.
      this.searchIndex = MemorySearchIndex.deserialize(saved.bytes)?.index ?? this.searchIndex;
      this.searchIndexBuiltHere = false;
    }
  }

  /**
   * saveSearchIndex, giving way to the event loop every few milliseconds; if
   * the index changes meanwhile, it stays unsaved (the next save writes it).
   * An index built here is saved at once, as saveSearchIndex does: its saved
   * form then replaces it in memory, which needs the bytes whole.
   */
  async saveSearchIndexInSlices(slices: SliceOptions = {}): Promise<void> {
    const index = this.searchIndex;
    if (!index || !this.searchIndexUnsaved) return;
    if (this.searchIndexBuiltHere) return this.saveSearchIndex();
    const changes = index.changeCount;
    const saved = await saveSearchIndexInSlices(this.mirror.paths.searchIndex, index, this.mirror.files, slices);
    if (saved && this.searchIndex === index && index.changeCount === changes) this.searchIndexUnsaved = false;
  }

  /** Deletes the saved search index: it may hold the words of a memory that was just purged. */
  discardSavedSearchIndex(): void {
    discardSearchIndex(this.mirror.paths.searchIndex);
    this.savedSearchIndex = undefined;
    this.sameTextAsSaved.clear();
    this.savedSearchIndexOnDisk = true;
    // A worker's index may hold those words too.
    this.stopSearchIndexAside();
    this.searchIndexUnsaved = true;
  }

  /**
   * While the store opens without a saved search index, hands each memory read to a
   * worker running `workerScript`, which indexes it (searchIndexAside.ts); the index
   * is asked for by finishSearchIndexAside once the files are read.
   */
  buildSearchIndexAside(workerScript: string): void {
    if (this.searchIndex || this.indexFeed || this.indexAside) return;
    // search-index.bin is missing: it is not read, whether or not the worker answers.
    this.savedSearchIndex = null;
    this.indexFeed = SearchIndexFeed.start(workerScript);
  }

  /** The files are read: asks the worker for its index, unless the store is too small to gain from it. */
  finishSearchIndexAside(): void {
    const feed = this.indexFeed;
    if (!feed || this.indexAside) return;
    if (this.searchIndex || feed.size < INDEX_ASIDE_MIN_MEMORIES) this.stopSearchIndexAside();
    else this.indexAside = feed.finish();
  }

  /** Whether the active search index is loaded (or built): a search now pays neither. */
  get searchIndexLoaded(): boolean {
    return this.searchIndex !== null;
  }

  /** Settles once the worker's index, if one is being built, is ready to be loaded (at once otherwise). */
  async searchIndexReady(): Promise<void> {
    const aside = this.indexAside;
    if (!aside) return;
    const bytes = await aside;
    if (this.indexAside !== aside) return;
    this.indexAside = null;
    this.indexFeed = null;
    const index = bytes && !this.searchIndex ? MemorySearchIndex.deserialize(bytes) : null;
    if (!index) return;
    this.savedSearchIndex = index;
    this.savedSearchIndexOnDisk = false;
    // Comparisons with another snapshot say nothing about this one.
    this.sameTextAsSaved.clear();
  }

  /** Stops a worker still building an index; its answer, if any comes, is not used. */
  stopSearchIndexAside(): void {
    this.indexFeed?.cancel();
    this.indexFeed = null;
    this.indexAside = null;
  }

  /** Reads the saved search index now, to be brought up to date with the files when first needed (while they are swept elsewhere). */
  readSavedSearchIndex(): void {
    if (!this.searchIndex && this.savedSearchIndex === undefined) this.savedSearchIndex = readSearchIndex(this.mirror.paths.searchIndex);
  }

  private activeSearchIndex(): MemorySearchIndex {
    if (!this.searchIndex) {
      const saved = this.savedSearchIndex;
      const onDisk = this.savedSearchIndexOnDisk;
      this.savedSearchIndex = undefined;
      this.savedSearchIndexOnDisk = true;
      // Needed before the worker answered: built here, and the worker's answer is not used.
      this.stopSearchIndexAside();
      // Not read ahead (undefined): loadSearchIndex reads the file now.
      const sameText = this.sameTextAsSaved;
      this.sameTextAsSaved = new Map();
      const { index, changed, indexedHere } = loadSearchIndex(this.mirror.paths.searchIndex, this.mirror.files, saved, (file) => sameText.get(file.memory.id) === file.signature);
      this.searchIndex = index;
      this.searchIndexUnsaved = changed || !onDisk;
      // Built, or mostly indexed again (the texts changed: a checkout of another branch).
      this.searchIndexBuiltHere = indexedHere > this.mirror.files.size / 2;
    }
    return this.searchIndex;
  }

  private archivedSearchIndex(): MemorySearchIndex {
    if (!this.archiveSearchIndex) {
      this.archiveSearchIndex = new MemorySearchIndex();
      for (const id of this.archivedIds()) {
        const archived = this.mirror.readArchive(id);
        if (archived) this.archiveSearchIndex.upsert(archived);
      }
    }
    return this.archiveSearchIndex;
  }
}
