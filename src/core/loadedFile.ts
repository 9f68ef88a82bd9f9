/**
 * A memory file as the store holds it: its parsed fields, its signature, and
 * its text only when something needs it.
 *
 * Opening 10,000 memories from the record cache (memoryRecords.ts) reads no
 * memory file: the fields, Summary included, come from the cache, and the
 * Content and exact text of a file are read the first time a view, a write or
 * the search index asks for them. A file read or written by this process keeps
 * its text from the start, until the store's caches and search index hold
 * what it gave (releaseText): an opening without the record cache (a fresh
 * clone) reads every memory's: the heap an open store held after that was
 * 132 MB against 70 MB at 50,000 bench memories, for the process's life. Texts read when asked for are kept only for
 * the files read last (ReadTexts): a server's similarity checks, session
 * starts and prompts read the Content of ever more memories, and kept them all.
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

/** The characters of texts read when asked for that a store keeps (ReadTexts): ~2,000 typical memories. */
export const READ_TEXTS_BUDGET_CHARS = 4 * 1024 * 1024;

/**
 * The texts of files known from their records and read when asked for, kept
 * for the files read last, up to a budget of characters; older ones are let
 * go, and read again from the file if asked for again. One per store.
 */
export class ReadTexts {
  /** In the order they were read: a Map iterates in insertion order. */
  private readonly kept = new Map<LoadedFile, number>();
  private chars = 0;

  constructor(private readonly budgetChars = READ_TEXTS_BUDGET_CHARS) {}

  /** `file` read its text (of `length` characters): older texts go while over the budget, never the one just read. */
  noteRead(file: LoadedFile, length: number): void {
    this.chars -= this.kept.get(file) ?? 0;
    this.kept.delete(file);
    this.kept.set(file, length);
    this.chars += length;
    for (const [oldest, oldestLength] of this.kept) {
      if (this.chars <= this.budgetChars || oldest === file) break;
      this.kept.delete(oldest);
      this.chars -= oldestLength;
      oldest.forgetText();
    }
  }

  /** How many files' texts are kept (tests). */
  get size(): number {
    return this.kept.size;
  }
}

export class LoadedFile {
  private text: string | null;
  /** Set for a file known from its record, or read whole: the text it reads when asked for is kept there, not for good. */
  private readTexts: ReadTexts | null = null;
  /** Whether `text` is the one this process read whole or wrote (not one read when asked for, which ReadTexts keeps). */
  private textWhole: boolean;

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
    this.textWhole = text !== null;
  }

  /** A file known from its record: its Content is read when first asked for. */
  static fromRecord(record: FileRecord, memoriesDir: string, readTexts: ReadTexts | null = null): LoadedFile {
    const memory = new LazyContentMemory(record.meta, record.summary, record.hasSections);
    const loaded = new LoadedFile(memory, record.signature, record.frontmatterDigest, memoriesDir, null);
    loaded.readTexts = readTexts;
    LazyContentMemory.readFrom(memory, loaded);
    return loaded;
  }

  /**
   * A file this process read whole or wrote (`parsed` from `text`): it keeps
   * the text and Content until releaseText(), then reads them when asked for,
   * as a file known from its record does.
   */
  static fromText(parsed: Memory, signature: FileSignature, frontmatterDigest: string, memoriesDir: string, text: string, readTexts: ReadTexts | null): LoadedFile {
    const memory = new LazyContentMemory(parsed, parsed.summary, parsed.hasSections);
    const loaded = new LoadedFile(memory, signature, frontmatterDigest, memoriesDir, text);
    loaded.readTexts = readTexts;
    LazyContentMemory.readFrom(memory, loaded);
    LazyContentMemory.holdContent(memory, parsed.content);
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
    if (this.text === null) {
      this.text = fs.readFileSync(this.file, 'utf8');
      this.readTexts?.noteRead(this, this.text.length);
    }
    return this.text;
  }

  /**
   * Lets go of a text read when asked for (ReadTexts), and of the Content
   * made from it: the next reader reads the file again, as the first one did.
   */
  forgetText(): void {
    this.text = null;
    this.textWhole = false;
    if (this.memory instanceof LazyContentMemory) LazyContentMemory.forgetContent(this.memory);
  }

  /**
   * Lets go of the text this file was read whole or written with, and of its
   * Content (see fromText): the next reader reads the file, and ReadTexts
   * keeps what it reads. For when the caches and the search index hold what
   * the text gave. A text read when asked for stays with ReadTexts, and a
   * memory that cannot read its Content again (not made by fromText) keeps it.
   */
  releaseText(): void {
    if (!this.textWhole || !(this.memory instanceof LazyContentMemory)) return;
    LazyContentMemory.summaryOfItsOwn(this.memory);
    this.forgetText();
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

  /** Sets the Content parsed from the text the file was read with (once, as it is made: see LoadedFile.fromText). */
  static holdContent(memory: LazyContentMemory, content: string): void {
    memory.#content = content;
  }

  /**
   * Gives a memory read whole a Summary of its own: parsed from the file's
   * text, it is a slice of it, which would keep the text it let go of.
   */
  static summaryOfItsOwn(memory: LazyContentMemory): void {
    (memory as { summary: string }).summary = ownCopy(memory.summary);
  }

  /** Lets go of the Content read (a slice of the file's text, which it keeps whole): read again when asked for. */
  static forgetContent(memory: LazyContentMemory): void {
    memory.#content = null;
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

/**
 * `text` in a string of its own. V8 makes a substring of a long string a view
 * of it, which keeps the whole string alive: a Summary sliced from a file's
 * text would keep the text after the file let it go.
 */
function ownCopy(text: string): string {
  // Slicing a concatenation makes V8 flatten it into a new string first, so the result keeps no reference
  // to the text it came from. Every UTF-16 code unit is kept (a lone surrogate too, which a round trip
  // through UTF-8 would replace). A round trip through JSON did the same, ~4 times slower: ~37 ms for
  // 50,000 Summaries, on the path of an opening that lets each text go as it reads it.
  return (' ' + text).slice(1);
}
