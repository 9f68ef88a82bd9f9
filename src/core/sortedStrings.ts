/**
 * Arrays of strings kept in ascending order (code units, as `<` compares):
 * the keys of a JSON map written in order (files.ts JsonMapChunks) and a
 * search index's terms (termDictionary.ts).
 */

/** Where `key` is, or would go, in ascending `sorted`: the first index whose string is not below it (its length when none is). */
export function insertionPoint(sorted: readonly string[], key: string): number {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (sorted[middle]! < key) low = middle + 1;
    else high = middle;
  }
  return low;
}
