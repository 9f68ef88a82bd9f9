/**
 * The memory a search ranks its hits in, and their order as they are taken.
 * A server answers every recall, prompt hook and duplicate check with a
 * search; a search that allocated arrays the size of what it matched (a
 * short query with a prefix or a typo touches thousands of memories, a
 * duplicate check most of the store) made a store_memory call allocate
 * ~1.8 MB at 10,000 memories and every dozen recalls cost a scavenge: GC
 * pauses were most of the servers' p99. These buffers are kept by the index
 * and reused by the next search.
 */

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

  /** Exchanges rows `a` and `b`, every column. */
  swap(a: number, b: number): void {
    const { slots, ranks, scores, words } = this;
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
 * A binary max-heap over `length` rows of `columns` from row `base`, by rank:
 * O(n) to build, O(log n) per hit taken. Taking a hit moves it to the row
 * just past the heap, whose number pop() returns.
 */
export class RankHeap {
  private length: number;

  constructor(
    private readonly columns: HitColumns,
    length: number,
    private readonly base = 0,
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
      this.columns.swap(this.base, this.base + last);
      this.siftDown(0);
    }
    return this.base + last;
  }

  /** Whether heap position `a` comes before `b`: higher rank first, equal ranks in slot order (so ties come out the same every time). */
  private before(a: number, b: number): boolean {
    const { ranks, slots } = this.columns;
    const rowA = this.base + a;
    const rowB = this.base + b;
    return ranks[rowA]! > ranks[rowB]! || (ranks[rowA] === ranks[rowB] && slots[rowA]! < slots[rowB]!);
  }

  private siftDown(at: number): void {
    for (;;) {
      const left = 2 * at + 1;
      if (left >= this.length) return;
      const right = left + 1;
      const child = right < this.length && this.before(right, left) ? right : left;
      if (!this.before(child, at)) return;
      this.columns.swap(this.base + child, this.base + at);
      at = child;
    }
  }
}

/**
 * The rows a search ranks at least this share of its best rank are put in
 * order first; the rest only when a caller reads past them. At 50,000 bench
 * memories a one- to three-word query touches ~27,000 memories (median) and
 * ~280 of them rank above half the best. Callers mostly stop within those:
 * a recall reads a hit below a third of the best only while its top ten do
 * not all blend above 0.5 with priority (0.75 × 1/3 + 0.25 × 1). Heaping
 * every hit was a fifth of the search.
 */
const FRONT_SHARE = 1 / 3;

/** The best rank of the first `length` rows of `columns` (0 for none). */
function topRank(columns: HitColumns, length: number): number {
  const { ranks } = columns;
  let top = 0;
  for (let i = 0; i < length; i++) if (ranks[i]! > top) top = ranks[i]!;
  return top;
}

/**
 * The first `length` rows of `columns` in rank order (as RankHeap gives
 * them), taken one at a time: the rows ranked at least FRONT_SHARE of the
 * best come from a heap of their own, and the others are heaped only once
 * those are all taken. Every front row ranks above every other one, so the
 * order is the same as one heap's.
 */
export class RankOrder {
  private heap: RankHeap;
  private readonly front: number;
  private restHeaped = false;

  /** `top`: the best rank of the rows, when the caller knows it (else it is looked for). */
  constructor(
    private readonly columns: HitColumns,
    private readonly length: number,
    top = topRank(columns, length),
  ) {
    const { ranks } = columns;
    const threshold = top * FRONT_SHARE;
    let front = 0;
    for (let i = 0; i < length; i++) {
      if (!(ranks[i]! >= threshold)) continue;
      if (i !== front) columns.swap(i, front);
      front++;
    }
    this.front = front;
    this.heap = new RankHeap(columns, front);
  }

  get size(): number {
    return this.heap.size + (this.restHeaped ? 0 : this.length - this.front);
  }

  /** Takes the best row left and returns where it now is (read its columns there before the next pop). */
  pop(): number {
    if (this.heap.size === 0 && !this.restHeaped) {
      this.heap = new RankHeap(this.columns, this.length - this.front, this.front);
      this.restHeaped = true;
    }
    return this.heap.pop();
  }
}
