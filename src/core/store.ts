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
 * This file validates what callers give, decides when the store is read
 * (refresh, ensureOpen) and when the lock is taken (mutate: one command, or
 * one eviction cycle, per turn), and delegates the work. The commands live in
 * their own modules, each working through the few store parts it declares
 * (storeParts.ts): memoryWrites (store, update, merge, forget, restore),
 * reviewCommands, anchorCommands, evictionCycle, usageRecording, repair
 * (`fix`), with archiving (archive first) and memoryIds beneath them; the
 * reads are storeQueries (priorities, ranking, lists, search) and
 * memoryOffers (session start and the offers). design.md has the full map.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { followAnchors, reanchor, writeAnchors, type AnchorCommandParts } from './anchorCommands';
import type { DiskMirror } from './diskMirror';
import { LtmError, invalidInput, notFound } from './errors';
import { evictOnce } from './evictionCycle';
import type { IndexWriter } from './indexWriter';
import { waitForPendingIndex } from './indexPending';
import { checkIntegrity, type IntegrityReport } from './integrity';
import type { FileRecord } from './loadedFile';
import { StoreLock } from './lock';
import { aboutFile, candidatesFor, outdated, relevantTo, staleMemories, topForSession } from './memoryOffers';
import { MemoryRecordCache } from './memoryRecords';
import { prepareUpdate, type UpdateInput } from './memoryUpdate';
import { forgetMemory, mergeMemories, restoreMemory, storeMemory, updateMemory, writeSummary } from './memoryWrites';
import {
  DEFAULT_LIST_LIMIT,
  DEFAULT_SEARCH_LIMIT,
  MEMORY_ID_FORMAT,
  STALE_MEMORY_MODES,
  isMemoryId,
  isStaleMemoriesMode,
  type StaleMemoriesMode,
  type StoreConfig,
} from './model';
import type { Importance, PriorityBreakdown } from './priority';
import type { OfferedMemory, RelevanceGate } from './promptContext';
import { reciprocalRankFusion } from './rankFusion';
import { fixStore, integritySnapshot } from './repair';
import { approveMemory, awaitingReview, rejectMemory } from './reviewCommands';
import { MAX_SIMILAR } from './similarity';
import type { StaleReport } from './staleness';
import type { StatsWriter } from './statsWriter';
import type { StoreAnchors } from './storeAnchors';
import { ensureGitignore, storePaths, type StorePaths, type StoreState } from './storeFiles';
import { prepareInput, prepareSummary } from './storeInput';
import { createStoreParts, requireActive, type StoreParts } from './storeParts';
import type { StoreQueries } from './storeQueries';
import type {
  ArchivedMemory,
  StaleMemory,
  EvictionResult,
  FixResult,
  ForgetResult,
  ListFilter,
  ListResult,
  InvalidFile,
  MemoryView,
  MergeResult,
  OpenOptions,
  ReviewResult,
  SearchOptions,
  SearchResultItem,
  SimilarMemory,
  StatusResult,
  StoreInput,
  StoreResult,
  UpdateResult,
} from './storeTypes';
import { USAGE_KINDS, isDemotionCandidate, isListSort, LIST_SORTS, usageOf, type UsageKind } from './usage';
import { accessedInSession, recordAccesses, recordUses, storeEndedSessionPriorities, storePriorities } from './usageRecording';

// The public types live in storeTypes.ts; callers import them from here, as they always have.
export type * from './storeTypes';

export class MemoryStore {
  readonly paths: StorePaths;
  private readonly lock: StoreLock;
  /** What the store opens from without reading every memory file (parse-cache.json). */
  private readonly records: MemoryRecordCache;
  /** What the commands work through (storeParts.ts); its members are also kept here by name. */
  private readonly parts: StoreParts;
  private readonly mirror: DiskMirror;
  private readonly index: IndexWriter;
  private readonly statsWriter: StatsWriter;
  private readonly queries: StoreQueries;
  private readonly anchoring: StoreAnchors;
  /** The parts with the store's lock, for commands that take it once per memory (anchorCommands.ts). */
  private readonly anchorParts: AnchorCommandParts;
  /** Set by the first refresh(), which loads the record cache before it reads the files (see prepare). */
  private opened = false;
  /** The record cache is read once, before the first look at the files; openInSteps reads it a step ahead. */
  private recordsLoaded = false;

  private constructor(projectDir: string, options: OpenOptions) {
    this.paths = storePaths(projectDir);
    this.lock = new StoreLock(this.paths.root, this.paths.lock);
    this.records = new MemoryRecordCache(this.paths.parseCache);
    this.parts = createStoreParts(this.paths, options, this.records);
    ({ mirror: this.mirror, index: this.index, stats: this.statsWriter, queries: this.queries, anchoring: this.anchoring } = this.parts);
    this.anchorParts = { ...this.parts, mutate: (work) => this.mutate(work) };
  }

  /** Opens a project's store. Reads everything and writes nothing (see flushCaches). */
  static open(projectDir: string, options: OpenOptions = {}): MemoryStore {
    const store = new MemoryStore(projectDir, options);
    store.refresh();
    return store;
  }

  /**
   * A project's store that reads nothing yet: it opens (as open() does) on
   * first use, as every read and write refreshes first, or in the background
   * through openInSteps(). A server claims the project and listens with it,
   * so its port and server.json are there before the memories are read.
   */
  static prepare(projectDir: string, options: OpenOptions = {}): MemoryStore {
    return new MemoryStore(projectDir, options);
  }

  /** Whether the store has read its files (see prepare). */
  get isOpen(): boolean {
    return this.opened;
  }

  /**
   * Opens a prepared store, then loads its search index, giving way to the
   * event loop between the steps (each tens of milliseconds at 10,000
   * memories): a server answers what needs no memories (health, the MCP
   * handshake) meanwhile. A request that needs them opens the store itself,
   * at once and completely, so no answer is ever given from a half-read store.
   */
  async openInSteps(): Promise<void> {
    const step = () => new Promise<void>((resolve) => setImmediate(resolve));
    if (!this.recordsLoaded) {
      this.records.load();
      this.recordsLoaded = true;
      await step();
    }
    if (!this.opened) {
      this.refresh();
      await step();
    }
    this.warmSearchIndex();
  }

  private ensureOpen(): void {
    if (!this.opened) this.refresh();
  }

  /** True once `.claude/ltm/` exists. */
  exists(): boolean {
    return fs.existsSync(this.paths.root);
  }

  dispose(): void {
    this.mirror.dispose();
  }

  // =========================================================================
  // Reading

  get config(): StoreConfig {
    this.ensureOpen();
    const { max_memories, memories_to_load, eviction_batch_size, review_new_memories, stale_memories } = this.mirror.state.config;
    return { max_memories, memories_to_load, eviction_batch_size, review_new_memories, stale_memories };
  }

  /**
   * Counts the changes seen on disk or made here since opening (refresh()
   * first): a caller that saw a count and sees it again knows nothing changed
   * in between (the VS Code views refresh on it, once per change).
   */
  get changeCount(): number {
    return this.mirror.changeCount;
  }

  get sessionCount(): number {
    this.ensureOpen();
    return this.mirror.state.session_count;
  }

  /** Active memories (see DiskMirror.isActive). */
  private activeIds(): string[] {
    return [...this.mirror.files.keys()];
  }

  private isActive(id: string): boolean {
    return this.mirror.isActive(id);
  }

  priorityOf(id: string): PriorityBreakdown {
    this.ensureOpen();
    const file = this.mirror.files.get(id);
    if (!file) throw notFound(`no memory with ID ${id}`);
    return this.queries.priorityOf(id, file.memory);
  }

  /** Memories by priority, highest first. */
  list(filter: ListFilter = {}): ListResult {
    this.refresh();
    const offset = filter.offset ?? 0;
    const limit = filter.limit ?? DEFAULT_LIST_LIMIT;
    if (!Number.isInteger(offset) || offset < 0) throw invalidInput('offset must be a whole number ≥ 0');
    if (!Number.isInteger(limit) || limit < 1) throw invalidInput('limit must be a whole number ≥ 1');
    if (filter.phase !== undefined && ![0, 1, 2, 3].includes(filter.phase)) {
      throw invalidInput('phase must be 0 (full), 1 (hint), 2 (abstract) or 3 (archived)');
    }
    if (filter.status !== undefined && filter.status !== 'approved' && filter.status !== 'proposed') {
      throw invalidInput('status must be approved or proposed');
    }
    if (filter.status === 'proposed' && filter.phase === 3) throw invalidInput('archived memories are not awaiting review (phase 3 has no status)');
    if (filter.sort !== undefined && !isListSort(filter.sort)) throw invalidInput(`sort must be ${LIST_SORTS.join(', ')}`);
    return this.queries.list(filter, offset, limit);
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
    this.ensureOpen();
    return this.queries.archivedIds();
  }

  /** Reads a memory. Counts as an access unless `countAccess` is false. */
  async get(id: string, options: { countAccess?: boolean } = {}): Promise<MemoryView> {
    this.requireId(id);
    this.refreshOne(id);
    this.requireActive(id);
    if (options.countAccess === false) return this.queries.view(id);
    return this.mutate(() => {
      this.requireActive(id);
      // A read is an access (priority) and a use (usage.ts).
      this.statsWriter.recordUsage([id], this.mirror.state.session_count, 'read');
      this.statsWriter.write();
      return this.queries.view(id);
    });
  }

  /**
   * Whether a memory still matches the code it is anchored to: null for a
   * memory without anchors. Anchored files are stat()ed; only changed ones are read.
   */
  staleness(id: string): StaleReport | null {
    this.requireId(id);
    this.refreshOne(id);
    this.requireActive(id);
    return this.anchoring.report(this.mirror.files.get(id)!.memory.anchors);
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
    this.requireId(id);
    this.refreshOne(id);
    this.requireActive(id);
    return this.queries.view(id);
  }

  /** The exact text of a memory file, for editors. */
  fileOf(id: string): string {
    this.requireId(id);
    this.refreshOne(id);
    this.requireActive(id);
    return path.join(this.paths.memories, `${id}.md`);
  }

  /**
   * The first `limit` memories by priority as session number `session` sees
   * them: what a session start injects, ranked before its count is written.
   */
  topForSession(session: number, limit: number): ListResult {
    this.refresh();
    return topForSession(this.parts, session, limit);
  }

  /**
   * Active memories the search index finds for each query (at most
   * `perQuery` each, in no particular order), as session number `session`
   * sees them: the candidates session start weighs against its situation
   * (see situation.ts), which decides what each has to do with it. Counts nothing.
   */
  candidatesFor(queries: readonly string[], session: number, perQuery?: number): MemoryView[] {
    this.refresh();
    return candidatesFor(this.parts, queries, session, perQuery);
  }

  /** Ranked search: relevance blended with priority. */
  search(query: string, options: SearchOptions = {}): SearchResultItem[] {
    this.refresh();
    if (!query.trim()) throw invalidInput('the search query is empty');
    const limit = options.limit ?? DEFAULT_SEARCH_LIMIT;
    if (!Number.isInteger(limit) || limit < 1) throw invalidInput('limit must be a whole number ≥ 1');
    return this.queries.search(query, limit, options.scope ?? 'active', options.tag?.trim().toLowerCase());
  }

  /**
   * Ranked search for one need asked several ways (`queries`: the first and
   * its alternative phrasings), the rankings fused by reciprocal rank
   * (rankFusion.ts): a memory that several phrasings find comes first.
   */
  searchAny(queries: readonly string[], options: SearchOptions = {}): SearchResultItem[] {
    const asked = queries.filter((q) => q.trim());
    if (asked.length === 0) throw invalidInput('the search query is empty');
    if (asked.length === 1) return this.search(asked[0]!, options);
    const limit = options.limit ?? DEFAULT_SEARCH_LIMIT;
    // Deeper than `limit` per phrasing: a memory at rank 12 of two phrasings can beat one at rank 1 of one.
    const lists = asked.map((q) => this.search(q, { ...options, limit: Math.max(limit * 2, 20) }));
    const itemOf = new Map<string, SearchResultItem>();
    for (const item of lists.flat()) if (!itemOf.has(item.id)) itemOf.set(item.id, item);
    return reciprocalRankFusion(lists.map((list) => list.map((i) => i.id)))
      .slice(0, limit)
      .map((id) => itemOf.get(id)!);
  }

  /**
   * The memories worth offering with a text (a person's prompt, a tool's
   * error), most relevant first, leaving out `exclude` (already offered in the
   * session): none when the text is too short or nothing matches it enough.
   * Reading them does not count as an access; the caller counts what it offers.
   */
  relevantTo(text: string, options: { limit?: number; exclude?: ReadonlySet<string>; gate?: RelevanceGate } = {}): OfferedMemory[] {
    this.refresh();
    return relevantTo(this.parts, text, options);
  }

  /**
   * The memories that name a file (its path in the project, or its file
   * name), best match first, leaving out `exclude`. What a tool about to read
   * or change that file is offered. Counts nothing.
   */
  aboutFile(file: string, options: { limit?: number; exclude?: ReadonlySet<string> } = {}): OfferedMemory[] {
    this.refresh();
    return aboutFile(this.parts, file, options);
  }

  /** An archived memory's full text: a removed memory, or the original of a reduced one. */
  getArchived(id: string): ArchivedMemory {
    this.requireId(id);
    this.refresh();
    const archived = this.mirror.readArchive(id);
    if (!archived) throw notFound(`no archive for ${id}`);
    return archived;
  }

  /**
   * How many memories are active: status()'s total, without its other counts
   * (staleness stats every anchored file). For views that show the number.
   */
  memoryCount(): number {
    this.refresh();
    return this.mirror.files.size;
  }

  /**
   * Files in memories/ the store cannot read as memories, with why: what
   * check() reports as invalid_file, id_mismatch and duplicate_id, without a
   * full check (an editor marks them as the files change).
   */
  invalidFiles(): InvalidFile[] {
    this.refresh();
    return [...this.mirror.invalidFiles.values()].map((f) => ({ ...f }));
  }

  status(): StatusResult {
    this.refresh();
    const byPhase = { full: 0, hint: 0, abstract: 0 };
    let awaitingReview = 0;
    let demotionCandidates = 0;
    for (const id of this.activeIds()) {
      const memory = this.mirror.files.get(id)!.memory;
      if (memory.status === 'proposed') awaitingReview++;
      if (memory.phase === 0) byPhase.full++;
      else if (memory.phase === 1) byPhase.hint++;
      else byPhase.abstract++;
      if (isDemotionCandidate(usageOf(this.mirror.stats.get(id)), memory.tags)) demotionCandidates++;
    }
    return {
      total_memories: byPhase.full + byPhase.hint + byPhase.abstract,
      awaiting_review: awaitingReview,
      by_phase: byPhase,
      total_archived: this.archivedIds().length,
      session_count: this.mirror.state.session_count,
      last_eviction: this.mirror.state.last_eviction,
      storage_size_bytes: this.mirror.storageSize(),
      config: this.config,
      store_path: this.paths.root,
      exists: this.exists(),
      invalid_files: this.mirror.invalidFiles.size,
      stale_memories: this.staleMemories().length,
      demotion_candidates: demotionCandidates,
    };
  }

  /**
   * Reports every integrity problem; changes nothing. index.json may be behind
   * a server's latest changes for a moment (deferIndexWrites): settleIndex()
   * first when the report must not count them.
   */
  check(): IntegrityReport {
    this.refresh({ full: true });
    return checkIntegrity(integritySnapshot(this.mirror, this.index));
  }

  // =========================================================================
  // Writing

  /** Creates `.claude/ltm/` and its .gitignore (see initStoreFiles). */
  init(): void {
    initStoreFiles(this.paths);
  }

  /**
   * Stores a new memory. The answer names the active memories that say nearly
   * the same (similar), so that the caller can update one of them instead;
   * the new memory is stored regardless.
   */
  async store(input: StoreInput): Promise<StoreResult> {
    const prepared = prepareInput(input);
    // The code is read before the lock is taken: anchoring reads project files, never memories.
    const anchors = this.anchoring.anchorsFor(input.anchors);
    this.init();
    const stored = await this.mutate(() => storeMemory(this.parts, input, prepared, anchors));
    // A read: it needs no lock, and a writer waiting for the lock need not wait for it.
    return { ...stored, similar: this.similarTo(stored.memory.id) };
  }

  /**
   * Active memories nearly the same as memory `id` (same lesson in other
   * words; see similarity.ts), most similar first. Counts nothing.
   */
  similarTo(id: string, limit = MAX_SIMILAR): SimilarMemory[] {
    this.requireId(id);
    this.refresh();
    if (!this.isActive(id)) return [];
    return this.queries.similarTo(id, limit).map((hit) => ({ id: hit.id, topic: this.mirror.files.get(hit.id)!.memory.topic, score: hit.score }));
  }

  /**
   * Replaces a memory's anchors with `specs` hashed from the code as it is now
   * (an empty list removes them). Only the `anchors` field of the file changes.
   */
  async setAnchors(id: string, specs: readonly string[]): Promise<MemoryView> {
    this.requireId(id);
    const anchors = this.anchoring.anchorsFor(specs);
    return writeAnchors(this.anchorParts, id, () => anchors);
  }

  /**
   * "Still true": the memory's anchors hashed again from the code as it is
   * now, where their text moved or their file was renamed, else at the same
   * lines; the memory is no longer stale. Refused when an anchored file is gone.
   */
  async reanchor(id: string): Promise<MemoryView> {
    this.requireId(id);
    return reanchor(this.anchorParts, id);
  }

  /**
   * Writes where anchored text moved to, or what its file was renamed to, into
   * the memories that follow it, so that their lines stay right as code moves
   * (no memory becomes stale by it). Returns the IDs written.
   */
  async followAnchors(): Promise<string[]> {
    this.refresh();
    return followAnchors(this.anchorParts);
  }

  /** Rewrites only the Summary section of a memory; the rest of the file keeps every byte. */
  async updateSummary(id: string, summary: string): Promise<MemoryView> {
    this.requireId(id);
    const text = prepareSummary(summary);
    return this.mutate(() => writeSummary(this.parts, id, text));
  }

  /**
   * Changes the given fields of a memory (topic, summary, content, tags),
   * checked and redacted as store does. The previous text is archived first,
   * under an ID of its own (reason `updated`, `version_of` this memory). A
   * reduced memory given new content is full again (see memoryUpdate.ts).
   * An update that changes nothing writes nothing.
   */
  async update(id: string, input: UpdateInput & { anchors?: readonly string[] }): Promise<UpdateResult> {
    this.requireId(id);
    const { anchors, ...text } = input;
    if (anchors !== undefined) {
      // Anchored first (reading code can fail), so that a bad anchor changes nothing.
      const anchored = this.anchoring.anchorsFor(anchors);
      const textGiven = Object.values(text).some((v) => v !== undefined);
      const result = textGiven ? await this.update(id, text) : { memory: this.peek(id), changed: [], redactions: [], versions: [] };
      const before = JSON.stringify(this.peek(id).anchors);
      const memory = await writeAnchors(this.anchorParts, id, () => anchored);
      return JSON.stringify(memory.anchors) === before ? result : { ...result, memory, changed: [...result.changed, 'anchors'] };
    }
    const prepared = prepareUpdate(input);
    return this.mutate(() => updateMemory(this.parts, id, prepared));
  }

  /**
   * Merges memory `sourceId` into `targetId`: the target gains the source's
   * text below its own and its tags (see memoryUpdate.ts); the source leaves
   * memories/ (archived, reason `merged`, `merged_into` the target). Both
   * originals are archived before anything changes, so nothing is lost: the
   * target's previous text under an ID of its own, the source under its own ID.
   */
  async merge(sourceId: string, targetId: string): Promise<MergeResult> {
    this.requireId(sourceId);
    this.requireId(targetId);
    if (sourceId === targetId) throw invalidInput('a memory cannot be merged into itself');
    return this.mutate(() => mergeMemories(this.parts, sourceId, targetId));
  }

  /** Removes a memory from the active set, keeping its text in archives/ unless `purge`. */
  async forget(id: string, options: { purge?: boolean } = {}): Promise<ForgetResult> {
    this.requireId(id);
    return this.mutate(() => forgetMemory(this.parts, id, options, (without) => this.saveRecords(without)));
  }

  /**
   * A person approves a memory awaiting review: its `status` line is removed
   * (the file is then what an approved memory's file has always been) and from
   * now on it is injected, offered, recalled and ranked like any other. Its
   * recency counts from the approval, as if it had been stored now.
   */
  async approve(id: string): Promise<ReviewResult> {
    this.requireId(id);
    return this.mutate(() => approveMemory(this.parts, id));
  }

  /**
   * A person rejects a memory awaiting review: archived as a forgotten memory
   * is (the text first, then the archive index with reason `rejected`, then
   * the file leaves memories/), so it stays searchable in the archives and
   * restorable; restored, it is awaiting review again.
   */
  async reject(id: string): Promise<ReviewResult> {
    this.requireId(id);
    return this.mutate(() => rejectMemory(this.parts, id));
  }

  /**
   * Brings a memory back at phase 0 with the full text of its archive: an
   * archived memory, or an active one that eviction reduced.
   */
  async restore(id: string, options: { importance?: Importance } = {}): Promise<MemoryView> {
    this.requireId(id);
    return this.mutate(() => restoreMemory(this.parts, id, options));
  }

  /**
   * One eviction cycle: when memories/ holds more than `max_memories`, the
   * lowest-priority batch advances one phase each. The full text is archived
   * before the first reduction and the Summary is never changed.
   */
  async evict(): Promise<EvictionResult> {
    return this.mutate(() => evictOnce(this.parts));
  }

  /**
   * What the end of sessions calls for: the priorities of memories accessed in
   * those sessions are stored again, and one eviction cycle runs per ended
   * session while the store is over its limit.
   */
  async maintainAfterSessions(sessionNumbers: readonly number[]): Promise<EvictionResult[]> {
    await this.mutate(() => storeEndedSessionPriorities(this.parts, sessionNumbers));
    // One cycle per turn of the lock: a backlog of cycles (many sessions ended
    // at once, or max_memories lowered) must not hold a server's hooks for long.
    const results: EvictionResult[] = [];
    for (const _ of sessionNumbers) results.push(await this.mutate(() => evictOnce(this.parts)));
    return results;
  }

  /** Repairs everything check reports, in one pass; a check afterwards is healthy. */
  async fix(options: { cleanArchives?: boolean } = {}): Promise<FixResult> {
    this.init();
    // A server's deferred index.json is not a problem to repair.
    await this.settleIndex();
    return this.mutate(() => fixStore(this.parts, options));
  }

  // =========================================================================
  // Session counters (used by the hook routes)

  /**
   * Runs a change to state.json under the lock; `change` may return a value.
   * @param options.durable flush state.json to disk (default). Session counters,
   * written on every tool call, skip it: a power cut can at worst lose the last
   * counts, while the configuration is always flushed.
   */
  async updateState<T>(change: (state: StoreState) => T, options: { durable?: boolean } = {}): Promise<T> {
    // Session counts may be the first thing a project writes: create the store when it is missing.
    if (!this.exists()) this.init();
    return this.mutate(async () => {
      const result = change(this.mirror.state);
      // Hooks call this while Claude Code waits for their next answers: the write leaves the event loop free.
      await this.mirror.writeStateAsync(options.durable);
      return result;
    });
  }

  /**
   * Runs `work` under the store's lock (creating the store when missing), for
   * decisions other processes must not interleave with, such as which process
   * serves the project. `work` sees the store as it is on disk.
   */
  async runExclusive<T>(work: () => T | Promise<T>): Promise<T> {
    if (!this.exists()) this.init();
    return this.mutate(work);
  }

  /**
   * Runs `work` under the cross-process lock without reading the memories:
   * for work on files that are not memories (a server claiming the project
   * writes server.json), which need not wait for a large store to open.
   */
  async runLocked<T>(work: () => T | Promise<T>): Promise<T> {
    if (!this.exists()) this.init();
    return this.lock.run(work);
  }

  /**
   * From now on a write marks index.json as behind instead of rewriting it
   * (every entry, ~320 bytes per memory), and calls `onBehind` once until the
   * next flushIndex(), which the caller (a server) runs in a pause between
   * requests. See IndexWriter.deferWrites and indexPending.ts. null: every
   * write writes index.json again (call flushIndex() for what is behind).
   */
  deferIndexWrites(onBehind: (() => void) | null): void {
    this.index.deferWrites(onBehind);
  }

  /** Writes index.json if this process's changes are not in it yet (deferIndexWrites). */
  async flushIndex(): Promise<void> {
    if (!this.index.isBehind) return;
    await this.mutate(() => this.index.flush());
  }

  /**
   * Brings index.json up to date before a check: writes this process's
   * deferred changes and waits (at most PENDING_INDEX_WAIT_MS) for a server in
   * another process to write its own.
   */
  async settleIndex(): Promise<void> {
    await this.flushIndex();
    if (this.exists()) await waitForPendingIndex(this.paths);
  }

  /** Resolves when every write this process queued so far has finished. */
  settled(): Promise<void> {
    return this.lock.settled();
  }

  get currentState(): Readonly<StoreState> {
    this.refresh();
    return this.mirror.state;
  }

  /** Counts an access of each memory in one write, in the given session (default: the current one). */
  async recordAccesses(ids: readonly string[], session?: number): Promise<void> {
    await this.recordAccessesBySession(new Map([[session ?? -1, ids]]));
  }

  /**
   * Counts accesses in one write. `bySession` maps a session number to the
   * memories accessed in it (-1: the current session), so that accesses
   * recorded a little later still count for the right session.
   */
  async recordAccessesBySession(bySession: ReadonlyMap<number, readonly string[]>): Promise<void> {
    if ([...bySession.values()].every((ids) => ids.length === 0)) return;
    await this.mutate(() => recordAccesses(this.parts, bySession));
  }

  /**
   * Records uses of memories in one write (see usage.ts): `bySession` maps a
   * session number (-1: the current session) to what was injected, offered,
   * recalled or read in it. Memories no longer active are skipped.
   */
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

  /**
   * Writes the stats journal into stats.json and removes it (statsJournal.ts),
   * so that readers of the reference format see every count: a server does
   * this when it stops. Nothing to do without a journal.
   */
  async compactStats(): Promise<void> {
    if (!this.exists() || !fs.existsSync(this.paths.statsJournal)) return;
    await this.mutate(() => this.statsWriter.compact());
  }

  /** Recomputes and stores the priority of the given memories. */
  async refreshPriorities(ids: readonly string[]): Promise<void> {
    await this.mutate(() => storePriorities(this.parts, ids));
  }

  // =========================================================================
  // Internals: locking and change detection

  private async mutate<T>(work: () => T | Promise<T>): Promise<T> {
    if (!this.exists()) throw new LtmError('no_store', `no memory store at ${this.paths.root}`);
    return this.lock.run(() => {
      this.refresh();
      return work();
    });
  }

  private requireId(id: string): void {
    if (typeof id !== 'string' || !isMemoryId(id)) {
      throw invalidInput(`"${String(id)}" is not a memory ID (expected ${MEMORY_ID_FORMAT})`);
    }
  }

  private requireActive(id: string): void {
    requireActive(this.mirror, id);
  }

  /**
   * Brings the in-memory copy up to date with the disk. Cheap when nothing
   * changed; `full` also stats every memory file, which finds edits made in
   * place when no watcher reports them.
   */
  refresh(options: { full?: boolean } = {}): void {
    if (!this.recordsLoaded) {
      this.records.load();
      this.recordsLoaded = true;
    }
    this.mirror.refresh(options);
    this.opened = true;
  }

  /** A single memory's file is always checked, so a read sees a hand edit at once. */
  private refreshOne(id: string): void {
    this.mirror.refreshOne(id);
  }

  /** Saves what was parsed and indexed since opening, so the next process opens and searches fast. */
  flushCaches(): void {
    // A store never opened has nothing new to save (and a server stopped at once need not read it).
    if (!this.opened || !this.exists()) return;
    // What another process removed since (a purge above all) must not be saved back.
    this.refresh();
    this.saveRecords();
    this.queries.saveSearchIndex();
  }

  /** Loads the search index ahead of the first search (a server does this once it listens). */
  warmSearchIndex(): void {
    this.refresh();
    this.queries.warmSearchIndex();
  }

  /** Saves the record cache of the active memories, but for `without` (a memory being purged). */
  private saveRecords(without?: string): void {
    if (!this.exists()) return;
    if (without !== undefined) this.records.noteChange();
    const files = this.mirror.files;
    this.records.save(
      (function* (): Generator<[string, FileRecord]> {
        for (const [id, file] of files) if (id !== without) yield [`${id}.md`, file.record()];
      })(),
    );
  }

  // =========================================================================
  // Internals: what writes share (always under the lock)
}

/** Creates `.claude/ltm/` and its .gitignore, or adds missing ignore lines to an existing one. Reads no memory. */
export function initStoreFiles(paths: StorePaths): void {
  fs.mkdirSync(paths.memories, { recursive: true });
  fs.mkdirSync(paths.archives, { recursive: true });
  ensureGitignore(paths);
}
