/**
 * MemoryStore: one project's `.claude/ltm/` directory.
 *
 * The files are the truth. The store keeps a parsed copy of them and, before
 * every operation, looks for changes made by anyone else (another process, a
 * hand edit, a git checkout): cheap signatures of the JSON files and of the
 * memories/ directory, plus an optional watcher for edits in place. Writers
 * hold a cross-process lock, re-read what changed, then write atomically.
 * Opening or reading a store never writes anything a person shares.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { suggestTags } from './autotag';
import { LtmError, invalidInput, notFound } from './errors';
import { selectEvictionBatch } from './eviction';
import {
  JsonMapChunks,
  TEMP_SUFFIX,
  listDir,
  readTextIfExists,
  jsonWithMaps,
  stringListMember,
  sameSignature,
  signatureOf,
  statSignature,
  toJsonText,
  writeFileAtomic,
  writeFileAtomicAsync,
  type FileSignature,
} from './files';
import { StoreLock } from './lock';
import {
  InvalidMemoryFile,
  normaliseTags,
  parseFrontmatter,
  parseMemoryFile,
  copyMeta,
  reduceToAbstract,
  reduceToHint,
  renderBody,
  renderNewMemoryFile,
  replaceBody,
  replaceSummary,
  splitFrontmatter,
  summaryProblem,
  deriveSummary,
  updateFrontmatter,
} from './memoryFile';
import {
  DEFAULT_LIST_LIMIT,
  DEFAULT_SEARCH_LIMIT,
  MEMORY_ID_FORMAT,
  MEMORY_ID_HEX_DIGITS,
  MEMORY_ID_PREFIX,
  isMemoryId,
  type Phase,
  type ArchiveEntry,
  type ArchiveReason,
  type Memory,
  type MemoryMeta,
  type MemoryStats,
  type StoreConfig,
} from './model';
import { importanceOf, priorityBreakdown, priorityScore, roundScore, withImportance, type Importance, type PriorityBreakdown, type PriorityInputs } from './priority';
import { redactSecrets, type Redaction } from './secrets';
import { MemorySearchIndex, RELEVANCE_WEIGHT, blendedScore } from './search';
import { RankingTable, compareRanked, type RankedEntry } from './ranking';
import {
  GITIGNORE_LINES,
  GITIGNORE_TEXT,
  archiveIndexJson,
  indexEntryOf,
  readArchiveIndex,
  readIndexIds,
  readIndexEntries,
  readState,
  readStats,
  stateJson,
  statsEntryJson,
  storePaths,
  type ArchiveIndex,
  type JsonFileStatus,
  type StorePaths,
  type StoreState,
} from './storeFiles';
import { checkIntegrity, type IntegrityReport } from './integrity';

/** A memory file as loaded: its parsed form, exact text and version. */
interface LoadedFile {
  memory: Memory;
  raw: string;
  signature: FileSignature;
}

/** A file in memories/ that cannot be a memory, and why. */
export interface InvalidFile {
  name: string;
  reason: string;
  /** Set when the file is a valid memory whose frontmatter ID is not its file name. */
  claimedId?: string;
}

/** A memory with its volatile data; phase 3 for archived memories listed with list({ phase: 3 }). */
export interface MemoryView extends Omit<Memory, 'phase'> {
  phase: Phase;
  priority: number;
  access_count: number;
  accessed_at: string;
  last_session: number;
}

export interface ListFilter {
  phase?: number;
  tag?: string;
  keyword?: string;
  offset?: number;
  limit?: number;
}

export interface ListResult {
  memories: MemoryView[];
  total: number;
  has_more: boolean;
}

export type SearchScope = 'active' | 'archives' | 'all';

export interface SearchOptions {
  limit?: number;
  tag?: string;
  scope?: SearchScope;
}

export interface SearchResultItem {
  id: string;
  topic: string;
  summary: string;
  tags: string[];
  phase: number;
  priority: number;
  score: number;
  archived: boolean;
}

export interface StoreInput {
  topic: string;
  content: string;
  summary?: string;
  tags?: readonly string[];
  autoTag?: boolean;
  difficulty?: number;
  /** Session number to record as created_session; defaults to the store's session count. */
  session?: number;
}

export interface StoreResult {
  memory: MemoryView;
  redactions: Redaction[];
}

export interface ForgetResult {
  id: string;
  topic: string;
  archived: boolean;
  purged: boolean;
}

export interface ArchivedMemory extends Memory {
  entry: ArchiveEntry | null;
  /** True while the memory is active in a reduced phase (its archive holds the full text). */
  active: boolean;
}

export interface EvictionStep {
  id: string;
  topic: string;
  from: number;
  to: number;
}

export interface EvictionResult {
  ran: boolean;
  before: number;
  after: number;
  max_memories: number;
  steps: EvictionStep[];
}

export interface FixResult {
  actions: string[];
  report: IntegrityReport;
}

export interface StatusResult {
  total_memories: number;
  by_phase: { full: number; hint: number; abstract: number };
  total_archived: number;
  session_count: number;
  last_eviction: string | null;
  storage_size_bytes: number;
  config: StoreConfig;
  store_path: string;
  exists: boolean;
  invalid_files: number;
}

export interface OpenOptions {
  /** Watch memories/ for edits made in place (editors that do not rename). For long-lived hosts. */
  watch?: boolean;
  /** Called after the store noticed changes made outside this process. */
  onExternalChange?: () => void;
}

const PARSE_CACHE_VERSION = 'ltm-frontmatter-1';

function nowIso(): string {
  return new Date().toISOString();
}

export class MemoryStore {
  readonly paths: StorePaths;
  private readonly lock: StoreLock;

  // --- what is on disk, as last seen -------------------------------------
  /** Valid memory files, by ID (file name = frontmatter ID). */
  private readonly files = new Map<string, LoadedFile>();
  /** Everything else in memories/ that looks like a memory file. */
  private readonly invalidFiles = new Map<string, InvalidFile>();
  /** Signatures of every *.md in memories/ as last read, by file name. */
  private readonly fileSignatures = new Map<string, FileSignature>();
  private memoriesDirSignature: FileSignature | null = null;
  private readonly dirtyNames = new Set<string>();

  private indexIds = new Set<string>();
  private indexStatus: JsonFileStatus = { kind: 'missing' };
  private indexSignature: FileSignature | null = null;
  private indexText: string | null = null;

  private stats = new Map<string, MemoryStats>();
  private statsStatus: JsonFileStatus = { kind: 'missing' };
  private statsSignature: FileSignature | null = null;

  private state: StoreState;
  private stateStatus: JsonFileStatus = { kind: 'missing' };
  private stateSignature: FileSignature | null = null;

  /**
   * state.json and stats.json while this process writes them without blocking
   * (under the lock): until the rename is done and its signature recorded, the
   * memory copy is newer than the disk, and refresh() must not read the file.
   */
  private readonly writesInFlight = new Set<string>();

  private archiveIndex: ArchiveIndex = { memories: new Map(), purged: new Map() };
  private archiveIndexStatus: JsonFileStatus = { kind: 'missing' };
  private archiveIndexSignature: FileSignature | null = null;
  private archiveFiles = new Set<string>();
  private archivesDirSignature: FileSignature | null = null;

  // --- derived ------------------------------------------------------------
  private searchIndex: MemorySearchIndex | null = null;
  private archiveSearchIndex: MemorySearchIndex | null = null;
  private readonly indexMembers = new JsonMapChunks<MemoryMeta>(indexEntryOf);
  private readonly statsMembers = new JsonMapChunks<MemoryStats>(statsEntryJson);
  private readonly parseCache = new Map<string, MemoryMeta>();
  private parseCacheMisses = 0;
  private watcher: fs.FSWatcher | null = null;
  private watchedIno = 0;

  private constructor(
    projectDir: string,
    private readonly options: OpenOptions,
  ) {
    this.paths = storePaths(projectDir);
    this.lock = new StoreLock(this.paths.root, this.paths.lock);
    this.state = readState(null).value;
  }

  /** Opens a project's store. Reads everything and writes nothing (see flushCaches). */
  static open(projectDir: string, options: OpenOptions = {}): MemoryStore {
    const store = new MemoryStore(projectDir, options);
    store.loadParseCache();
    store.refresh();
    return store;
  }

  /** True once `.claude/ltm/` exists. */
  exists(): boolean {
    return fs.existsSync(this.paths.root);
  }

  dispose(): void {
    this.watcher?.close();
    this.watcher = null;
  }

  // =========================================================================
  // Reading

  get config(): StoreConfig {
    const { max_memories, memories_to_load, eviction_batch_size } = this.state.config;
    return { max_memories, memories_to_load, eviction_batch_size };
  }

  get sessionCount(): number {
    return this.state.session_count;
  }

  /**
   * Active memories: every valid file in memories/. index.json is a cache of
   * them, never a filter: a valid file it does not list (another branch's
   * memory after a merge resolved with "ours" or "theirs") is a memory the
   * index has not learned about yet, not one to hide.
   */
  private activeIds(): string[] {
    return [...this.files.keys()];
  }

  private isActive(id: string): boolean {
    return this.files.has(id);
  }

  private indexUsable(): boolean {
    return this.indexStatus.kind === 'ok';
  }

  priorityOf(id: string): PriorityBreakdown {
    const file = this.files.get(id);
    if (!file) throw notFound(`no memory with ID ${id}`);
    return priorityBreakdown(this.priorityInputs(id, file.memory));
  }

  private priorityInputs(id: string, memory: Memory, sessionCount = this.state.session_count): PriorityInputs {
    return {
      difficulty: memory.difficulty,
      tags: memory.tags,
      stats: this.stats.get(id),
      created_session: memory.created_session,
      session_count: sessionCount,
    };
  }

  /** The priority as a rounded number, cheaply: for ranking many memories. */
  private score(id: string, memory: Memory, sessionCount?: number): number {
    return roundScore(priorityScore(this.priorityInputs(id, memory, sessionCount)));
  }

  private view(id: string, sessionCount?: number): MemoryView {
    const file = this.files.get(id)!;
    const stats = this.stats.get(id);
    return {
      ...file.memory,
      priority: this.score(id, file.memory, sessionCount),
      access_count: stats?.access_count ?? 0,
      accessed_at: stats?.accessed_at ?? file.memory.created_at,
      last_session: stats?.last_session ?? file.memory.created_session ?? 0,
    };
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
    if (filter.phase === 3) return this.listArchived(filter, offset, limit);
    const tag = filter.tag?.trim().toLowerCase();
    const keyword = filter.keyword?.trim().toLowerCase();
    // Rank on numbers first and build full views only for the page: a list of
    // 10,000 memories should not allocate 10,000 copies.
    const keep = offset + limit;
    // Unfiltered (session start, the first page): from the ranking table.
    if (filter.phase === undefined && !tag && !keyword) return this.rankedPage(offset, limit, this.state.session_count);
    // Filtered or long lists (the tree asks for all): rank the matching memories by number, then sort.
    const ranked: RankedEntry[] = [];
    for (const [id, file] of this.files) {
      const m = file.memory;
      if (filter.phase !== undefined && m.phase !== filter.phase) continue;
      if (tag && !m.tags.includes(tag)) continue;
      if (keyword && !m.topic.toLowerCase().includes(keyword)) continue;
      ranked.push({ id, priority: this.score(id, m), created_at: m.created_at });
    }
    const total = ranked.length;
    const top = ranked.sort(compareRanked).slice(0, keep);
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
    return [...this.archiveIndex.memories.keys()].filter((id) => !this.isActive(id) && this.archiveFiles.has(id));
  }

  private archivedView(id: string): MemoryView {
    const entry = this.archiveIndex.memories.get(id)!;
    return {
      id,
      topic: entry.topic,
      tags: entry.tags,
      phase: 3,
      difficulty: 0,
      created_at: '',
      created_session: null,
      phase_history: [],
      summary: '',
      content: '',
      hasSections: false,
      priority: 0,
      access_count: 0,
      accessed_at: entry.archived_at,
      last_session: 0,
    };
  }

  /** Reads a memory. Counts as an access unless `countAccess` is false. */
  async get(id: string, options: { countAccess?: boolean } = {}): Promise<MemoryView> {
    this.requireId(id);
    this.refreshOne(id);
    this.requireActive(id);
    if (options.countAccess === false) return this.view(id);
    return this.mutate(() => {
      this.requireActive(id);
      this.recordAccess([id]);
      this.writeStats();
      return this.view(id);
    });
  }

  /** Reads a memory without counting an access. */
  peek(id: string): MemoryView {
    this.requireId(id);
    this.refreshOne(id);
    this.requireActive(id);
    return this.view(id);
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
    return this.rankedPage(0, limit, Math.max(session, this.state.session_count));
  }

  private rankedPage(offset: number, limit: number, sessionCount: number): ListResult {
    this.syncRanking();
    const page = this.ranking
      .top(offset + limit, sessionCount)
      .slice(offset)
      .map((r) => this.view(r.id, sessionCount));
    return { memories: page, total: this.ranking.size, has_more: offset + page.length < this.ranking.size };
  }

  /** Ranked search: relevance blended with priority. */
  search(query: string, options: SearchOptions = {}): SearchResultItem[] {
    this.refresh();
    if (!query.trim()) throw invalidInput('the search query is empty');
    const limit = options.limit ?? DEFAULT_SEARCH_LIMIT;
    if (!Number.isInteger(limit) || limit < 1) throw invalidInput('limit must be a whole number ≥ 1');
    const scope = options.scope ?? 'active';
    const tag = options.tag?.trim().toLowerCase();
    const results: SearchResultItem[] = [];
    if (scope !== 'archives') {
      // Hits come by relevance, best first. Priority adds at most 1 − RELEVANCE_WEIGHT,
      // so once a hit cannot beat the current top `limit`, neither can any later one.
      const scored: { id: string; score: number; priority: number }[] = [];
      for (const hit of this.activeSearchIndex().search(query, (id) => this.isActive(id))) {
        const floor = scored.length >= limit ? scored[limit - 1]!.score : -1;
        if (hit.relevance * RELEVANCE_WEIGHT + (1 - RELEVANCE_WEIGHT) < floor) break;
        const memory = this.files.get(hit.id)!.memory;
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
        const m = this.files.get(id)!.memory;
        results.push({ id, topic: m.topic, summary: m.summary, tags: m.tags, phase: m.phase, priority, score, archived: false });
      }
    }
    if (scope !== 'active') {
      for (const hit of this.archivedSearchIndex().search(query)) {
        const archived = this.readArchive(hit.id);
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

  private activeSearchIndex(): MemorySearchIndex {
    if (!this.searchIndex) {
      this.searchIndex = new MemorySearchIndex();
      for (const file of this.files.values()) this.searchIndex.upsert(file.memory);
    }
    return this.searchIndex;
  }

  private archivedSearchIndex(): MemorySearchIndex {
    if (!this.archiveSearchIndex) {
      this.archiveSearchIndex = new MemorySearchIndex();
      for (const id of this.archivedIds()) {
        const archived = this.readArchive(id);
        if (archived) this.archiveSearchIndex.upsert(archived);
      }
    }
    return this.archiveSearchIndex;
  }

  /** An archived memory's full text: a removed memory, or the original of a reduced one. */
  getArchived(id: string): ArchivedMemory {
    this.requireId(id);
    this.refresh();
    const archived = this.readArchive(id);
    if (!archived) throw notFound(`no archive for ${id}`);
    return archived;
  }

  private readArchive(id: string): ArchivedMemory | null {
    const raw = readTextIfExists(path.join(this.paths.archives, `${id}.md`));
    if (raw === null) return null;
    const entry = this.archiveIndex.memories.get(id) ?? null;
    try {
      const { memory } = parseMemoryFile(raw, (fm) => this.parseFrontmatterCached(fm));
      return { ...memory, id, entry, active: this.isActive(id) };
    } catch (error) {
      if (!(error instanceof InvalidMemoryFile)) throw error;
      return null;
    }
  }

  status(): StatusResult {
    this.refresh();
    const byPhase = { full: 0, hint: 0, abstract: 0 };
    for (const id of this.activeIds()) {
      const phase = this.files.get(id)!.memory.phase;
      if (phase === 0) byPhase.full++;
      else if (phase === 1) byPhase.hint++;
      else byPhase.abstract++;
    }
    return {
      total_memories: byPhase.full + byPhase.hint + byPhase.abstract,
      by_phase: byPhase,
      total_archived: this.archivedIds().length,
      session_count: this.state.session_count,
      last_eviction: this.state.last_eviction,
      storage_size_bytes: this.storageSize(),
      config: this.config,
      store_path: this.paths.root,
      exists: this.exists(),
      invalid_files: this.invalidFiles.size,
    };
  }

  private storageSize(): number {
    let total = 0;
    for (const sig of this.fileSignatures.values()) total += sig.size;
    for (const id of this.archiveFiles) total += statSignature(path.join(this.paths.archives, `${id}.md`))?.size ?? 0;
    for (const sig of [this.indexSignature, this.statsSignature, this.stateSignature, this.archiveIndexSignature]) {
      total += sig?.size ?? 0;
    }
    return total;
  }

  /** Reports every integrity problem; changes nothing. */
  check(): IntegrityReport {
    this.refresh({ full: true });
    return checkIntegrity(this.snapshotForCheck());
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
      const session = input.session ?? this.state.session_count;
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
      this.writeMemoryFile(id, raw);
      this.register(id);
      this.setStats(id, { access_count: 0, accessed_at: createdAt, last_session: session, priority: 0 });
      this.updateStoredPriority(id);
      this.writeIndex();
      this.writeStats();
      return { memory: this.view(id), redactions: prepared.redactions };
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
      const file = this.files.get(id)!;
      const raw = replaceSummary(file.raw, redacted.text);
      if (raw !== file.raw) this.writeMemoryFile(id, raw);
      return this.view(id);
    });
  }

  /** Removes a memory from the active set, keeping its text in archives/ unless `purge`. */
  async forget(id: string, options: { purge?: boolean } = {}): Promise<ForgetResult> {
    this.requireId(id);
    return this.mutate(() => {
      this.refreshOne(id);
      const active = this.isActive(id);
      const archived = this.archiveIndex.memories.has(id) && this.archiveFiles.has(id);
      if (!active && !(options.purge && (archived || this.archiveFiles.has(id)))) {
        throw notFound(
          archived ? `${id} is already archived (use purge to delete its text for good)` : `no memory with ID ${id}`,
        );
      }
      const topic = active ? this.files.get(id)!.memory.topic : (this.archiveIndex.memories.get(id)?.topic ?? '');
      if (options.purge) {
        if (active) this.dropFromParseCache(this.files.get(id)!.raw);
        this.archiveIndex.memories.delete(id);
        this.archiveIndex.purged.set(id, { purged_at: nowIso() });
        this.writeArchiveIndex();
        this.deleteArchiveFile(id);
        if (active) this.deleteMemoryFile(id);
      } else {
        const file = this.files.get(id)!;
        this.ensureArchived(id, file);
        this.archiveIndex.memories.set(id, this.archiveEntryFor(file.memory, 'forgotten'));
        this.writeArchiveIndex();
        this.deleteMemoryFile(id);
      }
      this.unregister(id);
      this.setStats(id, undefined);
      this.writeIndex();
      this.writeStats();
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
      const archiveRaw = readTextIfExists(path.join(this.paths.archives, `${id}.md`));
      if (archiveRaw === null) {
        throw notFound(this.isActive(id) ? `${id} is not reduced: it has no archive to restore` : `no archive for ${id}`);
      }
      let meta: MemoryMeta;
      try {
        meta = parseMemoryFile(archiveRaw, (fm) => this.parseFrontmatterCached(fm)).memory;
      } catch (error) {
        if (error instanceof InvalidMemoryFile) throw new LtmError('invalid_input', `the archive of ${id} is unreadable: ${error.reason}`);
        throw error;
      }
      // The archive was written before the first reduction; the history since is in the reduced file, if any.
      const entry = this.archiveIndex.memories.get(id);
      const earlier = this.files.get(id)?.memory.phase_history ??
        (entry ? [...meta.phase_history, { phase: 3, at: entry.archived_at, event: entry.reason === 'eviction' ? 'evicted' : entry.reason }] : meta.phase_history);
      const history = [...earlier, { phase: 0, at: nowIso(), event: 'restored' }];
      const changes: Record<string, unknown> = { phase: 0, restored_from_archive: true, phase_history: history };
      if (meta.id !== id) changes.id = id;
      if (options.importance) {
        changes.tags = withImportance(meta.tags, options.importance);
      }
      this.writeMemoryFile(id, updateFrontmatter(archiveRaw, changes));
      this.archiveIndex.memories.delete(id);
      this.writeArchiveIndex();
      this.register(id);
      this.setStats(id, { access_count: 0, accessed_at: nowIso(), last_session: this.state.session_count, priority: 0 });
      this.updateStoredPriority(id);
      this.writeIndex();
      this.writeStats();
      return this.view(id);
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
      this.stats.forEach((s, id) => {
        if (ended.has(s.last_session) && this.isActive(id)) this.updateStoredPriority(id);
      });
      this.writeStats();
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
    this.syncRanking();
    const count = this.ranking.size;
    const result: EvictionResult = { ran: false, before: count, after: count, max_memories: config.max_memories, steps: [] };
    if (count <= config.max_memories) return result;
    const active = this.activeIds();
    const batch = selectEvictionBatch(
      active.map((id) => {
        const file = this.files.get(id)!;
        return { id, priority: this.score(id, file.memory), importance: importanceOf(file.memory.tags), created_at: file.memory.created_at };
      }),
      config,
    );
    if (batch.length === 0) return result;
    // What is archived must be the file as it is now, hand edits included.
    for (const c of batch) this.refreshOne(c.id);
    const files = batch.filter((c) => this.isActive(c.id)).map((c) => ({ id: c.id, file: this.files.get(c.id)! }));
    // 1. Every full text is safe in archives/ before anything is reduced or removed.
    for (const { id, file } of files) {
      if (file.memory.phase === 0) this.writeArchiveFile(id, file.raw);
      else this.ensureArchived(id, file);
    }
    // 2. Memories about to leave memories/ are listed as archived first.
    const leaving = files.filter(({ file }) => file.memory.phase === 2);
    for (const { file } of leaving) this.archiveIndex.memories.set(file.memory.id, this.archiveEntryFor(file.memory, 'eviction'));
    if (leaving.length > 0) this.writeArchiveIndex();
    // 3. Reduce or remove.
    for (const { id, file } of files) {
      const { memory } = file;
      const from = memory.phase;
      if (from === 2) {
        this.deleteMemoryFile(id);
        this.unregister(id);
        this.setStats(id, undefined);
      } else {
        const content = from === 0 ? reduceToHint(memory.content) : reduceToAbstract(memory.content, memory.summary);
        const history = [...memory.phase_history, { phase: from + 1, at: nowIso(), event: 'evicted' }];
        const reduced = replaceBody(updateFrontmatter(file.raw, { phase: from + 1, phase_history: history }), renderBody(memory.summary, content));
        this.writeMemoryFile(id, reduced);
      }
      result.steps.push({ id, topic: memory.topic, from, to: from + 1 });
    }
    this.state.last_eviction = nowIso();
    this.writeIndex();
    this.writeStats();
    this.writeState();
    result.ran = true;
    result.after = this.activeIds().length;
    return result;
  }

  /** Repairs everything check reports, in one pass; a check afterwards is healthy. */
  async fix(options: { cleanArchives?: boolean } = {}): Promise<FixResult> {
    this.init();
    return this.mutate(() => {
      this.refresh({ full: true });
      const report = checkIntegrity(this.snapshotForCheck());
      const actions: string[] = [];
      for (const problem of report.problems) {
        switch (problem.kind) {
          case 'temp_file':
            fs.rmSync(problem.file!, { force: true });
            actions.push(`Removed leftover temporary file ${path.basename(problem.file!)}`);
            break;
          case 'invalid_file': {
            const target = this.quarantine(path.join(this.paths.memories, problem.file!));
            this.forgetFileName(problem.file!);
            actions.push(`Moved invalid file ${problem.file} to ${path.relative(this.paths.root, target)} (${problem.detail})`);
            break;
          }
          case 'duplicate_id':
          case 'id_mismatch': {
            const name = problem.file!;
            const raw = readTextIfExists(path.join(this.paths.memories, name));
            if (raw === null) break;
            const newId = this.newId();
            this.writeMemoryFile(newId, updateFrontmatter(raw, { id: newId }));
            this.register(newId);
            fs.rmSync(path.join(this.paths.memories, name), { force: true });
            this.forgetFileName(name);
            actions.push(`Gave the copy ${name} (claiming ${problem.id}) its own ID ${newId}`);
            break;
          }
          case 'not_indexed':
            this.register(problem.id!);
            actions.push(`Added ${problem.id} to index.json (a valid memory it did not list)`);
            break;
          case 'missing_file':
            this.unregister(problem.id!);
            actions.push(`Removed index entry ${problem.id} (its file is missing)`);
            break;
          case 'missing_full_text': {
            const file = this.files.get(problem.id!);
            if (file) this.writeArchiveFile(problem.id!, file.raw);
            actions.push(`Archived the current text of ${problem.id} (its full text was never archived)`);
            break;
          }
          case 'archive_entry_active':
            this.archiveIndex.memories.delete(problem.id!);
            actions.push(`Removed archive-index entry ${problem.id} (the memory is active)`);
            break;
          case 'archive_entry_without_file':
            this.archiveIndex.memories.delete(problem.id!);
            actions.push(`Removed archive-index entry ${problem.id} (its archive file is missing)`);
            break;
          case 'orphaned_archive': {
            const id = problem.id!;
            if (options.cleanArchives) {
              this.deleteArchiveFile(id);
              this.archiveIndex.purged.set(id, { purged_at: nowIso() });
              actions.push(`Deleted orphaned archive ${id}.md`);
            } else {
              const archived = this.readArchive(id);
              this.archiveIndex.memories.set(id, {
                topic: archived?.topic ?? '',
                tags: archived?.tags ?? [],
                archived_at: nowIso(),
                original_phase: archived?.phase ?? 0,
                reason: 'recovered',
              });
              actions.push(`Listed orphaned archive ${id}.md as an archived memory (restorable)`);
            }
            break;
          }
          case 'orphaned_stats':
            actions.push(`Removed orphaned stats entry ${problem.id}`);
            break;
          case 'index_stale':
          case 'index_conflicted':
          case 'index_unreadable':
          case 'index_missing':
            actions.push(`Rebuilt index.json from memories/ (${problem.detail})`);
            break;
          case 'archive_index_unreadable':
            actions.push(`Rebuilt archive_index.json from archives/ (${problem.detail})`);
            break;
          case 'stats_unreadable':
            actions.push(`Rewrote stats.json (${problem.detail}); access counts start again`);
            break;
          case 'state_unreadable': {
            const target = this.quarantine(this.paths.state);
            actions.push(`Moved unreadable state.json to ${path.relative(this.paths.root, target)} and wrote a new one`);
            break;
          }
        }
      }
      // One pass: everything below is derived from the repaired set of memories.
      if (!this.indexUsable()) this.replaceIndexIds(new Set(this.files.keys()));
      for (const id of this.indexIds) if (!this.files.has(id)) this.unregister(id);
      for (const id of [...this.stats.keys()]) if (!this.isActive(id)) this.setStats(id, undefined);
      this.indexStatus = { kind: 'ok' };
      this.writeIndex();
      this.writeStats();
      this.writeArchiveIndex();
      if (report.problems.some((p) => p.kind === 'state_unreadable')) this.writeState();
      return { actions, report: checkIntegrity(this.snapshotForCheck()) };
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
      const result = change(this.state);
      // Hooks call this while Claude Code waits for their next answers: the write leaves the event loop free.
      await this.writeStateAsync(options.durable);
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
    return this.state;
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
        this.recordAccess(
          ids.filter((id) => this.isActive(id)),
          session < 0 ? this.state.session_count : session,
        );
      }
      // Session starts record their injected memories here: see updateState.
      await this.writeStatsAsync();
    });
  }

  /** Active memories whose last access was in the given session. */
  accessedInSession(sessionNumber: number): string[] {
    this.refresh();
    const ids: string[] = [];
    this.stats.forEach((s, id) => {
      if (s.last_session === sessionNumber && this.isActive(id)) ids.push(id);
    });
    return ids;
  }

  /** Recomputes and stores the priority of the given memories. */
  async refreshPriorities(ids: readonly string[]): Promise<void> {
    await this.mutate(() => {
      for (const id of ids) if (this.isActive(id)) this.updateStoredPriority(id);
      this.writeStats();
    });
  }

  private recordAccess(ids: readonly string[], session = this.state.session_count): void {
    const at = nowIso();
    for (const id of ids) {
      const old = this.stats.get(id);
      this.setStats(id, {
        access_count: (old?.access_count ?? 0) + 1,
        accessed_at: at,
        last_session: Math.max(session, old?.last_session ?? 0),
        priority: old?.priority ?? 0,
      });
      this.updateStoredPriority(id);
    }
  }

  private updateStoredPriority(id: string): void {
    const stats = this.stats.get(id);
    if (!stats) return;
    const priority = this.score(id, this.files.get(id)!.memory);
    if (priority === stats.priority) return;
    stats.priority = priority;
    this.statsMembers.invalidate(id);
    this.statsDirty.add(id);
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
    if (this.archiveIndex.memories.has(id)) {
      throw notFound(`${id} is archived; restore it first (ltm restore ${id})`);
    }
    throw notFound(`no memory with ID ${id}`);
  }

  /** (Re)starts the watcher: memories/ may appear later, or be deleted and made anew. */
  private keepWatching(): void {
    if (this.watcher && statSignature(this.paths.memories)?.ino === this.watchedIno) return;
    this.watcher?.close();
    this.watcher = null;
    this.memoriesDirSignature = null;
    this.startWatching();
  }

  private startWatching(): void {
    const dir = statSignature(this.paths.memories);
    if (!dir) return;
    try {
      this.watchedIno = dir.ino;
      this.watcher = fs.watch(this.paths.memories, (_event, name) => {
        // Temporary files are this or another writer's atomic writes; the rename that
        // follows reports the memory file itself.
        if (typeof name === 'string' && name.endsWith(TEMP_SUFFIX)) return;
        if (typeof name === 'string' && name.endsWith('.md')) this.dirtyNames.add(name);
        else this.memoriesDirSignature = null;
        this.options.onExternalChange?.();
      });
      this.watcher.on('error', () => {
        this.watcher?.close();
        this.watcher = null;
      });
    } catch {
      this.watcher = null;
    }
  }

  /**
   * Brings the in-memory copy up to date with the disk. Cheap when nothing
   * changed; `full` also stats every memory file, which finds edits made in
   * place when no watcher reports them.
   */
  refresh(options: { full?: boolean } = {}): void {
    if (this.options.watch) this.keepWatching();
    if (options.full) this.memoriesDirSignature = null;
    this.refreshMemoryFiles();
    this.refreshJsonFiles();
    this.refreshArchiveFiles();
  }

  /** A single memory's file is always checked, so a read sees a hand edit at once. */
  private refreshOne(id: string): void {
    this.refresh();
    const name = `${id}.md`;
    const sig = statSignature(path.join(this.paths.memories, name));
    if (!sameSignature(sig, this.fileSignatures.get(name) ?? null)) this.loadFile(name, sig);
  }

  private refreshMemoryFiles(): void {
    const dirSig = statSignature(this.paths.memories);
    if (!sameSignature(dirSig, this.memoriesDirSignature)) {
      this.memoriesDirSignature = dirSig;
      this.dirtyNames.clear();
      const names = new Set(listDir(this.paths.memories).filter((n) => n.endsWith('.md')));
      for (const name of [...this.fileSignatures.keys()]) if (!names.has(name)) this.loadFile(name, null);
      for (const name of names) {
        const sig = statSignature(path.join(this.paths.memories, name));
        if (!sameSignature(sig, this.fileSignatures.get(name) ?? null)) this.loadFile(name, sig);
      }
      return;
    }
    if (this.dirtyNames.size > 0) {
      const names = [...this.dirtyNames];
      this.dirtyNames.clear();
      for (const name of names) {
        const sig = statSignature(path.join(this.paths.memories, name));
        if (!sameSignature(sig, this.fileSignatures.get(name) ?? null)) this.loadFile(name, sig);
      }
    }
  }

  /** (Re)reads one file of memories/, or drops it when `sig` is null (gone). */
  private loadFile(name: string, sig: FileSignature | null): void {
    const stem = name.slice(0, -3);
    const previous = this.files.get(stem);
    this.invalidFiles.delete(name);
    if (previous) this.files.delete(stem);
    if (sig === null) {
      this.fileSignatures.delete(name);
      this.afterMemoryChange(stem, previous, undefined);
      return;
    }
    let raw: string;
    try {
      raw = fs.readFileSync(path.join(this.paths.memories, name), 'utf8');
    } catch {
      this.fileSignatures.delete(name);
      this.afterMemoryChange(stem, previous, undefined);
      return;
    }
    this.fileSignatures.set(name, sig);
    if (!isMemoryId(stem)) {
      this.invalidFiles.set(name, { name, reason: `the file name is not a memory ID (${MEMORY_ID_FORMAT})` });
      this.afterMemoryChange(stem, previous, undefined);
      return;
    }
    try {
      const { memory } = parseMemoryFile(raw, (fm) => this.parseFrontmatterCached(fm));
      if (memory.id !== stem) {
        this.invalidFiles.set(name, { name, reason: `its frontmatter ID ${memory.id} is not its file name`, claimedId: memory.id });
        this.afterMemoryChange(stem, previous, undefined);
        return;
      }
      const loaded: LoadedFile = { memory, raw, signature: sig };
      this.files.set(stem, loaded);
      this.afterMemoryChange(stem, previous, loaded);
    } catch (error) {
      if (!(error instanceof InvalidMemoryFile)) throw error;
      this.invalidFiles.set(name, { name, reason: error.reason });
      this.afterMemoryChange(stem, previous, undefined);
    }
  }

  private afterMemoryChange(id: string, previous: LoadedFile | undefined, next: LoadedFile | undefined): void {
    if (previous?.raw === next?.raw) return;
    this.indexDirty.add(id);
    this.rankingDirty.add(id);
    this.indexMembers.invalidate(id);
    if (next) this.searchIndex?.upsert(next.memory);
    else this.searchIndex?.remove(id);
  }

  private refreshJsonFiles(): void {
    const indexSig = statSignature(this.paths.index);
    if (!sameSignature(indexSig, this.indexSignature) || (indexSig === null && this.indexStatus.kind !== 'missing')) {
      this.indexSignature = indexSig;
      this.indexText = readTextIfExists(this.paths.index);
      const read = readIndexIds(this.indexText);
      this.replaceIndexIds(read.value);
      this.indexStatus = read.status;
    }
    const statsSig = this.writesInFlight.has(this.paths.stats) ? this.statsSignature : statSignature(this.paths.stats);
    if (!sameSignature(statsSig, this.statsSignature) || (statsSig === null && this.statsStatus.kind !== 'missing')) {
      this.statsSignature = statsSig;
      const read = readStats(readTextIfExists(this.paths.stats));
      this.stats = read.value;
      this.statsNeedsFullSync = true;
      this.rankingStale = true;
      this.statsStatus = read.status;
      this.statsMembers.clear();
    }
    const stateSig = this.writesInFlight.has(this.paths.state) ? this.stateSignature : statSignature(this.paths.state);
    if (!sameSignature(stateSig, this.stateSignature) || (stateSig === null && this.stateStatus.kind !== 'missing')) {
      this.stateSignature = stateSig;
      const read = readState(readTextIfExists(this.paths.state));
      this.state = read.value;
      this.stateStatus = read.status;
    }
    const archiveSig = statSignature(this.paths.archiveIndex);
    if (
      !sameSignature(archiveSig, this.archiveIndexSignature) ||
      (archiveSig === null && this.archiveIndexStatus.kind !== 'missing')
    ) {
      this.archiveIndexSignature = archiveSig;
      const read = readArchiveIndex(readTextIfExists(this.paths.archiveIndex));
      this.archiveIndex = read.value;
      this.archiveIndexStatus = read.status;
      this.archiveSearchIndex = null;
      if (read.status.kind !== 'ok') this.rebuildArchiveIndex(read.status.kind === 'missing' ? 'legacy' : 'recovered');
    }
  }

  private refreshArchiveFiles(): void {
    const sig = statSignature(this.paths.archives);
    if (sameSignature(sig, this.archivesDirSignature)) return;
    this.archivesDirSignature = sig;
    this.archiveFiles = new Set(
      listDir(this.paths.archives)
        .filter((n) => n.endsWith('.md') && isMemoryId(n.slice(0, -3)))
        .map((n) => n.slice(0, -3)),
    );
    this.archiveSearchIndex = null;
    if (this.archiveIndexStatus.kind !== 'ok') this.rebuildArchiveIndex(this.archiveIndexStatus.kind === 'missing' ? 'legacy' : 'recovered');
  }

  /**
   * Without a usable archive_index.json (a store written by the reference
   * implementation, or a damaged file), every archive of a memory that is not
   * active is an archived memory: none of them is an orphan to delete.
   */
  private rebuildArchiveIndex(reason: ArchiveReason): void {
    for (const id of this.archiveFiles) {
      if (this.archiveIndex.memories.has(id) || this.files.has(id)) continue;
      const file = path.join(this.paths.archives, `${id}.md`);
      const archived = this.readArchive(id);
      this.archiveIndex.memories.set(id, {
        topic: archived?.topic ?? '',
        tags: archived?.tags ?? [],
        archived_at: new Date(statSignature(file)?.mtimeMs ?? Date.now()).toISOString(),
        original_phase: 2,
        reason,
      });
    }
  }

  private parseFrontmatterCached(frontmatter: string): MemoryMeta {
    const cached = this.parseCache.get(frontmatter);
    if (cached) return copyMeta(cached);
    const meta = parseFrontmatter(frontmatter);
    this.parseCache.set(frontmatter, meta);
    this.parseCacheMisses++;
    return copyMeta(meta);
  }

  /**
   * YAML parsing costs ~65 µs a file; a persisted map from frontmatter text to
   * its parsed fields makes opening 10,000 memories fast. Parsing is a pure
   * function of the text, so an entry can never be stale.
   */
  private loadParseCache(): void {
    const text = readTextIfExists(this.paths.parseCache);
    if (!text) return;
    try {
      const data = JSON.parse(text) as { version?: string; entries?: [string, MemoryMeta][] };
      if (data.version !== PARSE_CACHE_VERSION || !Array.isArray(data.entries)) return;
      for (const entry of data.entries) {
        if (Array.isArray(entry) && typeof entry[0] === 'string' && entry[1] && typeof entry[1] === 'object') {
          this.parseCache.set(entry[0], entry[1]);
        }
      }
    } catch {
      // A damaged cache is only a slower open.
    }
  }

  private saveParseCache(): void {
    if (this.parseCacheMisses === 0 || !this.exists()) return;
    const live = new Map<string, MemoryMeta>();
    for (const file of this.files.values()) {
      const fm = splitFrontmatter(file.raw).frontmatter;
      const meta = this.parseCache.get(fm);
      if (meta) live.set(fm, meta);
    }
    try {
      writeFileAtomic(this.paths.parseCache, JSON.stringify({ version: PARSE_CACHE_VERSION, entries: [...live] }), { durable: false });
      this.parseCacheMisses = 0;
    } catch {
      // Read-only checkouts still open; they only open more slowly.
    }
  }

  /** Saves what was parsed since opening, so the next process opens fast. */
  flushCaches(): void {
    this.saveParseCache();
  }

  /** A purged memory's text must not survive anywhere, the git-ignored cache included. */
  private dropFromParseCache(raw: string): void {
    try {
      this.parseCache.delete(splitFrontmatter(raw).frontmatter);
    } catch {
      return;
    }
    this.parseCacheMisses++;
    this.saveParseCache();
  }

  // =========================================================================
  // Internals: writing files (always under the lock)

  private newId(): string {
    for (;;) {
      const id = `${MEMORY_ID_PREFIX}${randomBytes(MEMORY_ID_HEX_DIGITS / 2).toString('hex')}`;
      if (
        !this.files.has(id) &&
        !this.fileSignatures.has(`${id}.md`) &&
        !this.archiveFiles.has(id) &&
        !this.archiveIndex.memories.has(id) &&
        !this.archiveIndex.purged.has(id) &&
        !this.indexIds.has(id)
      ) {
        return id;
      }
    }
  }

  private writeMemoryFile(id: string, raw: string): void {
    const name = `${id}.md`;
    const file = path.join(this.paths.memories, name);
    writeFileAtomic(file, raw);
    const sig = signatureOf(fs.statSync(file));
    const { memory } = parseMemoryFile(raw, (fm) => this.parseFrontmatterCached(fm));
    const previous = this.files.get(id);
    const loaded: LoadedFile = { memory, raw, signature: sig };
    this.files.set(id, loaded);
    this.fileSignatures.set(name, sig);
    this.invalidFiles.delete(name);
    this.afterMemoryChange(id, previous, loaded);
    this.noteOwnDirectoryChange();
  }

  private deleteMemoryFile(id: string): void {
    fs.rmSync(path.join(this.paths.memories, `${id}.md`), { force: true });
    this.forgetFileName(`${id}.md`);
  }

  private forgetFileName(name: string): void {
    const id = name.slice(0, -3);
    const previous = this.files.get(id);
    this.files.delete(id);
    this.fileSignatures.delete(name);
    this.invalidFiles.delete(name);
    this.afterMemoryChange(id, previous, undefined);
    this.noteOwnDirectoryChange();
  }

  /** Our own writes change memories/; remembering its new signature avoids a rescan. */
  private noteOwnDirectoryChange(): void {
    this.memoriesDirSignature = statSignature(this.paths.memories);
  }

  private writeArchiveFile(id: string, raw: string): void {
    fs.mkdirSync(this.paths.archives, { recursive: true });
    writeFileAtomic(path.join(this.paths.archives, `${id}.md`), raw);
    this.archiveFiles.add(id);
    this.archivesDirSignature = statSignature(this.paths.archives);
    this.archiveSearchIndex = null;
  }

  private deleteArchiveFile(id: string): void {
    fs.rmSync(path.join(this.paths.archives, `${id}.md`), { force: true });
    this.archiveFiles.delete(id);
    this.archivesDirSignature = statSignature(this.paths.archives);
    this.archiveSearchIndex = null;
  }

  /**
   * Makes sure archives/ holds the memory's fullest text. A reduced memory's
   * archive already does; `overwrite` replaces an older archive with a full text.
   */
  private ensureArchived(id: string, file: LoadedFile, overwrite = file.memory.phase === 0): void {
    if (overwrite || !this.archiveFiles.has(id)) this.writeArchiveFile(id, file.raw);
  }

  private archiveEntryFor(meta: MemoryMeta, reason: ArchiveReason): ArchiveEntry {
    return { topic: meta.topic, tags: meta.tags, archived_at: nowIso(), original_phase: meta.phase, reason };
  }

  private quarantine(file: string): string {
    fs.mkdirSync(this.paths.quarantine, { recursive: true });
    const stamp = new Date().toISOString().replace(/[:.]/g, '-');
    const target = path.join(this.paths.quarantine, `${stamp}-${path.basename(file)}`);
    fs.renameSync(file, target);
    return target;
  }

  /**
   * The memories as index.json holds them after this process wrote it. Memory
   * objects are replaced, never changed, when a file is read again, so this
   * still tells what is on disk after a hand edit of the memory file.
   */
  private readonly indexed = new Map<string, Memory>();
  /** Memories whose index entry may have changed since index.json was last written. */
  private readonly indexDirty = new Set<string>();
  /** Set when the registered set was replaced wholesale: the next write looks at everything. */
  private indexNeedsFullSync = true;

  private register(id: string): void {
    this.indexIds.add(id);
    this.indexDirty.add(id);
    this.rankingDirty.add(id);
  }

  private unregister(id: string): void {
    this.indexIds.delete(id);
    this.indexDirty.add(id);
    this.rankingDirty.add(id);
  }

  private replaceIndexIds(ids: Set<string>): void {
    this.indexIds = ids;
    this.indexNeedsFullSync = true;
  }

  /** Ranking inputs of active memories (see RankingTable); kept in step lazily. */
  private readonly ranking = new RankingTable();
  private readonly rankingDirty = new Set<string>();
  private rankingStale = true;

  private syncRanking(): void {
    const set = (id: string) => {
      const memory = this.files.get(id)!.memory;
      const stats = this.stats.get(id);
      this.ranking.set(id, {
        difficulty: memory.difficulty,
        tags: memory.tags,
        created_at: memory.created_at,
        lastSession: stats?.last_session ?? memory.created_session ?? 0,
        accessCount: stats?.access_count ?? 0,
      });
    };
    if (this.rankingStale) {
      this.ranking.clear();
      for (const id of this.activeIds()) set(id);
      this.rankingStale = false;
    } else {
      for (const id of this.rankingDirty) {
        if (this.isActive(id)) set(id);
        else this.ranking.delete(id);
      }
    }
    this.rankingDirty.clear();
  }

  /**
   * Writes index.json from the active memories. Normally only the memories
   * touched since the last write are looked at; their chunk of members and
   * their tags are rendered again, and every other byte is reused.
   */
  private writeIndex(): void {
    const wasUsable = this.indexUsable();
    if (this.indexNeedsFullSync || !wasUsable) {
      const active = new Set(this.activeIds());
      this.indexMembers.sync(active, (id) => this.files.get(id)!.memory);
      for (const id of new Set([...this.indexedTags.keys(), ...active])) this.updateTags(id, active.has(id));
      this.indexed.clear();
      for (const id of active) this.indexed.set(id, this.files.get(id)!.memory);
      this.indexIds = active;
      this.indexNeedsFullSync = false;
    } else {
      for (const id of this.indexDirty) {
        const active = this.isActive(id);
        this.indexMembers.update(id, active, (key) => this.files.get(key)!.memory);
        this.updateTags(id, active);
        if (active) this.indexed.set(id, this.files.get(id)!.memory);
        else this.indexed.delete(id);
      }
    }
    this.indexDirty.clear();
    writeFileAtomic(
      this.paths.index,
      jsonWithMaps([
        ['memories', this.indexMembers.buffers()],
        ['tag_index', this.tagIndexBuffers()],
      ]),
      { durable: false },
    );
    // What is on disk is now exactly the in-memory state (check needs no text).
    this.indexText = null;
    this.indexStatus = { kind: 'ok' };
    this.indexSignature = statSignature(this.paths.index);
  }

  /** Tags of each memory as last written to the tag index, and the IDs under each tag. */
  private readonly indexedTags = new Map<string, readonly string[]>();
  private readonly tagIds = new Map<string, Set<string>>();
  private readonly tagBytes = new Map<string, Buffer | null>();

  /**
   * Moves a memory within the tag index. A memory's tags array is replaced
   * whenever its file is read again, so an identical array means no change.
   */
  private updateTags(id: string, active: boolean): void {
    const previous = this.indexedTags.get(id);
    const tags = active ? this.files.get(id)!.memory.tags : undefined;
    if (previous === tags) return;
    for (const tag of previous ?? []) {
      this.tagIds.get(tag)?.delete(id);
      this.tagBytes.set(tag, null);
    }
    for (const tag of tags ?? []) {
      let ids = this.tagIds.get(tag);
      if (!ids) this.tagIds.set(tag, (ids = new Set()));
      ids.add(id);
      this.tagBytes.set(tag, null);
    }
    if (tags) this.indexedTags.set(id, tags);
    else this.indexedTags.delete(id);
  }

  private tagIndexBuffers(): Buffer[] {
    const out: Buffer[] = [];
    for (const tag of [...this.tagBytes.keys()].sort()) {
      let bytes = this.tagBytes.get(tag);
      if (bytes === null || bytes === undefined) {
        const ids = this.tagIds.get(tag);
        if (!ids || ids.size === 0) {
          this.tagIds.delete(tag);
          this.tagBytes.delete(tag);
          continue;
        }
        bytes = Buffer.from(stringListMember(tag, [...ids].sort()), 'utf8');
        this.tagBytes.set(tag, bytes);
      }
      if (out.length > 0) out.push(Buffer.from(',\n'));
      out.push(bytes);
    }
    return out;
  }

  private readonly statsDirty = new Set<string>();
  private statsNeedsFullSync = true;

  private setStats(id: string, stats: MemoryStats | undefined): void {
    if (stats) this.stats.set(id, stats);
    else this.stats.delete(id);
    this.statsMembers.invalidate(id);
    this.statsDirty.add(id);
    this.rankingDirty.add(id);
  }

  private writeStats(): void {
    const bytes = this.renderStats();
    if (!bytes) return;
    writeFileAtomic(this.paths.stats, bytes, { durable: false });
    this.statsStatus = { kind: 'ok' };
    this.statsSignature = statSignature(this.paths.stats);
  }

  private async writeStatsAsync(): Promise<void> {
    const bytes = this.renderStats();
    if (!bytes) return;
    await this.writeInFlight(this.paths.stats, bytes, false, (signature) => {
      this.statsSignature = signature;
      this.statsStatus = { kind: 'ok' };
    });
  }

  /** stats.json as bytes, or null when nothing changed since this process last wrote (or read) it. */
  private renderStats(): Buffer[] | null {
    if (!this.statsNeedsFullSync && this.statsDirty.size === 0 && this.statsStatus.kind === 'ok' && this.statsSignature) return null;
    const value = (id: string) => this.stats.get(id)!;
    if (this.statsNeedsFullSync) this.statsMembers.sync(new Set(this.stats.keys()), value);
    else for (const id of this.statsDirty) this.statsMembers.update(id, this.stats.has(id), value);
    this.statsNeedsFullSync = false;
    this.statsDirty.clear();
    return jsonWithMaps([['memories', this.statsMembers.buffers()]]);
  }

  private writeState(durable = true): void {
    writeFileAtomic(this.paths.state, toJsonText(stateJson(this.state)), { durable });
    this.stateStatus = { kind: 'ok' };
    this.stateSignature = statSignature(this.paths.state);
  }

  private async writeStateAsync(durable = true): Promise<void> {
    await this.writeInFlight(this.paths.state, toJsonText(stateJson(this.state)), durable, (signature) => {
      this.stateSignature = signature;
      this.stateStatus = { kind: 'ok' };
    });
  }

  /** writeFileAtomicAsync, with refresh() kept off the file until `written` has recorded its signature. */
  private async writeInFlight(file: string, data: string | Buffer[], durable: boolean, written: (signature: FileSignature) => void): Promise<void> {
    this.writesInFlight.add(file);
    try {
      written(await writeFileAtomicAsync(file, data, { durable }));
    } finally {
      this.writesInFlight.delete(file);
    }
  }

  private writeArchiveIndex(): void {
    writeFileAtomic(this.paths.archiveIndex, toJsonText(archiveIndexJson(this.archiveIndex)));
    this.archiveIndexStatus = { kind: 'ok' };
    this.archiveIndexSignature = statSignature(this.paths.archiveIndex);
    this.archiveSearchIndex = null;
  }

  private snapshotForCheck() {
    const activeIds = new Set(this.activeIds());
    return {
      paths: this.paths,
      files: this.files,
      invalidFiles: this.invalidFiles,
      activeIds,
      indexIds: this.indexIds,
      indexStatus: this.indexStatus,
      // indexText is null when this process wrote the index: `indexed` says what it holds.
      indexEntries: !this.indexUsable()
        ? new Map<string, unknown>()
        : this.indexText === null
          ? new Map<string, unknown>([...this.indexed].map(([id, memory]) => [id, indexEntryOf(memory)]))
          : readIndexEntries(this.indexText),
      statsIds: new Set(this.stats.keys()),
      statsStatus: this.statsStatus,
      stateStatus: this.stateStatus,
      archiveIndex: this.archiveIndex,
      archiveIndexStatus: this.archiveIndexStatus,
      archiveFiles: this.archiveFiles,
      tempFiles: [
        ...listDir(this.paths.memories).filter((n) => n.endsWith(TEMP_SUFFIX)).map((n) => path.join(this.paths.memories, n)),
        ...listDir(this.paths.archives).filter((n) => n.endsWith(TEMP_SUFFIX)).map((n) => path.join(this.paths.archives, n)),
        ...listDir(this.paths.root).filter((n) => n.endsWith(TEMP_SUFFIX)).map((n) => path.join(this.paths.root, n)),
      ],
    };
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

export type CheckSnapshot = ReturnType<MemoryStore['snapshotForCheck']>;

function rejectUnpairedSurrogates(name: string, value: string): void {
  if (/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(value)) {
    throw invalidInput(`${name} contains an unpaired UTF-16 surrogate, which cannot be saved as UTF-8`);
  }
}

interface PreparedInput {
  topic: string;
  content: string;
  summary: string;
  tags: string[];
  difficulty: number | undefined;
  redactions: Redaction[];
}

/** Validates and cleans what a caller wants stored; throws naming the first problem. */
function prepareInput(raw: StoreInput): PreparedInput {
  if (typeof raw.topic !== 'string' || !raw.topic.trim()) throw invalidInput('topic is required and must not be empty');
  if (typeof raw.content !== 'string' || !raw.content.trim()) throw invalidInput('content is required and must not be empty');
  if (raw.topic.length > 10_000) throw invalidInput('topic is longer than 10,000 characters');
  if (raw.content.length > 1_000_000) throw invalidInput('content is longer than 1,000,000 characters');
  if (raw.summary !== undefined && typeof raw.summary !== 'string') throw invalidInput('summary must be a string');
  for (const [name, value] of [['topic', raw.topic], ['content', raw.content], ['summary', raw.summary ?? '']] as const) {
    rejectUnpairedSurrogates(name, value);
  }
  if (raw.difficulty !== undefined && (typeof raw.difficulty !== 'number' || !(raw.difficulty >= 0 && raw.difficulty <= 1))) {
    throw invalidInput('difficulty must be a number from 0 to 1');
  }
  if (raw.tags !== undefined && (!Array.isArray(raw.tags) || raw.tags.some((t) => typeof t !== 'string'))) {
    throw invalidInput('tags must be a list of strings');
  }
  for (const tag of raw.tags ?? []) rejectUnpairedSurrogates('a tag', tag);
  const { value: input, redactions } = redactTextFields(raw);
  const tags = normaliseTags(input.tags ?? []);
  const badTag = tags.find((t) => /[\r\n]/.test(t) || t.length > 100);
  if (badTag !== undefined) throw invalidInput(`tag "${badTag.slice(0, 40)}" is not valid (one line, at most 100 characters)`);
  const topic = input.topic.trim();
  const content = input.content;
  const summary = input.summary?.trim() ? input.summary.trim() : deriveSummary(content) || topic;
  const problem = summaryProblem(summary);
  if (problem) throw invalidInput(problem);
  return { topic, content, summary, tags, difficulty: input.difficulty, redactions };
}

/**
 * Every text of an input, each string field and each string in a list field,
 * with known secret shapes replaced. It walks the fields rather than naming
 * them, so a field added to StoreInput later is redacted too.
 */
function redactTextFields<T extends object>(input: T): { value: T; redactions: Redaction[] } {
  const counts = new Map<string, number>();
  const clean = (text: string): string => {
    const result = redactSecrets(text);
    for (const r of result.redactions) counts.set(r.kind, (counts.get(r.kind) ?? 0) + r.count);
    return result.text;
  };
  const value = { ...input } as Record<string, unknown>;
  for (const [key, field] of Object.entries(value)) {
    if (typeof field === 'string') value[key] = clean(field);
    else if (Array.isArray(field)) value[key] = field.map((item: unknown) => (typeof item === 'string' ? clean(item) : item));
  }
  return { value: value as T, redactions: [...counts].map(([kind, count]) => ({ kind, count })) };
}
