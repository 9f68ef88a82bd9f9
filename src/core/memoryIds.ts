/**
 * New memory IDs: `mem_` and random hex digits, never one the store has used
 * or lists anywhere (an active, archived, forgotten, evicted or purged
 * memory, an unreadable file's name, index.json), so that an archive or a
 * purge record always names one memory.
 */
import { randomBytes } from 'node:crypto';
import type { DiskMirror } from './diskMirror';
import { MEMORY_ID_HEX_DIGITS, MEMORY_ID_PREFIX } from './model';

/** Where IDs in use are found; the caller holds the lock and refreshed the mirror. */
export interface IdsInUse {
  readonly mirror: Pick<DiskMirror, 'files' | 'fileSignatures' | 'archiveFiles' | 'archiveIndex'>;
  readonly index: { readonly ids: ReadonlySet<string> };
}

/** A random ID of the memory ID format, maybe in use. */
export function randomMemoryId(): string {
  return `${MEMORY_ID_PREFIX}${randomBytes(MEMORY_ID_HEX_DIGITS / 2).toString('hex')}`;
}

/** A new ID: the first of `candidates` (random IDs) that is nowhere in use. */
export function newMemoryId({ mirror, index }: IdsInUse, candidates: () => string = randomMemoryId): string {
  for (;;) {
    const id = candidates();
    if (
      !mirror.files.has(id) &&
      !mirror.fileSignatures.has(`${id}.md`) &&
      !mirror.archiveFiles.has(id) &&
      !mirror.archiveIndex.memories.has(id) &&
      !mirror.archiveIndex.purged.has(id) &&
      !index.ids.has(id)
    ) {
      return id;
    }
  }
}
