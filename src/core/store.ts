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
import { suggestTags } from './autotag';
import { DiskMirror, type LoadedFile } from './diskMirror';
import type { FileRecord } from './loadedFile';
import { LtmError, invalidInput, notFound } from './errors';
import { selectEvictionBatch } from './eviction';
import { readTextIfExists, writeFileAtomic } from './files';
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
  isMemoryId,
  type ArchiveEntry,
  type ArchiveReason,
  type MemoryMeta,
  type StoreConfig,
} from './model';
import { MemoryRecordCache } from './memoryRecords';
import { withImportance, type Importance, type PriorityBreakdown } from './priority';
import { redactSecrets } from './secrets';
import { integritySnapshot, repairProblems } from './repair';
import { StatsWriter } from './statsWriter';
import { StoreQueries } from './storeQueries';
import { USAGE_KINDS, isDemotionCandidate, isListSort, LIST_SORTS, usageOf, type UsageKind } from './usage';
import { GITIGNORE_LINES, GITIGNORE_TEXT, storePaths, type StorePaths, type StoreState } from './storeFiles';
import { prepareInput, rejectUnpairedSurrogates } from './storeInput';
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
  EvictionResult,
  FixResult,
  ForgetResult,
  ListFilter,
  ListResult,
  MemoryView,
  OpenOptions,
  SearchOptions,
  SearchResultItem,
  StatusResult,
  StoreInput,
  StoreResult,
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
  }

  /** Opens a project's store. Reads everything and writes nothing (see flushCaches). */
  static open(projectDir: string, options: OpenOptions = {}): MemoryStore {
    const store = new MemoryStore(projectDir, options);
    store.records.load();
    store.refresh();
    return store;
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
    const { max_memories, memories_to_load, eviction_batch_size } = this.mirror.state.config;
    return { max_memories, memories_to_load, eviction_batch_size };
  }

  get sessionCount(): number {
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
    if (filter.sort !== undefined && !isListSort(filter.sort)) throw invalidInput(`sort must be ${LIST_SORTS.join(', ')}`);
    return this.queries.list(filter, offset, limit);
  }

  /** IDs of memories that live only in archives/. */
  archivedIds(): string[] {
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
    return this.queries.rankedPage(0, limit, Math.max(session, this.mirror.state.session_count));
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
    return [...ids].map((id) => this.queries.view(id, sessionCount));
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
   * The memories worth offering with a text (a person's prompt, a tool's
   * error), most relevant first, leaving out `exclude` (already offered in the
   * session): none when the text is too short or nothing matches it enough.
   * Reading them does not count as an access; the caller counts what it offers.
   */
  relevantTo(text: string, options: { limit?: number; exclude?: ReadonlySet<string>; gate?: RelevanceGate } = {}): OfferedMemory[] {
    this.refresh();
    if (!hasEnoughWords(text)) return [];
    const ids = this.queries.relevantTo(text, options.limit ?? DEFAULT_PROMPT_MEMORIES, options.exclude ?? new Set(), options.gate ?? DEFAULT_RELEVANCE_GATE);
    return ids.map((id) => {
      const view = this.queries.view(id);
      return { view, matched: matchedWords(text, view) };
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
    const offers: OfferedMemory[] = [];
    for (const c of candidates) {
      if (options.exclude?.has(c.id)) continue;
      const view = this.queries.view(c.id);
      if (!mentionsFile(view, relative.startsWith('..') ? '' : relative, fileName)) continue;
      offers.push({ view, matched: [relative.startsWith('..') ? fileName : relative] });
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

  status(): StatusResult {
    this.refresh();
    const byPhase = { full: 0, hint: 0, abstract: 0 };
    let demotionCandidates = 0;
    for (const id of this.activeIds()) {
      const memory = this.mirror.files.get(id)!.memory;
      if (memory.phase === 0) byPhase.full++;
      else if (memory.phase === 1) byPhase.hint++;
      else byPhase.abstract++;
      if (isDemotionCandidate(usageOf(this.mirror.stats.get(id)), memory.tags)) demotionCandidates++;
    }
    return {
      total_memories: byPhase.full + byPhase.hint + byPhase.abstract,
      by_phase: byPhase,
      total_archived: this.archivedIds().length,
      session_count: this.mirror.state.session_count,
      last_eviction: this.mirror.state.last_eviction,
      storage_size_bytes: this.mirror.storageSize(),
      config: this.config,
      store_path: this.paths.root,
      exists: this.exists(),
      invalid_files: this.mirror.invalidFiles.size,
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

  async store(input: StoreInput): Promise<StoreResult> {
    const prepared = prepareInput(input);
    this.init();
    return this.mutate(() => {
      const id = this.newId();
      const createdAt = nowIso();
      const session = input.session ?? this.mirror.state.session_count;
      let tags = prepared.tags;
      if (input.autoTag && tags.length === 0) tags = suggestTags(`${prepared.topic}\n${prepared.content}`);
      const raw = renderNewMemoryFile({
        id,
        topic: prepared.topic,
        tags,
        phase: 0,
        difficulty: prepared.difficulty ?? 0.5,
        created_at: createdAt,
        created_session: session,
        summary: prepared.summary,
        content: prepared.content,
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
      this.statsWriter.write();
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
    this.mirror.refresh(options);
  }

  /** A single memory's file is always checked, so a read sees a hand edit at once. */
  private refreshOne(id: string): void {
    this.mirror.refreshOne(id);
  }

  /** Saves what was parsed and indexed since opening, so the next process opens and searches fast. */
  flushCaches(): void {
    if (!this.exists()) return;
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
  const existing = readTextIfExists(paths.gitignore);
  if (existing === null) {
    writeFileAtomic(paths.gitignore, GITIGNORE_TEXT);
    return;
  }
  const lines = new Set(existing.split(/\r?\n/).map((l) => l.trim()));
  const missing = GITIGNORE_LINES.filter((l) => !lines.has(l));
  if (missing.length > 0) writeFileAtomic(paths.gitignore, `${existing.replace(/\n?$/, '\n')}${missing.join('\n')}\n`);
}
