/**
 * The lists of numbers a search index keeps per term and field: the slots of
 * the documents holding the term, and how often each holds it.
 *
 * A list built in this process is a plain array (pushing onto it is the
 * fastest way to build an index). A list loaded from a snapshot is a view
 * into the snapshot's bytes, shared by every list of the snapshot (`frozen`):
 * it is never written; its numbers take 2 or 4 bytes (searchSnapshot.ts).
 * Documents added to it are kept beside it (FieldPostings.added); removing one
 * of its entries copies it into a typed array of its own with room to grow,
 * 4 bytes a number where an array takes 8. The view is what the index reads;
 * its length is the list's length.
 *
 * Before, the first change of any kind copied the list: the first hundred
 * memories stored after a server loaded its index at 10,000 memories copied
 * most of the long lists (~12 MB as typed copies, ~28 MB as arrays), and at
 * 50,000 the first two hundred copied ~60 MB.
 */
export type NumberList = number[] | Uint32Array | Uint16Array;

/** A typed copy of `list`, then `more`, in a buffer with room for a quarter more. */
function roomyCopy(list: ArrayLike<number>, more: readonly number[] = []): Uint32Array {
  const length = list.length + more.length;
  const data = new Uint32Array(length + (length >> 2) + 4);
  for (let i = 0; i < list.length; i++) data[i] = list[i]!;
  data.set(more, list.length);
  return data.subarray(0, length);
}

/** Appends `value` to `lists[at]`: pushed onto an array, written into a typed list's room, or into a copy of a `frozen` one. */
export function append(lists: NumberList[], at: number, value: number, frozen: ArrayBufferLike | null): void {
  const list = lists[at]!;
  if (Array.isArray(list)) {
    list.push(value);
    return;
  }
  const length = list.length;
  // Only copies of this module's own are written in place: Uint32Arrays, never a frozen view.
  const roomAfter = list.buffer !== frozen && list instanceof Uint32Array && list.byteOffset / 4 + length < list.buffer.byteLength / 4;
  const owned = roomAfter ? list : roomyCopy(list);
  const grown = new Uint32Array(owned.buffer, owned.byteOffset, length + 1);
  grown[length] = value;
  lists[at] = grown;
}

/** Removes the entry at `index` of `lists[at]`, keeping the order; a `frozen` list is copied without it. */
export function removeAt(lists: NumberList[], at: number, index: number, frozen: ArrayBufferLike | null): void {
  const list = lists[at]!;
  if (Array.isArray(list)) {
    list.splice(index, 1);
    return;
  }
  const owned = list.buffer === frozen ? roomyCopy(list) : list;
  owned.copyWithin(index, index + 1);
  lists[at] = owned.subarray(0, list.length - 1);
}

/** Entries added to one field of a posting whose list is a frozen snapshot's view. */
interface AddedEntries {
  slots: number[];
  frequencies: number[];
}

/** One term's documents in each field: what search.ts keeps per term, less the term. */
export interface FieldPostings {
  /** Per field: the documents' slots (see NumberList). */
  slots: NumberList[];
  /** Per field: how often each of those documents holds the term. */
  frequencies: NumberList[];
  /**
   * Per field, entries added to a list that is still a frozen snapshot's view,
   * kept apart so that adding a document never copies the list (null until the
   * first). A server that loaded its index at 50,000 memories copied ~60 MB of
   * lists in its first 200 stores: nearly every long list holds a word of each
   * new memory. A list is copied only when an entry is removed from it.
   */
  added: AddedEntries[] | null;
}

/** How many documents hold the term in `field`. */
export function entryCount(postings: FieldPostings, field: number): number {
  return postings.slots[field]!.length + (postings.added ? postings.added[field]!.slots.length : 0);
}

/** Adds a document's entry to `field`: into the list, or beside it when the list is a `frozen` snapshot's view. */
export function addEntry(postings: FieldPostings, field: number, slot: number, frequency: number, frozen: ArrayBufferLike | null): void {
  const list = postings.slots[field]!;
  if (!Array.isArray(list) && list.buffer === frozen) {
    postings.added ??= postings.slots.map(() => ({ slots: [], frequencies: [] }));
    const added = postings.added[field]!;
    added.slots.push(slot);
    added.frequencies.push(frequency);
    return;
  }
  append(postings.slots, field, slot, frozen);
  append(postings.frequencies, field, frequency, frozen);
}

/**
 * Removes the entry of `slot` from `field` (a document holds a term once per
 * field); false when there is none. Removing one from a frozen list copies it,
 * with the entries added beside it, into a list of its own.
 */
export function removeEntry(postings: FieldPostings, field: number, slot: number, frozen: ArrayBufferLike | null): boolean {
  const added = postings.added?.[field];
  if (added) {
    const at = added.slots.lastIndexOf(slot);
    if (at >= 0) {
      added.slots.splice(at, 1);
      added.frequencies.splice(at, 1);
      return true;
    }
  }
  const at = postings.slots[field]!.lastIndexOf(slot);
  if (at < 0) return false;
  if (added && added.slots.length > 0) {
    // The list is frozen (entries are added beside frozen lists only): one copy holds both, and the entry goes from it.
    postings.slots[field] = roomyCopy(postings.slots[field]!, added.slots);
    postings.frequencies[field] = roomyCopy(postings.frequencies[field]!, added.frequencies);
    added.slots = [];
    added.frequencies = [];
  }
  removeAt(postings.slots, field, at, frozen);
  removeAt(postings.frequencies, field, at, frozen);
  return true;
}

/** Drops the entries of the slots `removed` marks from `field`, those added beside a frozen list included (kept in a list of its own). */
export function dropEntries(postings: FieldPostings, field: number, removed: Uint8Array): void {
  const added = postings.added?.[field];
  const parts: [ArrayLike<number>, ArrayLike<number>][] = [[postings.slots[field]!, postings.frequencies[field]!]];
  if (added) parts.push([added.slots, added.frequencies]);
  if (!parts.some(([slots]) => Array.prototype.some.call(slots, (slot: number) => removed[slot] === 1))) return;
  const slotsKept: number[] = [];
  const frequenciesKept: number[] = [];
  for (const [slots, frequencies] of parts) {
    for (let i = 0; i < slots.length; i++) {
      if (removed[slots[i]!]) continue;
      slotsKept.push(slots[i]!);
      frequenciesKept.push(frequencies[i]!);
    }
  }
  postings.slots[field] = slotsKept;
  postings.frequencies[field] = frequenciesKept;
  if (added) {
    added.slots = [];
    added.frequencies = [];
  }
}
