/**
 * The lists of numbers a search index keeps per term and field: the slots of
 * the documents holding the term, and how often each holds it.
 *
 * A list built in this process is a plain array (pushing onto it is the
 * fastest way to build an index). A list loaded from a snapshot is a view
 * into the snapshot's bytes, shared by every list of the snapshot (`frozen`):
 * it is never written, and its first change copies it into a typed array of
 * its own with room to grow, 4 bytes a number where an array takes 8. The
 * view is what the index reads; its length is the list's length.
 *
 * Before, that first change copied the list into an array: the first hundred
 * memories stored after a server loaded its index at 10,000 memories copied
 * most of the long lists, ~28 MB of heap where the typed copies take ~12 MB.
 */
export type NumberList = number[] | Uint32Array;

/** A typed copy of the first `length` numbers of `from`, in a buffer with room for a quarter more. */
function roomyCopy(from: ArrayLike<number>, length: number): Uint32Array {
  const data = new Uint32Array(length + (length >> 2) + 4);
  for (let i = 0; i < length; i++) data[i] = from[i]!;
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
  const roomAfter = list.buffer !== frozen && list.byteOffset / 4 + length < list.buffer.byteLength / 4;
  const owned = roomAfter ? list : roomyCopy(list, length);
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
  const owned = list.buffer === frozen ? roomyCopy(list, list.length) : list;
  owned.copyWithin(index, index + 1);
  lists[at] = owned.subarray(0, list.length - 1);
}
