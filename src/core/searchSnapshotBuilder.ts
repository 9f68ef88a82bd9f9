/**
 * An index of memories kept only in the form search-index.bin gives it, for
 * the worker that indexes a store opening without one (searchIndexAside.ts):
 * the worker never searches its index, it only serializes it.
 *
 * Its bytes are exactly those of a MemorySearchIndex given the same memories
 * in the same order, when each memory comes once
 * (test/unit/searchSnapshotBuilder.test.ts). It takes about half the memory
 * because it keeps each entry as one number (slot and frequency packed). A
 * MemorySearchIndex keeps two lists of 8-byte numbers per term and field, so
 * that searches read slots and frequencies apart, and also builds a term
 * dictionary and word forms that a snapshot does not hold. Built in one
 * process of 52,100 bench memories (heap after a full collection): ~87 MB for
 * a MemorySearchIndex, ~48 MB for this.
 *
 * A memory handed over again (its file changed while the store opened) gets
 * a new slot. The entries of the slot it had are left out when the index is
 * written, in the same pass. Taking them out at once would mean a pass over
 * every list per memory, and a checkout during an opening can change
 * thousands of files.
 */
import type { FileSignature } from './files';
import { largestPosting, postingWidth, SERIALIZE_BLOCK, SnapshotNumbersWriter, writeSnapshotStart } from './searchSnapshot';
import { digestOfFieldTexts, FIELD_COUNT, FIELDS, fieldTerms, type SearchableMemory } from './searchedText';

/**
 * An entry is slot × FREQUENCY_SPAN + frequency. A memory of at most 1,000,000 characters repeats a
 * word fewer times than this, and any slot count a store reaches leaves the sum below 2^53, where
 * doubles are exact.
 */
const FREQUENCY_SPAN = 2 ** 24;

export class SearchSnapshotBuilder {
  private readonly slotOf = new Map<string, number>();
  /** Document ID by slot; undefined for the old slot of a memory handed over again. */
  private readonly idOf: (string | undefined)[] = [];
  /** Those old slots: their entries are left out when the index is written. */
  private readonly replaced = new Set<number>();
  /** Field lengths, slot-major (slot × FIELD_COUNT + field), as MemorySearchIndex keeps them. */
  private readonly lengths: number[] = [];
  private readonly textDigests: number[] = [];
  /** Per term, per field, its entries (packed, see FREQUENCY_SPAN) in the order they were added. */
  private readonly entries = new Map<string, number[][]>();
  /** A frequency over 65,535: the postings then take 4 bytes a number (as MemorySearchIndex decides). */
  private largeFrequencies = false;

  /** Indexes `memory`, in place of the one with its ID if there is one. */
  add(memory: SearchableMemory): void {
    const previous = this.slotOf.get(memory.id);
    if (previous !== undefined) {
      this.idOf[previous] = undefined;
      this.replaced.add(previous);
    }
    const slot = this.idOf.length;
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

  /** How many memories it holds. */
  get size(): number {
    return this.slotOf.size;
  }

  /** The index as search-index.bin's bytes (MemorySearchIndex.serialize's for the same memories, when each came once). */
  serialize(versionOf: (id: string) => FileSignature | undefined): Buffer {
    const pieces: Buffer[] = [];
    this.writeSerialized(versionOf, (piece) => pieces.push(Buffer.from(piece)));
    return Buffer.concat(pieces);
  }

  /** Those bytes a piece at a time, as MemorySearchIndex.writeSerialized gives its own. */
  writeSerialized(versionOf: (id: string) => FileSignature | undefined, write: (piece: Uint8Array) => void, blockNumbers = SERIALIZE_BLOCK): void {
    const live = (entry: number) => !this.replaced.has(Math.floor(entry / FREQUENCY_SPAN));
    const counts = new Map<string, number[]>();
    this.entries.forEach((lists, term) => {
      const count = this.replaced.size === 0 ? lists.map((list) => list.length) : lists.map((list) => list.filter(live).length);
      // A term only replaced memories held is not in the index.
      if (count.some((n) => n > 0)) counts.set(term, count);
    });
    // Ascending by code units, as `<` compares (the term dictionary's order).
    const terms = [...counts.keys()].sort();
    const width = postingWidth(this.idOf.length, this.largeFrequencies);
    writeSnapshotStart(
      { fields: FIELDS.map((f) => f.name), width, ids: this.idOf, terms, versionOf, textDigestAt: (slot) => this.textDigests[slot] ?? NaN },
      write,
    );
    const numbers = new SnapshotNumbersWriter(write, blockNumbers);
    numbers.put(this.lengths);
    for (const term of terms) for (const count of counts.get(term)!) numbers.putOne(count);
    numbers.flush();
    const postings = new SnapshotNumbersWriter(write, blockNumbers, width);
    const all = this.replaced.size === 0;
    for (const term of terms) {
      for (const list of this.entries.get(term)!) {
        for (const entry of list) if (all || live(entry)) postings.putOne(Math.floor(entry / FREQUENCY_SPAN));
        for (const entry of list) if (all || live(entry)) postings.putOne(entry % FREQUENCY_SPAN);
      }
    }
    postings.flush();
  }
}
