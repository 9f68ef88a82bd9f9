/**
 * DiskMirror: a store's files as this process last saw them, and the only
 * code that reads them or writes memory and archive files.
 *
 * The files are the truth; the mirror is a parsed copy that stays cheap to keep
 * current. Before every operation refresh() compares signatures (size, mtime,
 * inode) of the JSON files and of the memories/ and archives/ directories with
 * the last ones seen, and an optional watcher reports edits made in place. A
 * write records the new signature of what it wrote, so this process never
 * re-reads its own writes. What the store derives from the files (index.json,
 * stats.json rendering, ranking, search) learns about changes through
 * MirrorEvents rather than being reached into from here.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  TEMP_SUFFIX,
  isNotFound,
  listDir,
  readTextIfExists,
  replaceWithTemp,
  sameSignature,
  statSignature,
  toJsonText,
  writeFileAtomic,
  writeTempFile,
  type FileSignature,
} from './files';
import { ChangedOnDiskError, unreadableFile } from './errors';
import { LoadedFile, ReadTexts } from './loadedFile';
import { StateFile } from './stateFile';
import { StatsFile } from './statsFile';
import { MemoryFileSignatures } from './memoryFileSignatures';
import { MentionedIds, mentionedIdsOfFile, mentionedIdsOfFileAsync, type FileMentions } from './memoryIds';
import { InvalidMemoryFile, memoryOf, parseBody, splitFrontmatter } from './memoryFile';
import type { MemoryRecordCache } from './memoryRecords';
import type { SweptSignatures } from './signatureSweep';
import { MEMORY_ID_FORMAT, isMemoryId, type ArchiveReason, type Memory, type MemoryStats } from './model';
import {
  archiveIndexJson,
  readArchiveIndex,
  readIndexIds,
  readStoreFile,
  type ArchiveIndex,
  type JsonFileStatus,
  type StorePaths,
  type StoreState,
} from './storeFiles';
import type { ArchivedMemory, InvalidFile, OpenOptions } from './storeTypes';

export { LoadedFile } from './loadedFile';

/**
 * How long loadMemoryFilesInSlices holds the thread at most (give or take a
 * file): well under the ~50 ms from which an editor feels a pause.
 */
export const OPENING_SLICE_MS = 20;
/** Files loaded between looks at the clock (a file takes ~0.05 ms from its record, ~0.1 ms read and parsed). */
const SLICE_CHECK_EVERY = 16;

/** The names of memories/' `.md` files. */
function listMemoryFileNames(dir: string): string[] {
  return listDir(dir).filter((n) => n.endsWith('.md'));
}

/** What the mirror tells the store's derived data when the files change. */
export interface MirrorEvents {
  /** A memory file's text changed, appeared (`next`) or went away (undefined). */
  memoryChanged(id: string, next: LoadedFile | undefined): void;
  /** index.json changed on disk (read lazily: see indexIds). */
  indexChanged(): void;
  /** stats.json was read again: the stats map was replaced. */
  statsRead(): void;
  /** archives/ or archive_index.json changed. */
  archivesChanged(): void;
}

export class DiskMirror {
  // --- memories/ -----------------------------------------------------------
  /** Valid memory files, by ID (file name = frontmatter ID). */
  readonly files = new Map<string, LoadedFile>();
  /** The texts of files known from their records, read when asked for: kept for the files read last only. */
  private readonly readTexts = new ReadTexts();
  /** Everything else in memories/ that looks like a memory file. */
  readonly invalidFiles = new Map<string, InvalidFile>();
  /** Signatures of every *.md in memories/ as last read, by file name. */
  readonly fileSignatures = new MemoryFileSignatures(this.files);
  private memoriesDirSignature: FileSignature | null = null;
  /** Names the watcher reported since the last refresh. */
  private readonly dirtyNames = new Set<string>();

  // --- the JSON files ------------------------------------------------------
  indexSignature: FileSignature | null = null;
  /**
   * index.json as read, or null until something asks: parsing and checking it
   * costs ~0.15 s at 10,000 memories, and opening, reading, searching or
   * writing the store never needs it (see IndexWriter); check, fix and new IDs do.
   */
  private indexFile: { status: JsonFileStatus; ids: Set<string>; text: string | null } | null = null;
  /** The memory IDs index.json's bytes hold, as read for indexMentions while indexFile is not read (null: not read). */
  private indexMentioned: MentionedIds | null = null;

  /** stats.json and its journal: read here, written through StatsWriter (statsFile.ts). */
  readonly statsFile: StatsFile;
  /** state.json: read here, written through its own updates (stateFile.ts). */
  readonly stateFile: StateFile;

  // --- archives/ -----------------------------------------------------------
  archiveIndex: ArchiveIndex = { memories: new Map(), purged: new Map() };
  archiveIndexStatus: JsonFileStatus = { kind: 'missing' };
  private archiveIndexSignature: FileSignature | null = null;
  /** IDs with a file in archives/. */
  archiveFiles = new Set<string>();
  private archivesDirSignature: FileSignature | null = null;

  private watcher: fs.FSWatcher | null = null;
  /** After dispose() no watcher is started again (a late refresh must not keep a process alive). */
  private disposed = false;
  private watchedIno = 0;

  /** See changeCount. */
  private changes = 0;

  constructor(
    readonly paths: StorePaths,
    private readonly options: OpenOptions,
    private readonly records: MemoryRecordCache,
    private readonly events: MirrorEvents,
  ) {
    this.statsFile = new StatsFile(paths, () => {
      this.changes++;
      this.events.statsRead();
    });
    this.stateFile = new StateFile(paths.state, () => this.changes++);
  }

  /** The store's state and settings as read (stateFile writes them). */
  get state(): StoreState {
    return this.stateFile.state;
  }

  get stateStatus(): JsonFileStatus {
    return this.stateFile.status;
  }

  /** stats.json's entries with the stats journal applied, as read (statsFile writes them). */
  get stats(): Map<string, MemoryStats> {
    return this.statsFile.stats;
  }

  get statsStatus(): JsonFileStatus {
    return this.statsFile.status;
  }

  get statsSignature(): FileSignature | null {
    return this.statsFile.signature;
  }

  /**
   * Counts the changes this mirror saw on disk or made (a memory file, valid
   * or not, index.json, stats, state.json, archives): equal counts, nothing
   * changed in between.
   */
  get changeCount(): number {
    return this.changes;
  }

  /** Whether dispose() ran: the store was closed. */
  get isDisposed(): boolean {
    return this.disposed;
  }

  dispose(): void {
    this.disposed = true;
    this.watcher?.close();
    this.watcher = null;
  }

  /**
   * Active memories: every valid file in memories/. index.json is a cache of
   * them, never a filter: a valid file it does not list (another branch's
   * memory after a merge resolved with "ours" or "theirs") is a memory the
   * index has not learned about yet, not one to hide.
   */
  isActive(id: string): boolean {
    return this.files.has(id);
  }

  /** How index.json was found (read now if it changed since). */
  get indexStatus(): JsonFileStatus {
    return this.readIndexFile().status;
  }

  /** The IDs index.json lists (read now if it changed since). */
  indexIds(): Set<string> {
    return this.readIndexFile().ids;
  }

  /** index.json's text as read; null when this process wrote it last (see IndexWriter.entriesForCheck). */
  get indexText(): string | null {
    return this.readIndexFile().text;
  }

  /**
   * Whether index.json may name `id`, a memory ID (what a new ID must avoid):
   * exactly when its IDs were read or written here, else whenever its bytes
   * hold the ID anywhere (MentionedIds). Parsing it took ~200 ms and ~60 MB
   * more at 50,000 memories, in the first store of a server. A file with a
   * `\u` escape anywhere (an ID may be written with one) is parsed.
   */
  indexMentions(id: string): boolean {
    if (this.indexFile) return this.indexFile.ids.has(id);
    if (!this.indexMentioned) {
      let read: FileMentions;
      try {
        read = mentionedIdsOfFile(this.paths.index);
      } catch (error) {
        if (!isNotFound(error)) throw unreadableFile(this.paths.index, error);
        read = new MentionedIds();
      }
      if (read === 'escaped') return this.indexIds().has(id);
      this.indexMentioned = read;
    }
    return this.indexMentioned.has(id);
  }

  /**
   * What indexMentions needs, read ahead in pieces with the event loop free
   * between them, for a process that will store: its first store read all of
   * index.json at once while requests waited (~50 ms at 50,000 memories).
   * Kept only when index.json is still the file this mirror last saw, once
   * read; otherwise, and on any failure, the first store reads it as before.
   */
  async readIndexMentionsAhead(): Promise<void> {
    const seen = this.indexSignature;
    if (this.indexFile || this.indexMentioned || seen === null) return;
    let read: FileMentions;
    try {
      read = await mentionedIdsOfFileAsync(this.paths.index);
    } catch {
      return;
    }
    const unchanged = sameSignature(this.indexSignature, seen) && sameSignature(statSignature(this.paths.index), seen);
    if (read !== 'escaped' && unchanged && !this.indexFile && !this.indexMentioned) this.indexMentioned = read;
  }

  private readIndexFile(): { status: JsonFileStatus; ids: Set<string>; text: string | null } {
    if (!this.indexFile) {
      const text = readStoreFile(this.paths.index);
      const read = readIndexIds(text);
      this.indexFile = { status: read.status, ids: read.value, text };
      this.indexMentioned = null;
    }
    return this.indexFile;
  }

  /** Parses a memory file's text, its frontmatter through the record cache (`previous`: see MemoryRecordCache.parse). */
  private parseText(raw: string, previous?: LoadedFile): { memory: Memory; digest: string } {
    const { frontmatter, body } = splitFrontmatter(raw);
    const { meta, digest } = this.records.parse(frontmatter, previous);
    return { memory: memoryOf(meta, parseBody(body)), digest };
  }

  // =========================================================================
  // Reading

  /** (Re)starts the watcher: memories/ may appear later, or be deleted and made anew. */
  private keepWatching(): void {
    if (this.disposed) return;
    if (this.watcher && statSignature(this.paths.memories)?.ino === this.watchedIno) return;
    this.watcher?.close();
    this.watcher = null;
    this.memoriesDirSignature = null;
    this.startWatching();
  }

  private startWatching(): void {
    const dir = statSignature(this.paths.memories);
    if (!dir) return;
    try {
      this.watchedIno = dir.ino;
      this.watcher = fs.watch(this.paths.memories, (_event, name) => {
        // Temporary files are this or another writer's atomic writes; the rename that
        // follows reports the memory file itself.
        if (typeof name === 'string' && name.endsWith(TEMP_SUFFIX)) return;
        if (typeof name === 'string' && name.endsWith('.md')) this.dirtyNames.add(name);
        else this.memoriesDirSignature = null;
        this.options.onExternalChange?.();
      });
      this.watcher.on('error', () => {
        this.watcher?.close();
        this.watcher = null;
      });
    } catch {
      this.watcher = null;
    }
  }

  /**
   * Brings the copy up to date with the disk. Cheap when nothing changed;
   * `full` also stats every memory file, which finds edits made in place when
   * no watcher reports them.
   */
  refresh(options: { full?: boolean; swept?: SweptSignatures | null } = {}): void {
    this.watchIfAsked();
    if (options.full) this.memoriesDirSignature = null;
    this.refreshMemoryFiles(options.swept ?? null);
    this.refreshSideFiles();
  }

  /** Starts watching memories/ (when the store was opened to watch): before a sweep on another thread begins, so that what changes after it is reported. */
  watchIfAsked(): void {
    if (this.options.watch) this.keepWatching();
  }

  /** Brings the JSON files and archives up to date, not the memory files (read while the memory files are swept elsewhere). */
  refreshSideFiles(): void {
    this.refreshJsonFiles();
    this.refreshArchiveFiles();
  }

  /**
   * Lets go of the texts of the memory files this process read whole or
   * wrote, and of their Content (LoadedFile.releaseText): read again when
   * asked for, as those of files opened from their records. An opening
   * without the record cache reads every memory's text.
   */
  releaseTexts(): void {
    for (const file of this.files.values()) file.releaseText();
  }

  /** A single memory's file is always checked, so a read sees a hand edit at once. */
  refreshOne(id: string): void {
    this.refresh();
    const name = `${id}.md`;
    const sig = statSignature(path.join(this.paths.memories, name));
    if (!sameSignature(sig, this.fileSignatures.get(name) ?? null)) this.loadFile(name, sig);
  }

  /**
   * `swept`: the signatures a worker thread took (signatureSweep.ts), used
   * when the directory's signature says no file appeared or went away since;
   * a file the watcher reported meanwhile is looked at again below.
   */
  private refreshMemoryFiles(swept: SweptSignatures | null): void {
    const dirSig = statSignature(this.paths.memories);
    if (!sameSignature(dirSig, this.memoriesDirSignature)) {
      this.memoriesDirSignature = dirSig;
      const prefix = this.paths.memories + path.sep;
      const fromSweep = swept !== null && sameSignature(dirSig, swept.directory);
      // Stats taken now need no report from before them; swept ones do.
      if (!fromSweep) this.dirtyNames.clear();
      const signatures = fromSweep ? swept.files : null;
      const names = signatures ? new Set(signatures.keys()) : new Set(listMemoryFileNames(this.paths.memories));
      for (const name of [...this.fileSignatures.keys()]) if (!names.has(name)) this.loadFile(name, null);
      for (const name of names) this.catchUp(name, signatures?.get(name), prefix);
      if (!fromSweep) return;
    }
    if (this.dirtyNames.size > 0) {
      const names = [...this.dirtyNames];
      this.dirtyNames.clear();
      for (const name of names) {
        const sig = statSignature(path.join(this.paths.memories, name));
        if (!sameSignature(sig, this.fileSignatures.get(name) ?? null)) this.loadFile(name, sig);
      }
    }
  }

  /**
   * What refresh({ swept }) does to memories/ when the store opens, a slice
   * at a time: each file whose signature is not the one loaded is read, and
   * the thread is given back (`pause`) every OPENING_SLICE_MS. An editor's
   * extension host opening 10,000 memory files without the record cache
   * would otherwise be held for ~0.5–1 s in one go, and every extension in it
   * with it. Without `swept` (a small store, or no record cache), the
   * directory is listed and each file statted here, as the worker would have.
   * Returns the signatures for the refresh that follows, which finds these
   * files loaded and reads only what changed since; null when `stillNeeded`
   * turned false (a request read the files meanwhile) or there is no memories/.
   */
  async loadMemoryFilesInSlices(swept: SweptSignatures | null, pause: () => Promise<void>, stillNeeded: () => boolean): Promise<SweptSignatures | null> {
    if (swept === null) {
      // Watching first, as before a sweep: a file changed after its stat here is reported, and looked at again.
      this.watchIfAsked();
      const directory = statSignature(this.paths.memories);
      if (directory === null) return null;
      swept = { directory, files: new Map(listMemoryFileNames(this.paths.memories).map((name) => [name, undefined])) };
    }
    const prefix = this.paths.memories + path.sep;
    let sliceStart = performance.now();
    let looked = 0;
    for (const [name, sweptSig] of swept.files) {
      if (!stillNeeded()) return null;
      // Setting an existing key keeps the Map's order: the iteration goes on unchanged.
      swept.files.set(name, this.catchUp(name, sweptSig, prefix));
      if (++looked % SLICE_CHECK_EVERY === 0 && performance.now() - sliceStart >= OPENING_SLICE_MS) {
        await pause();
        sliceStart = performance.now();
      }
    }
    return swept;
  }

  /**
   * Reads memory file `name` again when its signature (`sweptSig`, or taken
   * now when undefined) is not the loaded one; returns that signature.
   * `prefix`: memories/ and a separator, concatenated rather than path.join'd
   * (which normalises: ~5 ms of the 10,000 calls opening makes).
   */
  private catchUp(name: string, sweptSig: FileSignature | null | undefined, prefix: string): FileSignature | null {
    const sig = sweptSig === undefined ? statSignature(prefix + name) : sweptSig;
    if (!sameSignature(sig, this.fileSignatures.get(name) ?? null)) this.loadFile(name, sig);
    return sig;
  }

  /**
   * (Re)reads one file of memories/, or drops it when `sig` is null (gone).
   * A file whose record (memoryRecords.ts) was made from this very version is
   * not read: its fields come from the record, its Content when asked for.
   */
  private loadFile(name: string, sig: FileSignature | null): void {
    this.changes++;
    const stem = name.slice(0, -3);
    const previous = this.files.get(stem);
    this.invalidFiles.delete(name);
    this.fileSignatures.deleteOther(name);
    if (previous) this.files.delete(stem);
    if (sig === null) {
      this.records.noteChange();
      this.afterMemoryChange(stem, previous, undefined);
      return;
    }
    const fromRecord = isMemoryId(stem) ? this.records.loadedFor(name, sig, this.paths.memories, this.readTexts) : undefined;
    if (fromRecord) {
      // Keyed by the memory's own ID string (equal to `stem`): one string a memory, not two.
      this.files.set(fromRecord.memory.id, fromRecord);
      this.afterMemoryChange(stem, previous, fromRecord);
      return;
    }
    this.records.noteChange();
    const file = path.join(this.paths.memories, name);
    let raw: string;
    try {
      raw = fs.readFileSync(file, 'utf8');
    } catch {
      this.afterMemoryChange(stem, previous, undefined);
      return;
    }
    if (!isMemoryId(stem)) {
      this.fileSignatures.setOther(name, sig);
      this.invalidFiles.set(name, { name, reason: `the file name is not a memory ID (${MEMORY_ID_FORMAT})` });
      this.afterMemoryChange(stem, previous, undefined);
      return;
    }
    try {
      const { memory, digest } = this.parseText(raw, previous);
      if (memory.id !== stem) {
        this.fileSignatures.setOther(name, sig);
        this.invalidFiles.set(name, { name, reason: `its frontmatter ID ${memory.id} is not its file name`, claimedId: memory.id });
        this.afterMemoryChange(stem, previous, undefined);
        return;
      }
      const loaded = LoadedFile.fromText(memory, sig, digest, this.paths.memories, raw, this.readTexts);
      this.files.set(memory.id, loaded);
      this.afterMemoryChange(stem, previous, loaded);
    } catch (error) {
      if (!(error instanceof InvalidMemoryFile)) throw error;
      this.fileSignatures.setOther(name, sig);
      this.invalidFiles.set(name, { name, reason: error.reason });
      this.afterMemoryChange(stem, previous, undefined);
    }
  }

  /**
   * Tells the store's derived data that a memory changed, unless both
   * versions' texts are known and equal (a file rewritten as it was). A version
   * whose text was never read counts as different: reading it now would read
   * the new one.
   */
  private afterMemoryChange(id: string, previous: LoadedFile | undefined, next: LoadedFile | undefined): void {
    if (previous === undefined && next === undefined) return;
    const before = previous?.knownText ?? null;
    if (before !== null && before === next?.knownText) return;
    this.changes++;
    this.events.memoryChanged(id, next);
  }

  private refreshJsonFiles(): void {
    const indexSig = statSignature(this.paths.index);
    if (!sameSignature(indexSig, this.indexSignature) || (indexSig === null && this.indexFile !== null && this.indexFile.status.kind !== 'missing')) {
      this.indexSignature = indexSig;
      this.indexFile = null;
      this.indexMentioned = null;
      this.changes++;
      this.events.indexChanged();
    }
    this.statsFile.refresh();
    this.stateFile.refresh();
    const archiveSig = statSignature(this.paths.archiveIndex);
    if (
      !sameSignature(archiveSig, this.archiveIndexSignature) ||
      (archiveSig === null && this.archiveIndexStatus.kind !== 'missing')
    ) {
      const read = readArchiveIndex(readStoreFile(this.paths.archiveIndex));
      this.archiveIndexSignature = archiveSig;
      this.archiveIndex = read.value;
      this.archiveIndexStatus = read.status;
      this.changes++;
      this.events.archivesChanged();
      if (read.status.kind !== 'ok') this.rebuildArchiveIndex(read.status.kind === 'missing' ? 'legacy' : 'recovered');
    }
  }

  private refreshArchiveFiles(): void {
    const sig = statSignature(this.paths.archives);
    if (sameSignature(sig, this.archivesDirSignature)) return;
    this.archivesDirSignature = sig;
    this.archiveFiles = new Set(
      listDir(this.paths.archives)
        .filter((n) => n.endsWith('.md') && isMemoryId(n.slice(0, -3)))
        .map((n) => n.slice(0, -3)),
    );
    this.changes++;
    this.events.archivesChanged();
    if (this.archiveIndexStatus.kind !== 'ok') this.rebuildArchiveIndex(this.archiveIndexStatus.kind === 'missing' ? 'legacy' : 'recovered');
  }

  /**
   * Without a usable archive_index.json (a store written by the reference
   * implementation, or a damaged file), every archive of a memory that is not
   * active is an archived memory: none of them is an orphan to delete.
   */
  private rebuildArchiveIndex(reason: ArchiveReason): void {
    for (const id of this.archiveFiles) {
      if (this.archiveIndex.memories.has(id) || this.files.has(id)) continue;
      const file = path.join(this.paths.archives, `${id}.md`);
      const archived = this.readArchive(id);
      this.archiveIndex.memories.set(id, {
        topic: archived?.topic ?? '',
        tags: archived?.tags ?? [],
        archived_at: new Date(statSignature(file)?.mtimeMs ?? Date.now()).toISOString(),
        original_phase: 2,
        reason,
      });
    }
  }

  /** The text of archives/<id>.md, or null when there is none. */
  readArchiveText(id: string): string | null {
    return readTextIfExists(path.join(this.paths.archives, `${id}.md`));
  }

  /** An archive parsed, with its index entry; null when missing or unreadable. */
  readArchive(id: string): ArchivedMemory | null {
    const raw = this.readArchiveText(id);
    if (raw === null) return null;
    const entry = this.archiveIndex.memories.get(id) ?? null;
    try {
      const { memory } = this.parseText(raw);
      return { ...memory, id, entry, active: this.isActive(id) };
    } catch (error) {
      if (!(error instanceof InvalidMemoryFile)) throw error;
      return null;
    }
  }

  /** Parses a memory file's text (an archive about to be restored) with the cache. */
  parseMemory(raw: string): Memory {
    return this.parseText(raw).memory;
  }

  /** Bytes of every file the store holds, from signatures already at hand where possible. */
  storageSize(): number {
    let total = 0;
    for (const sig of this.fileSignatures.values()) total += sig.size;
    for (const id of this.archiveFiles) total += statSignature(path.join(this.paths.archives, `${id}.md`))?.size ?? 0;
    for (const sig of [this.indexSignature, this.statsSignature, this.stateFile.signature, this.archiveIndexSignature]) {
      total += sig?.size ?? 0;
    }
    return total;
  }

  /** Leftover temporary files of atomic writes, in every folder writers use. */
  tempFiles(): string[] {
    return [
      ...listDir(this.paths.memories).filter((n) => n.endsWith(TEMP_SUFFIX)).map((n) => path.join(this.paths.memories, n)),
      ...listDir(this.paths.archives).filter((n) => n.endsWith(TEMP_SUFFIX)).map((n) => path.join(this.paths.archives, n)),
      ...listDir(this.paths.root).filter((n) => n.endsWith(TEMP_SUFFIX)).map((n) => path.join(this.paths.root, n)),
    ];
  }

  // =========================================================================
  // Writing (always under the store lock)

  /**
   * Writes a memory's file, unless the file is no longer the one this process
   * last read or wrote (a person saved it in an editor after the command read
   * it): then nothing is written over it and ChangedOnDiskError is thrown, as
   * if the process had stopped there. The look and the rename are one
   * synchronous step; what is recorded is the signature of the text written,
   * so that a save right after the rename is read, not taken for this write.
   */
  writeMemoryFile(id: string, raw: string): void {
    const name = `${id}.md`;
    const file = path.join(this.paths.memories, name);
    const written = writeTempFile(file, raw);
    this.requireUnchanged(name, file, () => fs.rmSync(written.temp, { force: true }));
    replaceWithTemp(written, file);
    const sig = written.signature;
    const previous = this.files.get(id);
    const { memory, digest } = this.parseText(raw, previous);
    const loaded = LoadedFile.fromText(memory, sig, digest, this.paths.memories, raw, this.readTexts);
    this.records.noteChange();
    this.files.set(id, loaded);
    this.fileSignatures.deleteOther(name);
    this.invalidFiles.delete(name);
    this.afterMemoryChange(id, previous, loaded);
    this.noteOwnDirectoryChange();
  }

  /**
   * Removes a memory's file, unless it is no longer the one this process last
   * read or wrote (see writeMemoryFile): then it stays, is read, and
   * ChangedOnDiskError is thrown. `evenIfChanged`: a purge, whose text must go
   * whatever it says now.
   */
  deleteMemoryFile(id: string, { evenIfChanged = false }: { evenIfChanged?: boolean } = {}): void {
    const name = `${id}.md`;
    const file = path.join(this.paths.memories, name);
    if (!evenIfChanged) this.requireUnchanged(name, file);
    fs.rmSync(file, { force: true });
    this.forgetFileName(name);
  }

  /** Throws ChangedOnDiskError, once the file is read again, if memories/`name` is not the file last read or written here. */
  private requireUnchanged(name: string, file: string, onChanged?: () => void): void {
    const now = statSignature(file);
    if (sameSignature(now, this.fileSignatures.get(name) ?? null)) return;
    onChanged?.();
    // What was saved is read now: without a watcher, an edit in place would not be seen until a full refresh.
    this.loadFile(name, now);
    throw new ChangedOnDiskError(`memories/${name}`);
  }

  /** Forgets a file of memories/ that this process removed or moved away. */
  forgetFileName(name: string): void {
    const id = name.slice(0, -3);
    this.records.noteChange();
    const previous = this.files.get(id);
    this.files.delete(id);
    this.fileSignatures.deleteOther(name);
    this.invalidFiles.delete(name);
    this.afterMemoryChange(id, previous, undefined);
    this.noteOwnDirectoryChange();
  }

  /** Our own writes change memories/; remembering its new signature avoids a rescan. */
  private noteOwnDirectoryChange(): void {
    this.memoriesDirSignature = statSignature(this.paths.memories);
  }

  writeArchiveFile(id: string, raw: string): void {
    fs.mkdirSync(this.paths.archives, { recursive: true });
    writeFileAtomic(path.join(this.paths.archives, `${id}.md`), raw);
    this.archiveFiles.add(id);
    this.archivesDirSignature = statSignature(this.paths.archives);
    this.changes++;
    this.events.archivesChanged();
  }

  deleteArchiveFile(id: string): void {
    fs.rmSync(path.join(this.paths.archives, `${id}.md`), { force: true });
    this.archiveFiles.delete(id);
    this.archivesDirSignature = statSignature(this.paths.archives);
    this.changes++;
    this.events.archivesChanged();
  }

  writeArchiveIndex(): void {
    writeFileAtomic(this.paths.archiveIndex, toJsonText(archiveIndexJson(this.archiveIndex)));
    this.archiveIndexStatus = { kind: 'ok' };
    this.archiveIndexSignature = statSignature(this.paths.archiveIndex);
    this.changes++;
    this.events.archivesChanged();
  }

  /**
   * Records that index.json now holds exactly `ids`, as this process wrote
   * them (its text is not kept: see IndexWriter.entriesForCheck).
   */
  noteIndexWritten(ids: Set<string>): void {
    this.indexFile = { status: { kind: 'ok' }, ids, text: null };
    this.indexMentioned = null;
    this.indexSignature = statSignature(this.paths.index);
  }
}
