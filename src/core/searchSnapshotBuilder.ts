/**
 * An index of memories kept only in the form search-index.bin gives it, for
 * the worker that indexes a store opening without one (searchIndexAside.ts):
 * the worker never searches its index, it only serializes it.
 *
 * Its bytes are exactly those of a MemorySearchIndex given the same memories
 * in the same order (test/unit/searchSnapshotBuilder.test.ts). It takes about
 * half the memory because it keeps each entry as one number (slot and
 * frequency packed). A MemorySearchIndex keeps two lists of 8-byte numbers per
 * term and field, so that searches read slots and frequencies apart, and also
 * builds a term dictionary and word forms that a snapshot does not hold. At
 * 50,000 bench memories the built lists were ~87 MB of the worker's heap.
 */
import type { FileSignature } from './files';
import { largestPosting, SERIALIZE_BLOCK, SnapshotNumbersWriter, writeSnapshotStart, type PostingWidth } from './searchSnapshot';
import { digestOfFieldTexts, FIELD_COUNT, FIELDS, fieldTerms, type SearchableMemory } from './searchedText';

/**
 * An entry is slot × FREQUENCY_SPAN + frequency. A memory of at most 1,000,000 characters repeats a
 * word fewer times than this, and any slot count a store reaches leaves the sum below 2^53, where
 * doubles are exact.
 */
const FREQUENCY_SPAN = 2 ** 24;

export class SearchSnapshotBuilder {
  private readonly slotOf = new Map<string, number>();
  /** Document ID by slot; undefined for a slot freed by a memory handed over again. */
  private readonly idOf: (string | undefined)[] = [];
  private readonly freeSlots: number[] = [];
  /** Field lengths, slot-major (slot × FIELD_COUNT + field), as MemorySearchIndex keeps them. */
  private readonly lengths: number[] = [];
  private readonly textDigests: number[] = [];
  /** Per term, per field, its entries (packed, see FREQUENCY_SPAN) in the order they were added. */
  private readonly entries = new Map<string, number[][]>();
  /** A frequency over 65,535: the postings then take 4 bytes a number (as MemorySearchIndex decides). */
  private largeFrequencies = false;

  /** Indexes `memory`, in place of the one with its ID if there is one (as MemorySearchIndex.upsert does). */
  add(memory: SearchableMemory): void {
    this.remove(memory.id);
    const slot = this.freeSlots.pop() ?? this.idOf.length;
    this.slotOf.set(memory.id, slot);
    this.idOf[slot] = memory.id;
    const texts = FIELDS.map((field) => field.text(memory));
    this.textDigests[slot] = digestOfFieldTexts(texts);
    for (let f = 0; f < FIELD_COUNT; f++) {
      const { length, termCounts } = fieldTerms(texts[f]!);
      this.lengths[slot * FIELD_COUNT + f] = length;
      termCounts.forEach((count, term) => {
        let lists = this.entries.get(term);
        if (!lists) {
          lists = FIELDS.map(() => []);
          this.entries.set(term, lists);
        }
        if (count > largestPosting(2)) this.largeFrequencies = true;
        lists[f]!.push(slot * FREQUENCY_SPAN + count);
      });
    }
  }

  /**
   * Takes a memory's entries out and frees its slot, as MemorySearchIndex.remove does (the
   * same order left, terms no memory holds any more dropped). Only a memory handed over
   * twice comes here, so a pass over every list is cheap enough.
   */
  private remove(id: string): void {
    const slot = this.slotOf.get(id);
    if (slot === undefined) return;
    this.entries.forEach((lists, term) => {
      let empty = true;
      for (const list of lists) {
        const at = list.findIndex((entry) => Math.floor(entry / FREQUENCY_SPAN) === slot);
        if (at >= 0) list.splice(at, 1);
        if (list.length > 0) empty = false;
      }
      if (empty) this.entries.delete(term);
    });
    this.idOf[slot] = undefined;
    this.slotOf.delete(id);
    this.freeSlots.push(slot);
  }

  /** How many memories it holds. */
  get size(): number {
    return this.slotOf.size;
  }

  /** The bytes MemorySearchIndex.serialize would give for the same memories. */
  serialize(versionOf: (id: string) => FileSignature | undefined): Buffer {
    const pieces: Buffer[] = [];
    this.writeSerialized(versionOf, (piece) => pieces.push(Buffer.from(piece)));
    return Buffer.concat(pieces);
  }

  /** Those bytes a piece at a time, as MemorySearchIndex.writeSerialized gives them. */
  writeSerialized(versionOf: (id: string) => FileSignature | undefined, write: (piece: Uint8Array) => void, blockNumbers = SERIALIZE_BLOCK): void {
    // Ascending by code units, as `<` compares (the term dictionary's order).
    const terms = [...this.entries.keys()].sort();
    const width: PostingWidth = this.idOf.length <= largestPosting(2) + 1 && !this.largeFrequencies ? 2 : 4;
    writeSnapshotStart(
      { fields: FIELDS.map((f) => f.name), width, ids: this.idOf, terms, versionOf, textDigestAt: (slot) => this.textDigests[slot] ?? NaN },
      write,
    );
    const numbers = new SnapshotNumbersWriter(write, blockNumbers);
    numbers.put(this.lengths);
    for (const term of terms) for (const list of this.entries.get(term)!) numbers.putOne(list.length);
    numbers.flush();
    const postings = new SnapshotNumbersWriter(write, blockNumbers, width);
    for (const term of terms) {
      for (const list of this.entries.get(term)!) {
        for (const entry of list) postings.putOne(Math.floor(entry / FREQUENCY_SPAN));
        for (const entry of list) postings.putOne(entry % FREQUENCY_SPAN);
      }
    }
    postings.flush();
  }
}
