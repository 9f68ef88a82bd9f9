/**
 * A memory file as the store holds it: its parsed fields, its signature, and
 * its text only when something needs it.
 *
 * Opening 10,000 memories from the record cache (memoryRecords.ts) reads no
 * memory file: the fields, Summary included, come from the cache, and the
 * Content and exact text of a file are read the first time a view, a write or
 * the search index asks for them. A file read or written by this process keeps
 * its text from the start.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { FileSignature } from './files';
import { parseBody, splitFrontmatter } from './memoryFile';
import type { Memory, MemoryMeta } from './model';

/** What the record cache keeps of a valid memory file: everything but its Content. */
export interface FileRecord {
  signature: FileSignature;
  /** Digest of the frontmatter text, under which its parsed fields are reused (see MemoryRecordCache). */
  frontmatterDigest: string;
  meta: MemoryMeta;
  summary: string;
  hasSections: boolean;
}

export class LoadedFile {
  private text: string | null;

  constructor(
    /** Replaced, never changed, when the file is read again: IndexWriter compares by identity. */
    readonly memory: Memory,
    /** The signature of the version the fields were read from (the same object as DiskMirror.fileSignatures'). */
    readonly signature: FileSignature,
    readonly frontmatterDigest: string,
    /**
     * The memories/ folder (one string shared by every file): the path is made when the file is read,
     * not kept per memory (a joined path is ~300 bytes of string pieces each).
     */
    private readonly memoriesDir: string,
    text: string | null,
  ) {
    this.text = text;
  }

  /** A file known from its record: its Content is read when first asked for. */
  static fromRecord(record: FileRecord, memoriesDir: string): LoadedFile {
    const memory = new LazyContentMemory(record.meta, record.summary, record.hasSections);
    const loaded = new LoadedFile(memory, record.signature, record.frontmatterDigest, memoriesDir, null);
    LazyContentMemory.readFrom(memory, loaded);
    return loaded;
  }

  /** The file's path: `<memories>/<id>.md` (a memory's file name is its ID). */
  get file(): string {
    return path.join(this.memoriesDir, `${this.memory.id}.md`);
  }

  /**
   * The file's exact text: as read or written by this process, else read now.
   * Callers that change the file refresh it first (under the store lock), so
   * the text read is the version its fields describe. A file that cannot be
   * read throws: an empty text must never be archived or written back.
   */
  get raw(): string {
    this.text ??= fs.readFileSync(this.file, 'utf8');
    return this.text;
  }

  /** The text if this process holds it, without reading the file (to compare versions). */
  get knownText(): string | null {
    return this.text;
  }

  /**
   * What the record cache keeps of this file. The memory itself stands for
   * its frontmatter fields: memories are replaced, never changed.
   */
  record(): FileRecord {
    const m = this.memory;
    return { signature: this.signature, frontmatterDigest: this.frontmatterDigest, meta: m, summary: m.summary, hasSections: m.hasSections };
  }
}

/**
 * A memory whose Content is read from its file when first asked for. The
 * fields are own properties in memoryOf's order; `content` is a getter on the
 * prototype, so spreading such a memory leaves it out: views list fields one
 * by one (see StoreQueries.view).
 */
class LazyContentMemory implements Memory {
  readonly id: string;
  readonly topic: string;
  readonly tags: string[];
  readonly phase: Memory['phase'];
  readonly difficulty: number;
  readonly created_at: string;
  readonly created_session: number | null;
  readonly phase_history: Memory['phase_history'];
  readonly keywords: Memory['keywords'];
  readonly anchors: Memory['anchors'];
  // Declared, not defined: an own property only when there are some, as memoryOf makes it.
  declare readonly unreadable_anchors?: Memory['unreadable_anchors'];
  readonly status: Memory['status'];
  readonly summary: string;
  readonly hasSections: boolean;
  #content: string | null = null;
  /** The file this memory was opened from (a reference, not a closure: ~100 bytes less a memory). */
  #file: LoadedFile | null = null;

  constructor(meta: MemoryMeta, summary: string, hasSections: boolean) {
    this.id = meta.id;
    this.topic = meta.topic;
    this.tags = meta.tags;
    this.phase = meta.phase;
    this.difficulty = meta.difficulty;
    this.created_at = meta.created_at;
    this.created_session = meta.created_session;
    this.phase_history = meta.phase_history;
    this.keywords = meta.keywords;
    this.anchors = meta.anchors;
    if (meta.unreadable_anchors) (this as { unreadable_anchors?: Memory['unreadable_anchors'] }).unreadable_anchors = meta.unreadable_anchors;
    this.status = meta.status;
    this.summary = summary;
    this.hasSections = hasSections;
  }

  /** Sets the file a memory reads its Content from (once, as it is made: see LoadedFile.fromRecord). */
  static readFrom(memory: LazyContentMemory, file: LoadedFile): void {
    memory.#file = file;
  }

  get content(): string {
    if (this.#content === null) {
      try {
        this.#content = parseBody(splitFrontmatter(this.#file!.raw).body).content;
      } catch {
        // Gone, or no longer a memory, since it was last seen: a view shows no Content and the
        // next refresh reports the file. (Writers read `raw`, which throws instead.)
        return '';
      }
    }
    return this.#content;
  }
}
