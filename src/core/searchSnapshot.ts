/**
 * The saved form of a search index (search-index.bin, see
 * searchIndexCache.ts), byte by byte. MemorySearchIndex (search.ts) keeps
 * what an index is; this module keeps how one is laid out, written and
 * checked:
 *
 * - a little-endian u32: the length of a JSON header (format, field names,
 *   the document ID of each slot or null for a free one, the terms in
 *   ascending order), then the header;
 * - padding to 8 bytes, then the version of each slot's text as four
 *   doubles (SnapshotVersions; NaN for none): the size, mtime and inode of
 *   the file it was read from, and the digest of the text itself;
 * - u32 numbers: the field lengths of every slot (slot-major), then for each
 *   term and field the number of documents holding it;
 * - the postings, in numbers of the header's `width` bytes: for each term and
 *   field, the documents' slots, then how often each holds the term.
 *
 * The postings are most of a snapshot (~4.6 million slots and as many
 * frequencies at 50,000 memories), and a loaded index keeps them in memory as
 * they are. Two bytes a number hold them whenever they fit, which they do up
 * to 65,536 slots unless a memory holds a word more than 65,535 times: half
 * of what four bytes took (~19 MB less of a server's memory at 50,000).
 *
 * A loaded index reads its lists as views of the postings (postingLists.ts),
 * so they are checked once here: a damaged or older snapshot is refused
 * whole, and the index is rebuilt from the memory files.
 */
import type { FileSignature } from './files';

/**
 * The version of what the index holds for a text: bump it when tokenizing,
 * stop words, fields or this layout change, so that a snapshot saved by an
 * older version is rebuilt rather than read.
 */
export const SEARCH_INDEX_FORMAT = 'ltm-search-6';

/** Bytes per number of a snapshot's postings. */
export type PostingWidth = 2 | 4;

/** The largest number a posting of `width` bytes holds. */
export function largestPosting(width: PostingWidth): number {
  return width === 2 ? 0xffff : 0xffffffff;
}

/**
 * The width a snapshot of `slots` slots takes: 2 bytes a number when every slot (counted from 0) and
 * every frequency fits, else 4. `largeFrequencies`: some frequency is over 65,535.
 */
export function postingWidth(slots: number, largeFrequencies: boolean): PostingWidth {
  return slots <= largestPosting(2) + 1 && !largeFrequencies ? 2 : 4;
}

/** Numbers of a snapshot's postings, as loaded: 2 or 4 bytes each. */
export type PostingNumbers = Uint16Array | Uint32Array;

/** How many numbers a SnapshotNumbersWriter gives at a time (1 MB). */
export const SERIALIZE_BLOCK = 1 << 18;

/** What a snapshot's JSON header holds. */
interface SnapshotHeader {
  format: string;
  fields: readonly string[];
  width: PostingWidth;
  /** Document ID by slot; null for a free slot. */
  ids: readonly (string | null)[];
  terms: readonly string[];
}

/**
 * Numbers per slot in a snapshot's versions: the size, mtime and inode of the
 * file the document was read from, and the digest of its searched text
 * (searchedTextDigest, searchedText.ts). 'ltm-search-5' had no digest: a copied
 * project, every file with a new inode and time, had its index built anew.
 */
const VERSION_NUMBERS = 4;

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

  /** The digest of the text the document in `slot` was indexed from; NaN when none was saved. */
  textDigestAt(slot: number): number {
    return this.numbers[slot * VERSION_NUMBERS + 3] ?? NaN;
  }
}

/** What an index gives to be saved (see writeSnapshotStart). */
export interface SnapshotContents {
  fields: readonly string[];
  /** Bytes per number of the postings: 2 only when every slot and frequency is at most 65,535. */
  width: PostingWidth;
  /** Document ID by slot; undefined for a free slot. */
  ids: readonly (string | undefined)[];
  /** In ascending order, which a loaded index's prefix lookups take as they are (termDictionary.ts). */
  terms: readonly string[];
  /** The version of each document's text (the signature of its file); undefined when unknown. */
  versionOf: (id: string) => FileSignature | undefined;
  /** The digest of the text indexed in each slot in use (NaN when unknown). */
  textDigestAt: (slot: number) => number;
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
    width: contents.width,
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
    if (id === undefined) return;
    const at = slot * VERSION_NUMBERS;
    versions[at + 3] = contents.textDigestAt(slot);
    const version = contents.versionOf(id);
    if (!version) return;
    versions[at] = version.size;
    versions[at + 1] = version.mtimeMs;
    versions[at + 2] = version.ino;
  });
  write(new Uint8Array(versions.buffer));
}

/**
 * A snapshot's numbers of `width` bytes (4 for its field lengths and counts,
 * its PostingWidth for its postings), given to `write` through one block of
 * `blockNumbers` numbers, reused once `write` returns: saving an index never
 * holds a second copy of it (~20 MB at 50,000 memories, on top of the loaded
 * snapshot's). A number the width cannot hold is refused, never cut.
 */
export class SnapshotNumbersWriter {
  private readonly block: Uint16Array | Uint32Array;
  private readonly largest: number;
  private used = 0;

  constructor(
    private readonly write: (piece: Uint8Array) => void,
    blockNumbers = SERIALIZE_BLOCK,
    width: PostingWidth = 4,
  ) {
    this.block = width === 2 ? new Uint16Array(blockNumbers) : new Uint32Array(blockNumbers);
    this.largest = largestPosting(width);
  }

  putOne(n: number): void {
    if (n > this.largest) throw new RangeError(`${n} does not fit in a snapshot number of ${this.block.BYTES_PER_ELEMENT} bytes`);
    this.block[this.used++] = n;
    if (this.used === this.block.length) this.flush();
  }

  put(list: ArrayLike<number>): void {
    const block = this.block;
    const largest = this.largest;
    for (let i = 0; i < list.length; ) {
      const count = Math.min(list.length - i, block.length - this.used);
      for (let j = 0; j < count; j++) {
        const n = list[i + j]!;
        if (n > largest) throw new RangeError(`${n} does not fit in a snapshot number of ${block.BYTES_PER_ELEMENT} bytes`);
        block[this.used + j] = n;
      }
      this.used += count;
      i += count;
      if (this.used === block.length) this.flush();
    }
  }

  /** Writes what the block holds; call once all is put. */
  flush(): void {
    if (this.used > 0) this.write(new Uint8Array(this.block.buffer, 0, this.used * this.block.BYTES_PER_ELEMENT));
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
  /** The field lengths (ids.length × the fields), then the counts (terms × the fields). */
  numbers: Uint32Array;
  /** The postings: for each term and field, `count` slots, then as many frequencies. */
  postings: PostingNumbers;
  width: PostingWidth;
  /** The summed field lengths of the slots in use, by field. */
  totalLengths: Float64Array;
  /** Where each term's postings start in `postings`, by term. */
  starts: Uint32Array;
}

/** Where the counts of term `term` start in a snapshot's numbers: after the field lengths of its `slots` slots. */
export function countsAt(slots: number, term: number, fieldCount: number): number {
  return (slots + term) * fieldCount;
}

/** How many postings numbers term `term` of a snapshot has (slots and frequencies, all fields). */
export function savedPostingsLength(numbers: Uint32Array, slots: number, term: number, fieldCount: number): number {
  const at = countsAt(slots, term, fieldCount);
  let length = 0;
  for (let f = 0; f < fieldCount; f++) length += 2 * numbers[at + f]!;
  return length;
}

/** A view of `count` numbers of `Type` at `offset` of `bytes` where aligned (a file read whole is), else an aligned copy: at 50,000 memories a copy would hold tens of MB twice. */
function numbersAt<T extends Float64Array | Uint32Array | Uint16Array>(
  Type: { new (buffer: ArrayBufferLike, byteOffset: number, length: number): T; new (length: number): T; BYTES_PER_ELEMENT: number },
  bytes: Buffer,
  offset: number,
  count: number,
): T {
  if ((bytes.byteOffset + offset) % Type.BYTES_PER_ELEMENT === 0) return new Type(bytes.buffer, bytes.byteOffset + offset, count);
  const copy = new Type(count);
  Buffer.from(copy.buffer).set(bytes.subarray(offset, offset + count * Type.BYTES_PER_ELEMENT));
  return copy;
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
    (header.width !== 2 && header.width !== 4) ||
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
  const fieldCount = fields.length;
  const width = header.width;
  const numbersStart = versionsAt + slots * VERSION_NUMBERS * 8;
  const numberCount = countsAt(slots, header.terms.length, fieldCount);
  const postingsStart = numbersStart + 4 * numberCount;
  if (postingsStart > bytes.length || (bytes.length - postingsStart) % width !== 0) return null;
  const versions = numbersAt(Float64Array, bytes, versionsAt, slots * VERSION_NUMBERS);
  const numbers = numbersAt(Uint32Array, bytes, numbersStart, numberCount);
  const postingCount = (bytes.length - postingsStart) / width;
  const postings = width === 2 ? numbersAt(Uint16Array, bytes, postingsStart, postingCount) : numbersAt(Uint32Array, bytes, postingsStart, postingCount);
  // A bitmap of the freed slots, which no posting may name; none in the usual case, where nothing was removed.
  let freed: Uint8Array | null = null;
  if (freeSlots.length > 0) {
    freed = new Uint8Array(slots);
    for (const slot of freeSlots) freed[slot] = 1;
  }
  const totalLengths = new Float64Array(fieldCount);
  addLengths(numbers, slots, fieldCount, freed, totalLengths);
  const starts = postingStarts(numbers, postings, header.terms.length, fieldCount, slots, freed);
  if (!starts) return null;
  return { ids: header.ids, freeSlots, terms: header.terms, versions: new SnapshotVersions(versions), numbers, postings, width, totalLengths, starts };
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
 * postings, each checked: whole, naming only slots below `slots` and not
 * `freed`, and not empty (only terms some document holds are written; a
 * search counts on it). Null when any is not. One loop over ~2 million
 * numbers at 10,000 memories, run before anything is optimised: kept in one
 * function that is compiled once, rather than a call per list.
 */
function postingStarts(numbers: Uint32Array, postings: PostingNumbers, terms: number, fieldCount: number, slots: number, freed: Uint8Array | null): Uint32Array | null {
  const starts = new Uint32Array(terms);
  const end = postings.length;
  let at = 0;
  let count = slots * fieldCount;
  for (let t = 0; t < terms; t++) {
    starts[t] = at;
    let entries = 0;
    for (let f = 0; f < fieldCount; f++) {
      const n = numbers[count++]!;
      const slotsEnd = at + n;
      if (slotsEnd + n > end) return null;
      for (; at < slotsEnd; at++) {
        const slot = postings[at]!;
        if (slot >= slots || (freed !== null && freed[slot] === 1)) return null;
      }
      at += n;
      entries += n;
    }
    if (entries === 0) return null;
  }
  return at === end ? starts : null;
}
