/**
 * New memory IDs: `mem_` and random hex digits, never one the store has used
 * or lists anywhere (an active, archived, forgotten, evicted or purged
 * memory, an unreadable file's name, index.json), so that an archive or a
 * purge record always names one memory.
 */
import { randomBytes } from 'node:crypto';
import type { DiskMirror } from './diskMirror';
import { MEMORY_ID_HEX_DIGITS, MEMORY_ID_PREFIX, isMemoryId } from './model';

/** Where IDs in use are found; the caller holds the lock and refreshed the mirror. */
export interface IdsInUse {
  readonly mirror: Pick<DiskMirror, 'files' | 'fileSignatures' | 'archiveFiles' | 'archiveIndex'>;
  readonly index: { mentions(id: string): boolean };
}

/**
 * The memory IDs written anywhere in a file's bytes (a key, a tag index
 * entry, a topic quoting one): what a new ID must avoid in a file not parsed.
 * One pass over the bytes, without building what the file holds; each ID is
 * kept as the number its hex digits make. ~55 ms for index.json at 50,000
 * memories, where a parse took ~200 ms and ~60 MB, and a search of the bytes
 * for each new ID ~1 ms a store at 10,000. The bytes are read as they are:
 * as a string (17 MB at 50,000 memories, outside the heap) they stayed in
 * memory until the next full collection, long after the first store.
 */
export class MentionedIds {
  private readonly numbers = new Set<number>();

  constructor(bytes: Uint8Array) {
    const prefix = Buffer.from(MEMORY_ID_PREFIX, 'latin1');
    const file = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    for (let at = file.indexOf(prefix); at >= 0; at = file.indexOf(prefix, at + 1)) {
      const n = hexNumber(file, at + prefix.length);
      if (n !== null) this.numbers.add(n);
    }
  }

  has(id: string): boolean {
    return isMemoryId(id) && this.numbers.has(hexNumber(Buffer.from(id, 'latin1'), MEMORY_ID_PREFIX.length)!);
  }
}

/** The number MEMORY_ID_HEX_DIGITS lower-case hex digits (ASCII) at `at` make (as int32), or null where there are fewer. */
function hexNumber(bytes: Uint8Array, at: number): number | null {
  if (at + MEMORY_ID_HEX_DIGITS > bytes.length) return null;
  let n = 0;
  for (let i = at; i < at + MEMORY_ID_HEX_DIGITS; i++) {
    const c = bytes[i]!;
    const digit = c >= 0x30 && c <= 0x39 ? c - 0x30 : c >= 0x61 && c <= 0x66 ? c - 0x57 : -1;
    if (digit < 0) return null;
    n = n * 16 + digit;
  }
  // As a signed 32-bit integer: a small integer to V8, never a boxed number (half of all IDs are above 2^31).
  return n | 0;
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
      !index.mentions(id)
    ) {
      return id;
    }
  }
}
