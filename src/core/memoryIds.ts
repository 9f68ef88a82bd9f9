/**
 * New memory IDs: `mem_` and random hex digits, never one the store has used
 * or lists anywhere (an active, archived, forgotten, evicted or purged
 * memory, an unreadable file's name, index.json), so that an archive or a
 * purge record always names one memory.
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
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
 * memory until the next full collection, long after the first store. A file
 * is read in pieces (mentionedIdsOfFile): whole, it was 17 MB more at once.
 */
export class MentionedIds {
  private readonly numbers = new Set<number>();

  /** The IDs `bytes` hold (all of them: an ID cut short by their end is none). */
  constructor(bytes?: Uint8Array) {
    if (bytes) this.addBefore(bytes, bytes.length);
  }

  has(id: string): boolean {
    return isMemoryId(id) && this.numbers.has(hexNumber(Buffer.from(id, 'latin1'), MEMORY_ID_PREFIX.length)!);
  }

  /** Adds the IDs of `bytes` that start before `limit`. */
  addBefore(bytes: Uint8Array, limit: number): void {
    const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    for (let at = view.indexOf(ID_PREFIX); at >= 0 && at < limit; at = view.indexOf(ID_PREFIX, at + 1)) {
      const n = hexNumber(view, at + ID_PREFIX.length);
      if (n !== null) this.numbers.add(n);
    }
  }
}

const ID_PREFIX = Buffer.from(MEMORY_ID_PREFIX, 'latin1');
/** How long an ID is in bytes. */
const ID_BYTES = MEMORY_ID_PREFIX.length + MEMORY_ID_HEX_DIGITS;
const ESCAPE = Buffer.from('\\u', 'latin1');
/** How much of a file mentionedIdsOfFile reads at a time. */
export const MENTIONS_PIECE_BYTES = 1 << 20;

/** The IDs a file mentions, or `escaped` when its bytes hold a `\u` escape somewhere: an ID may be written with one, and only a parse tells. */
export type FileMentions = MentionedIds | 'escaped';

/**
 * The pieces of a file as they are read into one buffer: each is scanned
 * with the bytes kept from the one before, where an ID or an escape may have
 * begun (the last ID_BYTES - 1 bytes, moved to the buffer's start).
 */
class PieceScan {
  readonly buffer: Buffer;
  /** Bytes kept from the previous piece, at the buffer's start: where the next read goes. */
  kept = 0;
  readonly ids = new MentionedIds();

  constructor(pieceBytes: number) {
    this.buffer = Buffer.allocUnsafe(Math.max(1, pieceBytes) + ID_BYTES);
  }

  get room(): number {
    return this.buffer.length - this.kept;
  }

  /** `read` bytes came in after the kept ones: false once an escape is seen. */
  took(read: number): boolean {
    const end = this.kept + read;
    const window = this.buffer.subarray(0, end);
    if (window.includes(ESCAPE)) return false;
    // An ID starting in the last ID_BYTES - 1 bytes may go on in the next piece: it is looked at then.
    const keepFrom = Math.max(0, end - (ID_BYTES - 1));
    this.ids.addBefore(window, keepFrom);
    this.buffer.copyWithin(0, keepFrom, end);
    this.kept = end - keepFrom;
    return true;
  }
}

/** The IDs `file` mentions, read in pieces of `pieceBytes`; throws what reading it throws (ENOENT for a missing file). */
export function mentionedIdsOfFile(file: string, pieceBytes = MENTIONS_PIECE_BYTES): FileMentions {
  const scan = new PieceScan(pieceBytes);
  const fd = fs.openSync(file, 'r');
  try {
    for (;;) {
      const read = fs.readSync(fd, scan.buffer, scan.kept, scan.room, null);
      if (read === 0) return scan.ids;
      if (!scan.took(read)) return 'escaped';
    }
  } finally {
    fs.closeSync(fd);
  }
}

/** mentionedIdsOfFile, the event loop free between the pieces. */
export async function mentionedIdsOfFileAsync(file: string, pieceBytes = MENTIONS_PIECE_BYTES): Promise<FileMentions> {
  const scan = new PieceScan(pieceBytes);
  const handle = await fs.promises.open(file, 'r');
  try {
    for (;;) {
      const { bytesRead } = await handle.read(scan.buffer, scan.kept, scan.room, null);
      if (bytesRead === 0) return scan.ids;
      if (!scan.took(bytesRead)) return 'escaped';
    }
  } finally {
    await handle.close();
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
