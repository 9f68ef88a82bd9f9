/**
 * The data model of a memory store: what a memory is, its phases, and the
 * configuration kept in state.json. Everything here is plain data.
 */

/** Eviction phases. Phase 3 memories live only in archives/. */
export const Phase = {
  Full: 0,
  Hint: 1,
  Abstract: 2,
  Archived: 3,
} as const;
export type Phase = (typeof Phase)[keyof typeof Phase];
/** Phases a file in memories/ may have. */
export type ActivePhase = 0 | 1 | 2;

export const PHASE_NAMES: Record<Phase, string> = {
  0: 'Full',
  1: 'Hint',
  2: 'Abstract',
  3: 'Archived',
};

/** A memory ID is this prefix and MEMORY_ID_HEX_DIGITS lowercase hex digits: `mem_6f1e26b8`. */
export const MEMORY_ID_PREFIX = 'mem_';
export const MEMORY_ID_HEX_DIGITS = 8;
export const MEMORY_ID_PATTERN = new RegExp(`^${MEMORY_ID_PREFIX}[0-9a-f]{${MEMORY_ID_HEX_DIGITS}}$`);
/** The shape of a memory ID in words, for messages that refuse one. */
export const MEMORY_ID_FORMAT = `${MEMORY_ID_PREFIX} followed by ${MEMORY_ID_HEX_DIGITS} hex characters`;

export function isMemoryId(value: string): boolean {
  return MEMORY_ID_PATTERN.test(value);
}

/** The code a memory is about: a file of the project, maybe some of its lines, and a hash of that text (see anchors.ts). */
export interface Anchor {
  /** The file, relative to the project, with `/` separators. */
  path: string;
  /** First and last line (1-based, inclusive); absent for the whole file. */
  lines?: readonly [number, number];
  /** `poly64:` and 16 hex digits: the hash of the anchored lines (normalised; see anchors.ts LineIndex). */
  hash: string;
}

/**
 * A hand-edited `anchors` entry that could not be read. The memory loads
 * without it and its file keeps the text (a person's, to correct): `ltm
 * check` names it, since nothing else would.
 */
export interface UnreadableAnchor {
  /** Which: `anchors[2]`, or `anchors` when the field is not a list. */
  entry: string;
  /** The path it names, when it names one. */
  path?: string;
  reason: string;
}

/** The frontmatter fields LTM knows, in the order they are written. */
export const FRONTMATTER_KEYS = [
  'id',
  'topic',
  'tags',
  'phase',
  'difficulty',
  'created_at',
  'created_session',
] as const;

/**
 * Whether a memory may be used. `proposed`: stored by Claude while the project
 * reviews new memories (`review_new_memories`), waiting for a person to approve
 * or reject it; never injected, offered, recalled or evicted meanwhile.
 * The frontmatter holds `status: proposed` only for those: no `status` (every
 * file of earlier versions) means approved, so existing stores do not change.
 */
export type MemoryStatus = 'approved' | 'proposed';

export interface MemoryMeta {
  id: string;
  topic: string;
  tags: string[];
  phase: ActivePhase;
  difficulty: number;
  created_at: string;
  /** null when the file does not say (hand-written or foreign files). */
  created_session: number | null;
  /** Phase changes since creation (frontmatter `phase_history`, written by LTM only). */
  phase_history: PhaseChange[];
  /** Other words a later search might use (frontmatter `keywords`, written only when there are some). */
  keywords: string[];
  /** The code the memory is about (frontmatter `anchors`; see anchors.ts). Empty for most memories. */
  anchors: Anchor[];
  /** Hand-edited `anchors` entries that could not be read, left out of `anchors` (absent when none): `check` names them. */
  unreadable_anchors?: UnreadableAnchor[];
  /** Frontmatter `status`; absent (or any other value) means approved. */
  status?: MemoryStatus;
}

export interface PhaseChange {
  phase: number;
  at: string;
  /** evicted and restored; for a memory that left memories/ another way, its archive reason. */
  event: 'evicted' | 'restored' | Exclude<ArchiveReason, 'eviction'>;
}

/** A memory as read from its file. */
export interface Memory extends MemoryMeta {
  summary: string;
  content: string;
  /**
   * False for bodies without `## Summary` / `## Content` sections (as the
   * reference implementation writes them): the summary is then derived and is
   * not written back unless the memory is edited.
   */
  hasSections: boolean;
}

/**
 * Volatile per-memory data (stats.json, git-ignored). The first four are the
 * reference format's; the usage counters (see usage.ts) are LTM's own, absent
 * from older files (read as zero) and written only once they are not zero.
 */
export interface MemoryStats {
  access_count: number;
  accessed_at: string;
  last_session: number;
  priority: number;
  /** Sessions whose start injected the memory. */
  injected_sessions?: number;
  /** The last session whose start injected it (a start again in that session counts once). */
  last_injected_session?: number;
  /** Times offered with a prompt, a failure, a file or a subagent's task. */
  offer_count?: number;
  /** Times returned to Claude by `recall`. */
  recall_count?: number;
  /** Times read in full (`get_memory`, `ltm get`). */
  read_count?: number;
  /** The last session in which it was read or recalled. */
  last_used_session?: number;
  /** When it was last read or recalled (ISO time). */
  last_used_at?: string;
}

/**
 * What session start and the offers (with a prompt, a failure, a file, a
 * subagent's task) do with a stale memory, one whose anchored code changed or
 * is gone: `label` gives it marked "possibly outdated", `skip` leaves it out
 * and gives the next one instead. recall and get return it either way, marked.
 */
export const STALE_MEMORY_MODES = ['label', 'skip'] as const;
export type StaleMemoriesMode = (typeof STALE_MEMORY_MODES)[number];

export function isStaleMemoriesMode(value: unknown): value is StaleMemoriesMode {
  return STALE_MEMORY_MODES.includes(value as StaleMemoriesMode);
}

export interface StoreConfig {
  max_memories: number;
  memories_to_load: number;
  eviction_batch_size: number;
  /** Memories Claude stores are `proposed` until a person approves them (VS Code `ltm.reviewNewMemories`). */
  review_new_memories: boolean;
  /** Stale memories at session start and in offers: labelled or left out (VS Code `ltm.staleMemories`, `ltm stale --label|--skip`). */
  stale_memories: StaleMemoriesMode;
}

/** The limits of a store without its own (package.json's `ltm.*` setting defaults must match; a unit test checks). */
export const DEFAULT_CONFIG: StoreConfig = {
  max_memories: 100,
  memories_to_load: 10,
  eviction_batch_size: 10,
  review_new_memories: false,
  stale_memories: 'label',
};

/** How many memories a list (`list_memories`, `ltm list`) returns when not told. */
export const DEFAULT_LIST_LIMIT = 50;
/** How many results a search (`recall`, `search_archives`, `ltm recall`) returns when not told. */
export const DEFAULT_SEARCH_LIMIT = 10;

/**
 * Why a memory left memories/ for archives/. `updated` and `merged` also mark
 * the previous text of a memory that update or merge changed, archived under
 * an ID of its own (`version_of`). An LTM that does not know a reason reads it
 * as `recovered`, and drops a phase_history event it does not know.
 */
export type ArchiveReason = 'eviction' | 'forgotten' | 'orphaned' | 'recovered' | 'legacy' | 'rejected' | 'updated' | 'merged';

/** One entry of archive_index.json: a memory that is no longer active. */
export interface ArchiveEntry {
  topic: string;
  tags: string[];
  archived_at: string;
  /** The phase the memory had when it left memories/. */
  original_phase: number;
  reason: ArchiveReason;
  /** A memory merged into another (reason `merged`): the memory that holds its text now. */
  merged_into?: string;
  /** The previous text of an updated or merged memory, archived under an ID of its own: that memory's ID. */
  version_of?: string;
}

/**
 * IDs whose text was purged on request. They are kept so that an ID is never
 * given to another memory; nothing else about the memory is kept.
 */
export interface PurgedEntry {
  purged_at: string;
}

/** Per-session counters (state.json `sessions`), keyed by Claude Code's session_id. */
export interface SessionCounters {
  number: number;
  started_at: string;
  last_activity: string;
  tool_successes: number;
  tool_failures: number;
  compacted: boolean;
}
