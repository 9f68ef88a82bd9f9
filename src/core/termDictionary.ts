/**
 * The vocabulary of a search index, for the lookups a query word makes
 * beyond its exact term: the terms it begins (a prefix) and the terms within
 * its typos.
 *
 * Prefix lookups read a sorted array: the terms a word begins sit together
 * from the first one not below it. A saved index keeps its terms in this
 * order, so a process that loads it has the array for the price of reading
 * it. Typo lookups need MiniSearch's radix tree (`minisearch/SearchableMap`,
 * bounded edit distance over shared prefixes), which is built on the first
 * one only: inserting each term into the tree was ~15 ms of the ~55 ms it took
 * to load the bench's 10,000-memory index (5,980 terms), and grows with the
 * vocabulary, which real prose makes larger than the bench's. Most queries
 * have no typo to forgive (see search.ts walkQuery), so most processes never
 * build it.
 *
 * Changes are kept aside and brought into the array at the next lookup: a
 * few one by one, many (an index built from scratch adds every term) by
 * sorting them and merging.
 */
import SearchableMap from 'minisearch/SearchableMap';
import { insertionPoint } from './sortedStrings';

/** Up to this many pending changes are placed one by one (a search each and a splice); more are sorted and merged. */
const ONE_BY_ONE = 64;

/** Whether `terms` are in ascending order, each once. */
function strictlyAscending(terms: readonly string[]): boolean {
  for (let i = 1; i < terms.length; i++) if (!(terms[i - 1]! < terms[i]!)) return false;
  return true;
}

/** `a` and `b` (each ascending, no term in both) as one ascending array. */
function merge(a: readonly string[], b: readonly string[]): string[] {
  const merged = new Array<string>(a.length + b.length);
  let i = 0;
  let j = 0;
  let k = 0;
  while (i < a.length && j < b.length) merged[k++] = a[i]! < b[j]! ? a[i++]! : b[j++]!;
  while (i < a.length) merged[k++] = a[i++]!;
  while (j < b.length) merged[k++] = b[j++]!;
  return merged;
}

/**
 * A set of terms with prefix and typo lookups. The caller adds only terms it
 * does not hold and deletes only terms it holds (search.ts keeps the same
 * terms as the keys of its postings map).
 */
export class TermDictionary {
  /** The terms in ascending order (code units, as `<` compares), less `removed`, without `added`. */
  private sorted: string[];
  /** Terms added and not yet in `sorted`. */
  private readonly added = new Set<string>();
  /** Terms of `sorted` deleted since. */
  private readonly removed = new Set<string>();
  /** For typo lookups: built on the first, then kept up to date. */
  private tree: SearchableMap<true> | null = null;

  /** A dictionary of `terms`, each once; in ascending order they are taken as they are (as a saved index lists them). */
  constructor(terms: string[] = []) {
    this.sorted = strictlyAscending(terms) ? terms : [...new Set(terms)].sort();
  }

  add(term: string): void {
    if (!this.removed.delete(term)) this.added.add(term);
    this.tree?.set(term, true);
  }

  delete(term: string): void {
    if (!this.added.delete(term)) this.removed.add(term);
    this.tree?.delete(term);
  }

  /** The terms in ascending order (the array itself: read it before the next change). */
  ascending(): readonly string[] {
    this.settle();
    return this.sorted;
  }

  /**
   * The terms that begin with `prefix` (itself included), in ascending order.
   * An array rather than a generator: a result object a term was garbage on
   * every query word's lookup.
   */
  withPrefix(prefix: string): string[] {
    const sorted = this.ascending();
    const from = insertionPoint(sorted, prefix);
    let to = from;
    while (to < sorted.length && sorted[to]!.startsWith(prefix)) to++;
    return sorted.slice(from, to);
  }

  /** The terms at most `maxDistance` edits (Levenshtein) from `word`, with their distance. */
  withinTypos(word: string, maxDistance: number): Map<string, number> {
    if (!this.tree) {
      this.tree = new SearchableMap<true>();
      for (const term of this.ascending()) this.tree.set(term, true);
    }
    const found = new Map<string, number>();
    for (const [term, [, distance]] of this.tree.fuzzyGet(word, maxDistance)) found.set(term, distance);
    return found;
  }

  /** Brings the changes kept aside into `sorted`. */
  private settle(): void {
    // Set.clear() gives even an empty set a new table, which a long-lived dictionary promotes to the
    // old generation: a store's similarity check looks up ~50 prefixes (~55 KB a store).
    if (this.removed.size === 0 && this.added.size === 0) return;
    if (this.removed.size > ONE_BY_ONE) {
      const removed = this.removed;
      this.sorted = this.sorted.filter((term) => !removed.has(term));
    } else {
      for (const term of this.removed) this.sorted.splice(insertionPoint(this.sorted, term), 1);
    }
    this.removed.clear();
    if (this.added.size > ONE_BY_ONE) {
      this.sorted = merge(this.sorted, [...this.added].sort());
    } else {
      for (const term of this.added) this.sorted.splice(insertionPoint(this.sorted, term), 0, term);
    }
    this.added.clear();
  }
}
