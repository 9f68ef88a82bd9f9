/**
 * Integrity check: every way the files of a store can disagree, found from a
 * snapshot without changing anything. `repair.ts` repairs each kind.
 */
import * as fs from 'node:fs';
import { TEMP_SUFFIX } from './files';
import type { Memory } from './model';
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
  | 'temp_file';

export interface IntegrityProblem {
  kind: ProblemKind;
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
  healthy: boolean;
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
};

/** Temporary files younger than this may belong to a write in progress. */
const TEMP_FILE_REPORT_AGE_MS = 60_000;

const INDEX_FIELDS = ['topic', 'tags', 'phase', 'difficulty', 'created_at'] as const;

export function checkIntegrity(s: IntegritySnapshot): IntegrityReport {
  const problems: IntegrityProblem[] = [];
  const add = (p: IntegrityProblem) => problems.push(p);

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
    healthy: problems.length === 0,
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
