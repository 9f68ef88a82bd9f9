/**
 * MemoryStore: one project's `.claude/ltm/` directory, the facade every caller
 * (MCP tools, hook routes, the CLI, the VS Code views) goes through.
 *
 * The files are the truth. The store keeps a parsed copy of them (DiskMirror)
 * and, before every operation, looks for changes made by anyone else (another
 * process, a hand edit, a git checkout). Writers hold a cross-process lock,
 * re-read what changed, then write atomically. Opening or reading a store
 * never writes anything a person shares.
 *
 * This file checks memory IDs, decides when the store is read (refresh,
 * ensureOpen, activeFile; how: storeOpening) and when the lock is taken
 * (mutate: one command, or one eviction cycle, per turn), and delegates the
 * rest to modules that each work through the few store parts they declare
 * (storeParts.ts): the commands (memoryWrites, reviewCommands, anchorCommands,
 * evictionCycle, usageRecording, repair) and the reads (readRequests,
 * storeQueries, memoryOffers, storeStatus). design.md has the full map.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { followAnchors, reanchor, updateWithAnchors, writeAnchors, type AnchorCommandParts } from './anchorCommands';
import { LtmError, invalidInput, notFound } from './errors';
import { evictOnce, maintainAfterSessions } from './evictionCycle';
import { waitForPendingIndex } from './indexPending';
import { checkIntegrity, type IntegrityReport } from './integrity';
import type { LoadedFile } from './loadedFile';
import { StoreLock } from './lock';
import { aboutFile, candidatesFor, outdated, relevantTo, staleMemories, topForSession } from './memoryOffers';
import { MemoryRecordCache } from './memoryRecords';
import { prepareUpdate, type UpdateInput } from './memoryUpdate';
import { forgetMemory, mergeMemories, restoreMemory, storeMemory, updateMemory, writeSummary } from './memoryWrites';
import { STALE_MEMORY_MODES, isStaleMemoriesMode, type StaleMemoriesMode, type StoreConfig } from './model';
import type { Importance, PriorityBreakdown } from './priority';
import type { OfferedMemory, RelevanceGate } from './promptContext';
import { listMemories, searchAnyPhrasing, searchMemories } from './readRequests';
import { fixStore, integritySnapshot } from './repair';
import { approveMemory, awaitingReview, rejectMemory } from './reviewCommands';
import { MAX_SIMILAR } from './similarity';
import type { StaleReport } from './staleness';
import { initStoreFiles, storePaths, type StorePaths, type StoreState } from './storeFiles';
import { prepareInput, prepareSummary, requireMemoryId } from './storeInput';
import { createStoreParts, requireActive, type StoreParts } from './storeParts';
import { StoreOpening } from './storeOpening';
import { storeConfigOf, storeStatus } from './storeStatus';
import type { ArchivedMemory, EvictionResult, FixResult, ForgetResult, InvalidFile, ListFilter, ListResult, MemoryView, MergeResult, OpenOptions } from './storeTypes';
import type { ReviewResult, SearchOptions, SearchResultItem, SimilarMemory, StaleMemory, StatusResult, StoreInput, StoreResult, UpdateResult } from './storeTypes';
import { USAGE_KINDS, type UsageKind } from './usage';
import { accessedInSession, readMemory, recordAccesses, recordUses, storePriorities } from './usageRecording';
import { giveWay, type SliceOptions } from './slices';

// The public types live in storeTypes.ts, and initStoreFiles in storeFiles.ts; callers import them from here, as they always have.
export type * from './storeTypes';
export { initStoreFiles };

export class MemoryStore {
  readonly paths: StorePaths;
  private readonly lock: StoreLock;
  /** The index.json flush under way, if any: flushes run one at a time (flushIndex). */
  private indexFlushes: Promise<void> = Promise.resolve();
  /** What the commands and reads work through (storeParts.ts). */
  private readonly parts: StoreParts;
  /** The parts with the store's lock, for commands that take it once per memory (anchorCommands.ts). */
  private readonly anchorParts: AnchorCommandParts;
  /** The record cache loaded once, the files read, the caches saved (storeOpening.ts). */
  private readonly opening: StoreOpening;

  private constructor(projectDir: string, options: OpenOptions) {
    this.paths = storePaths(projectDir);
    this.lock = new StoreLock(this.paths.root, this.paths.lock);
    const records = new MemoryRecordCache(this.paths.parseCache);
    this.parts = createStoreParts(this.paths, options, records);
    this.opening = new StoreOpening(records, this.parts, options.searchIndexWorker);
    this.anchorParts = { ...this.parts, mutate: (work) => this.mutate(work) };
  }

  /** Opens a project's store. Reads everything and writes nothing (see flushCaches). */
  static open(projectDir: string, options: OpenOptions = {}): MemoryStore {
    const store = new MemoryStore(projectDir, options);
    store.refresh();
    return store;
  }

  /**
   * open(), for a caller that can wait: in a large store the memory files are
   * statted on a worker thread while this one reads the caches, and the search
   * index is built on another when there is none to load and `searchIndexWorker`
   * is given (storeOpening.ts). It resolves once that index is ready, or, with
   * `untilSearchIndex: false` (a host that serves meanwhile), once the files are
   * read: searches then wait through untilSearchIndexReady(). `inSlices`: the
   * thread is shared (an editor's extension host), and is given back every few
   * milliseconds while the memory files are read (StoreOpening.openInSteps).
   */
  static async openAsync(projectDir: string, options: OpenOptions = {}, { untilSearchIndex = true, inSlices = false } = {}): Promise<MemoryStore> {
    const store = new MemoryStore(projectDir, options);
    try {
      await store.opening.openInSteps({ inSlices });
      if (untilSearchIndex) await store.parts.queries.searchIndexReady();
    } catch (error) {
      store.dispose();
      throw error;
    }
    return store;
  }

  /**
   * A store that reads nothing until first use or openInSteps(): a server
   * listens before the memories are read. `sweepAhead`: a worker thread starts
   * statting the memory files now, while the caller gets ready to serve
   * (StoreOpening.sweepAhead).
   */
  static prepare(projectDir: string, options: OpenOptions = {}, { sweepAhead = false }: { sweepAhead?: boolean } = {}): MemoryStore {
    const store = new MemoryStore(projectDir, options);
    if (sweepAhead) store.opening.sweepAhead();
    return store;
  }

  /** Whether the store has read its files (see prepare). */
  get isOpen(): boolean {
    return this.opening.isOpen;
  }

  /** Whether the store is open, its search index loaded and its memories ranked (warmUp): a request now waits for none of these. */
  get isReady(): boolean {
    return this.opening.isOpen && this.parts.queries.searchIndexLoaded && !this.parts.queries.rankingWarming;
  }

  /**
   * Opens a prepared store, then loads its search index and ranks its
   * memories (warmUp), giving way to the event loop between steps
   * (storeOpening.ts). `beforeSearchIndex`: what to wait for in between (a
   * server's requests that waited for the opening: one that searches loads
   * the index itself, one that does not need not wait for it).
   */
  async openInSteps(options: { beforeSearchIndex?: () => Promise<void> } = {}): Promise<void> {
    await this.opening.openInSteps();
    await options.beforeSearchIndex?.();
    await this.parts.queries.searchIndexReady();
    await this.warmUp();
  }

  /**
   * Settles when an openInSteps under way has (at once when none is): a request
   * waits for it rather than reading the files a second time. For a request
   * that will not search (see StoreOpening.untilOpened); one that searches
   * waits through untilSearchIndexReady. `thenSearches`: one that may search
   * next, once it knows (the opening reads the saved search index for it).
   */
  untilOpened(options: { thenSearches?: boolean } = {}): Promise<void> {
    return this.opening.untilOpened(options);
  }

  /**
   * untilOpened(), then until the search index a worker builds while the store
   * opens is ready (OpenOptions.searchIndexWorker): a request that searches
   * waits for it rather than building the index a second time.
   */
  async untilSearchIndexReady(): Promise<void> {
    await this.opening.untilOpened({ thenSearches: true });
    await this.parts.queries.searchIndexReady();
  }

  /** True once `.claude/ltm/` exists. */
  exists(): boolean {
    return fs.existsSync(this.paths.root);
  }

  dispose(): void {
    this.parts.queries.stopSearchIndexAside();
    this.parts.mirror.dispose();
  }

  // --- Reading -------------------------------------------------------------

  get config(): StoreConfig {
    this.opening.ensureOpen();
    return storeConfigOf(this.parts);
  }

  /**
   * Counts the changes seen on disk or made here since opening (refresh()
   * first): a caller that saw a count and sees it again knows nothing changed
   * in between (the VS Code views refresh on it, once per change).
   */
  get changeCount(): number {
    return this.parts.mirror.changeCount;
  }

  get sessionCount(): number {
    this.opening.ensureOpen();
    return this.parts.mirror.state.session_count;
  }

  priorityOf(id: string): PriorityBreakdown {
    this.opening.ensureOpen();
    const file = this.parts.mirror.files.get(id);
    if (!file) throw notFound(`no memory with ID ${id}`);
    return this.parts.queries.priorityOf(id, file.memory);
  }

  /** Memories by priority, highest first (readRequests.ts checks the filter). */
  list(filter: ListFilter = {}): ListResult {
    this.refresh();
    return listMemories(this.parts, filter);
  }

  /** The memories awaiting review (status proposed), oldest first: a person's inbox. */
  awaitingReview(): MemoryView[] {
    this.refresh();
    return awaitingReview(this.parts);
  }

  /** Turns review of new memories on or off for the project (state.json `review_new_memories`). */
  async setReviewNewMemories(on: boolean): Promise<void> {
    await this.updateState((state) => {
      state.config = { ...state.config, review_new_memories: on };
    });
  }

  /** Whether session start and offers label stale memories or leave them out (state.json `stale_memories`). */
  async setStaleMemories(mode: StaleMemoriesMode): Promise<void> {
    if (!isStaleMemoriesMode(mode)) throw invalidInput(`stale_memories must be ${STALE_MEMORY_MODES.join(' or ')}`);
    await this.updateState((state) => {
      state.config = { ...state.config, stale_memories: mode };
    });
  }

  /** IDs of memories that live only in archives/. */
  archivedIds(): string[] {
    this.opening.ensureOpen();
    return this.parts.queries.archivedIds();
  }

  /** Reads a memory. Counts as an access and a use unless `countAccess` is false. */
  async get(id: string, options: { countAccess?: boolean } = {}): Promise<MemoryView> {
    this.activeFile(id);
    return options.countAccess === false ? this.parts.queries.view(id) : this.mutate(() => readMemory(this.parts, id));
  }

  /** Whether a memory still matches its anchored code (null without anchors); only changed files are read. */
  staleness(id: string): StaleReport | null {
    return this.parts.anchoring.report(this.activeFile(id).memory.anchors);
  }

  /** Why a memory (as listed or offered) may be outdated: its anchored code changed; [] when it holds. */
  outdated(memory: Pick<MemoryView, 'anchors'>): string[] {
    return outdated(this.parts, memory);
  }

  /** The active memories whose anchored code changed or is gone, by ID. */
  staleMemories(): StaleMemory[] {
    this.refresh();
    return staleMemories(this.parts);
  }

  /** Reads a memory without counting an access. */
  peek(id: string): MemoryView {
    this.activeFile(id);
    return this.parts.queries.view(id);
  }

  /** The path of a memory's file, for editors. */
  fileOf(id: string): string {
    this.activeFile(id);
    return path.join(this.paths.memories, `${id}.md`);
  }

  /** The first `limit` memories by priority as session `session` sees them: what a session start injects. */
  topForSession(session: number, limit: number): ListResult {
    this.refresh();
    return topForSession(this.parts, session, limit);
  }

  /** What the search index finds for each query, as session `session` sees them: session start's candidates (memoryOffers.ts). Counts nothing. */
  candidatesFor(queries: readonly string[], session: number, perQuery?: number): MemoryView[] {
    this.refresh();
    return candidatesFor(this.parts, queries, session, perQuery);
  }

  /** Ranked search: relevance blended with priority. */
  search(query: string, options: SearchOptions = {}): SearchResultItem[] {
    this.refresh();
    return searchMemories(this.parts, query, options);
  }

  /** Ranked search for one need asked several ways, the phrasings' rankings fused (readRequests.ts). */
  searchAny(queries: readonly string[], options: SearchOptions = {}): SearchResultItem[] {
    this.refresh();
    return searchAnyPhrasing(this.parts, queries, options);
  }

  /** The memories worth offering with a text (a prompt, a tool's error), most relevant first (memoryOffers.ts). Counts nothing. */
  relevantTo(text: string, options: { limit?: number; exclude?: ReadonlySet<string>; gate?: RelevanceGate } = {}): OfferedMemory[] {
    this.refresh();
    return relevantTo(this.parts, text, options);
  }

  /** The memories that name a file, best match first: what a tool about to read or change it is offered. Counts nothing. */
  aboutFile(file: string, options: { limit?: number; exclude?: ReadonlySet<string> } = {}): OfferedMemory[] {
    this.refresh();
    return aboutFile(this.parts, file, options);
  }

  /** An archived memory's full text: a removed memory, or the original of a reduced one. */
  getArchived(id: string): ArchivedMemory {
    requireMemoryId(id);
    this.refresh();
    const archived = this.parts.mirror.readArchive(id);
    if (!archived) throw notFound(`no archive for ${id}`);
    return archived;
  }

  /** How many memories are active: status()'s total without its costlier counts. */
  memoryCount(): number {
    this.refresh();
    return this.parts.mirror.files.size;
  }

  /** Files in memories/ the store cannot read as memories, with why (check's invalid_file, id_mismatch, duplicate_id). */
  invalidFiles(): InvalidFile[] {
    this.refresh();
    return [...this.parts.mirror.invalidFiles.values()].map((f) => ({ ...f }));
  }

  /** The store's counts, configuration and place (storeStatus.ts). */
  status(): StatusResult {
    this.refresh();
    return storeStatus(this.parts);
  }

  /** Reports every integrity problem; changes nothing. settleIndex() first when a server's deferred index.json must not count. */
  check(): IntegrityReport {
    this.refresh({ full: true });
    return checkIntegrity(integritySnapshot(this.parts.mirror, this.parts.index));
  }

  // --- Writing -------------------------------------------------------------

  /** Creates `.claude/ltm/` and its .gitignore (see initStoreFiles). */
  init(): void {
    initStoreFiles(this.paths);
  }

  /** Stores a new memory; the answer names the active memories nearly the same (similar), stored regardless. */
  async store(input: StoreInput): Promise<StoreResult> {
    const prepared = prepareInput(input);
    // The code is read before the lock is taken: anchoring reads project files, never memories.
    const anchors = this.parts.anchoring.anchorsFor(input.anchors);
    this.init();
    const stored = await this.mutate(() => storeMemory(this.parts, input, prepared, anchors));
    // A read: it needs no lock, and a writer waiting for the lock need not wait for it.
    return { ...stored, similar: this.similarTo(stored.memory.id) };
  }

  /** Active memories nearly the same as memory `id` (similarity.ts), most similar first. Counts nothing. */
  similarTo(id: string, limit = MAX_SIMILAR): SimilarMemory[] {
    requireMemoryId(id);
    this.refresh();
    if (!this.parts.mirror.isActive(id)) return [];
    return this.parts.queries.similarTo(id, limit).map((hit) => ({ id: hit.id, topic: this.parts.mirror.files.get(hit.id)!.memory.topic, score: hit.score }));
  }

  /** Replaces a memory's anchors with `specs` hashed from the code as it is now ([] removes them); only `anchors` changes. */
  async setAnchors(id: string, specs: readonly string[]): Promise<MemoryView> {
    requireMemoryId(id);
    const anchors = this.parts.anchoring.anchorsFor(specs);
    return writeAnchors(this.anchorParts, id, () => anchors);
  }

  /** "Still true": the memory's anchors hashed again from the code as it is now (anchorCommands.ts). */
  async reanchor(id: string): Promise<MemoryView> {
    requireMemoryId(id);
    return reanchor(this.anchorParts, id);
  }

  /** Writes where anchored code moved into the memories that follow it; returns the IDs written. */
  async followAnchors(): Promise<string[]> {
    this.refresh();
    return followAnchors(this.anchorParts);
  }

  /** Rewrites only the Summary section of a memory; the rest of the file keeps every byte. */
  async updateSummary(id: string, summary: string): Promise<MemoryView> {
    requireMemoryId(id);
    const text = prepareSummary(summary);
    return this.mutate(() => writeSummary(this.parts, id, text));
  }

  /** Changes the given fields of a memory, the previous text archived first (memoryWrites.ts); no change, no write. */
  async update(id: string, input: UpdateInput & { anchors?: readonly string[] }): Promise<UpdateResult> {
    requireMemoryId(id);
    const { anchors, ...text } = input;
    if (anchors !== undefined) return updateWithAnchors(this.anchorParts, id, anchors, text, () => this.update(id, text));
    const prepared = prepareUpdate(input);
    return this.mutate(() => updateMemory(this.parts, id, prepared));
  }

  /** Merges memory `sourceId` into `targetId`, both originals archived before anything changes (memoryWrites.ts). */
  async merge(sourceId: string, targetId: string): Promise<MergeResult> {
    requireMemoryId(sourceId);
    requireMemoryId(targetId);
    if (sourceId === targetId) throw invalidInput('a memory cannot be merged into itself');
    return this.mutate(() => mergeMemories(this.parts, sourceId, targetId));
  }

  /** Removes a memory from the active set, keeping its text in archives/ unless `purge`. */
  async forget(id: string, options: { purge?: boolean } = {}): Promise<ForgetResult> {
    requireMemoryId(id);
    return this.mutate(() => forgetMemory(this.parts, id, options, (without) => this.opening.saveRecords(without)));
  }

  /** A person approves a memory awaiting review: from now on it is used like any other (reviewCommands.ts). */
  async approve(id: string): Promise<ReviewResult> {
    requireMemoryId(id);
    return this.mutate(() => approveMemory(this.parts, id));
  }

  /** A person rejects a memory awaiting review: archived (reason `rejected`) as a forgotten memory is, restorable. */
  async reject(id: string): Promise<ReviewResult> {
    requireMemoryId(id);
    return this.mutate(() => rejectMemory(this.parts, id));
  }

  /** Brings a memory back at phase 0 with the full text of its archive: an archived memory, or a reduced one. */
  async restore(id: string, options: { importance?: Importance } = {}): Promise<MemoryView> {
    requireMemoryId(id);
    return this.mutate(() => restoreMemory(this.parts, id, options));
  }

  /** One eviction cycle, archive first (evictionCycle.ts). */
  async evict(): Promise<EvictionResult> {
    return this.mutate(() => evictOnce(this.parts));
  }

  /** What the end of sessions calls for: their memories' priorities stored again, one eviction cycle per turn of the lock. */
  async maintainAfterSessions(sessionNumbers: readonly number[]): Promise<EvictionResult[]> {
    return maintainAfterSessions(this.parts, (work) => this.mutate(work), sessionNumbers);
  }

  /** Repairs everything check reports, in one pass; a check afterwards is healthy. */
  async fix(options: { cleanArchives?: boolean } = {}): Promise<FixResult> {
    this.init();
    // A server's deferred index.json is not a problem to repair.
    await this.settleIndex();
    return this.mutate(() => fixStore(this.parts, options));
  }

  // --- State, the lock and index.json; session counters (the hook routes) ---

  /**
   * Runs a change to state.json under the lock; `change` may return a value, and runs again on the file a
   * person saved meanwhile (stateFile.ts); a state.json that cannot be read is an error, never written over.
   * `durable: false` (session counters, on every tool call) skips the flush: a power cut can lose the last
   * counts, never the configuration.
   */
  async updateState<T>(change: (state: StoreState) => T, options: { durable?: boolean } = {}): Promise<T> {
    // Session counts may be the first thing a project writes: create the store when it is missing.
    if (!this.exists()) this.init();
    // Hooks call this while Claude Code waits for their next answers: the write leaves the event loop free.
    return this.mutate(() => this.parts.mirror.stateFile.updateAsync(change, options.durable));
  }

  /** Runs `work` under the store's lock (creating the store when missing), seeing the store as it is on disk. */
  async runExclusive<T>(work: () => T | Promise<T>): Promise<T> {
    if (!this.exists()) this.init();
    return this.mutate(work);
  }

  /** Runs `work` under the lock without reading the memories: for files that are not memories (server.json). */
  async runLocked<T>(work: () => T | Promise<T>): Promise<T> {
    if (!this.exists()) this.init();
    return this.lock.run(work);
  }

  /** Writes mark index.json as behind, calling `onBehind` once until flushIndex() (indexPending.ts); null: they write it. */
  deferIndexWrites(onBehind: (() => void) | null): void {
    this.parts.index.deferWrites(onBehind);
  }

  /**
   * Writes index.json if this process's changes are not in it yet
   * (deferIndexWrites): decided and put in place under the lock, rendered and
   * written to a temporary file between, so that other writes need not wait
   * for it (IndexWriter.prepareFlush). One flush at a time.
   */
  async flushIndex(): Promise<void> {
    const flush = this.indexFlushes.then(async () => {
      if (!this.parts.index.isBehind) return;
      const prepared = await this.mutate(() => this.parts.index.prepareFlush());
      if (!prepared) return;
      const written = await this.parts.index.writeFlush(prepared);
      try {
        await this.mutate(() => this.parts.index.commitFlush(prepared, written));
      } catch (error) {
        fs.rmSync(written.temp, { force: true });
        throw error;
      }
    });
    this.indexFlushes = flush.catch(() => undefined);
    return flush;
  }

  /** Brings index.json up to date before a check: this process's deferred changes, then another server's (waited for). */
  async settleIndex(): Promise<void> {
    // A write that fails (a full disk) leaves index.json behind: the check then reports it, as it is on disk.
    await this.flushIndex().catch(() => undefined);
    if (this.exists()) await waitForPendingIndex(this.paths);
  }

  /** Resolves when every write this process queued so far has finished. */
  settled(): Promise<void> {
    return this.lock.settled();
  }

  get currentState(): Readonly<StoreState> {
    this.refresh();
    return this.parts.mirror.state;
  }

  /** Counts an access of each memory in one write, in the given session (default: the current one). */
  async recordAccesses(ids: readonly string[], session?: number): Promise<void> {
    await this.recordAccessesBySession(new Map([[session ?? -1, ids]]));
  }

  /** Counts accesses in one write; `bySession` maps a session number (-1: the current one) to the memories accessed in it. */
  async recordAccessesBySession(bySession: ReadonlyMap<number, readonly string[]>): Promise<void> {
    if ([...bySession.values()].every((ids) => ids.length === 0)) return;
    await this.mutate(() => recordAccesses(this.parts, bySession));
  }

  /** Records uses in one write (usage.ts); `bySession` maps a session number (-1: the current one) to what was used how. */
  async recordUsageBySession(bySession: ReadonlyMap<number, Partial<Record<UsageKind, readonly string[]>>>): Promise<void> {
    if ([...bySession.values()].every((uses) => USAGE_KINDS.every((kind) => (uses[kind]?.length ?? 0) === 0))) return;
    await this.mutate(() => recordUses(this.parts, bySession));
  }

  /** Records that `recall` returned these memories to Claude, in the given session (default: the current one). */
  async recordRecalls(ids: readonly string[], session?: number): Promise<void> {
    await this.recordUsageBySession(new Map([[session ?? -1, { recalled: ids }]]));
  }

  /** Active memories whose last access was in the given session. */
  accessedInSession(sessionNumber: number): string[] {
    this.refresh();
    return accessedInSession(this.parts, sessionNumber);
  }

  /** Writes the stats journal into stats.json and removes it (statsJournal.ts); a server does this when it stops. */
  async compactStats(): Promise<void> {
    if (!this.exists() || !fs.existsSync(this.paths.statsJournal)) return;
    await this.mutate(() => this.parts.stats.compact());
  }

  /** Writes append to the stats journal without compacting it, calling `onDue` once it is due; null: they compact it (StatsWriter.deferCompaction). */
  deferStatsCompaction(onDue: (() => void) | null): void {
    this.parts.stats.deferCompaction(onDue);
  }

  /** compactStats() in slices, without holding the event loop: a server's compaction in a pause (deferStatsCompaction). */
  async compactStatsInSlices(): Promise<void> {
    if (!this.exists()) return;
    await this.mutate(() => this.parts.stats.compactAsync());
  }

  /** Recomputes and stores the priority of the given memories. */
  async refreshPriorities(ids: readonly string[]): Promise<void> {
    await this.mutate(() => storePriorities(this.parts, ids));
  }

  // --- Internals: locking and change detection -----------------------------

  private async mutate<T>(work: () => T | Promise<T>): Promise<T> {
    if (!this.exists()) throw new LtmError('no_store', `no memory store at ${this.paths.root}`);
    return this.lock.run(() => {
      this.refresh();
      return work();
    });
  }

  /** Memory `id`'s file, checked again (so a read sees a hand edit at once); not_found unless it is active. */
  private activeFile(id: string): LoadedFile {
    requireMemoryId(id);
    this.parts.mirror.refreshOne(id);
    requireActive(this.parts.mirror, id);
    return this.parts.mirror.files.get(id)!;
  }

  /** Brings the in-memory copy up to date with the disk; `full` also stats every memory file (edits made in place). */
  refresh(options: { full?: boolean } = {}): void {
    this.opening.refresh(options);
  }

  /** Saves what was parsed and indexed since opening, so the next process opens and searches fast. */
  flushCaches(): void {
    this.opening.flushCaches();
  }

  /** flushCaches a slice at a time, for a pause between requests (StoreOpening.flushCachesInSlices). */
  flushCachesInSlices(slices: SliceOptions = {}): Promise<void> {
    return this.opening.flushCachesInSlices(slices);
  }

  /**
   * Loads the search index (and the vocabulary searches expand with) and
   * ranks the memories by priority, ahead of the first search and the first
   * session start: a server does this once it listens.
   */
  async warmUp(): Promise<void> {
    this.refresh();
    this.parts.queries.warmSearchIndex();
    // In slices: a request meanwhile is answered between two (one that needs the ranking finishes it).
    await this.parts.queries.warmRanking(giveWay);
  }

  /**
   * Does ahead, without holding the event loop, what the first store of a
   * process and the first write of index.json after it would do at once while
   * requests wait: reading the IDs index.json mentions, which a new memory's
   * ID must avoid (DiskMirror.readIndexMentionsAhead), and laying out its
   * members and tags (IndexWriter.layOutAhead). A server does this in a pause
   * after opening.
   */
  async prepareForStores(): Promise<void> {
    await this.parts.mirror.readIndexMentionsAhead();
    await this.parts.index.layOutAhead();
  }
}
