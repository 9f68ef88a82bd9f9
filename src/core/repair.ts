/**
 * Check and repair: the integrity snapshot of a store's internals, and the
 * repair of each kind of problem integrity.ts reports (`ltm fix`).
 *
 * Repairs work through RepairTarget, the few operations they need, so that the
 * rules for each problem read in one place and cannot reach the rest of the
 * store. What every repair leaves behind (index.json, stats.json and
 * archive_index.json derived again from the repaired memories) is written
 * once, after all of them (fixStore, on the store's parts).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { DiskMirror, LoadedFile } from './diskMirror';
import { readTextIfExists } from './files';
import type { IndexWriter } from './indexWriter';
import { checkIntegrity, type IntegrityReport, type IntegritySnapshot } from './integrity';
import { updateFrontmatter } from './memoryFile';
import type { UnreadableAnchor } from './model';
import type { ArchiveIndex, StorePaths } from './storeFiles';
import { newMemoryId } from './memoryIds';
import { registerMemory, unregisterMemory, type StoreParts } from './storeParts';
import type { ArchivedMemory, FixResult } from './storeTypes';

/** What the repairs may do to a store (under its lock). */
export interface RepairTarget {
  readonly paths: StorePaths;
  readonly files: ReadonlyMap<string, LoadedFile>;
  readonly archiveIndex: ArchiveIndex;
  newId(): string;
  register(id: string): void;
  unregister(id: string): void;
  writeMemoryFile(id: string, raw: string): void;
  forgetFileName(name: string): void;
  writeArchiveFile(id: string, raw: string): void;
  deleteArchiveFile(id: string): void;
  readArchive(id: string): ArchivedMemory | null;
}

/** The store's files as last seen, in the form integrity.ts checks. */
export function integritySnapshot(mirror: DiskMirror, index: IndexWriter): IntegritySnapshot {
  return {
    paths: mirror.paths,
    files: mirror.files,
    invalidFiles: mirror.invalidFiles,
    activeIds: new Set(mirror.files.keys()),
    indexIds: index.ids,
    indexStatus: mirror.indexStatus,
    indexEntries: index.entriesForCheck(),
    statsIds: new Set(mirror.stats.keys()),
    statsStatus: mirror.statsStatus,
    stateStatus: mirror.stateStatus,
    archiveIndex: mirror.archiveIndex,
    archiveIndexStatus: mirror.archiveIndexStatus,
    archiveFiles: mirror.archiveFiles,
    tempFiles: mirror.tempFiles(),
    unreadableAnchors: unreadableAnchorsOf(mirror.files),
  };
}

/** The anchors entries each memory's loading left out, as parsed with it (records keep them too): no file is read. */
function unreadableAnchorsOf(files: ReadonlyMap<string, LoadedFile>): Map<string, readonly UnreadableAnchor[]> {
  const found = new Map<string, readonly UnreadableAnchor[]>();
  for (const [id, file] of files) {
    const entries = file.memory.unreadable_anchors;
    if (entries && entries.length > 0) found.set(id, entries);
  }
  return found;
}

/** Repairs each problem of the report; returns what was done, one sentence each. */
export function repairProblems(report: IntegrityReport, target: RepairTarget, options: { cleanArchives?: boolean } = {}): string[] {
  const { paths } = target;
  const actions: string[] = [];
  for (const problem of report.problems) {
    switch (problem.kind) {
      case 'temp_file':
        fs.rmSync(problem.file!, { force: true });
        actions.push(`Removed leftover temporary file ${path.basename(problem.file!)}`);
        break;
      case 'invalid_file': {
        const moved = quarantine(paths, path.join(paths.memories, problem.file!));
        target.forgetFileName(problem.file!);
        actions.push(`Moved invalid file ${problem.file} to ${path.relative(paths.root, moved)} (${problem.detail})`);
        break;
      }
      case 'duplicate_id':
      case 'id_mismatch': {
        const name = problem.file!;
        const raw = readTextIfExists(path.join(paths.memories, name));
        if (raw === null) break;
        const newId = target.newId();
        target.writeMemoryFile(newId, updateFrontmatter(raw, { id: newId }));
        target.register(newId);
        fs.rmSync(path.join(paths.memories, name), { force: true });
        target.forgetFileName(name);
        actions.push(`Gave the copy ${name} (claiming ${problem.id}) its own ID ${newId}`);
        break;
      }
      case 'not_indexed':
        target.register(problem.id!);
        actions.push(`Added ${problem.id} to index.json (a valid memory it did not list)`);
        break;
      case 'missing_file':
        target.unregister(problem.id!);
        actions.push(`Removed index entry ${problem.id} (its file is missing)`);
        break;
      case 'missing_full_text': {
        const file = target.files.get(problem.id!);
        if (file) target.writeArchiveFile(problem.id!, file.raw);
        actions.push(`Archived the current text of ${problem.id} (its full text was never archived)`);
        break;
      }
      case 'archive_entry_active':
        target.archiveIndex.memories.delete(problem.id!);
        actions.push(`Removed archive-index entry ${problem.id} (the memory is active)`);
        break;
      case 'archive_entry_without_file':
        target.archiveIndex.memories.delete(problem.id!);
        actions.push(`Removed archive-index entry ${problem.id} (its archive file is missing)`);
        break;
      case 'orphaned_archive': {
        const id = problem.id!;
        if (options.cleanArchives) {
          target.deleteArchiveFile(id);
          target.archiveIndex.purged.set(id, { purged_at: new Date().toISOString() });
          actions.push(`Deleted orphaned archive ${id}.md`);
        } else {
          const archived = target.readArchive(id);
          target.archiveIndex.memories.set(id, {
            topic: archived?.topic ?? '',
            tags: archived?.tags ?? [],
            archived_at: new Date().toISOString(),
            original_phase: archived?.phase ?? 0,
            reason: 'recovered',
          });
          actions.push(`Listed orphaned archive ${id}.md as an archived memory (restorable)`);
        }
        break;
      }
      // The repairs below are the rewrites the store does after every repair.
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
        const moved = quarantine(paths, paths.state);
        actions.push(`Moved unreadable state.json to ${path.relative(paths.root, moved)} and wrote a new one`);
        break;
      }
      // A person's text: neither deleted nor rewritten. The memory works without the entry meanwhile.
      case 'unreadable_anchor':
        break;
    }
  }
  return actions;
}

/** Moves a file the store cannot use to quarantine/, kept for a person to look at rather than deleted. */
function quarantine(paths: StorePaths, file: string): string {
  fs.mkdirSync(paths.quarantine, { recursive: true });
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const target = path.join(paths.quarantine, `${stamp}-${path.basename(file)}`);
  fs.renameSync(file, target);
  return target;
}

/**
 * `ltm fix`: repairs everything check reports, in one pass, then writes what
 * is derived from the repaired memories; a check afterwards is healthy. The
 * caller holds the lock and refreshed the store.
 */
export function fixStore(parts: Pick<StoreParts, 'paths' | 'mirror' | 'index' | 'stats' | 'queries'>, options: { cleanArchives?: boolean } = {}): FixResult {
  const { mirror, index, stats, queries } = parts;
  mirror.refresh({ full: true });
  const report = checkIntegrity(integritySnapshot(mirror, index));
  const actions = repairProblems(
    report,
    {
      paths: parts.paths,
      files: mirror.files,
      get archiveIndex() {
        return mirror.archiveIndex;
      },
      newId: () => newMemoryId(parts),
      register: (id) => registerMemory(parts, id),
      unregister: (id) => unregisterMemory(parts, id),
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
  for (const id of index.ids) if (!mirror.files.has(id)) queries.touched(id);
  index.replaceIds(new Set(mirror.files.keys()));
  for (const id of [...mirror.stats.keys()]) if (!mirror.isActive(id)) stats.set(id, undefined);
  // Repaired means written now, also in a server that defers index.json.
  index.write({ now: true });
  // stats.json whole again, for readers of the reference format (and a damaged one rewritten).
  stats.compact();
  mirror.writeArchiveIndex();
  if (report.problems.some((p) => p.kind === 'state_unreadable')) mirror.stateFile.writeAnew();
  return { actions, report: checkIntegrity(integritySnapshot(mirror, index)) };
}
