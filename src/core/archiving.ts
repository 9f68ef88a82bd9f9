/**
 * Archive first: how the write commands put a memory's text in archives/
 * before they change or remove its file (design.md, "Writing"). The caller
 * holds the lock and writes archive_index.json after these, before it touches
 * the memory file.
 */
import type { LoadedFile } from './diskMirror';
import { ChangedOnDiskError } from './errors';
import { InvalidMemoryFile } from './memoryFile';
import { versionText } from './memoryUpdate';
import { newMemoryId } from './memoryIds';
import type { ArchiveEntry, ArchiveReason, MemoryMeta } from './model';
import { nowIso, type StoreParts } from './storeParts';

/** What archiving reads and writes: the mirror's archives, and the index for new IDs. */
export type ArchivingParts = Pick<StoreParts, 'mirror' | 'index'>;

/**
 * Makes sure archives/ holds the memory's fullest text. A reduced memory's
 * archive already does; `overwrite` replaces an older archive with a full text.
 */
export function ensureArchived({ mirror }: Pick<StoreParts, 'mirror'>, id: string, file: LoadedFile, overwrite = file.memory.phase === 0): void {
  if (overwrite || !mirror.archiveFiles.has(id)) mirror.writeArchiveFile(id, file.raw);
}

/**
 * Archive first, for a memory about to leave the active set: its fullest text
 * in archives/ and its archive_index.json entry (written), before the caller
 * deletes its file (`overwrite` as for ensureArchived).
 */
export function archiveForRemoval(parts: Pick<StoreParts, 'mirror'>, id: string, file: LoadedFile, reason: ArchiveReason, overwrite?: boolean): void {
  ensureArchived(parts, id, file, overwrite);
  parts.mirror.archiveIndex.memories.set(id, archiveEntryFor(file.memory, reason));
  parts.mirror.writeArchiveIndex();
}

/**
 * Removes the file of a memory archiveForRemoval archived. If a person saved
 * the file after the command read it (ChangedOnDiskError, rethrown), it stays
 * active as saved and its archive-index entry is taken back: the store reads
 * as before the command, the archive file being that of an active memory.
 */
export function removeArchivedFile(parts: Pick<StoreParts, 'mirror'>, id: string): void {
  try {
    parts.mirror.deleteMemoryFile(id);
  } catch (error) {
    if (error instanceof ChangedOnDiskError) takeBackArchiveEntry(parts, id);
    throw error;
  }
}

/** Takes back the archive-index entry written for a memory that stays active after all (written at once). */
export function takeBackArchiveEntry(parts: Pick<StoreParts, 'mirror'>, id: string): void {
  parts.mirror.archiveIndex.memories.delete(id);
  parts.mirror.writeArchiveIndex();
}

/**
 * Archives a memory's current text under a new ID (a previous version,
 * `version_of` the memory), and with `withOwnArchive` also its own archive
 * (the full text from before eviction reduced it). The caller writes
 * archive_index.json. `ownArchiveKept`: the own archive was copied, so the
 * caller may delete it.
 */
export function archiveVersions(parts: ArchivingParts, id: string, file: LoadedFile, reason: ArchiveReason, withOwnArchive: boolean): { versions: string[]; ownArchiveKept: boolean } {
  const { mirror } = parts;
  const texts: { raw: string; meta: MemoryMeta }[] = [];
  let ownArchiveKept = false;
  const own = withOwnArchive ? mirror.readArchiveText(id) : null;
  if (own !== null) {
    try {
      texts.push({ raw: own, meta: mirror.parseMemory(own) });
      ownArchiveKept = true;
    } catch (error) {
      // An unreadable archive is left where it is, for check and fix to report.
      if (!(error instanceof InvalidMemoryFile)) throw error;
    }
  }
  texts.push({ raw: file.raw, meta: file.memory });
  const versions: string[] = [];
  for (const { raw, meta } of texts) {
    const versionId = newMemoryId(parts);
    mirror.writeArchiveFile(versionId, versionText(raw, versionId));
    mirror.archiveIndex.memories.set(versionId, { ...archiveEntryFor(meta, reason), version_of: id });
    versions.push(versionId);
  }
  return { versions, ownArchiveKept };
}

/** A memory's fullest text: its archive's when eviction reduced it, else the file's. */
export function fullTextOf({ mirror }: Pick<StoreParts, 'mirror'>, id: string, file: LoadedFile): { topic: string; summary: string; content: string; tags: readonly string[] } {
  const archived = file.memory.phase > 0 ? mirror.readArchive(id) : null;
  const memory = archived ?? file.memory;
  return { topic: file.memory.topic, summary: file.memory.summary, content: memory.content, tags: file.memory.tags };
}

/** archive_index.json's entry for a memory archived now. */
export function archiveEntryFor(meta: MemoryMeta, reason: ArchiveReason): ArchiveEntry {
  return { topic: meta.topic, tags: meta.tags, archived_at: nowIso(), original_phase: meta.phase, reason };
}
