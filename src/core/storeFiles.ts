/**
 * The JSON files of a store: where they are, how they are read (leniently,
 * saying what is wrong) and how they are written (stable key order).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { unreadableFile } from './errors';
import { hasConflictMarkers, readTextIfExists, writeFileAtomic } from './files';
import {
  DEFAULT_CONFIG,
  MEMORY_ID_PATTERN,
  STALE_MEMORY_MODES,
  type ArchiveEntry,
  type ArchiveReason,
  type MemoryMeta,
  type MemoryStats,
  type PurgedEntry,
  type SessionCounters,
  type StoreConfig,
} from './model';

export interface StorePaths {
  project: string;
  root: string;
  memories: string;
  archives: string;
  quarantine: string;
  index: string;
  /** Present while a server holds changes index.json does not list yet (indexPending.ts). */
  indexPending: string;
  archiveIndex: string;
  stats: string;
  /** The journal of changes not yet in stats.json (statsJournal.ts). */
  statsJournal: string;
  state: string;
  gitignore: string;
  lock: string;
  parseCache: string;
  searchIndex: string;
  server: string;
}

/** Where a project keeps its store, relative to the project, with `/` between folders (as git names paths). */
export const STORE_FOLDER = '.claude/ltm';

export function storePaths(projectDir: string): StorePaths {
  const project = path.resolve(projectDir);
  const root = path.join(project, ...STORE_FOLDER.split('/'));
  return {
    project,
    root,
    memories: path.join(root, 'memories'),
    archives: path.join(root, 'archives'),
    quarantine: path.join(root, 'quarantine'),
    index: path.join(root, 'index.json'),
    indexPending: path.join(root, 'index-pending.json'),
    archiveIndex: path.join(root, 'archive_index.json'),
    stats: path.join(root, 'stats.json'),
    statsJournal: path.join(root, 'stats.log'),
    state: path.join(root, 'state.json'),
    gitignore: path.join(root, '.gitignore'),
    lock: path.join(root, '.lock'),
    parseCache: path.join(root, 'parse-cache.json'),
    searchIndex: path.join(root, 'search-index.bin'),
    server: path.join(root, 'server.json'),
  };
}

/** Files that belong to one machine; memories, archives and both indexes are shared through git. */
export const GITIGNORE_LINES = [
  'stats.json',
  'stats.log',
  'state.json',
  'server.json',
  'server-identity.json',
  'index-pending.json',
  'parse-cache.json',
  'search-index.bin',
  '.lock',
  '*.ltm-tmp',
  // Files fix moved aside because they are not valid memories: a person looks at them; git does not share them.
  'quarantine/',
] as const;

export const GITIGNORE_TEXT = `# LTM: per-machine files. memories/, archives/, index.json and archive_index.json are shared through git.\n${GITIGNORE_LINES.join('\n')}\n`;

/** Writes the store's .gitignore, or adds the lines an older version's lacks (a new per-machine file). */
export function ensureGitignore(paths: StorePaths): void {
  const existing = readTextIfExists(paths.gitignore);
  if (existing === null) {
    writeFileAtomic(paths.gitignore, GITIGNORE_TEXT);
    return;
  }
  const lines = new Set(existing.split(/\r?\n/).map((l) => l.trim()));
  const missing = GITIGNORE_LINES.filter((l) => !lines.has(l));
  if (missing.length > 0) writeFileAtomic(paths.gitignore, `${existing.replace(/\n?$/, '\n')}${missing.join('\n')}\n`);
}

/** Creates `.claude/ltm/` and its .gitignore, or adds missing ignore lines to an existing one. Reads no memory. */
export function initStoreFiles(paths: StorePaths): void {
  fs.mkdirSync(paths.memories, { recursive: true });
  fs.mkdirSync(paths.archives, { recursive: true });
  ensureGitignore(paths);
}

/** How a JSON file was found: fine, absent, or unusable with a reason. */
export type JsonFileStatus = { kind: 'ok' } | { kind: 'missing' } | { kind: 'conflicted' } | { kind: 'unreadable'; reason: string };

export interface ReadResult<T> {
  value: T;
  status: JsonFileStatus;
}

function parseJsonText(text: string | null): { data?: unknown; status: JsonFileStatus } {
  if (text === null) return { status: { kind: 'missing' } };
  try {
    return { data: JSON.parse(text), status: { kind: 'ok' } };
  } catch (error) {
    // Looked for only here: no JSON text has a line that starts with < or > (a string cannot span lines),
    // and scanning every file for them took ~4 ms of a fresh process's opening at 10,000 memories.
    if (hasConflictMarkers(text)) return { status: { kind: 'conflicted' } };
    return { status: { kind: 'unreadable', reason: `not valid JSON (${(error as Error).message})` } };
  }
}

function firstIssue(error: z.ZodError): string {
  const issue = error.issues[0]!;
  return `${issue.path.join('.') || 'file'}: ${issue.message}`;
}

/**
 * A JSON object whose keys come from outside (memory IDs, session IDs a hook
 * sent, tags, anything a merge or a hand edit put there) as a Map. No key
 * becomes a property of a plain object, so `__proto__` or `constructor` is an
 * ordinary key: `z.record` would copy entries into an object, where
 * `__proto__` is dropped or, in code that assigns, replaces a prototype.
 */
function mapOf<V>(value: z.ZodType<V>) {
  return z
    .custom<object>((raw) => raw !== null && typeof raw === 'object' && !Array.isArray(raw), { message: 'expected an object' })
    .transform((raw, ctx) => {
      const map = new Map<string, V>();
      // JSON.parse makes every key, `__proto__` included, an own data property.
      for (const [key, item] of Object.entries(raw)) {
        const parsed = value.safeParse(item);
        if (!parsed.success) {
          for (const issue of parsed.error.issues) ctx.addIssue({ ...issue, path: [key, ...issue.path] } as never);
          return z.NEVER;
        }
        map.set(key, parsed.data);
      }
      return map;
    });
}

/** A plain object to hand to JSON.stringify whose keys can be anything, `__proto__` included. */
export function jsonObjectOf<V, R>(entries: Iterable<readonly [string, V]>, render: (v: V) => R): Record<string, R> {
  const out = Object.create(null) as Record<string, R>;
  for (const [key, v] of entries) out[key] = render(v);
  return out;
}

/** A JSON file of the store as text, or null when it is absent; one that cannot be read as a file is a clear error. */
export function readStoreFile(file: string): string | null {
  try {
    return readTextIfExists(file);
  } catch (error) {
    throw unreadableFile(file, error);
  }
}

function readJsonFile<T>(text: string | null, schema: z.ZodType<T>, empty: T): ReadResult<T> {
  const { data, status } = parseJsonText(text);
  if (status.kind !== 'ok') return { value: empty, status };
  const parsed = schema.safeParse(data);
  if (!parsed.success) return { value: empty, status: { kind: 'unreadable', reason: firstIssue(parsed.error) } };
  return { value: parsed.data, status };
}

// ---------------------------------------------------------------------------
// index.json: a cache of the memory files; only its set of IDs is used.

const indexSchema = z.object({
  memories: mapOf(z.unknown()),
});

/** What index.json holds of a memory, in the order it is written. */
export function indexEntryOf(meta: MemoryMeta): IndexEntry {
  return { topic: meta.topic, tags: meta.tags, phase: meta.phase, difficulty: meta.difficulty, created_at: meta.created_at };
}

export interface IndexEntry {
  topic: string;
  tags: string[];
  phase: number;
  difficulty: number;
  created_at: string;
}

export function readIndexIds(text: string | null): ReadResult<Set<string>> {
  const result = readJsonFile(text, indexSchema, { memories: new Map() });
  return { value: new Set(result.value.memories.keys()), status: result.status };
}

/** What index.json says of a memory, to tell whether it is stale. */
export function readIndexEntries(text: string | null): Map<string, unknown> {
  return readJsonFile(text, indexSchema, { memories: new Map() }).value.memories;
}

// ---------------------------------------------------------------------------
// stats.json

const count = z.number().int().min(0).optional().catch(undefined);

const statsEntrySchema = z.object({
  access_count: z.number().int().min(0).catch(0),
  accessed_at: z.string().catch(''),
  last_session: z.number().int().min(0).catch(0),
  priority: z.number().catch(0),
  // LTM's usage counters (usage.ts): absent from older files and from the reference's; a bad value reads as none.
  injected_sessions: count,
  last_injected_session: count,
  offer_count: count,
  recall_count: count,
  read_count: count,
  last_used_session: count,
  last_used_at: z.string().optional().catch(undefined),
});

const statsSchema = z.object({ memories: mapOf(statsEntrySchema) });

export function readStats(text: string | null): ReadResult<Map<string, MemoryStats>> {
  const { data, status } = parseJsonText(text);
  if (status.kind === 'ok') {
    const fast = wellFormedStats(data);
    if (fast) return { value: fast, status };
  }
  return readStatsBySchema(text);
}

/** One stats entry as statsSchema reads it (a line of the stats journal), or null when it is not an object. */
export function statsEntryFrom(raw: unknown): MemoryStats | null {
  const result = statsEntrySchema.safeParse(raw);
  return result.success ? (result.data as MemoryStats) : null;
}

/** stats.json read through statsSchema alone (readStats' fallback; tests compare the two). */
export function readStatsBySchema(text: string | null): ReadResult<Map<string, MemoryStats>> {
  const result = readJsonFile(text, statsSchema, { memories: new Map() });
  return { value: result.value.memories, status: result.status };
}

const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;

/** statsEntrySchema's keys, in its order (exported for the test that holds wellFormedStats' checks to them). */
export const STATS_KEYS: readonly string[] = Object.keys(statsEntrySchema.shape);

const isOptionalCount = (v: unknown): boolean => v === undefined || isCount(v);

/** Whether `entry`'s keys are statsEntrySchema's, in its order (some may be absent): the object the schema would give. */
function keysInSchemaOrder(entry: object): boolean {
  let at = 0;
  for (const key in entry) {
    while (at < STATS_KEYS.length && STATS_KEYS[at] !== key) at++;
    if (at === STATS_KEYS.length) return false;
    at++;
  }
  return true;
}

/**
 * stats.json read without the schema, when every entry is exactly what
 * statsSchema gives for it (a file LTM wrote): the same Map, built from the
 * parsed entries themselves. A fresh process pays this before its first
 * answer: at 13,000 entries ~24 ms copying each entry into a new object
 * (~3× faster than the schema), ~11 ms keeping them. Any entry the schema
 * would correct, strip or reorder returns null, and the schema reads the file
 * (readStats), so what a hand edit broke reads as before.
 */
function wellFormedStats(data: unknown): Map<string, MemoryStats> | null {
  if (data === null || typeof data !== 'object' || Array.isArray(data)) return null;
  const memories = (data as { memories?: unknown }).memories;
  if (memories === null || typeof memories !== 'object' || Array.isArray(memories)) return null;
  const map = new Map<string, MemoryStats>();
  // Memories accessed together share a time (an access is counted for a whole batch at once): kept
  // once, as when counted, not once per entry as JSON.parse makes them (~40 bytes each).
  const times = new Map<string, string>();
  const shared = (time: string): string => {
    const known = times.get(time);
    if (known !== undefined) return known;
    times.set(time, time);
    return time;
  };
  // JSON.parse makes every key, `__proto__` included, an own data property (see mapOf).
  for (const key of Object.keys(memories)) {
    const e = (memories as Record<string, unknown>)[key];
    if (e === null || typeof e !== 'object' || Array.isArray(e)) return null;
    const entry = e as Record<keyof MemoryStats, unknown>;
    if (!isCount(entry.access_count) || typeof entry.accessed_at !== 'string' || !isCount(entry.last_session)) return null;
    if (typeof entry.priority !== 'number' || !Number.isFinite(entry.priority)) return null;
    // Each counter read by its name: a loop over their names (a keyed read) was most of the cost in a fresh process.
    if (
      !isOptionalCount(entry.injected_sessions) ||
      !isOptionalCount(entry.last_injected_session) ||
      !isOptionalCount(entry.offer_count) ||
      !isOptionalCount(entry.recall_count) ||
      !isOptionalCount(entry.read_count) ||
      !isOptionalCount(entry.last_used_session)
    ) {
      return null;
    }
    if (entry.last_used_at !== undefined && typeof entry.last_used_at !== 'string') return null;
    if (!keysInSchemaOrder(entry)) return null;
    entry.accessed_at = shared(entry.accessed_at);
    if (entry.last_used_at !== undefined) entry.last_used_at = shared(entry.last_used_at);
    map.set(key, entry as MemoryStats);
  }
  return map;
}

/** The usage counters in the order they are written after the reference's four fields. */
const USAGE_KEYS = ['injected_sessions', 'last_injected_session', 'offer_count', 'recall_count', 'read_count', 'last_used_session', 'last_used_at'] as const;

/**
 * A memory's stats.json entry: the reference's four fields first, then the
 * usage counters that are set (never a zero or empty one), so a memory never
 * used is written as before and the reference implementation, which reads
 * entries as dictionaries, reads every entry.
 */
export function statsEntryJson(stats: MemoryStats): MemoryStats {
  const json: MemoryStats = {
    access_count: stats.access_count,
    accessed_at: stats.accessed_at,
    last_session: stats.last_session,
    priority: stats.priority,
  };
  for (const key of USAGE_KEYS) {
    const value = stats[key];
    if (value) (json as unknown as Record<string, unknown>)[key] = value;
  }
  return json;
}

// ---------------------------------------------------------------------------
// archive_index.json

const archiveReasons = ['eviction', 'forgotten', 'orphaned', 'recovered', 'legacy', 'rejected', 'updated', 'merged'] as const satisfies readonly ArchiveReason[];

const archiveEntrySchema = z.object({
  topic: z.string().catch(''),
  tags: z.array(z.string()).catch([]),
  archived_at: z.string().catch(''),
  original_phase: z.number().int().min(0).max(3).catch(0),
  reason: z.enum(archiveReasons).catch('recovered'),
  merged_into: z.string().regex(MEMORY_ID_PATTERN).optional().catch(undefined),
  version_of: z.string().regex(MEMORY_ID_PATTERN).optional().catch(undefined),
});

const archiveIndexSchema = z.object({
  memories: mapOf(archiveEntrySchema),
  purged: mapOf(z.object({ purged_at: z.string().catch('') })).optional(),
});

export interface ArchiveIndex {
  memories: Map<string, ArchiveEntry>;
  purged: Map<string, PurgedEntry>;
}

export function readArchiveIndex(text: string | null): ReadResult<ArchiveIndex> {
  const result = readJsonFile(text, archiveIndexSchema, { memories: new Map() });
  return { value: { memories: result.value.memories, purged: result.value.purged ?? new Map() }, status: result.status };
}

function sortedRecord<V, R>(map: ReadonlyMap<string, V>, render: (v: V) => R): Record<string, R> {
  return jsonObjectOf([...map].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)), render);
}

export function archiveIndexJson(index: ArchiveIndex): unknown {
  const json: Record<string, unknown> = {
    version: 1,
    memories: sortedRecord(index.memories, (e) => ({
      topic: e.topic,
      tags: e.tags,
      archived_at: e.archived_at,
      original_phase: e.original_phase,
      reason: e.reason,
      ...(e.merged_into ? { merged_into: e.merged_into } : {}),
      ...(e.version_of ? { version_of: e.version_of } : {}),
    })),
  };
  if (index.purged.size > 0) json.purged = sortedRecord(index.purged, (p) => ({ purged_at: p.purged_at }));
  return json;
}

// ---------------------------------------------------------------------------
// state.json

const positiveInt = z.number().int().min(1);

const configSchema = z.object({
  max_memories: positiveInt.catch(DEFAULT_CONFIG.max_memories),
  memories_to_load: z.number().int().min(0).catch(DEFAULT_CONFIG.memories_to_load),
  eviction_batch_size: positiveInt.catch(DEFAULT_CONFIG.eviction_batch_size),
  review_new_memories: z.boolean().catch(DEFAULT_CONFIG.review_new_memories),
  // Anything but "skip" (a typo, a value of a later version) labels: nothing is hidden that was not asked to be.
  stale_memories: z.enum(STALE_MEMORY_MODES).catch(DEFAULT_CONFIG.stale_memories),
});

const sessionSchema = z.object({
  number: z.number().int().min(0).catch(0),
  started_at: z.string().catch(''),
  last_activity: z.string().catch(''),
  tool_successes: z.number().int().min(0).catch(0),
  tool_failures: z.number().int().min(0).catch(0),
  compacted: z.boolean().catch(false),
});

const stateSchema = z.looseObject({
  session_count: z.number().int().min(0).catch(0),
  sessions: mapOf(sessionSchema).catch(() => new Map()),
  compaction_count: z.number().int().min(0).catch(0),
  last_eviction: z.string().nullable().catch(null),
  config: z.looseObject(configSchema.shape).catch({ ...DEFAULT_CONFIG }),
});

export interface StoreState {
  session_count: number;
  /** By Claude Code's session_id: text from outside, so a Map. */
  sessions: Map<string, SessionCounters>;
  compaction_count: number;
  last_eviction: string | null;
  config: StoreConfig & Record<string, unknown>;
  /** Keys this version does not know, kept as they are (e.g. the reference's current_session). */
  [key: string]: unknown;
}

export function defaultState(): StoreState {
  return { session_count: 0, sessions: new Map(), compaction_count: 0, last_eviction: null, config: { ...DEFAULT_CONFIG } };
}

export function readState(text: string | null): ReadResult<StoreState> {
  const result = readJsonFile(text, stateSchema as z.ZodType<StoreState>, defaultState());
  const value = result.value;
  value.last_eviction ??= null;
  value.config = { ...DEFAULT_CONFIG, ...(value.config ?? {}) };
  return { value, status: result.status };
}

const STATE_KEY_ORDER = ['version', 'session_count', 'sessions', 'compaction_count', 'last_eviction', 'config'];

export function stateJson(state: StoreState): unknown {
  const json = jsonObjectOf<unknown, unknown>([['version', 1]], (v) => v);
  const value = (key: string) => (key === 'sessions' ? jsonObjectOf(state.sessions, (s) => s) : state[key]);
  for (const key of STATE_KEY_ORDER) if (Object.hasOwn(state, key)) json[key] = value(key);
  for (const key of Object.keys(state).sort()) if (!Object.hasOwn(json, key)) json[key] = value(key);
  json.version = 1;
  return json;
}
