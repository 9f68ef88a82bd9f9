/**
 * How a store opens, and what it leaves the next process to open from: the
 * record cache (parse-cache.json, memoryRecords.ts) is read once, before the
 * first look at the files; a prepared store opens in steps that give way to
 * the event loop; the record cache and the search index are saved for the
 * next process (flushCaches). MemoryStore decides when the store is read;
 * this is how. Nothing here writes a file a person shares.
 */
import * as fs from 'node:fs';
import type { FileRecord } from './loadedFile';
import type { MemoryRecordCache } from './memoryRecords';
import { sweepSignatures, type SweptSignatures } from './signatureSweep';
import { giveWay, OvertakenError, type SliceOptions } from './slices';
import type { StoreParts } from './storeParts';

/**
 * The record cache's size from which openInSteps has a worker thread stat the
 * memory files (~3,500 memories): below, the worker's start (~25 ms) is
 * longer than the stat calls it would take over.
 */
export const SWEEP_ASIDE_MIN_RECORD_CACHE_BYTES = 1 << 20;

export class StoreOpening {
  /** Set by the first refresh(), which loads the record cache before it reads the files. */
  private opened = false;
  /** The record cache is read once, before the first look at the files; openInSteps reads it a step ahead. */
  private recordsLoaded = false;
  /** The openInSteps under way. */
  private inProgress: Promise<void> | null = null;
  /** Callers of untilOpened that will not search once it settles. */
  private waitingWithoutSearch = 0;
  /** The flushCachesInSlices under way, if any. */
  private flushing: Promise<void> | null = null;
  /** Undefined until sweepAhead() runs; then the sweep it started for the opening (null: none, or the opening took it). */
  private sweepStarted: Promise<SweptSignatures | null> | null | undefined;

  constructor(
    private readonly records: MemoryRecordCache,
    private readonly parts: Pick<StoreParts, 'paths' | 'mirror' | 'queries'>,
    /** The search index worker's script (OpenOptions.searchIndexWorker): with it, a store without a saved index has it built aside. */
    private readonly searchIndexWorker?: string,
    /** How the memory files are statted aside (a worker thread); tests count the sweeps. */
    private readonly sweep: (memoriesDir: string) => Promise<SweptSignatures | null> = sweepSignatures,
  ) {}

  /** Whether the store has read its files. */
  get isOpen(): boolean {
    return this.opened;
  }

  /** Reads the files unless the store has read them already (what needs no fresh look, such as the config). */
  ensureOpen(): void {
    if (!this.opened) this.refresh();
  }

  /** Brings the mirror up to date with the disk; the first time, the record cache is loaded before. */
  refresh(options: { full?: boolean; swept?: SweptSignatures | null } = {}): void {
    this.loadRecords();
    this.parts.mirror.refresh(options);
    this.opened = true;
  }

  /**
   * The record cache, then the files, each step followed by a turn of the
   * event loop; what is done already is skipped. In a large store the memory
   * files are statted on a worker thread meanwhile (signatureSweep.ts), while
   * this one reads the record cache, the JSON files and the saved search index.
   * A store without a saved search index hands each memory it reads to a
   * worker that indexes it (searchIndexAside.ts), when given its script.
   * `inSlices`: the thread serves others meanwhile (an editor's extension
   * host), so the memory files are read a slice at a time too
   * (DiskMirror.loadMemoryFilesInSlices). Not by default: in a process of its
   * own, whose requests wait for the opening anyway, it only costs time
   * (~5 % at 10,000 memories without caches, with the index worker running).
   */
  openInSteps({ inSlices = false }: { inSlices?: boolean } = {}): Promise<void> {
    this.inProgress ??= this.openSteps(inSlices).finally(() => (this.inProgress = null));
    return this.inProgress;
  }

  /**
   * Settles when the openInSteps under way has (at once when none is), whether
   * or not it succeeded. `thenSearches`: the caller searches next, and waits
   * for the search index too; a caller that does not (a session start outside
   * git) makes the opening leave the saved index to be read afterwards.
   */
  untilOpened({ thenSearches = false }: { thenSearches?: boolean } = {}): Promise<void> {
    const opening = this.inProgress;
    if (!opening) return Promise.resolve();
    if (thenSearches) return opening.catch(() => undefined);
    this.waitingWithoutSearch++;
    return opening.catch(() => undefined).finally(() => this.waitingWithoutSearch--);
  }

  /**
   * Starts the worker thread's look at the memory files (sweepAside) ahead of
   * openInSteps, which uses it: a server starts it before it claims the
   * project and listens (~25–50 ms at 10,000 memories), which the sweep then
   * overlaps. Once per store; a store opened meanwhile does not need it.
   */
  sweepAhead(): void {
    if (this.sweepStarted !== undefined || this.opened) return;
    this.sweepStarted = this.sweepAside();
  }

  private async openSteps(inSlices: boolean): Promise<void> {
    const step = giveWay;
    // A sweep started ahead is used once; a store opened since it started needs none.
    const ahead = this.sweepStarted;
    this.sweepStarted = null;
    const sweep = this.opened ? null : ahead !== undefined ? ahead : this.sweepAside();
    if (!this.recordsLoaded) {
      this.loadRecords();
      await step();
    }
    if (!this.opened && this.searchIndexWorker !== undefined && !fs.existsSync(this.parts.paths.searchIndex)) {
      this.parts.queries.buildSearchIndexAside(this.searchIndexWorker);
    }
    if (!this.opened) {
      let swept: SweptSignatures | null = null;
      if (sweep) {
        this.parts.mirror.refreshSideFiles();
        await step();
        // Read ahead while the worker sweeps, unless a request that will not search waits for the
        // opening (~75 ms at 10,000 memories that a first session start would wait for in vain).
        if (this.waitingWithoutSearch === 0) {
          this.parts.queries.readSavedSearchIndex();
          await step();
        }
        swept = await sweep;
      }
      if (inSlices && !this.opened) {
        // The memory files a slice at a time; the refresh then reads only what changed meanwhile.
        swept = await this.parts.mirror.loadMemoryFilesInSlices(swept, step, () => !this.opened);
        if (!sweep && !this.opened) {
          // After the memory files, as in one go: read before, they would make the reading's garbage collections longer.
          this.parts.mirror.refreshSideFiles();
          await step();
        }
      }
      if (!this.opened) this.refresh({ swept });
    }
    // Every file read was handed over, whichever refresh read it (a request may have opened the store in between).
    this.parts.queries.finishSearchIndexAside();
    await step();
  }

  /** The memory files' signatures from a worker thread, for a store large enough to gain from it. */
  private sweepAside(): Promise<SweptSignatures | null> | null {
    let recordCacheBytes: number;
    try {
      recordCacheBytes = fs.statSync(this.parts.paths.parseCache).size;
    } catch {
      return null;
    }
    if (recordCacheBytes < SWEEP_ASIDE_MIN_RECORD_CACHE_BYTES) return null;
    // Watching first: a file changed after the worker's look at it is reported, and looked at again.
    this.parts.mirror.watchIfAsked();
    return this.sweep(this.parts.paths.memories);
  }

  /**
   * Saves the record cache and the search index as they are now, for the next
   * process; nothing for a store never opened. Then, once the search index
   * is loaded, lets go of the texts of the files read whole or written
   * (DiskMirror.releaseTexts): the memories read since are what a process
   * opening from these caches would hold. Before, their texts would be read
   * again to index them.
   */
  flushCaches(): void {
    // A store never opened has nothing new to save (and a server stopped at once need not read it).
    if (!this.opened || !fs.existsSync(this.parts.paths.root)) return;
    // What another process removed since (a purge above all) must not be saved back.
    this.refresh();
    this.saveRecords();
    this.parts.queries.saveSearchIndex();
    if (this.parts.queries.searchIndexLoaded) this.parts.mirror.releaseTexts();
  }

  /**
   * flushCaches, giving way to the event loop every few milliseconds: what a
   * server does in a pause, where a request that comes meanwhile waits for
   * one slice instead of the whole (~360 ms at 50,000 memories when both
   * caches are behind the files: a fresh clone, a copy, a pull that brought
   * memories). A cache that changes while it is being written stays unsaved:
   * the next flush (at the latest, the server's stop) writes it.
   */
  flushCachesInSlices(slices: SliceOptions = {}): Promise<void> {
    // One at a time: a second call (the extension saves once open and again once the index is loaded) follows the first.
    const flush = (this.flushing ?? Promise.resolve()).then(() => this.flushInSlices(slices));
    const tracked: Promise<void> = flush
      .catch(() => undefined)
      .finally(() => {
        if (this.flushing === tracked) this.flushing = null;
      });
    this.flushing = tracked;
    return flush;
  }

  private async flushInSlices({ pause = giveWay, sliceMs }: SliceOptions): Promise<void> {
    const { mirror } = this.parts;
    if (!this.opened || mirror.isDisposed || !fs.existsSync(this.parts.paths.root)) return;
    // A store closed between two slices writes nothing more (what was begun is dropped).
    const slices: SliceOptions = {
      sliceMs,
      pause: async () => {
        await pause();
        if (mirror.isDisposed) throw new OvertakenError('the store');
      },
    };
    this.refresh();
    await this.records.saveInSlices(this.liveRecords(), slices);
    if (mirror.isDisposed) return;
    await this.parts.queries.saveSearchIndexInSlices(slices);
    if (this.parts.queries.searchIndexLoaded && !mirror.isDisposed) mirror.releaseTexts();
  }

  /** Saves the record cache of the active memories, but for `without` (a memory being purged). */
  saveRecords(without?: string): void {
    if (!fs.existsSync(this.parts.paths.root)) return;
    if (without !== undefined) this.records.noteChange();
    this.records.save(this.liveRecords(without));
  }

  /** The record of each memory file the store holds, by file name, but for memory `without`. */
  private *liveRecords(without?: string): Generator<[string, FileRecord]> {
    for (const [id, file] of this.parts.mirror.files) if (id !== without) yield [`${id}.md`, file.record()];
  }

  private loadRecords(): void {
    if (this.recordsLoaded) return;
    this.records.load();
    this.recordsLoaded = true;
  }
}
