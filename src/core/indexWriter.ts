/**
 * IndexWriter: index.json, the cache of the active memories' metadata and of
 * their tags, which other tools and the reference implementation read.
 *
 * Rewriting 10,000 entries for every stored memory would dominate a write, so
 * the writer renders again only what changed since the last write: the other
 * members, and the tags whose lists did not change, are copied from the file
 * it wrote last (JsonMapChunks). It also keeps the set of IDs index.json
 * lists, which integrity compares with the memory files.
 *
 * Even so a write costs bytes in proportion to the store (about 320 per
 * memory), so a server defers it (deferWrites): a store then only marks
 * index.json as behind (indexPending.ts), and the server flushes it in a
 * pause between requests (MemoryStore.flushIndex: decided and put in place
 * under the lock, rendered and written without it).
 */
import * as fs from 'node:fs';
import { replaceWithTemp, writeTempFileFrom, writeTempFileFromAsync, type FileSignature, type PieceWriter, type TempFile } from './files';
import { CHUNKS_PER_SLICE, JSON_MAPS_END, JSON_MAPS_START, JsonMapChunks, mapClosing, mapOpening } from './jsonMapChunks';
import type { DiskMirror } from './diskMirror';
import { clearIndexPending, markIndexPending } from './indexPending';
import type { Memory, MemoryMeta } from './model';
import { indexEntryOf, readIndexEntries } from './storeFiles';
import { giveWay } from './slices';

/** Memories laid out between two looks at the event loop (layOutAhead): a few milliseconds. */
const IDS_PER_SLICE = 2048;
/**
 * Tags rendered between two looks at the event loop (a flush): one, as a tag that many memories share
 * lists thousands of IDs (~5 ms for 30,000), and a flush renders only the tags whose lists changed, but
 * for its first, which renders them all.
 */
const TAG_CHUNKS_PER_SLICE = 1;

/** A flush decided under the lock (IndexWriter.prepareFlush), until it is put in place. */
export interface PreparedFlush {
  /** The IDs index.json will list. */
  readonly ids: Set<string>;
  /** The writer's generation when it was decided (-1: it failed). */
  generation: number;
}

export class IndexWriter {
  /**
   * The IDs index.json lists as this process registered and wrote them; null
   * while they are those of the file on disk, which is then read only when
   * asked for (see `ids`): a write does not need them, as it renders every
   * entry from the memory files anyway after the file changed.
   */
  private ownIds: Set<string> | null = null;
  /**
   * The memories as index.json holds them after this process wrote it. Memory
   * objects are replaced, never changed, when a file is read again, so this
   * still tells what is on disk after a hand edit of the memory file.
   */
  private readonly indexed = new Map<string, Memory>();
  /** Memories whose index entry may have changed since index.json was last written. */
  private readonly dirty = new Set<string>();
  /** Set when the registered set was replaced wholesale: the next write looks at everything. */
  private needsFullSync = true;
  private readonly members = new JsonMapChunks<MemoryMeta>(indexEntryOf);
  /**
   * What a member is rendered from: the memory as `indexed` holds it, set in
   * the same step that decides the members, so that bytes rendered later (a
   * flush renders in slices) still describe that step, whatever a reader's
   * refresh saw of the files in between.
   */
  private readonly renderedMemory = (id: string): Memory => this.indexed.get(id)!;

  /**
   * The IDs under each tag (none empty), as index.json holds them. A memory's tags there are those of
   * its memory in `indexed` (a map of them beside it was as large as `indexed` itself).
   */
  private readonly tagIds = new Map<string, Set<string>>();
  /**
   * The tag index, a tag a chunk: a tag whose list did not change is copied from the file written last.
   * Its rendered bytes were kept per tag before (~3.7 MB at 50,000 memories, for a server's life).
   */
  private readonly tags = new JsonMapChunks<readonly string[]>((ids) => ids, { maxChunk: 1 });
  private readonly tagList = (tag: string): string[] => [...this.tagIds.get(tag)!].sort();

  /** Set by deferWrites: told when index.json falls behind, so that its caller schedules flush(). */
  private onDeferred: (() => void) | null = null;
  /** Changes were made that index.json does not list yet (deferred writes only). */
  private behind = false;
  /**
   * Counts what makes a prepared flush out of date: a new decision of what
   * index.json holds (prepareRender, by any write of this process), a change
   * of it seen on disk, a wholesale replacement of the IDs.
   */
  private generation = 0;
  /**
   * The members and tags laid out ahead for these IDs (layOutAhead), in the
   * writer's generation then: the next write looks only at what changed since,
   * as after a write of its own. Any other generation ignores it.
   */
  private laidOut: { ids: Set<string>; generation: number } | null = null;

  constructor(
    private readonly mirror: DiskMirror,
    private readonly options: { chunksPerSlice?: number } = {},
  ) {}

  /**
   * From now on write() only marks index.json as behind, once per flush, and
   * calls `onBehind`; a flush writes it. For a long-running server; every
   * caller of write(), prepareFlush() and commitFlush() holds the lock
   * (writeFlush() needs none). null writes at once again (what is behind
   * waits for a flush).
   */
  deferWrites(onBehind: (() => void) | null): void {
    this.onDeferred = onBehind;
  }

  /** Whether index.json misses changes this process made (deferred writes). */
  get isBehind(): boolean {
    return this.behind;
  }

  /** The IDs index.json lists: as on disk, then as this process registers and writes them. */
  get ids(): ReadonlySet<string> {
    return this.ownIds ?? this.mirror.indexIds();
  }

  /** Whether index.json lists `id`, or may (DiskMirror.indexMentions): what a new memory ID must avoid, answered without parsing the file. */
  mentions(id: string): boolean {
    return this.ownIds ? this.ownIds.has(id) : this.mirror.indexMentions(id);
  }

  register(id: string): void {
    this.ownIds?.add(id);
    this.dirty.add(id);
  }

  unregister(id: string): void {
    this.ownIds?.delete(id);
    this.dirty.add(id);
  }

  /** index.json changed on disk: its IDs replace the registered set, and the next write renders everything. */
  indexChanged(): void {
    this.ownIds = null;
    this.needsFullSync = true;
    this.generation++;
  }

  /** The registered set becomes `ids` (fix, after repairing the memory files). */
  replaceIds(ids: Set<string>): void {
    this.ownIds = ids;
    this.needsFullSync = true;
    this.generation++;
  }

  /** A memory file changed: its entry is rendered again at the next write. */
  memoryChanged(id: string): void {
    this.dirty.add(id);
    this.members.invalidate(id);
  }

  /**
   * Writes index.json from the active memories, or, with deferred writes,
   * marks it as behind (see deferWrites). The caller holds the lock.
   */
  write(options: { now?: boolean } = {}): void {
    if (this.onDeferred && !options.now) {
      if (this.behind) return;
      // The mark first: a process killed after it leaves index.json behind, and says so.
      markIndexPending(this.mirror.paths);
      this.behind = true;
      this.onDeferred();
      return;
    }
    this.prepareRender();
    const index = this.mirror.paths.index;
    let written: TempFile;
    try {
      written = writeTempFileFrom(
        index,
        (out) => {
          this.writeStart(out);
          this.members.writeTo(out, index);
          this.writeBetween(out);
          this.tags.writeTo(out, index);
          this.writeEnd(out);
        },
        { durable: false },
      );
      replaceWithTemp(written, index);
    } catch (error) {
      this.abandoned();
      throw error;
    }
    this.committed(written.signature);
    this.written(this.ownIds!);
  }

  /** A whole flush (prepareFlush, writeFlush, commitFlush) for a caller that holds the lock throughout. */
  async flush(): Promise<void> {
    const prepared = this.prepareFlush();
    if (prepared) this.commitFlush(prepared, await this.writeFlush(prepared));
  }

  /**
   * The first step of a flush, under the lock: decides what index.json will
   * hold (null when it is not behind). Rendering and writing it (writeFlush)
   * need no lock; commitFlush, under the lock again, puts it in place.
   */
  prepareFlush(): PreparedFlush | null {
    if (!this.behind) return null;
    this.prepareRender();
    return { ids: this.ownIds!, generation: this.generation };
  }

  /**
   * The second step, without the lock: renders index.json as prepared, in
   * slices with the event loop free between them, into a temporary file. At
   * 50,000 memories a server's first flush renders every entry (~0.5 s): under
   * the lock, every store waited for it. Nothing else prepares meanwhile (the
   * caller runs one flush at a time), so what is rendered is what was decided.
   */
  async writeFlush(prepared: PreparedFlush): Promise<TempFile> {
    const index = this.mirror.paths.index;
    try {
      return await writeTempFileFromAsync(
        index,
        async (out) => {
          this.writeStart(out);
          await this.members.writeInSlices(out, index, this.options.chunksPerSlice ?? CHUNKS_PER_SLICE);
          this.writeBetween(out);
          await this.tags.writeInSlices(out, index, TAG_CHUNKS_PER_SLICE);
          this.writeEnd(out);
        },
        { durable: false },
      );
    } catch (error) {
      // What was rendered is not on disk: the next write looks at everything again.
      this.abandoned();
      prepared.generation = -1;
      throw error;
    }
  }

  /**
   * The last step, under the lock again (after a refresh): the file written
   * replaces index.json, unless index.json was written since the flush was
   * prepared (by this process, or by another one: a refresh saw it change);
   * then it is dropped, and the next flush renders everything. Changes made
   * while it was written keep index.json behind, and ask for the next flush.
   */
  commitFlush(prepared: PreparedFlush, written: TempFile): void {
    if (prepared.generation !== this.generation) {
      fs.rmSync(written.temp, { force: true });
      this.abandoned();
      this.onDeferred?.();
      return;
    }
    try {
      replaceWithTemp(written, this.mirror.paths.index);
    } catch (error) {
      this.abandoned();
      throw error;
    }
    this.committed(written.signature);
    this.written(prepared.ids);
  }

  /** The file written is index.json now: members and tags are where it holds them. */
  private committed(signature: FileSignature): void {
    this.members.committed(signature);
    this.tags.committed(signature);
  }

  /** The file written was not put in place: the next write looks at everything again. */
  private abandoned(): void {
    this.members.abandoned();
    this.tags.abandoned();
    this.needsFullSync = true;
  }

  private written(ids: Set<string>): void {
    this.mirror.noteIndexWritten(ids);
    if (this.dirty.size > 0) {
      // Changed while the file was written (a flush renders without the lock): still behind, and the mark stays.
      this.onDeferred?.();
      return;
    }
    this.behind = false;
    clearIndexPending(this.mirror.paths);
  }

  /**
   * Decides index.json's members and tags from the active memories. Normally
   * only the memories touched since the last write are looked at; their chunk
   * of members and their tags are rendered again, and every other byte is
   * reused.
   */
  private prepareRender(): void {
    const laidOut = this.laidOut?.generation === this.generation ? this.laidOut.ids : null;
    this.laidOut = null;
    // Members, tags and IDs change here: a flush prepared before renders something else now.
    this.generation++;
    const files = this.mirror.files;
    if (laidOut) {
      // Every member and tag was laid out ahead and none rendered: what changed since is in `dirty`.
      this.ownIds = laidOut;
      this.needsFullSync = false;
    }
    // After index.json changed on disk (ownIds null) everything is rendered anyway: no need to read it.
    if (this.needsFullSync || this.ownIds === null || (!laidOut && this.mirror.indexStatus.kind !== 'ok')) {
      const active = new Set(files.keys());
      this.members.sync(active, this.renderedMemory);
      for (const id of new Set([...this.indexed.keys(), ...active])) this.index(id, files.get(id)?.memory);
      this.ownIds = active;
      this.needsFullSync = false;
    } else {
      for (const id of this.dirty) {
        const active = files.has(id);
        this.members.update(id, active, this.renderedMemory);
        this.index(id, files.get(id)?.memory);
        // What the file now lists, also for memory files added or deleted by hand since the last write.
        if (active) this.ownIds.add(id);
        else this.ownIds.delete(id);
      }
    }
    this.dirty.clear();
  }

  /**
   * Does ahead, in slices with the event loop free between them, what the
   * first write of a process does under the lock in one go: every active
   * memory's member and tags laid out (~130 ms at 50,000 memories, ~40 ms at
   * 10,000, during which a server answered nothing). Nothing is rendered or
   * written; the next write renders every member, as it would have. Only
   * before that first write; abandoned as soon as anything else decides what
   * index.json holds (a write, index.json changing on disk), which lays out
   * everything itself. Memories changed meanwhile are in `dirty`, looked at by
   * that write as after one of its own. Needs no lock: it only reads the
   * memories as the mirror holds them.
   */
  async layOutAhead(idsPerSlice = IDS_PER_SLICE): Promise<void> {
    if (!this.needsFullSync || this.ownIds !== null || this.laidOut) return;
    const generation = this.generation;
    const files = this.mirror.files;
    const ids = new Set(files.keys());
    // What changed before is laid out now (the opening marked every memory): what changes from here on is marked again.
    this.dirty.clear();
    this.members.sync(ids, this.renderedMemory);
    // Memories this process wrote to index.json before it changed on disk, and gone since: out of their tags too.
    for (const id of [...this.indexed.keys()]) if (!ids.has(id)) this.index(id, undefined);
    let done = 0;
    for (const id of ids) {
      if (done++ % idsPerSlice === 0) {
        await giveWay();
        if (this.generation !== generation) return;
      }
      this.index(id, files.get(id)?.memory);
    }
    if (this.generation === generation && this.needsFullSync) this.laidOut = { ids, generation };
  }

  /** index.json up to its members (written by the caller). */
  private writeStart(out: PieceWriter): void {
    out.write(JSON_MAPS_START);
    out.write(mapOpening('memories', this.members.isEmpty));
  }

  /** index.json between its members and its tag index's members. */
  private writeBetween(out: PieceWriter): void {
    out.write(mapClosing(this.members.isEmpty));
    out.write(mapOpening('tag_index', this.tags.isEmpty));
  }

  /** index.json after its tag index's members. */
  private writeEnd(out: PieceWriter): void {
    out.write(mapClosing(this.tags.isEmpty));
    out.write(JSON_MAPS_END);
  }

  /** index.json's entries by ID, for the integrity check; empty when it is not usable. */
  entriesForCheck(): Map<string, unknown> {
    if (this.mirror.indexStatus.kind !== 'ok') return new Map<string, unknown>();
    // indexText is null when this process wrote the index: `indexed` says what it holds.
    if (this.mirror.indexText === null) return new Map<string, unknown>([...this.indexed].map(([id, memory]) => [id, indexEntryOf(memory)]));
    return readIndexEntries(this.mirror.indexText);
  }

  /**
   * Memory `id` as index.json will hold it (undefined: not at all): in
   * `indexed`, and moved within the tag index from the tags it had there.
   * A memory's tags array is replaced whenever its file is read again, so an
   * identical array means no change; a tag it keeps keeps its list (and its
   * bytes, copied at the next write: a tag many memories share is not
   * rendered again for an edit of one of them).
   */
  private index(id: string, memory: Memory | undefined): void {
    const previous = this.indexed.get(id)?.tags;
    const tags = memory?.tags;
    if (memory) this.indexed.set(id, memory);
    else this.indexed.delete(id);
    if (previous === tags) return;
    for (const tag of previous ?? []) {
      if (tags?.includes(tag)) continue;
      this.tagIds.get(tag)?.delete(id);
      this.tagChanged(tag);
    }
    for (const tag of tags ?? []) {
      if (previous?.includes(tag)) continue;
      let ids = this.tagIds.get(tag);
      if (!ids) this.tagIds.set(tag, (ids = new Set()));
      ids.add(id);
      this.tagChanged(tag);
    }
  }

  /** A tag's list of IDs changed: rendered again at the next write, or gone from the index with its last memory. */
  private tagChanged(tag: string): void {
    const present = (this.tagIds.get(tag)?.size ?? 0) > 0;
    if (!present) this.tagIds.delete(tag);
    this.tags.update(tag, present, this.tagList);
  }

}
