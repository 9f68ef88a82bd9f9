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
 * This file composes the operations and holds the protocols between files
 * (archive first, one eviction cycle per turn of the lock); the parts they are
 * built from live in their own modules: storeTypes (the public types),
 * storeInput (validation and redaction), memoryRecords and loadedFile (what
 * a store opens from, and its memories' text read when needed), diskMirror (the files as
 * last seen, and their writers), indexWriter and statsWriter (incremental
 * JSON), storeQueries (priorities, ranking, lists and search), repair (`fix`)
 * and integrity (the check).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { anchorsToFrontmatter, type Anchor } from './anchors';
import { suggestTags } from './autotag';
import { DiskMirror, type LoadedFile } from './diskMirror';
import type { FileRecord } from './loadedFile';
import { LtmError, invalidInput, notFound } from './errors';
import { selectEvictionBatch } from './eviction';
import { IndexWriter } from './indexWriter';
import { checkIntegrity, type IntegrityReport } from './integrity';
import { StoreLock } from './lock';
import {
  InvalidMemoryFile,
  reduceToAbstract,
  reduceToHint,
  renderBody,
  renderNewMemoryFile,
  replaceBody,
  replaceSummary,
  summaryProblem,
  updateFrontmatter,
} from './memoryFile';
import {
  DEFAULT_LIST_LIMIT,
  DEFAULT_SEARCH_LIMIT,
  MEMORY_ID_FORMAT,
  MEMORY_ID_HEX_DIGITS,
  MEMORY_ID_PREFIX,
  STALE_MEMORY_MODES,
  isMemoryId,
  isStaleMemoriesMode,
  type ArchiveEntry,
  type ArchiveReason,
  type MemoryMeta,
  type StaleMemoriesMode,
  type StoreConfig,
} from './model';
import { MemoryRecordCache } from './memoryRecords';
import { withImportance, type Importance, type PriorityBreakdown } from './priority';
import { redactSecrets } from './secrets';
import { integritySnapshot, repairProblems } from './repair';
import type { StaleReport } from './staleness';
import { StatsWriter } from './statsWriter';
import { StoreAnchors } from './storeAnchors';
import { StoreQueries } from './storeQueries';
import { reciprocalRankFusion } from './rankFusion';
import { USAGE_KINDS, isDemotionCandidate, isListSort, LIST_SORTS, usageOf, type UsageKind } from './usage';
import { ensureGitignore, storePaths, type StorePaths, type StoreState } from './storeFiles';
import { prepareInput, rejectUnpairedSurrogates } from './storeInput';
import { applyUpdate, mergedContent, mergedTags, prepareUpdate, versionText, type UpdateInput } from './memoryUpdate';
import { MAX_SIMILAR } from './similarity';
import {
  DEFAULT_PROMPT_MEMORIES,
  DEFAULT_RELEVANCE_GATE,
  hasEnoughWords,
  matchedWords,
  mentionsFile,
  type OfferedMemory,
  type RelevanceGate,
} from './promptContext';
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

// The public types live in storeTypes.ts; callers import them from here, as they always have.
export type * from './storeTypes';

/** How many search hits for a file name are checked for a mention of the file. */
const FILE_CANDIDATES = 30;
/** How many search hits for each of a session's files and its branch are weighed at session start. */
const SITUATION_CANDIDATES = 8;

function nowIso(): string {
  return new Date().toISOString();
}

export class MemoryStore {
  readonly paths: StorePaths;
  private readonly lock: StoreLock;
  /** What the store opens from without reading every memory file (parse-cache.json). */
  private readonly records: MemoryRecordCache;
  /** What is on disk, as last seen. */
  private readonly mirror: DiskMirror;

  // --- derived from the mirror, kept in step through its events ------------
  private readonly index: IndexWriter;
  private readonly statsWriter: StatsWriter;
  private readonly queries: StoreQueries;
  private readonly anchoring: StoreAnchors;
  /** Set by the first refresh(), which loads the record cache before it reads the files (see prepare). */
  private opened = false;
  /** The record cache is read once, before the first look at the files; openInSteps reads it a step ahead. */
  private recordsLoaded = false;

  private constructor(projectDir: string, options: OpenOptions) {
    this.paths = storePaths(projectDir);
    this.lock = new StoreLock(this.paths.root, this.paths.lock);
    this.records = new MemoryRecordCache(this.paths.parseCache);
    this.mirror = new DiskMirror(this.paths, options, this.records, {
      memoryChanged: (id, next) => {
        this.index.memoryChanged(id);
        this.queries.memoryChanged(id, next);
      },
      indexChanged: () => this.index.indexChanged(),
      statsRead: () => {
        this.statsWriter.replaced();
        this.queries.statsRead();
      },
      archivesChanged: () => this.queries.archivesChanged(),
    });
    this.index = new IndexWriter(this.mirror);
    this.statsWriter = new StatsWriter(this.mirror, {
      score: (id, memory) => this.queries.score(id, memory),
      touched: (id) => this.queries.touched(id),
    });
    this.queries = new StoreQueries(this.mirror);
    this.anchoring = new StoreAnchors(this.paths.project, options.renames);
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
    const ids: { id: string; created_at: string }[] = [];
    for (const [id, file] of this.mirror.files) if (file.memory.status === 'proposed') ids.push({ id, created_at: file.memory.created_at });
    return ids.sort((a, b) => (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : a.id < b.id ? -1 : 1)).map(({ id }) => this.queries.view(id));
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
    return this.anchoring.report(memory.anchors)?.reasons ?? [];
  }

  /**
   * What session start and the offers leave out: nothing when the project
   * labels stale memories (the default; then no anchored file is even
   * stat()ed for it), else whether a memory is stale. recall and get never ask.
   */
  private staleSkip(): ((memory: Pick<MemoryView, 'anchors'>) => boolean) | null {
    if (this.mirror.state.config.stale_memories !== 'skip') return null;
    return (memory) => this.anchoring.report(memory.anchors)?.stale === true;
  }

  /** The active memories whose anchored code changed or is gone, by ID. */
  staleMemories(): StaleMemory[] {
    this.refresh();
    const stale: StaleMemory[] = [];
    this.anchoring.pass(() => {
      for (const id of this.activeIds()) {
        const { memory } = this.mirror.files.get(id)!;
        const report = this.anchoring.report(memory.anchors);
        if (report?.stale) stale.push({ id, topic: memory.topic, reasons: report.reasons });
      }
    });
    return stale.sort((a, b) => (a.id < b.id ? -1 : 1));
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
    if (!Number.isInteger(limit) || limit < 1) throw invalidInput('limit must be a whole number ≥ 1');
    const sessionCount = Math.max(session, this.mirror.state.session_count);
    const skip = this.staleSkip();
    if (!skip) return this.queries.rankedPage(0, limit, sessionCount);
    // Stale memories are left out and the next ones take their places: looked for deeper until `limit`
    // hold or none are left. `total` stays every memory in use: recall still finds the stale ones.
    return this.anchoring.pass(() => {
      for (let depth = limit * 2; ; depth *= 2) {
        const page = this.queries.rankedPage(0, depth, sessionCount);
        const kept = page.memories.filter((m) => !skip(m));
        if (kept.length >= limit || !page.has_more) return { memories: kept.slice(0, limit), total: page.total, has_more: kept.length > limit || page.has_more };
      }
    });
  }

  /**
   * Active memories the search index finds for each query (at most
   * `perQuery` each, in no particular order), as session number `session`
   * sees them: the candidates session start weighs against its situation
   * (see situation.ts), which decides what each has to do with it. Counts nothing.
   */
  candidatesFor(queries: readonly string[], session: number, perQuery = SITUATION_CANDIDATES): MemoryView[] {
    this.refresh();
    const sessionCount = Math.max(session, this.mirror.state.session_count);
    const ids = new Set<string>();
    for (const query of queries) {
      if (!query.trim()) continue;
      for (const hit of this.queries.search(query, perQuery, 'active', undefined)) ids.add(hit.id);
    }
    const skip = this.staleSkip();
    const views = [...ids].map((id) => this.queries.view(id, sessionCount));
    return skip ? this.anchoring.pass(() => views.filter((v) => !skip(v))) : views;
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
    if (!hasEnoughWords(text)) return [];
    const skip = this.staleSkip();
    // A stale memory left out is passed over there, so that the next relevant one fills its place.
    const leaveOut = skip && ((id: string) => skip(this.mirror.files.get(id)!.memory));
    const limit = options.limit ?? DEFAULT_PROMPT_MEMORIES;
    const ids = this.anchoring.pass(() => this.queries.relevantTo(text, limit, options.exclude ?? new Set(), options.gate ?? DEFAULT_RELEVANCE_GATE, leaveOut ?? undefined));
    return ids.map((id) => {
      const view = this.queries.view(id);
      return { view, matched: matchedWords(text, view), outdated: this.outdated(view) };
    });
  }

  /**
   * The memories that name a file (its path in the project, or its file
   * name), best match first, leaving out `exclude`. What a tool about to read
   * or change that file is offered. Counts nothing.
   */
  aboutFile(file: string, options: { limit?: number; exclude?: ReadonlySet<string> } = {}): OfferedMemory[] {
    this.refresh();
    const relative = path.relative(this.paths.project, path.resolve(this.paths.project, file)).split(path.sep).join('/');
    const fileName = path.basename(file);
    // Candidates from the index (the file name's words), then the exact mention checked in their text.
    const candidates = this.queries.search(fileName, FILE_CANDIDATES, 'active', undefined, false);
    const skip = this.staleSkip();
    const offers: OfferedMemory[] = [];
    for (const c of candidates) {
      if (options.exclude?.has(c.id)) continue;
      const view = this.queries.view(c.id);
      if (!mentionsFile(view, relative.startsWith('..') ? '' : relative, fileName)) continue;
      if (skip?.(view)) continue;
      offers.push({ view, matched: [relative.startsWith('..') ? fileName : relative], outdated: this.outdated(view) });
      if (offers.length >= (options.limit ?? DEFAULT_PROMPT_MEMORIES)) break;
    }
    return offers;
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

  /** Reports every integrity problem; changes nothing. */
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
    const stored = await this.storeNew(input);
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

  private async storeNew(input: StoreInput): Promise<Omit<StoreResult, 'similar'>> {
    const prepared = prepareInput(input);
    // The code is read before the lock is taken: anchoring reads project files, never memories.
    const anchors = this.anchoring.anchorsFor(input.anchors);
    this.init();
    return this.mutate(() => {
      const id = this.newId();
      const createdAt = nowIso();
      const session = input.session ?? this.mirror.state.session_count;
      let tags = prepared.tags;
      if (input.autoTag && tags.length === 0) tags = suggestTags(`${prepared.topic}\n${prepared.content}`);
      // Decided under the lock, from state.json as it is now: a setting changed a moment ago counts.
      const proposed = input.author === 'claude' && this.mirror.state.config.review_new_memories === true;
      const raw = renderNewMemoryFile({
        ...(proposed ? { status: 'proposed' as const } : {}),
        id,
        topic: prepared.topic,
        tags,
        keywords: prepared.keywords,
        phase: 0,
        difficulty: prepared.difficulty ?? 0.5,
        created_at: createdAt,
        created_session: session,
        summary: prepared.summary,
        content: prepared.content,
        anchors,
      });
      this.mirror.writeMemoryFile(id, raw);
      this.register(id);
      this.statsWriter.set(id, { access_count: 0, accessed_at: createdAt, last_session: session, priority: 0 });
      this.statsWriter.storePriority(id);
      this.index.write();
      this.statsWriter.write();
      return { memory: this.queries.view(id), redactions: prepared.redactions };
    });
  }

  /**
   * Replaces a memory's anchors with `specs` hashed from the code as it is now
   * (an empty list removes them). Only the `anchors` field of the file changes.
   */
  async setAnchors(id: string, specs: readonly string[]): Promise<MemoryView> {
    this.requireId(id);
    const anchors = this.anchoring.anchorsFor(specs);
    return this.writeAnchors(id, () => anchors);
  }

  /**
   * "Still true": the memory's anchors hashed again from the code as it is
   * now, where their text moved or their file was renamed, else at the same
   * lines; the memory is no longer stale. Refused when an anchored file is gone.
   */
  async reanchor(id: string): Promise<MemoryView> {
    this.requireId(id);
    this.refreshOne(id);
    this.requireActive(id);
    const anchors = this.anchoring.reanchored(this.mirror.files.get(id)!.memory.anchors);
    return this.writeAnchors(id, (current) => {
      // Changed by another writer since they were read: anchor what is there now.
      if (JSON.stringify(current) !== JSON.stringify(this.mirror.files.get(id)!.memory.anchors)) return this.anchoring.reanchored(current);
      return anchors;
    });
  }

  /**
   * Writes where anchored text moved to, or what its file was renamed to, into
   * the memories that follow it, so that their lines stay right as code moves
   * (no memory becomes stale by it). Returns the IDs written.
   */
  async followAnchors(): Promise<string[]> {
    this.refresh();
    const moved = this.anchoring.pass(() => this.activeIds().filter((id) => this.anchoring.followed(this.mirror.files.get(id)!.memory.anchors) !== null));
    const written: string[] = [];
    for (const id of moved) {
      try {
        await this.writeAnchors(id, (current) => this.anchoring.followed(current) ?? current);
        written.push(id);
      } catch (error) {
        // Forgotten or changed meanwhile: left for the next pass.
        if (!(error instanceof LtmError)) throw error;
      }
    }
    return written;
  }

  private writeAnchors(id: string, next: (current: readonly Anchor[]) => readonly Anchor[]): Promise<MemoryView> {
    return this.mutate(() => {
      this.refreshOne(id);
      this.requireActive(id);
      const file = this.mirror.files.get(id)!;
      const anchors = next(file.memory.anchors);
      const raw = updateFrontmatter(file.raw, { anchors: anchors.length > 0 ? anchorsToFrontmatter(anchors) : undefined });
      if (raw !== file.raw) this.mirror.writeMemoryFile(id, raw);
      return this.queries.view(id);
    });
  }

  /** Rewrites only the Summary section of a memory; the rest of the file keeps every byte. */
  async updateSummary(id: string, summary: string): Promise<MemoryView> {
    this.requireId(id);
    rejectUnpairedSurrogates('summary', summary);
    const redacted = redactSecrets(summary.trim());
    const problem = summaryProblem(redacted.text);
    if (problem) throw invalidInput(problem);
    return this.mutate(() => {
      this.refreshOne(id);
      this.requireActive(id);
      const file = this.mirror.files.get(id)!;
      const raw = replaceSummary(file.raw, redacted.text);
      if (raw !== file.raw) this.mirror.writeMemoryFile(id, raw);
      return this.queries.view(id);
    });
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
      const memory = await this.writeAnchors(id, () => anchored);
      return JSON.stringify(memory.anchors) === before ? result : { ...result, memory, changed: [...result.changed, 'anchors'] };
    }
    const prepared = prepareUpdate(input);
    return this.mutate(() => {
      this.refreshOne(id);
      this.requireActive(id);
      const file = this.mirror.files.get(id)!;
      const updated = applyUpdate(file.raw, file.memory, prepared, nowIso());
      if (updated.changed.length === 0) return { memory: this.queries.view(id), changed: [], redactions: prepared.redactions, versions: [] };
      const becomesFull = updated.phase === 0 && file.memory.phase > 0;
      // 1. Every previous text is safe in archives/ before the memory changes.
      const { versions, ownArchiveKept } = this.archiveVersions(id, file, 'updated', becomesFull);
      this.mirror.writeArchiveIndex();
      // 2. The memory.
      this.mirror.writeMemoryFile(id, updated.text);
      if (becomesFull && ownArchiveKept) this.mirror.deleteArchiveFile(id);
      this.statsWriter.storePriority(id);
      this.index.write();
      this.statsWriter.write();
      return { memory: this.queries.view(id), changed: updated.changed, redactions: prepared.redactions, versions };
    });
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
    return this.mutate(() => {
      this.refreshOne(sourceId);
      this.refreshOne(targetId);
      this.requireActive(sourceId);
      this.requireActive(targetId);
      const source = this.mirror.files.get(sourceId)!;
      const target = this.mirror.files.get(targetId)!;
      // A reduced memory's whole text is its archive: that is what is merged.
      const sourceFull = this.fullTextOf(sourceId, source);
      const targetFull = this.fullTextOf(targetId, target);
      const prepared = prepareUpdate({
        content: mergedContent({ ...targetFull, id: targetId }, { ...sourceFull, id: sourceId }),
        tags: mergedTags(target.memory.tags, source.memory.tags),
      });
      const updated = applyUpdate(target.raw, target.memory, prepared, nowIso(), 'merged');
      const becomesFull = updated.phase === 0 && target.memory.phase > 0;
      // 1. Both originals are safe in archives/ before anything changes.
      const { versions, ownArchiveKept } = this.archiveVersions(targetId, target, 'merged', becomesFull);
      this.ensureArchived(sourceId, source);
      this.mirror.archiveIndex.memories.set(sourceId, { ...this.archiveEntryFor(source.memory, 'merged'), merged_into: targetId });
      this.mirror.writeArchiveIndex();
      // 2. The target, then the source leaves.
      this.mirror.writeMemoryFile(targetId, updated.text);
      if (becomesFull && ownArchiveKept) this.mirror.deleteArchiveFile(targetId);
      this.mirror.deleteMemoryFile(sourceId);
      this.unregister(sourceId);
      this.statsWriter.set(sourceId, undefined);
      this.statsWriter.storePriority(targetId);
      this.index.write();
      this.statsWriter.write();
      return { target: this.queries.view(targetId), source: { id: sourceId, topic: source.memory.topic }, versions };
    });
  }

  /** Removes a memory from the active set, keeping its text in archives/ unless `purge`. */
  async forget(id: string, options: { purge?: boolean } = {}): Promise<ForgetResult> {
    this.requireId(id);
    return this.mutate(() => {
      this.refreshOne(id);
      const active = this.isActive(id);
      const archived = this.mirror.archiveIndex.memories.has(id) && this.mirror.archiveFiles.has(id);
      if (!active && !(options.purge && (archived || this.mirror.archiveFiles.has(id)))) {
        throw notFound(
          archived ? `${id} is already archived (use purge to delete its text for good)` : `no memory with ID ${id}`,
        );
      }
      const topic = active ? this.mirror.files.get(id)!.memory.topic : (this.mirror.archiveIndex.memories.get(id)?.topic ?? '');
      if (options.purge) {
        // A purged memory's text must not survive anywhere, the git-ignored caches included: they go first.
        if (active) this.saveRecords(id);
        if (active) this.queries.discardSavedSearchIndex();
        this.mirror.archiveIndex.memories.delete(id);
        this.mirror.archiveIndex.purged.set(id, { purged_at: nowIso() });
        this.mirror.writeArchiveIndex();
        this.mirror.deleteArchiveFile(id);
        if (active) this.mirror.deleteMemoryFile(id);
      } else {
        const file = this.mirror.files.get(id)!;
        this.ensureArchived(id, file);
        this.mirror.archiveIndex.memories.set(id, this.archiveEntryFor(file.memory, 'forgotten'));
        this.mirror.writeArchiveIndex();
        this.mirror.deleteMemoryFile(id);
      }
      this.unregister(id);
      this.statsWriter.set(id, undefined);
      this.index.write();
      this.statsWriter.write();
      return { id, topic, archived: !options.purge, purged: Boolean(options.purge) };
    });
  }

  /**
   * A person approves a memory awaiting review: its `status` line is removed
   * (the file is then what an approved memory's file has always been) and from
   * now on it is injected, offered, recalled and ranked like any other. Its
   * recency counts from the approval, as if it had been stored now.
   */
  async approve(id: string): Promise<ReviewResult> {
    this.requireId(id);
    return this.mutate(() => {
      this.refreshOne(id);
      const file = this.requireProposed(id);
      this.mirror.writeMemoryFile(id, updateFrontmatter(file.raw, { status: undefined }));
      const stats = this.mirror.stats.get(id);
      const session = this.mirror.state.session_count;
      this.statsWriter.set(id, { access_count: stats?.access_count ?? 0, accessed_at: nowIso(), last_session: session, priority: stats?.priority ?? 0 });
      this.statsWriter.storePriority(id);
      this.queries.touched(id);
      this.index.write();
      this.statsWriter.write();
      return { id, topic: file.memory.topic, decision: 'approved' };
    });
  }

  /**
   * A person rejects a memory awaiting review: archived as a forgotten memory
   * is (the text first, then the archive index with reason `rejected`, then
   * the file leaves memories/), so it stays searchable in the archives and
   * restorable; restored, it is awaiting review again.
   */
  async reject(id: string): Promise<ReviewResult> {
    this.requireId(id);
    return this.mutate(() => {
      this.refreshOne(id);
      const file = this.requireProposed(id);
      this.ensureArchived(id, file, true);
      this.mirror.archiveIndex.memories.set(id, this.archiveEntryFor(file.memory, 'rejected'));
      this.mirror.writeArchiveIndex();
      this.mirror.deleteMemoryFile(id);
      this.unregister(id);
      this.statsWriter.set(id, undefined);
      this.index.write();
      this.statsWriter.write();
      return { id, topic: file.memory.topic, decision: 'rejected' };
    });
  }

  /**
   * Brings a memory back at phase 0 with the full text of its archive: an
   * archived memory, or an active one that eviction reduced.
   */
  async restore(id: string, options: { importance?: Importance } = {}): Promise<MemoryView> {
    this.requireId(id);
    return this.mutate(() => {
      this.refreshOne(id);
      const archiveRaw = this.mirror.readArchiveText(id);
      if (archiveRaw === null) {
        throw notFound(this.isActive(id) ? `${id} is not reduced: it has no archive to restore` : `no archive for ${id}`);
      }
      // A memory restored before keeps its archive until it is reduced again; restoring it once more
      // would put that older text over the full one it has now (and any edit since).
      if (this.isActive(id) && this.mirror.files.get(id)!.memory.phase === 0) {
        throw new LtmError('invalid_input', `${id} is not reduced: it is at phase 0 with its full text, so there is nothing to restore`);
      }
      let meta: MemoryMeta;
      try {
        meta = this.mirror.parseMemory(archiveRaw);
      } catch (error) {
        if (error instanceof InvalidMemoryFile) throw new LtmError('invalid_input', `the archive of ${id} is unreadable: ${error.reason}`);
        throw error;
      }
      // The archive was written before the first reduction; the history since is in the reduced file, if any.
      const entry = this.mirror.archiveIndex.memories.get(id);
      const earlier = this.mirror.files.get(id)?.memory.phase_history ??
        (entry ? [...meta.phase_history, { phase: 3, at: entry.archived_at, event: entry.reason === 'eviction' ? 'evicted' : entry.reason }] : meta.phase_history);
      const history = [...earlier, { phase: 0, at: nowIso(), event: 'restored' }];
      const changes: Record<string, unknown> = { phase: 0, restored_from_archive: true, phase_history: history };
      if (meta.id !== id) changes.id = id;
      if (options.importance) {
        changes.tags = withImportance(meta.tags, options.importance);
      }
      this.mirror.writeMemoryFile(id, updateFrontmatter(archiveRaw, changes));
      this.mirror.archiveIndex.memories.delete(id);
      this.mirror.writeArchiveIndex();
      this.register(id);
      this.statsWriter.set(id, { access_count: 0, accessed_at: nowIso(), last_session: this.mirror.state.session_count, priority: 0 });
      this.statsWriter.storePriority(id);
      this.index.write();
      this.statsWriter.write();
      return this.queries.view(id);
    });
  }

  /**
   * One eviction cycle: when memories/ holds more than `max_memories`, the
   * lowest-priority batch advances one phase each. The full text is archived
   * before the first reduction and the Summary is never changed.
   */
  async evict(): Promise<EvictionResult> {
    return this.mutate(() => this.evictOnce());
  }

  /**
   * What the end of sessions calls for: the priorities of memories accessed in
   * those sessions are stored again, and one eviction cycle runs per ended
   * session while the store is over its limit.
   */
  async maintainAfterSessions(sessionNumbers: readonly number[]): Promise<EvictionResult[]> {
    await this.mutate(() => {
      const ended = new Set(sessionNumbers);
      this.mirror.stats.forEach((s, id) => {
        if (ended.has(s.last_session) && this.isActive(id)) this.statsWriter.storePriority(id);
      });
      this.statsWriter.write();
    });
    // One cycle per turn of the lock: a backlog of cycles (many sessions ended
    // at once, or max_memories lowered) must not hold a server's hooks for long.
    const results: EvictionResult[] = [];
    for (const _ of sessionNumbers) results.push(await this.mutate(() => this.evictOnce()));
    return results;
  }

  /** One eviction cycle; the caller holds the lock. */
  private evictOnce(): EvictionResult {
    const config = this.config;
    // The ranking table counts the active memories without walking them all.
    const count = this.queries.activeCount();
    const result: EvictionResult = { ran: false, before: count, after: count, max_memories: config.max_memories, steps: [] };
    if (count <= config.max_memories) return result;
    const batch = selectEvictionBatch(this.queries.evictionCandidates(), config);
    if (batch.length === 0) return result;
    // What is archived must be the file as it is now, hand edits included.
    for (const c of batch) this.refreshOne(c.id);
    const files = batch.filter((c) => this.isActive(c.id)).map((c) => ({ id: c.id, file: this.mirror.files.get(c.id)! }));
    // 1. Every full text is safe in archives/ before anything is reduced or removed.
    for (const { id, file } of files) {
      if (file.memory.phase === 0) this.mirror.writeArchiveFile(id, file.raw);
      else this.ensureArchived(id, file);
    }
    // 2. Memories about to leave memories/ are listed as archived first.
    const leaving = files.filter(({ file }) => file.memory.phase === 2);
    for (const { file } of leaving) this.mirror.archiveIndex.memories.set(file.memory.id, this.archiveEntryFor(file.memory, 'eviction'));
    if (leaving.length > 0) this.mirror.writeArchiveIndex();
    // 3. Reduce or remove.
    for (const { id, file } of files) {
      const { memory } = file;
      const from = memory.phase;
      if (from === 2) {
        this.mirror.deleteMemoryFile(id);
        this.unregister(id);
        this.statsWriter.set(id, undefined);
      } else {
        const content = from === 0 ? reduceToHint(memory.content) : reduceToAbstract(memory.content, memory.summary);
        const history = [...memory.phase_history, { phase: from + 1, at: nowIso(), event: 'evicted' }];
        const reduced = replaceBody(updateFrontmatter(file.raw, { phase: from + 1, phase_history: history }), renderBody(memory.summary, content));
        this.mirror.writeMemoryFile(id, reduced);
      }
      result.steps.push({ id, topic: memory.topic, from, to: from + 1 });
    }
    this.mirror.state.last_eviction = nowIso();
    this.index.write();
    this.statsWriter.write();
    this.mirror.writeState();
    result.ran = true;
    result.after = this.activeIds().length;
    return result;
  }

  /** Repairs everything check reports, in one pass; a check afterwards is healthy. */
  async fix(options: { cleanArchives?: boolean } = {}): Promise<FixResult> {
    this.init();
    return this.mutate(() => {
      this.refresh({ full: true });
      const report = checkIntegrity(integritySnapshot(this.mirror, this.index));
      const mirror = this.mirror;
      const actions = repairProblems(
        report,
        {
          paths: this.paths,
          files: mirror.files,
          get archiveIndex() {
            return mirror.archiveIndex;
          },
          newId: () => this.newId(),
          register: (id) => this.register(id),
          unregister: (id) => this.unregister(id),
          writeMemoryFile: (id, raw) => mirror.writeMemoryFile(id, raw),
          forgetFileName: (name) => mirror.forgetFileName(name),
          writeArchiveFile: (id, raw) => mirror.writeArchiveFile(id, raw),
          deleteArchiveFile: (id) => mirror.deleteArchiveFile(id),
          readArchive: (id) => mirror.readArchive(id),
        },
        options,
      );
      // One pass: everything below is derived from the repaired set of memories.
      // index.json is written anew from the memory files; what it listed matters only to the ranking table.
      for (const id of this.index.ids) if (!mirror.files.has(id)) this.queries.touched(id);
      this.index.replaceIds(new Set(mirror.files.keys()));
      for (const id of [...mirror.stats.keys()]) if (!this.isActive(id)) this.statsWriter.set(id, undefined);
      this.index.write();
      // stats.json whole again, for readers of the reference format (and a damaged one rewritten).
      this.statsWriter.compact();
      mirror.writeArchiveIndex();
      if (report.problems.some((p) => p.kind === 'state_unreadable')) mirror.writeState();
      return { actions, report: checkIntegrity(integritySnapshot(mirror, this.index)) };
    });
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
    await this.mutate(async () => {
      for (const [session, ids] of bySession) {
        this.statsWriter.recordAccess(
          ids.filter((id) => this.isActive(id)),
          session < 0 ? this.mirror.state.session_count : session,
        );
      }
      // Session starts record their injected memories here: see updateState.
      await this.statsWriter.writeAsync();
    });
  }

  /**
   * Records uses of memories in one write (see usage.ts): `bySession` maps a
   * session number (-1: the current session) to what was injected, offered,
   * recalled or read in it. Memories no longer active are skipped.
   */
  async recordUsageBySession(bySession: ReadonlyMap<number, Partial<Record<UsageKind, readonly string[]>>>): Promise<void> {
    if ([...bySession.values()].every((uses) => USAGE_KINDS.every((kind) => (uses[kind]?.length ?? 0) === 0))) return;
    await this.mutate(async () => {
      for (const [session, uses] of bySession) {
        for (const kind of USAGE_KINDS) {
          const ids = uses[kind]?.filter((id) => this.isActive(id)) ?? [];
          if (ids.length > 0) this.statsWriter.recordUsage(ids, session < 0 ? this.mirror.state.session_count : session, kind);
        }
      }
      await this.statsWriter.writeAsync();
    });
  }

  /** Records that `recall` returned these memories to Claude, in the given session (default: the current one). */
  async recordRecalls(ids: readonly string[], session?: number): Promise<void> {
    await this.recordUsageBySession(new Map([[session ?? -1, { recalled: ids }]]));
  }

  /** Active memories whose last access was in the given session. */
  accessedInSession(sessionNumber: number): string[] {
    this.refresh();
    const ids: string[] = [];
    this.mirror.stats.forEach((s, id) => {
      if (s.last_session === sessionNumber && this.isActive(id)) ids.push(id);
    });
    return ids;
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
    await this.mutate(() => {
      for (const id of ids) if (this.isActive(id)) this.statsWriter.storePriority(id);
      this.statsWriter.write();
    });
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

  /** The file of a memory awaiting review; the caller holds the lock and refreshed it. */
  private requireProposed(id: string): LoadedFile {
    this.requireActive(id);
    const file = this.mirror.files.get(id)!;
    if (file.memory.status !== 'proposed') throw invalidInput(`${id} is not awaiting review (it is approved already)`);
    return file;
  }

  private requireActive(id: string): void {
    if (this.isActive(id)) return;
    if (this.mirror.archiveIndex.memories.has(id)) {
      throw notFound(`${id} is archived; restore it first (ltm restore ${id})`);
    }
    throw notFound(`no memory with ID ${id}`);
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

  private newId(): string {
    for (;;) {
      const id = `${MEMORY_ID_PREFIX}${randomBytes(MEMORY_ID_HEX_DIGITS / 2).toString('hex')}`;
      if (
        !this.mirror.files.has(id) &&
        !this.mirror.fileSignatures.has(`${id}.md`) &&
        !this.mirror.archiveFiles.has(id) &&
        !this.mirror.archiveIndex.memories.has(id) &&
        !this.mirror.archiveIndex.purged.has(id) &&
        !this.index.ids.has(id)
      ) {
        return id;
      }
    }
  }

  /**
   * Makes sure archives/ holds the memory's fullest text. A reduced memory's
   * archive already does; `overwrite` replaces an older archive with a full text.
   */
  private ensureArchived(id: string, file: LoadedFile, overwrite = file.memory.phase === 0): void {
    if (overwrite || !this.mirror.archiveFiles.has(id)) this.mirror.writeArchiveFile(id, file.raw);
  }

  /**
   * Archives a memory's current text under a new ID (a previous version,
   * `version_of` the memory), and with `withOwnArchive` also its own archive
   * (the full text from before eviction reduced it). The caller writes
   * archive_index.json. `ownArchiveKept`: the own archive was copied, so the
   * caller may delete it.
   */
  private archiveVersions(id: string, file: LoadedFile, reason: ArchiveReason, withOwnArchive: boolean): { versions: string[]; ownArchiveKept: boolean } {
    const texts: { raw: string; meta: MemoryMeta }[] = [];
    let ownArchiveKept = false;
    const own = withOwnArchive ? this.mirror.readArchiveText(id) : null;
    if (own !== null) {
      try {
        texts.push({ raw: own, meta: this.mirror.parseMemory(own) });
        ownArchiveKept = true;
      } catch (error) {
        // An unreadable archive is left where it is, for check and fix to report.
        if (!(error instanceof InvalidMemoryFile)) throw error;
      }
    }
    texts.push({ raw: file.raw, meta: file.memory });
    const versions: string[] = [];
    for (const { raw, meta } of texts) {
      const versionId = this.newId();
      this.mirror.writeArchiveFile(versionId, versionText(raw, versionId));
      this.mirror.archiveIndex.memories.set(versionId, { ...this.archiveEntryFor(meta, reason), version_of: id });
      versions.push(versionId);
    }
    return { versions, ownArchiveKept };
  }

  /** A memory's fullest text: its archive's when eviction reduced it, else the file's. */
  private fullTextOf(id: string, file: LoadedFile): { topic: string; summary: string; content: string; tags: readonly string[] } {
    const archived = file.memory.phase > 0 ? this.mirror.readArchive(id) : null;
    const memory = archived ?? file.memory;
    return { topic: file.memory.topic, summary: file.memory.summary, content: memory.content, tags: file.memory.tags };
  }

  private archiveEntryFor(meta: MemoryMeta, reason: ArchiveReason): ArchiveEntry {
    return { topic: meta.topic, tags: meta.tags, archived_at: nowIso(), original_phase: meta.phase, reason };
  }

  private register(id: string): void {
    this.index.register(id);
    this.queries.touched(id);
  }

  private unregister(id: string): void {
    this.index.unregister(id);
    this.queries.touched(id);
  }
}

/** Creates `.claude/ltm/` and its .gitignore, or adds missing ignore lines to an existing one. Reads no memory. */
export function initStoreFiles(paths: StorePaths): void {
  fs.mkdirSync(paths.memories, { recursive: true });
  fs.mkdirSync(paths.archives, { recursive: true });
  ensureGitignore(paths);
}
