/**
 * The memory a search works in: the slots it touched, and its hits ordered
 * by rank as they are taken. A server answers every recall, prompt hook and
 * duplicate check with a search; a search that allocated arrays the size of
 * what it matched (a short query with a prefix or a typo touches thousands
 * of memories, a duplicate check most of the store) made a store_memory call
 * allocate ~1.8 MB at 10,000 memories and every dozen recalls cost a
 * scavenge: GC pauses were most of the servers' p99. These buffers are kept
 * by the index and reused by the next search.
 */

/** A list of slots in a typed array that keeps its room: clearing it keeps the buffer. */
export class SlotList {
  private items: Int32Array;
  length = 0;

  constructor(capacity = 64) {
    this.items = new Int32Array(Math.max(1, capacity));
  }

  push(slot: number): void {
    if (this.length === this.items.length) {
      const grown = new Int32Array(this.items.length * 2);
      grown.set(this.items);
      this.items = grown;
    }
    this.items[this.length++] = slot;
  }

  at(index: number): number {
    return this.items[index]!;
  }

  clear(): void {
    this.length = 0;
  }
}

/** One search's hits: parallel columns, a row per touched slot. */
export class HitColumns {
  readonly slots: Int32Array;
  readonly ranks: Float64Array;
  readonly scores: Float64Array;
  readonly words: Uint16Array;

  constructor(readonly capacity: number) {
    this.slots = new Int32Array(capacity);
    this.ranks = new Float64Array(capacity);
    this.scores = new Float64Array(capacity);
    this.words = new Uint16Array(capacity);
  }
}

/**
 * Lends HitColumns to searches: the spare set when it is free and large
 * enough, else a new one (a search still being read holds its own, so two
 * searches read side by side never share a set). A returned set becomes the
 * spare when it is at least as large as the one kept.
 */
export class HitColumnPool {
  private spare: HitColumns | null = null;

  take(rows: number): HitColumns {
    const spare = this.spare;
    if (spare && spare.capacity >= rows) {
      this.spare = null;
      return spare;
    }
    // Room to grow by powers of two, so that a store growing by one memory at a time does not allocate anew at every search.
    let capacity = 64;
    while (capacity < rows) capacity *= 2;
    return new HitColumns(capacity);
  }

  give(columns: HitColumns): void {
    if (!this.spare || this.spare.capacity <= columns.capacity) this.spare = columns;
  }
}

/**
 * A binary max-heap over the first `length` rows of `columns`, by rank:
 * O(n) to build, O(log n) per hit taken. Taking a hit moves it to the row
 * just past the heap, where `top()` reads it.
 */
export class RankHeap {
  private length: number;

  constructor(
    private readonly columns: HitColumns,
    length: number,
  ) {
    this.length = length;
    for (let i = (length >> 1) - 1; i >= 0; i--) this.siftDown(i);
  }

  get size(): number {
    return this.length;
  }

  /** Takes the best row out of the heap and returns where it now is (read its columns there before the next pop). */
  pop(): number {
    const last = --this.length;
    if (last > 0) {
      this.swap(0, last);
      this.siftDown(0);
    }
    return last;
  }

  /** Higher rank first; equal ranks in slot order, so ties come out the same every time. */
  private before(a: number, b: number): boolean {
    const { ranks, slots } = this.columns;
    return ranks[a]! > ranks[b]! || (ranks[a] === ranks[b] && slots[a]! < slots[b]!);
  }

  private swap(a: number, b: number): void {
    const { slots, ranks, scores, words } = this.columns;
    const slot = slots[a]!;
    const rank = ranks[a]!;
    const score = scores[a]!;
    const word = words[a]!;
    slots[a] = slots[b]!;
    ranks[a] = ranks[b]!;
    scores[a] = scores[b]!;
    words[a] = words[b]!;
    slots[b] = slot;
    ranks[b] = rank;
    scores[b] = score;
    words[b] = word;
  }

  private siftDown(at: number): void {
    for (;;) {
      const left = 2 * at + 1;
      if (left >= this.length) return;
      const right = left + 1;
      const child = right < this.length && this.before(right, left) ? right : left;
      if (!this.before(child, at)) return;
      this.swap(child, at);
      at = child;
    }
  }
}
