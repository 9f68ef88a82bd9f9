/**
 * Ranked full-text search over memories: BM25+ relevance per field with prefix
 * and typo tolerance, blended with priority by the store.
 *
 * The term dictionary (termDictionary.ts) answers prefix lookups from a sorted
 * array and typo lookups with MiniSearch's radix tree, which does the hard
 * part there: bounded-edit-distance lookups over the vocabulary. The scoring
 * is ours. MiniSearch's own `search()` builds a result
 * object (with a per-term match record) for every matching document, so an OR
 * query with one common word costs ~10 ms at 10,000 memories even though the
 * store only wants the best ten. Here postings are plain arrays, BM25+ scores
 * (bm25.ts) add up in typed arrays indexed by document slot
 * (slotAccumulators.ts), and hits come out of a heap in rank order, so the
 * store stops reading as soon as no later hit can matter.
 *
 * The scores are MiniSearch's, term for term (same tokenizer, field lengths,
 * BM25+ parameters, prefix and fuzzy weights, and the bonus for matching more
 * query words); test/unit/search.test.ts holds the two side by side. The
 * ranking differs from MiniSearch's in one way (see `coordination`): the bonus
 * for matching more of the query's words also weighs how informative they are.
 */
import { matchesAsPrefix, queryWords, stemOf, typosAllowed } from './analyzer';
import { entryScore, fieldScorer, idf, setFieldScorer } from './bm25';
import { addEntry, dropEntries, entryCount, removeEntry, type FieldPostings } from './postingLists';
import { HitColumnPool, RankOrder } from './rankHeap';
import type { FileSignature } from './files';
import type { Expansions } from './relatedTerms';
import { countsAt, largestPosting, postingWidth, readSnapshot, savedPostingsLength, SERIALIZE_BLOCK, SnapshotNumbersWriter, writeSnapshotStart, type PostingNumbers, type SnapshotVersions } from './searchSnapshot';
import { digestOfFieldTexts, FIELD_COUNT, FIELDS, fieldTerms, type SearchableMemory } from './searchedText';
import { SlotAccumulators, WORDS_PER_FOLD } from './slotAccumulators';
import { TermDictionary } from './termDictionary';

export interface SearchHit {
  id: string;
  /** The hit's rank score relative to the best hit of the same query, in (0, 1] (see Coordination). */
  relevance: number;
  /** The hit's own score (BM25+ summed over the query's words, times the words it matched): comparable across queries on one store. */
  score: number;
  /** How many of the query's distinct words it matched (as written, as a prefix, another form or with typos). */
  words: number;
}

/** Terms whose numbers serializationSteps writes in one step (~0.1–0.5 ms). */
const TERMS_PER_STEP = 256;

/** A word matching as a longer word's prefix, or with typos, weighs less than an exact match. */
const PREFIX_WEIGHT = 0.375;
const FUZZY_WEIGHT = 0.45;
/** Another form of the same word (`deadlocked` for `deadlocks`) weighs less than the form asked for. */
const WORD_FORM_WEIGHT = 0.6;
/** A word the semantic layer relates to the query's (relatedTerms.ts) weighs less again: it may mean something else. */
export const RELATED_WEIGHT = 0.35;

/**
 * How matching more of the query's words raises a hit's rank.
 * - `words`: the BM25+ sum times the number of query words matched (MiniSearch's bonus).
 * - `informative`: times the geometric mean of that number and the matched words' summed IDF.
 *   A person's prompt is long and full of everyday words ("every", "again", "keeps",
 *   "time"); under `words` a memory that shares three of them outranks one that shares
 *   two rare ones, since each matched word multiplies alike. Weighing each matched word
 *   by its IDF (a word's IDF: that of the commonest term it reached) lets the rare ones
 *   count for more; keeping the count in the mean stops one rare word from beating
 *   several good ones. Short queries of rare words rank as before.
 * Either way `SearchHit.score` stays the `words` score, which the relevance gate and
 * similarity measure.
 */
export type Coordination = 'words' | 'informative';

/** What a query word reaches besides itself and its other forms. */
export interface QueryReach {
  /** The longer words it begins (default true). A search that only needs candidates can do without. */
  prefixes?: boolean;
}

export interface SearchIndexOptions {
  /** Let a query word reach the other forms of its stem (off, with `coordination: 'words'`: MiniSearch's exact ranking). Default on. */
  wordForms?: boolean;
  /** Default `informative`. */
  coordination?: Coordination;
}

/** The documents holding one term, per field: parallel lists of slots and term frequencies (postingLists.ts). */
interface Posting extends FieldPostings {
  term: string;
}

/** A document as MemorySearchIndex.scoresOf() measures it (see scoringDocument). */
export interface ScoringDocument {
  readonly id: string;
  readonly slot: number;
  /** The index's version when it was read. */
  readonly version: number;
  /** Each term's place in `counts`: its frequency in field f is `counts[at + f]`. */
  readonly termAt: ReadonlyMap<string, number>;
  /**
   * The frequencies, FIELD_COUNT per term: one typed array rather than an
   * array per term. A similarity check reads ~13 documents of ~150 terms for
   * every stored memory, and arrays per term were the largest part of what a
   * store left for the old generation's collector (~60 KB a store).
   */
  readonly counts: Uint32Array;
}

export class MemorySearchIndex {
  /** The terms, for prefix and typo lookups (termDictionary.ts). */
  private terms = new TermDictionary();
  /**
   * The postings by term: what every query word looks up first, and a search's
   * only way from a term to its documents. A term of a loaded snapshot whose
   * postings were not read yet maps to its number in it (see postingFor).
   */
  private readonly postingOf = new Map<string, Posting | number>();
  /** The indexed forms of each stem (see analyzer.ts), for queries to reach a word's other forms. */
  private readonly formsOf = new Map<string, Set<string>>();

  constructor(private readonly options: SearchIndexOptions = {}) {}

  private get wordForms(): boolean {
    return this.options.wordForms ?? true;
  }

  private get coordination(): Coordination {
    return this.options.coordination ?? 'informative';
  }

  private addForm(term: string): void {
    const stem = stemOf(term);
    let forms = this.formsOf.get(stem);
    if (!forms) this.formsOf.set(stem, (forms = new Set()));
    forms.add(term);
  }

  private removeForm(term: string): void {
    const stem = stemOf(term);
    const forms = this.formsOf.get(stem);
    forms?.delete(term);
    if (forms?.size === 0) this.formsOf.delete(stem);
  }
  private readonly slotOf = new Map<string, number>();
  /** Document id per slot; undefined for a free slot. */
  private readonly idOf: (string | undefined)[] = [];
  /**
   * The postings each slot appears in, to take it out again. Null after a
   * snapshot was loaded, until the first removal derives it from the postings:
   * a store that opens and only searches never pays for it.
   */
  private postingsOf: Posting[][] | null = [];
  /** The bytes of the snapshot this index was loaded from: its lists are views into them, never written (postingLists.ts). */
  private frozen: ArrayBufferLike | null = null;
  /** That snapshot, where the postings of terms not read since loading are (see postingFor). */
  private snapshot: { slots: number; numbers: Uint32Array; postings: PostingNumbers; starts: Uint32Array } | null = null;
  /** One empty view of its postings, which every field a loaded term is not in shares (see readPosting). */
  private noEntries: PostingNumbers | null = null;
  /**
   * A frequency over 65,535 was indexed (a word repeated that often in a memory of up to 1,000,000
   * characters), or a snapshot with postings of 4 bytes loaded: saved postings then take 4 bytes a number.
   */
  private largeFrequencies = false;
  private readonly freeSlots: number[] = [];
  /**
   * Field lengths per slot, field-major: a field's lengths follow each other (see lengthAt), as a search
   * reads them, a posting list of one field at a time in slot order. Slot-major, a long list read 20 bytes
   * a slot for the 4 it used (~40% of a long prompt's search at 50,000 memories went to memory traffic).
   * Token counts, so 4 bytes each rather than 8.
   */
  private lengths = new Uint32Array(64 * FIELD_COUNT);
  /** The digest of each slot's text (searchedTextDigest), saved with its version; NaN when a snapshot did not say. */
  private textDigests = new Float64Array(64);
  private readonly totalLength = new Float64Array(FIELD_COUNT);
  /** What a search adds up per slot (slotAccumulators.ts), reused across searches. */
  private readonly accumulators = new SlotAccumulators(64);
  /** The columns searches rank their hits in, lent to one search at a time. */
  private readonly hitColumns = new HitColumnPool();
  /** How many slots the per-slot arrays have room for: also the length of each field's run in `lengths`. */
  private capacity = 64;

  /** Counts changes, so that a ScoringDocument is not used after one. */
  private version = 0;

  /** Moves with every document added or removed: what was read of the index before is out of date once it does. */
  get changeCount(): number {
    return this.version;
  }

  get size(): number {
    return this.slotOf.size;
  }

  /**
   * The IDF of a term only one document holds: what a score is measured
   * against when it must mean the same in a store of 20 memories and of
   * 20,000 (IDF grows with the number of documents).
   */
  idfScale(): number {
    const documents = Math.max(1, this.slotOf.size);
    return Math.log(1 + (documents - 1 + 0.5) / 1.5);
  }

  upsert(memory: SearchableMemory): void {
    this.remove(memory.id);
    this.version++;
    const slot = this.freeSlots.pop() ?? this.idOf.length;
    this.ensureCapacity(slot + 1);
    this.slotOf.set(memory.id, slot);
    this.idOf[slot] = memory.id;
    // Kept per slot only while the index keeps them (see postingsOf).
    const postings = this.postingsOf ? new Set<Posting>() : null;
    const texts = FIELDS.map((field) => field.text(memory));
    this.textDigests[slot] = digestOfFieldTexts(texts);
    for (let f = 0; f < FIELD_COUNT; f++) {
      const { length, termCounts } = fieldTerms(texts[f]!);
      this.lengths[this.lengthAt(slot, f)] = length;
      this.totalLength[f] = this.totalLength[f]! + length;
      for (const [term, count] of termCounts) {
        // The exact-term map answers the lookup of every token; the radix tree learns only new terms.
        let posting = this.postingFor(term);
        if (!posting) {
          posting = { term, slots: FIELDS.map(() => []), frequencies: FIELDS.map(() => []), added: null };
          this.postingOf.set(term, posting);
          this.terms.add(term);
          this.addForm(term);
        }
        postings?.add(posting);
        if (count > largestPosting(2)) this.largeFrequencies = true;
        addEntry(posting, f, slot, count, this.frozen);
      }
    }
    if (this.postingsOf && postings) this.postingsOf[slot] = [...postings];
  }

  /**
   * An index of `memories`, built in one go. It keeps no per-document list
   * of postings (the first removal derives them, as after a snapshot is
   * loaded): a set and an array per document that a store opened without its
   * cache, and only searched, never needs (~10% of building it at 50,000).
   */
  static build(memories: Iterable<SearchableMemory>, options: SearchIndexOptions = {}): MemorySearchIndex {
    const index = new MemorySearchIndex(options);
    index.postingsOf = null;
    for (const memory of memories) index.upsert(memory);
    return index;
  }

  remove(id: string): void {
    const slot = this.slotOf.get(id);
    if (slot === undefined) return;
    this.version++;
    const postingsOf = this.postingsBySlot();
    for (const posting of postingsOf[slot]!) {
      let empty = true;
      for (let f = 0; f < FIELD_COUNT; f++) {
        removeEntry(posting, f, slot, this.frozen);
        if (entryCount(posting, f) > 0) empty = false;
      }
      // A term no memory holds any more must not show up in prefix and typo lookups.
      if (empty) {
        this.terms.delete(posting.term);
        this.removeForm(posting.term);
        this.postingOf.delete(posting.term);
      }
    }
    for (let f = 0; f < FIELD_COUNT; f++) this.totalLength[f] = this.totalLength[f]! - this.lengths[this.lengthAt(slot, f)]!;
    postingsOf[slot] = [];
    this.idOf[slot] = undefined;
    this.slotOf.delete(id);
    this.freeSlots.push(slot);
  }

  /**
   * Takes many documents out at once, in one pass over the postings: what
   * remove() costs per document (each of its terms' lists searched and
   * spliced) is paid once for all of them. A loaded snapshot whose files all
   * changed (a copied or restored project: every inode is new) would otherwise
   * cost a search of every common word's list per document, minutes at
   * 50,000 memories instead of a rebuild's seconds.
   */
  removeMany(ids: Iterable<string>): void {
    const removed = new Uint8Array(this.idOf.length);
    let count = 0;
    for (const id of ids) {
      const slot = this.slotOf.get(id);
      if (slot === undefined || removed[slot]) continue;
      removed[slot] = 1;
      count++;
    }
    if (count === 0) return;
    if (count === 1) {
      this.remove(this.idOf[removed.indexOf(1)]!);
      return;
    }
    this.version++;
    for (const posting of this.allPostings()) {
      let empty = true;
      for (let f = 0; f < FIELD_COUNT; f++) {
        dropEntries(posting, f, removed);
        if (entryCount(posting, f) > 0) empty = false;
      }
      if (empty) {
        this.terms.delete(posting.term);
        this.removeForm(posting.term);
        this.postingOf.delete(posting.term);
      }
    }
    for (let slot = 0; slot < removed.length; slot++) {
      if (!removed[slot]) continue;
      for (let f = 0; f < FIELD_COUNT; f++) this.totalLength[f] = this.totalLength[f]! - this.lengths[this.lengthAt(slot, f)]!;
      if (this.postingsOf) this.postingsOf[slot] = [];
      this.slotOf.delete(this.idOf[slot]!);
      this.idOf[slot] = undefined;
      this.freeSlots.push(slot);
    }
  }

  /** The postings of every slot, derived from the postings themselves after a snapshot was loaded. */
  private postingsBySlot(): Posting[][] {
    if (this.postingsOf) return this.postingsOf;
    const bySlot: Posting[][] = this.idOf.map(() => []);
    for (const posting of this.allPostings()) {
      for (let f = 0; f < FIELD_COUNT; f++) {
        for (const slots of [posting.slots[f]!, posting.added?.[f]!.slots ?? []]) {
          for (const slot of slots) {
            const list = bySlot[slot]!;
            if (list[list.length - 1] !== posting) list.push(posting);
          }
        }
      }
    }
    this.postingsOf = bySlot;
    return bySlot;
  }

  /**
   * The postings of `term`; those of a loaded snapshot are read from it at
   * their first use. Loading made an object and ten list views for every
   * term (~60,000 objects at 10,000 bench memories), which a fresh process
   * paid for before its first answer, and mostly never used: a query reads
   * a few dozen terms.
   */
  private postingFor(term: string): Posting | undefined {
    const entry = this.postingOf.get(term);
    if (typeof entry !== 'number') return entry;
    const posting = this.readPosting(term, entry);
    this.postingOf.set(term, posting);
    return posting;
  }

  /** The postings of a term the index holds (see postingFor). */
  private held(term: string): Posting {
    return this.postingFor(term)!;
  }

  /** Every term's postings, all read from the snapshot. */
  private allPostings(): Posting[] {
    const all: Posting[] = [];
    for (const [term, entry] of this.postingOf) all.push(typeof entry === 'number' ? this.held(term) : entry);
    return all;
  }

  /** The postings of `term`, term number `t` of the snapshot (see serialize; deserialize checked them). */
  private readPosting(term: string, t: number): Posting {
    const { slots, numbers, postings, starts } = this.snapshot!;
    // Most terms occur in a field or two only: their other fields share one empty view (never written, as
    // no frozen list is): two thirds of the views at 10,000 bench memories.
    const none = (this.noEntries ??= postings.subarray(0, 0));
    const posting: Posting = { term, slots: [], frequencies: [], added: null };
    const counts = countsAt(slots, t, FIELD_COUNT);
    let at = starts[t]!;
    for (let f = 0; f < FIELD_COUNT; f++) {
      const n = numbers[counts + f]!;
      posting.slots.push(n === 0 ? none : postings.subarray(at, at + n));
      posting.frequencies.push(n === 0 ? none : postings.subarray(at + n, at + 2 * n));
      at += 2 * n;
    }
    return posting;
  }

  /** The IDs of the indexed documents. */
  ids(): IterableIterator<string> {
    return this.slotOf.keys();
  }

  /** The slot of document `id` (see SnapshotVersions), or undefined when the index does not hold it. */
  slotOfDocument(id: string): number | undefined {
    return this.slotOf.get(id);
  }

  /** The searchedTextDigest of the text indexed in `slot`; NaN when unknown. */
  textDigestAt(slot: number): number {
    return this.textDigests[slot] ?? NaN;
  }

  /**
   * The index as bytes (laid out in searchSnapshot.ts). `versionOf` gives the
   * version of each document's text (the signature of its file), which tells
   * a later process which documents it must index again.
   */
  serialize(versionOf: (id: string) => FileSignature | undefined): Buffer {
    const pieces: Buffer[] = [];
    this.writeSerialized(versionOf, (piece) => pieces.push(Buffer.from(piece)));
    return Buffer.concat(pieces);
  }

  /**
   * serialize()'s bytes, given to `write` a piece at a time: the numbers go
   * through one block of `blockNumbers` numbers (SnapshotNumbersWriter).
   */
  writeSerialized(versionOf: (id: string) => FileSignature | undefined, write: (piece: Uint8Array) => void, blockNumbers = SERIALIZE_BLOCK): void {
    for (const step of this.serializationSteps(versionOf, write, blockNumbers)) void step;
  }

  /**
   * writeSerialized a part at a time: each step writes the next few hundred
   * terms' numbers, so that a caller can give way to the event loop between
   * two (searchIndexCache.saveSearchIndexInSlices). The steps read the index
   * as it is: the caller stops them if it changes meanwhile (`changeCount`).
   */
  *serializationSteps(versionOf: (id: string) => FileSignature | undefined, write: (piece: Uint8Array) => void, blockNumbers = SERIALIZE_BLOCK): Generator<void, void, undefined> {
    const terms = [...this.terms.ascending()];
    const width = postingWidth(this.idOf.length, this.largeFrequencies);
    writeSnapshotStart({ fields: FIELDS.map((f) => f.name), width, ids: this.idOf, terms, versionOf, textDigestAt: (slot) => this.textDigestAt(slot) }, write);
    const snapshot = this.snapshot;
    const numbers = new SnapshotNumbersWriter(write, blockNumbers);
    // Saved slot-major, as the format has them.
    const slotMajor = new Uint32Array(this.idOf.length * FIELD_COUNT);
    for (let slot = 0; slot < this.idOf.length; slot++) for (let f = 0; f < FIELD_COUNT; f++) slotMajor[slot * FIELD_COUNT + f] = this.lengths[this.lengthAt(slot, f)]!;
    numbers.put(slotMajor);
    yield;
    for (let t = 0; t < terms.length; t++) {
      if (t % TERMS_PER_STEP === TERMS_PER_STEP - 1) yield;
      const entry = this.postingOf.get(terms[t]!)!;
      if (typeof entry === 'number') {
        // Not read since loading: its counts as the snapshot holds them.
        const at = countsAt(snapshot!.slots, entry, FIELD_COUNT);
        numbers.put(snapshot!.numbers.subarray(at, at + FIELD_COUNT));
      } else {
        for (let f = 0; f < FIELD_COUNT; f++) numbers.putOne(entryCount(entry, f));
      }
    }
    numbers.flush();
    const postings = new SnapshotNumbersWriter(write, blockNumbers, width);
    for (let t = 0; t < terms.length; t++) {
      if (t % TERMS_PER_STEP === 0) yield;
      const entry = this.postingOf.get(terms[t]!)!;
      if (typeof entry === 'number') {
        // Not read since loading: its postings as the snapshot holds them.
        const at = snapshot!.starts[entry]!;
        postings.put(snapshot!.postings.subarray(at, at + savedPostingsLength(snapshot!.numbers, snapshot!.slots, entry, FIELD_COUNT)));
        continue;
      }
      const posting = entry;
      for (let f = 0; f < FIELD_COUNT; f++) {
        // A frozen list's added entries follow it: the order of a list's entries means nothing to a search.
        const added = posting.added?.[f];
        postings.put(posting.slots[f]!);
        if (added) postings.put(added.slots);
        postings.put(posting.frequencies[f]!);
        if (added) postings.put(added.frequencies);
      }
    }
    postings.flush();
  }

  /**
   * An index from serialize()'s bytes, with the version of each document's
   * text; null when the bytes are not a whole snapshot of this format (a
   * damaged or older cache is rebuilt, never trusted: searchSnapshot.ts).
   */
  static deserialize(bytes: Buffer, options: SearchIndexOptions = {}): { index: MemorySearchIndex; versions: SnapshotVersions } | null {
    try {
      const parts = readSnapshot(bytes, FIELDS.map((f) => f.name));
      if (!parts) return null;
      const { ids, terms, numbers, postings, starts } = parts;
      const index = new MemorySearchIndex(options);
      index.frozen = postings.buffer;
      index.largeFrequencies = parts.width === 4;
      index.ensureCapacity(ids.length);
      for (let slot = 0; slot < ids.length; slot++) {
        const id = ids[slot]!;
        if (id !== null && index.slotOf.has(id)) return null;
        index.idOf.push(id ?? undefined);
        if (id !== null) index.slotOf.set(id, slot);
      }
      for (const slot of parts.freeSlots) index.freeSlots.push(slot);
      for (let slot = 0; slot < ids.length; slot++) index.textDigests[slot] = parts.versions.textDigestAt(slot);
      for (let slot = 0; slot < ids.length; slot++) for (let f = 0; f < FIELD_COUNT; f++) index.lengths[index.lengthAt(slot, f)] = numbers[slot * FIELD_COUNT + f]!;
      index.totalLength.set(parts.totalLengths);
      // Each term's postings were checked by readSnapshot; they are read at their first use (postingFor).
      for (let t = 0; t < terms.length; t++) {
        const term = terms[t]!;
        if (index.postingOf.has(term)) return null;
        index.postingOf.set(term, t);
        index.addForm(term);
      }
      index.terms = new TermDictionary(terms);
      index.snapshot = { slots: ids.length, numbers, postings, starts };
      index.postingsOf = null;
      return { index, versions: parts.versions };
    } catch {
      return null;
    }
  }

  /**
   * Hits for a query, best first, among the documents `accept` lets through.
   * Lazy: a caller that needs only the top few stops early and pays for those.
   * Read the hits before changing the index: a slot freed meanwhile is skipped.
   * `related`: other words each query word reaches (see relatedTerms.ts); a
   * match on them counts as a match on that query word, at RELATED_WEIGHT.
   * `reach`: whether a query word also reaches the longer words it begins.
   */
  *search(query: string, accept: (id: string) => boolean = () => true, related?: Expansions, reach: QueryReach = {}): Generator<SearchHit, void, undefined> {
    // Scoring runs to its end before the first hit is yielded, so the per-slot accumulators
    // are free again when a caller reading the hits searches meanwhile.
    const informative = this.coordination === 'informative';
    // Per query word, the most documents any term it reached is in, in any field: a word is as
    // informative (informative coordination) as the broadest thing it matches (an everyday word
    // reaching a rare longer word as a prefix stays an everyday word). Known once the word's
    // terms were all visited (walkQuery visits one word's terms after another), so the words'
    // IDFs are added to the slots that matched them when their bits are counted.
    const documentsHolding: number[] = [];
    const documents = this.slotOf.size;
    const accumulators = this.accumulators;
    let folded = 0;
    this.walkQuery(query, related, reach, (posting, weight, wordIndex) => {
      if (wordIndex - folded >= WORDS_PER_FOLD) folded = accumulators.foldWords(folded, wordIndex, documentsHolding, documents, this.idOf.length, informative);
      let holding = documentsHolding[wordIndex] ?? 0;
      for (let f = 0; f < FIELD_COUNT; f++) holding = Math.max(holding, entryCount(posting, f));
      documentsHolding[wordIndex] = holding;
      this.addPosting(posting, weight, 2 ** (wordIndex - folded));
    });
    if (informative) accumulators.fillInformationTable(folded, documentsHolding, documents);
    const hits = this.hitColumns.take(this.idOf.length);
    const { count, top } = accumulators.collectHits(hits, this.idOf.length, informative, folded > 0);
    // Relevance is relative to the best hit the filter accepts, which is the
    // first accepted one out of the heap; the filter runs only on hits taken.
    try {
      const order = new RankOrder(hits, count, top);
      let best = 0;
      while (order.size > 0) {
        const row = order.pop();
        const id = this.idOf[hits.slots[row]!];
        if (id === undefined || !accept(id)) continue;
        const rank = hits.ranks[row]!;
        if (best === 0) best = rank;
        yield { id, relevance: rank / best, score: hits.scores[row]!, words: hits.words[row]! };
      }
    } finally {
      // Read to the end, or left early (a for-of that breaks returns the generator): the columns serve the next search.
      this.hitColumns.give(hits);
    }
  }

  /**
   * Every term each word of `query` reaches, with the weight a match on it
   * counts for: the word as written, as a prefix of longer words, its other
   * forms, the related words, and, for a word that reaches none of these,
   * the words within its typos. `wordIndex` numbers the query's distinct words.
   * What search() and scoresOf() both score, so that they agree. (Every
   * term the index holds has a document: remove() drops a term with none.)
   */
  private walkQuery(query: string, related: Expansions | undefined, reach: QueryReach, visit: (posting: Posting, weight: number, wordIndex: number) => void): void {
    const words = new Map<string, number>();
    for (const word of queryWords(query)) words.set(word, (words.get(word) ?? 0) + 1);
    let wordIndex = 0;
    // Callbacks (forEach) rather than for-of over the maps and sets: an entry pair or result object each
    // step came to ~130 KB of the garbage a store's similarity check left.
    words.forEach((repeats, word) => {
      let matched = false;
      // A word counts as many times as the query repeats it, and once towards the bonus.
      const exact = this.postingFor(word);
      if (exact) {
        visit(exact, repeats, wordIndex);
        matched = true;
      }
      const forms = this.wordForms ? this.formsOf.get(stemOf(word)) : undefined;
      const asPrefix = (reach.prefixes ?? true) && matchesAsPrefix(word);
      if (asPrefix) {
        for (const term of this.terms.withPrefix(word)) {
          if (term.length === word.length) continue;
          const posting = this.held(term);
          // A longer word that is another form of this one ("jobs" for "job") is that, not a mere prefix match.
          const weight = forms?.has(term) ? WORD_FORM_WEIGHT : (PREFIX_WEIGHT * term.length) / (term.length + 0.3 * (term.length - word.length));
          visit(posting, weight * repeats, wordIndex);
          matched = true;
        }
      }
      // Other forms of the word (same stem) that the prefix lookup did not already count.
      forms?.forEach((form) => {
        if (form === word || (asPrefix && form.startsWith(word))) return;
        visit(this.held(form), WORD_FORM_WEIGHT * repeats, wordIndex);
        matched = true;
      });
      related?.get(word)?.forEach((weight, stem) => {
        this.formsOf.get(stem)?.forEach((form) => {
          visit(this.held(form), RELATED_WEIGHT * weight * repeats, wordIndex);
          matched = true;
        });
      });
      // Typo tolerance only for words that match nothing as they are: a word
      // found as typed (or as a prefix) has no typo to forgive.
      const typos = matched ? 0 : typosAllowed(word);
      if (typos > 0) {
        for (const [term, distance] of this.terms.withinTypos(word, typos)) {
          if (distance === 0 || (asPrefix && term.startsWith(word))) continue;
          const weight = (FUZZY_WEIGHT * term.length) / (term.length + distance);
          visit(this.held(term), weight * repeats, wordIndex);
        }
      }
      wordIndex++;
    });
  }

  /**
   * A document of the index ready for scoresOf(): how often each of its terms
   * occurs in each field, read again from its text (the index keeps postings
   * by term, not by document). Null when the index does not hold this text
   * (a cheap check: its field lengths). Valid until the index next changes.
   */
  scoringDocument(memory: SearchableMemory): ScoringDocument | null {
    const slot = this.slotOf.get(memory.id);
    if (slot === undefined) return null;
    const termAt = new Map<string, number>();
    const fields: Map<string, number>[] = [];
    for (let f = 0; f < FIELD_COUNT; f++) {
      const { length, termCounts } = fieldTerms(FIELDS[f]!.text(memory));
      if (length !== this.lengths[this.lengthAt(slot, f)]) return null;
      fields.push(termCounts);
      termCounts.forEach((_, term) => {
        if (!termAt.has(term)) termAt.set(term, termAt.size * FIELD_COUNT);
      });
    }
    const counts = new Uint32Array(termAt.size * FIELD_COUNT);
    fields.forEach((termCounts, f) => termCounts.forEach((count, term) => (counts[termAt.get(term)! + f] = count)));
    return { id: memory.id, slot, version: this.version, termAt, counts };
  }

  /**
   * The score search() gives each of `documents` for `query` (0 where it
   * matches nothing), without scoring any other document: the cost is the
   * query's terms, not the documents they match.
   */
  scoresOf(query: string, documents: readonly ScoringDocument[], related?: Expansions): Map<string, number> {
    if (documents.some((d) => d.version !== this.version)) throw new Error('a scoring document outlived a change of the search index');
    const scores = documents.map(() => 0);
    const words = documents.map(() => 0);
    const lastWord = documents.map(() => -1);
    // Which documents hold each term, so that a term is looked up once for all of them: the term's last
    // holder, then each holder's previous one, as (document, the term's place in its counts, previous)
    // triples in one array. Lists per term left ~190 KB of garbage a store (its similarity check).
    const lastHolder = new Map<string, number>();
    let holderCount = 0;
    for (const document of documents) holderCount += document.termAt.size;
    const holders = new Int32Array(holderCount * 3);
    let next = 0;
    documents.forEach((document, d) => {
      document.termAt.forEach((at, term) => {
        holders[next] = d;
        holders[next + 1] = at;
        holders[next + 2] = lastHolder.get(term) ?? -1;
        lastHolder.set(term, next);
        next += 3;
      });
    });
    const documentCount = this.slotOf.size;
    // One scorer, set for each document and field: an object each was garbage in every stored memory's similarity check.
    const scorer = fieldScorer(0, 1);
    this.walkQuery(query, related, {}, (posting, weight, wordIndex) => {
      for (let h = lastHolder.get(posting.term) ?? -1; h >= 0; h = holders[h + 2]!) {
        const d = holders[h]!;
        const at = holders[h + 1]!;
        if (lastWord[d] !== wordIndex) {
          lastWord[d] = wordIndex;
          words[d]!++;
        }
        const { slot, counts } = documents[d]!;
        for (let f = 0; f < FIELD_COUNT; f++) {
          const tf = counts[at + f]!;
          if (tf === 0) continue;
          setFieldScorer(scorer, weight * FIELDS[f]!.boost * idf(documentCount, entryCount(posting, f)), this.totalLength[f]! / documentCount);
          scores[d]! += entryScore(scorer, tf, this.lengths[this.lengthAt(slot, f)]!);
        }
      }
    });
    // Matching more of the query's words multiplies the score, as in search().
    return new Map(documents.map((document, d) => [document.id, scores[d]! * words[d]!]));
  }

  /**
   * How many postings entries a search for `word` reads when it reaches only
   * the word and its other forms (no prefixes, no related words): the work
   * of that search grows with it.
   */
  entriesReached(word: string): number {
    let entries = 0;
    const forms = this.wordForms ? (this.formsOf.get(stemOf(word)) ?? []) : [];
    for (const term of new Set([word, ...forms])) {
      const posting = this.postingFor(term);
      if (posting) for (let f = 0; f < FIELD_COUNT; f++) entries += entryCount(posting, f);
    }
    return entries;
  }

  /**
   * The words of `query` that weigh most in it, at most `count`, heaviest
   * first (ties in query order): by how often the query repeats the word,
   * times its IDF as written (a word no document holds weighs nothing). The
   * words that tell a text from the rest, as "more like this" picks them.
   */
  distinctiveWords(query: string, count: number): string[] {
    const repeats = new Map<string, number>();
    for (const word of queryWords(query)) repeats.set(word, (repeats.get(word) ?? 0) + 1);
    const documents = this.slotOf.size;
    const weightOf = (word: string, times: number) => {
      const posting = this.postingFor(word);
      return posting ? times * idf(documents, Math.max(...posting.slots.map((_, f) => entryCount(posting, f)))) : 0;
    };
    return [...repeats]
      .map(([word, times], at) => ({ word, at, weight: weightOf(word, times) }))
      .filter((w) => w.weight > 0)
      .sort((a, b) => b.weight - a.weight || a.at - b.at)
      .slice(0, count)
      .map((w) => w.word);
  }

  /** Adds one term's BM25+ contribution to every document holding it, and marks them as matching the query word of `wordBit` (see slotAccumulators.ts). */
  private addPosting(posting: Posting, weight: number, wordBit: number): void {
    const { accumulators, lengths } = this;
    const documents = this.slotOf.size;
    for (let f = 0; f < FIELD_COUNT; f++) {
      const count = entryCount(posting, f);
      if (count === 0) continue;
      const scorer = fieldScorer(weight * FIELDS[f]!.boost * idf(documents, count), this.totalLength[f]! / documents);
      const fieldAt = this.lengthAt(0, f);
      accumulators.addEntries(posting.slots[f]!, posting.frequencies[f]!, lengths, fieldAt, scorer, wordBit);
      const added = posting.added?.[f];
      if (added && added.slots.length > 0) accumulators.addEntries(added.slots, added.frequencies, lengths, fieldAt, scorer, wordBit);
    }
  }

  /** Where the length of field `field` of `slot` is in `lengths`: the fields' runs are as long as the per-slot arrays (see ensureCapacity). */
  private lengthAt(slot: number, field: number): number {
    return field * this.capacity + slot;
  }

  /** How many slots the per-slot arrays have room for (tests). */
  get slotCapacity(): number {
    return this.capacity;
  }

  /**
   * Room for `slots` and an eighth more (at least 64 more), not twice as many: the per-slot arrays take
   * ~46 bytes a slot, and a loaded index, sized to its slots, doubled them at its first new document
   * (~2.3 MB more held at 50,000 memories, and as much again until the old ones were collected).
   */
  private ensureCapacity(slots: number): void {
    if (slots <= this.capacity) return;
    const room = this.capacity;
    const capacity = Math.max(slots + (slots >> 3), room + 64);
    const lengths = new Uint32Array(capacity * FIELD_COUNT);
    for (let f = 0; f < FIELD_COUNT; f++) lengths.set(this.lengths.subarray(f * room, (f + 1) * room), f * capacity);
    this.lengths = lengths;
    const textDigests = new Float64Array(capacity);
    textDigests.set(this.textDigests);
    this.textDigests = textDigests;
    this.accumulators.grow(capacity);
    this.capacity = capacity;
  }
}

export const RELEVANCE_WEIGHT = 0.75;

/** The rank of a search hit: mostly relevance, with priority breaking near-ties. */
export function blendedScore(relevance: number, priority: number): number {
  return relevance * RELEVANCE_WEIGHT + priority * (1 - RELEVANCE_WEIGHT);
}
