/**
 * The store's public vocabulary: what callers pass to MemoryStore and what it
 * returns. Kept apart from the store so that the modules the store is built
 * from, and the servers and views that only read results, share one
 * definition without importing the store itself.
 */
import type { RenameLookup } from './staleness';
import type { IntegrityReport } from './integrity';
import type { ArchiveEntry, Memory, MemoryStatus, Phase, StoreConfig } from './model';
import type { Redaction } from './secrets';
import type { ListSort, MemoryUsage } from './usage';

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
  /** How it was used (usage.ts); all zero for archived memories. */
  usage: MemoryUsage;
  /** Injected in many sessions and never read nor recalled (usage.ts); never for archived memories. */
  demotion_candidate: boolean;
}

export interface ListFilter {
  /** approved (the default: what Claude is given), or proposed (awaiting review). Archived memories have none. */
  status?: MemoryStatus;
  phase?: number;
  tag?: string;
  keyword?: string;
  offset?: number;
  limit?: number;
  /**
   * priority (default, highest first), used (last read or recalled first, the
   * never used last by priority) or created (newest first). Archived memories
   * (phase 3) are always listed latest archived first.
   */
  sort?: ListSort;
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
  /** Other words a later search might use: synonyms, the symptom in a user's words, the error's name. */
  keywords?: readonly string[];
  autoTag?: boolean;
  difficulty?: number;
  /** Session number to record as created_session; defaults to the store's session count. */
  session?: number;
  /** The code the memory is about: project files, each maybe with lines (`src/db/pool.ts#L10-24`). */
  anchors?: readonly string[];
  /**
   * Who wrote it. A memory Claude stores (the MCP tool) is `proposed` while the store's
   * `review_new_memories` is on; a person's (the CLI, VS Code: the default) is approved at once.
   */
  author?: 'claude' | 'person';
}

export interface StoreResult {
  memory: MemoryView;
  redactions: Redaction[];
  /** Active memories that say nearly the same (see similarity.ts), most similar first; the memory is stored regardless. */
  similar?: SimilarMemory[];
}

/** A memory found nearly the same as another: its similarity score is 0 to 1. */
export interface SimilarMemory {
  id: string;
  topic: string;
  score: number;
}

export interface UpdateResult {
  memory: MemoryView;
  /** The fields whose value changed; none when the update changed nothing (and nothing was written). */
  changed: string[];
  redactions: Redaction[];
  /** IDs under which the previous text was archived (archives/<id>.md, reason `updated`). */
  versions: string[];
}

export interface MergeResult {
  /** The memory merged into, as it is now. */
  target: MemoryView;
  /** The memory merged, now archived (reason `merged`, `merged_into` the target). */
  source: { id: string; topic: string };
  /** IDs under which the target's previous text was archived (reason `merged`). */
  versions: string[];
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

export interface ReviewResult {
  id: string;
  topic: string;
  /** approved: in use from now on; rejected: archived with reason "rejected" (restorable). */
  decision: 'approved' | 'rejected';
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
  /** Every memory in memories/, those awaiting review included. */
  total_memories: number;
  /** Memories awaiting review (status proposed), counted in total_memories and by_phase. */
  awaiting_review: number;
  by_phase: { full: number; hint: number; abstract: number };
  total_archived: number;
  session_count: number;
  last_eviction: string | null;
  storage_size_bytes: number;
  config: StoreConfig;
  store_path: string;
  exists: boolean;
  invalid_files: number;
  /** Active memories injected in many sessions and never read nor recalled (usage.ts). */
  demotion_candidates: number;
  /** Active memories whose anchored code changed or is gone. */
  stale_memories: number;
}

/** A memory whose anchored code no longer matches it. */
export interface StaleMemory {
  id: string;
  topic: string;
  reasons: string[];
}

export interface OpenOptions {
  /** Watch memories/ for edits made in place (editors that do not rename). For long-lived hosts. */
  watch?: boolean;
  /** Called after the store noticed changes made outside this process. */
  onExternalChange?: () => void;
  /** Where a renamed file went (servers and the CLI pass git's answer, gitRenames.ts); without it a renamed anchor is stale. */
  renames?: RenameLookup;
  /**
   * The script of the search index worker (dist/search-index-worker.js): a store
   * opened in steps without a usable saved search index (none, or the files were
   * copied since it was saved) has its index built on that thread while it reads
   * the files (searchIndexAside.ts); openAsync and openInSteps wait for it, and
   * requests through untilSearchIndexReady(). Without it, the index is built at
   * the first search.
   */
  searchIndexWorker?: string;
}
