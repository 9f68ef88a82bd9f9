/**
 * Integrity check: every way the files of a store can disagree, found from a
 * snapshot without changing anything. `repair.ts` repairs each kind.
 */
import * as fs from 'node:fs';
import { TEMP_SUFFIX } from './files';
import type { Memory, UnreadableAnchor } from './model';
import { indexEntryOf, type ArchiveIndex, type JsonFileStatus, type StorePaths } from './storeFiles';
import type { InvalidFile } from './storeTypes';

/**
 * What the check reads: the store's files as last seen, declared here so that
 * the check depends on data, not on the store that gathers it.
 */
export interface IntegritySnapshot {
  paths: StorePaths;
  /** Valid memory files by ID. */
  files: ReadonlyMap<string, { memory: Memory }>;
  /** Files in memories/ that cannot be memories, by file name. */
  invalidFiles: ReadonlyMap<string, InvalidFile>;
  activeIds: ReadonlySet<string>;
  /** IDs index.json lists. */
  indexIds: ReadonlySet<string>;
  indexStatus: JsonFileStatus;
  /** index.json's entries as written, by ID (empty when it is not usable). */
  indexEntries: ReadonlyMap<string, unknown>;
  statsIds: ReadonlySet<string>;
  statsStatus: JsonFileStatus;
  stateStatus: JsonFileStatus;
  archiveIndex: ArchiveIndex;
  archiveIndexStatus: JsonFileStatus;
  /** IDs with a file in archives/. */
  archiveFiles: ReadonlySet<string>;
  /** Paths of leftover temporary files. */
  tempFiles: readonly string[];
  /** Hand-edited `anchors` entries that loading left out, by memory ID (only memories with some). */
  unreadableAnchors: ReadonlyMap<string, readonly UnreadableAnchor[]>;
}

export type ProblemKind =
  | 'not_indexed'
  | 'missing_file'
  | 'orphaned_stats'
  | 'orphaned_archive'
  | 'archive_entry_without_file'
  | 'archive_entry_active'
  | 'missing_full_text'
  | 'invalid_file'
  | 'duplicate_id'
  | 'id_mismatch'
  | 'index_stale'
  | 'index_conflicted'
  | 'index_unreadable'
  | 'index_missing'
  | 'archive_index_unreadable'
  | 'stats_unreadable'
  | 'state_unreadable'
  | 'temp_file'
  | 'unreadable_anchor';

/**
 * `error`: the store's files disagree, and fix repairs it; the store is not
 * healthy until then (`ltm check` exits 1). `warning`: something a person
 * wrote that LTM cannot use but works around; the store is consistent, fix
 * leaves the text alone for the person to correct, and the store stays healthy.
 */
export type ProblemLevel = 'error' | 'warning';

export const PROBLEM_LEVELS: Record<ProblemKind, ProblemLevel> = {
  not_indexed: 'error',
  missing_file: 'error',
  orphaned_stats: 'error',
  orphaned_archive: 'error',
  archive_entry_without_file: 'error',
  archive_entry_active: 'error',
  missing_full_text: 'error',
  invalid_file: 'error',
  duplicate_id: 'error',
  id_mismatch: 'error',
  index_stale: 'error',
  index_conflicted: 'error',
  index_unreadable: 'error',
  index_missing: 'error',
  archive_index_unreadable: 'error',
  stats_unreadable: 'error',
  state_unreadable: 'error',
  temp_file: 'error',
  unreadable_anchor: 'warning',
};

export interface IntegrityProblem {
  kind: ProblemKind;
  level: ProblemLevel;
  /** The memory concerned, when there is one. */
  id?: string;
  /** The file concerned: a name in memories/, or a path for temporary files. */
  file?: string;
  detail: string;
}

export interface IntegrityCounts {
  indexed_memories: number;
  memory_files: number;
  stats_entries: number;
  archive_files: number;
  archived_memories: number;
}

export interface IntegrityReport {
  /** No error-level problem: warnings alone leave a store healthy. */
  healthy: boolean;
  /** Errors and warnings, each with its level. */
  problems: IntegrityProblem[];
  counts: IntegrityCounts;
}

export const PROBLEM_TITLES: Record<ProblemKind, string> = {
  not_indexed: 'Memories index.json does not list yet',
  missing_file: 'Index entries without a memory file',
  orphaned_stats: 'Stats entries for no memory',
  orphaned_archive: 'Archives that belong to no memory',
  archive_entry_without_file: 'Archive-index entries without an archive file',
  archive_entry_active: 'Archive-index entries for active memories',
  missing_full_text: 'Reduced memories whose full text was never archived',
  invalid_file: 'Files that cannot be read as memories',
  duplicate_id: 'Duplicate memory IDs',
  id_mismatch: 'Memory files named for another ID',
  index_stale: 'Stale index.json',
  index_conflicted: 'index.json has git conflict markers',
  index_unreadable: 'Unreadable index.json',
  index_missing: 'Missing index.json',
  archive_index_unreadable: 'Unreadable archive_index.json',
  stats_unreadable: 'Unreadable stats.json',
  state_unreadable: 'Unreadable state.json',
  temp_file: 'Leftover temporary files',
  unreadable_anchor: 'Anchors entries that could not be read (left out; the text is kept for you to correct)',
};

/** How many of the problems are errors and how many warnings. */
export function problemCounts(problems: readonly IntegrityProblem[]): Record<ProblemLevel, number> {
  const counts = { error: 0, warning: 0 };
  for (const p of problems) counts[p.level]++;
  return counts;
}

/** Temporary files younger than this may belong to a write in progress. */
const TEMP_FILE_REPORT_AGE_MS = 60_000;

const INDEX_FIELDS = ['topic', 'tags', 'phase', 'difficulty', 'created_at'] as const;

export function checkIntegrity(s: IntegritySnapshot): IntegrityReport {
  const problems: IntegrityProblem[] = [];
  const add = (p: Omit<IntegrityProblem, 'level'>) => problems.push({ ...p, level: PROBLEM_LEVELS[p.kind] });

  // memories/ and index.json
  switch (s.indexStatus.kind) {
    case 'conflicted':
      add({ kind: 'index_conflicted', detail: 'index.json holds git conflict markers; the memory files are used instead' });
      break;
    case 'unreadable':
      add({ kind: 'index_unreadable', detail: `index.json is unreadable (${s.indexStatus.reason}); the memory files are used instead` });
      break;
    case 'missing':
      if (s.files.size > 0) add({ kind: 'index_missing', detail: 'index.json is missing; the memory files are used instead' });
      break;
    case 'ok': {
      const stale: string[] = [];
      for (const [id, file] of s.files) {
        if (!s.indexIds.has(id)) {
          // A memory from another branch after a merge that kept one side's index.json: fix indexes it.
          add({ kind: 'not_indexed', id, file: `${id}.md`, detail: `memories/${id}.md is a valid memory that index.json does not list yet` });
          continue;
        }
        const entry = s.indexEntries.get(id) as Record<string, unknown> | undefined;
        const expected = indexEntryOf(file.memory) as unknown as Record<string, unknown>;
        if (!entry || INDEX_FIELDS.some((f) => JSON.stringify(entry[f]) !== JSON.stringify(expected[f]))) stale.push(id);
      }
      for (const id of s.indexIds) {
        if (!s.files.has(id)) add({ kind: 'missing_file', id, detail: `index.json lists ${id} but memories/${id}.md is missing` });
      }
      if (stale.length > 0) {
        add({
          kind: 'index_stale',
          detail: `index.json differs from the frontmatter of ${stale.length} memor${stale.length === 1 ? 'y' : 'ies'} (${stale.slice(0, 5).join(', ')}${stale.length > 5 ? ', …' : ''})`,
        });
      }
      break;
    }
  }

  for (const invalid of s.invalidFiles.values()) {
    if (invalid.claimedId) {
      const duplicate = s.files.has(invalid.claimedId);
      add({
        kind: duplicate ? 'duplicate_id' : 'id_mismatch',
        id: invalid.claimedId,
        file: invalid.name,
        detail: duplicate
          ? `memories/${invalid.name} claims ID ${invalid.claimedId}, which memories/${invalid.claimedId}.md already has`
          : `memories/${invalid.name} claims ID ${invalid.claimedId}, which is not its file name`,
      });
    } else {
      add({ kind: 'invalid_file', file: invalid.name, detail: `memories/${invalid.name}: ${invalid.reason}` });
    }
  }

  // Reduced memories keep their full text in archives/.
  for (const id of s.activeIds) {
    const phase = s.files.get(id)!.memory.phase;
    if (phase > 0 && !s.archiveFiles.has(id)) {
      add({ kind: 'missing_full_text', id, detail: `${id} is in phase ${phase} but archives/${id}.md is missing` });
    }
  }

  // Hand-edited anchors that loading left out: nothing else would tell the person the memory is not anchored where they wrote.
  for (const [id, entries] of [...s.unreadableAnchors].sort(([a], [b]) => (a < b ? -1 : 1))) {
    for (const u of entries) {
      add({ kind: 'unreadable_anchor', id, file: `${id}.md`, detail: `${id}: ${u.entry}${u.path ? ` (${u.path})` : ''} is left out: ${u.reason}` });
    }
  }

  // stats.json
  if (s.statsStatus.kind === 'conflicted' || s.statsStatus.kind === 'unreadable') {
    add({ kind: 'stats_unreadable', detail: s.statsStatus.kind === 'conflicted' ? 'stats.json has conflict markers' : `stats.json: ${s.statsStatus.reason}` });
  }
  for (const id of s.statsIds) {
    if (!s.activeIds.has(id)) add({ kind: 'orphaned_stats', id, detail: `stats.json has an entry for ${id}, which is not an active memory` });
  }
  if (s.stateStatus.kind === 'conflicted' || s.stateStatus.kind === 'unreadable') {
    add({ kind: 'state_unreadable', detail: s.stateStatus.kind === 'conflicted' ? 'state.json has conflict markers' : `state.json: ${s.stateStatus.reason}` });
  }

  // archives/ and archive_index.json
  if (s.archiveIndexStatus.kind === 'conflicted' || s.archiveIndexStatus.kind === 'unreadable') {
    add({
      kind: 'archive_index_unreadable',
      detail: s.archiveIndexStatus.kind === 'conflicted' ? 'archive_index.json has conflict markers' : `archive_index.json: ${s.archiveIndexStatus.reason}`,
    });
  }
  for (const id of s.archiveIndex.memories.keys()) {
    if (s.activeIds.has(id)) {
      add({ kind: 'archive_entry_active', id, detail: `archive_index.json lists ${id}, which is an active memory` });
    } else if (!s.archiveFiles.has(id)) {
      add({ kind: 'archive_entry_without_file', id, detail: `archive_index.json lists ${id} but archives/${id}.md is missing` });
    }
  }
  for (const id of s.archiveFiles) {
    if (!s.files.has(id) && !s.archiveIndex.memories.has(id)) {
      add({ kind: 'orphaned_archive', id, detail: `archives/${id}.md belongs to no memory and no archive-index entry` });
    }
  }

  // Leftovers of interrupted writes.
  const now = Date.now();
  for (const file of s.tempFiles) {
    if (!file.endsWith(TEMP_SUFFIX)) continue;
    let age = 0;
    try {
      age = now - fs.statSync(file).mtimeMs;
    } catch {
      continue;
    }
    if (age >= TEMP_FILE_REPORT_AGE_MS) add({ kind: 'temp_file', file, detail: `leftover temporary file ${file}` });
  }

  return {
    healthy: problems.every((p) => p.level === 'warning'),
    problems,
    counts: {
      indexed_memories: s.indexIds.size,
      memory_files: s.files.size + s.invalidFiles.size,
      stats_entries: s.statsIds.size,
      archive_files: s.archiveFiles.size,
      archived_memories: [...s.archiveIndex.memories.keys()].filter((id) => !s.activeIds.has(id) && s.archiveFiles.has(id)).length,
    },
  };
}
