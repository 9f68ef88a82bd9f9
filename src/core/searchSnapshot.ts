/**
 * The saved form of a search index (search-index.bin, see
 * searchIndexCache.ts), byte by byte. MemorySearchIndex (search.ts) keeps
 * what an index is; this module keeps how one is laid out, written and
 * checked:
 *
 * - a little-endian u32: the length of a JSON header (format, field names,
 *   the document ID of each slot or null for a free one, the terms in
 *   ascending order), then the header;
 * - padding to 8 bytes, then the version of each slot's text as three
 *   doubles (SnapshotVersions; NaN for none);
 * - u32 numbers: the field lengths of every slot (slot-major), then for each
 *   term and field the number of documents, their slots and their frequencies.
 *
 * A loaded index reads its lists as views of these numbers (postingLists.ts),
 * so they are checked once here: a damaged or older snapshot is refused
 * whole, and the index is rebuilt from the memory files.
 */
import type { FileSignature } from './files';

/**
 * The version of what the index holds for a text: bump it when tokenizing,
 * stop words, fields or this layout change, so that a snapshot saved by an
 * older version is rebuilt rather than read.
 */
export const SEARCH_INDEX_FORMAT = 'ltm-search-4';

/** How many numbers a SnapshotNumbersWriter gives at a time (1 MB). */
export const SERIALIZE_BLOCK = 1 << 18;

/** What a snapshot's JSON header holds. */
interface SnapshotHeader {
  format: string;
  fields: readonly string[];
  /** Document ID by slot; null for a free slot. */
  ids: readonly (string | null)[];
  terms: readonly string[];
}

/** Numbers per slot in a snapshot's versions: the size, mtime and inode of the file the document was read from. */
const VERSION_NUMBERS = 3;

/**
 * The version of each document's text a loaded snapshot was indexed from,
 * by slot: what tells a process which documents it must index again.
 * Numbers, not strings in the header: at 10,000 memories, parsing and
 * comparing keys written as text was ~10 ms of a fresh process's first search.
 */
export class SnapshotVersions {
  constructor(private readonly numbers: Float64Array) {}

  /** Whether the document in `slot` was indexed from the file version `signature` (never when none was saved for it). */
  isAt(slot: number, signature: FileSignature): boolean {
    const at = slot * VERSION_NUMBERS;
    const n = this.numbers;
    // A slot saved without a version holds NaN, which equals nothing.
    return at + VERSION_NUMBERS <= n.length && n[at] === signature.size && n[at + 1] === signature.mtimeMs && n[at + 2] === signature.ino;
  }
}

/** What an index gives to be saved (see writeSnapshotStart). */
export interface SnapshotContents {
  fields: readonly string[];
  /** Document ID by slot; undefined for a free slot. */
  ids: readonly (string | undefined)[];
  /** In ascending order, which a loaded index's prefix lookups take as they are (termDictionary.ts). */
  terms: readonly string[];
  /** The version of each document's text (the signature of its file); undefined when unknown. */
  versionOf: (id: string) => FileSignature | undefined;
}

/** Where a snapshot's versions start after a JSON header `jsonLength` bytes long (and its own length before it): padded to 8 bytes, for doubles. */
function versionsStart(jsonLength: number): number {
  return Math.ceil((4 + jsonLength) / 8) * 8;
}

/** Gives `write` a snapshot's header and versions; its numbers follow, through a SnapshotNumbersWriter. */
export function writeSnapshotStart(contents: SnapshotContents, write: (piece: Uint8Array) => void): void {
  const header: SnapshotHeader = {
    format: SEARCH_INDEX_FORMAT,
    fields: contents.fields,
    ids: contents.ids.map((id) => id ?? null),
    terms: contents.terms,
  };
  const json = Buffer.from(JSON.stringify(header), 'utf8');
  const start = Buffer.alloc(versionsStart(json.length));
  start.writeUInt32LE(json.length, 0);
  json.copy(start, 4);
  write(start);
  const versions = new Float64Array(contents.ids.length * VERSION_NUMBERS).fill(NaN);
  contents.ids.forEach((id, slot) => {
    const version = id === undefined ? undefined : contents.versionOf(id);
    if (!version) return;
    const at = slot * VERSION_NUMBERS;
    versions[at] = version.size;
    versions[at + 1] = version.mtimeMs;
    versions[at + 2] = version.ino;
  });
  write(new Uint8Array(versions.buffer));
}

/**
 * A snapshot's numbers, given to `write` through one block of `blockNumbers`
 * numbers, reused once `write` returns: saving an index never holds a second
 * copy of it (~40 MB at 50,000 memories, on top of the loaded snapshot's).
 */
export class SnapshotNumbersWriter {
  private readonly block: Uint32Array;
  private used = 0;

  constructor(
    private readonly write: (piece: Uint8Array) => void,
    blockNumbers = SERIALIZE_BLOCK,
  ) {
    this.block = new Uint32Array(blockNumbers);
  }

  putOne(n: number): void {
    this.block[this.used++] = n;
    if (this.used === this.block.length) this.flush();
  }

  put(list: ArrayLike<number>): void {
    const block = this.block;
    for (let i = 0; i < list.length; ) {
      const count = Math.min(list.length - i, block.length - this.used);
      for (let j = 0; j < count; j++) block[this.used + j] = list[i + j]!;
      this.used += count;
      i += count;
      if (this.used === block.length) this.flush();
    }
  }

  /** Writes what the block holds; call once all is put. */
  flush(): void {
    if (this.used > 0) this.write(new Uint8Array(this.block.buffer, 0, this.used * 4));
    this.used = 0;
  }
}

/** A snapshot as readSnapshot checked it: what MemorySearchIndex.deserialize makes an index of. */
export interface SnapshotParts {
  /** Document ID by slot (strings; null for a free slot), not yet checked for repeats. */
  ids: readonly (string | null)[];
  /** Free slots, which no posting names. */
  freeSlots: number[];
  /** The terms, all strings, not yet checked for repeats; the caller's to keep (a TermDictionary takes it as it is). */
  terms: string[];
  versions: SnapshotVersions;
  /** All the numbers: the field lengths first (ids.length × the fields), then the postings. */
  numbers: Uint32Array;
  /** The summed field lengths of the slots in use, by field. */
  totalLengths: Float64Array;
  /** Where each term's postings start in `numbers`, by term. */
  starts: Uint32Array;
}

/**
 * The parts of serialized index `bytes` whose fields are `fields`; null
 * when they are not a whole snapshot of this format, with every posting
 * naming a slot in use and no term without one.
 */
export function readSnapshot(bytes: Buffer, fields: readonly string[]): SnapshotParts | null {
  if (bytes.length < 4) return null;
  const jsonLength = bytes.readUInt32LE(0);
  const versionsAt = versionsStart(jsonLength);
  if (versionsAt > bytes.length) return null;
  let header: SnapshotHeader;
  try {
    header = JSON.parse(bytes.toString('utf8', 4, 4 + jsonLength)) as SnapshotHeader;
  } catch {
    return null;
  }
  if (
    header === null ||
    typeof header !== 'object' ||
    header.format !== SEARCH_INDEX_FORMAT ||
    !Array.isArray(header.fields) ||
    header.fields.join() !== fields.join() ||
    !Array.isArray(header.ids) ||
    !Array.isArray(header.terms) ||
    !header.terms.every((term) => typeof term === 'string')
  ) {
    return null;
  }
  const slots = header.ids.length;
  const freeSlots: number[] = [];
  for (let slot = 0; slot < slots; slot++) {
    const id = header.ids[slot];
    if (id === null) freeSlots.push(slot);
    else if (typeof id !== 'string') return null;
  }
  const numbersAt = versionsAt + slots * VERSION_NUMBERS * 8;
  if (numbersAt > bytes.length || (bytes.length - numbersAt) % 4 !== 0) return null;
  // Views of the file's own bytes where they are aligned (a file read whole is), else aligned copies:
  // at 50,000 memories a copy would hold tens of MB twice.
  const versions =
    (bytes.byteOffset + versionsAt) % 8 === 0
      ? new Float64Array(bytes.buffer, bytes.byteOffset + versionsAt, slots * VERSION_NUMBERS)
      : new Float64Array(new Uint8Array(bytes.subarray(versionsAt, numbersAt)).buffer);
  const count = (bytes.length - numbersAt) / 4;
  let numbers: Uint32Array;
  if ((bytes.byteOffset + numbersAt) % 4 === 0) {
    numbers = new Uint32Array(bytes.buffer, bytes.byteOffset + numbersAt, count);
  } else {
    numbers = new Uint32Array(count);
    Buffer.from(numbers.buffer).set(bytes.subarray(numbersAt));
  }
  const fieldCount = fields.length;
  const lengthsEnd = slots * fieldCount;
  if (lengthsEnd > numbers.length) return null;
  // A bitmap of the freed slots, which no posting may name; none in the usual case, where nothing was removed.
  let freed: Uint8Array | null = null;
  if (freeSlots.length > 0) {
    freed = new Uint8Array(slots);
    for (const slot of freeSlots) freed[slot] = 1;
  }
  const totalLengths = new Float64Array(fieldCount);
  addLengths(numbers, slots, fieldCount, freed, totalLengths);
  const starts = postingStarts(numbers, lengthsEnd, header.terms.length, fieldCount, slots, freed);
  if (!starts) return null;
  return { ids: header.ids, freeSlots, terms: header.terms, versions: new SnapshotVersions(versions), numbers, totalLengths, starts };
}

/** Where the postings of a term that start at `at` in a snapshot's numbers end: a count, then as many slots and frequencies, per field. */
export function savedPostingsEnd(numbers: Uint32Array, at: number, fieldCount: number): number {
  for (let f = 0; f < fieldCount; f++) at += 1 + 2 * numbers[at]!;
  return at;
}

/** Adds the field lengths of a snapshot's slots in use (the numbers it starts with) to `totals`, by field. */
function addLengths(numbers: Uint32Array, slots: number, fieldCount: number, freed: Uint8Array | null, totals: Float64Array): void {
  for (let slot = 0, at = 0; slot < slots; slot++, at += fieldCount) {
    if (freed !== null && freed[slot] === 1) continue;
    for (let f = 0; f < fieldCount; f++) totals[f] = totals[f]! + numbers[at + f]!;
  }
}

/**
 * Where the postings of each of a snapshot's `terms` terms start in its
 * numbers (from `at`, after the field lengths, to their end), each checked:
 * whole, naming only slots below `slots` and not `freed`, and not empty
 * (only terms some document holds are written; a search counts on it).
 * Null when any is not. One loop over ~2 million numbers at 10,000
 * memories, run before anything is optimised: kept in one function that is
 * compiled once, rather than a call per list.
 */
function postingStarts(numbers: Uint32Array, at: number, terms: number, fieldCount: number, slots: number, freed: Uint8Array | null): Uint32Array | null {
  const starts = new Uint32Array(terms);
  const end = numbers.length;
  for (let t = 0; t < terms; t++) {
    starts[t] = at;
    let entries = 0;
    for (let f = 0; f < fieldCount; f++) {
      if (at >= end) return null;
      const n = numbers[at++]!;
      const slotsEnd = at + n;
      if (slotsEnd + n > end) return null;
      for (; at < slotsEnd; at++) {
        const slot = numbers[at]!;
        if (slot >= slots || (freed !== null && freed[slot] === 1)) return null;
      }
      at += n;
      entries += n;
    }
    if (entries === 0) return null;
  }
  return at === end ? starts : null;
}
