/**
 * The record cache (`.claude/ltm/parse-cache.json`, git-ignored): what a
 * fresh process opens the store from without reading every memory file.
 *
 * Per memory file, the signature (size, mtime, inode) of the version last read
 * and everything parsed from it but the Content: its frontmatter fields and
 * Summary. A file whose signature still matches is taken from its record
 * (its Content is read when asked for: see LoadedFile); any other file is read
 * and parsed. Parsed frontmatter is also kept by the digest of its text, so a
 * file rewritten with the same frontmatter (a git checkout, a Summary edit)
 * needs no YAML parse either (~65 µs a file). Parsing is a pure function of
 * the text, so nothing here can be stale: a record is only ever used for the
 * exact file version it was made from.
 *
 * The file is columnar (one array per field, a row per file), which JSON.parse
 * reads with a few allocations per file instead of a dozen objects. A row is
 * checked only when it is used, and it becomes the memory directly: no object
 * is built for a record that is then thrown away.
 *
 * A missing, damaged or older-format file leaves the cache empty: the store
 * only opens more slowly, and the next save writes it anew. So does a row
 * found damaged when used: its file is read instead.
 */
import { createHash } from 'node:crypto';
import { readTextIfExists, writeFileAtomicFrom, type FileSignature } from './files';
import { LoadedFile, type FileRecord, type ReadTexts } from './loadedFile';
import { copyMeta, parseFrontmatter } from './memoryFile';
import type { Anchor, MemoryMeta, PhaseChange, UnreadableAnchor } from './model';
import { writeFileAtomicInSlices, type SliceOptions } from './slices';

/**
 * 'ltm-records-5' kept one array per record with the name and a meta object (a dozen objects per file to
 * parse and check). 'ltm-records-4' did not keep the `anchors` entries loading left out (`unreadable_anchors`),
 * which `check` names: its records would hide them. 'ltm-records-3' had no `keywords`. 'ltm-records-1' had no
 * `status` or `anchors`: its records of files that say `status: proposed` would make them approved, and of
 * anchored files would lose their anchors. The format before it ('ltm-frontmatter-1') was keyed by frontmatter text.
 */
export const RECORDS_VERSION = 'ltm-records-6';

/**
 * The fields of a memory that are empty for most of them, as saved: 0 when all are
 * empty (absent), else an object with only the non-empty ones.
 */
type SavedRest = 0 | { phase_history?: PhaseChange[]; keywords?: string[]; anchors?: Anchor[]; unreadable_anchors?: UnreadableAnchor[]; status?: 'proposed' };

/**
 * parse-cache.json: row i of every column is one memory file (`<id>.md`). `tagSets` holds each distinct tag
 * list once; `tags` is a row's index into it.
 */
export interface SavedRecords {
  version: string;
  ids: string[];
  sizes: number[];
  mtimes: number[];
  inos: number[];
  digests: string[];
  topics: string[];
  tagSets: string[][];
  tags: number[];
  phases: number[];
  difficulties: number[];
  createdAt: string[];
  createdSessions: (number | null)[];
  summaries: string[];
  hasSections: boolean[];
  rest: SavedRest[];
}

export function frontmatterDigest(frontmatter: string): string {
  return createHash('sha1').update(frontmatter).digest('base64url');
}

/**
 * Shared by every memory opened from a record that has none: memories are replaced, never changed, and a
 * frozen list makes any code that tried to change one in place fail at once instead of changing them all.
 */
const NO_ITEMS: never[] = Object.freeze([]) as unknown as never[];

export class MemoryRecordCache {
  /** The file as loaded (checked column by column), until every row was taken or the next save. */
  private saved: SavedRecords | null = null;
  /** Tag lists of `saved.tagSets`, checked and frozen, made when first used. */
  private tagLists: (readonly string[] | null)[] = [];
  /** Rows not taken yet, by memory ID. */
  private readonly rowOf = new Map<string, number>();
  /** Rows not taken yet, by frontmatter digest: made on the first parse the live memories cannot answer. */
  private rowOfDigest: Map<string, number> | null = null;
  /**
   * Frontmatter parsed since the last save, by the digest of its text. Live memories are not kept here (a
   * map entry each): a file rewritten with its frontmatter unchanged is matched against its previous
   * version instead (see parse), and a frontmatter holds its memory's ID, so no other file shares it.
   */
  private readonly metaByDigest = new Map<string, MemoryMeta>();
  /** Set when what would be saved differs from the file: a file parsed anew, or a record dropped. */
  private changed = false;
  /** Counts what sets `changed`: a save in slices is overtaken when it moves (saveInSlices). */
  private changes = 0;

  constructor(private readonly file: string) {}

  /** Reads the cache file; anything unusable in it leaves the cache empty. */
  load(): void {
    const text = readTextIfExists(this.file);
    if (!text) return;
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch {
      // A damaged cache is only a slower open.
      this.changed = true;
      return;
    }
    const saved = checkedColumns(data);
    if (!saved) {
      this.changed = true;
      return;
    }
    this.saved = saved;
    this.tagLists = new Array<readonly string[] | null>(saved.tagSets.length).fill(null);
    const { ids } = saved;
    for (let row = 0; row < ids.length; row++) this.rowOf.set(ids[row]!, row);
    if (this.rowOf.size !== ids.length) this.changed = true;
  }

  /**
   * The file `<memoriesDir>/<name>` as its record describes it, when
   * `signature` is the version the record was made from; else undefined (read
   * the file). A record is taken once: the store keeps the file from now on,
   * and saves from it.
   */
  loadedFor(name: string, signature: FileSignature, memoriesDir: string, readTexts: ReadTexts | null = null): LoadedFile | undefined {
    const record = this.recordFor(name, signature);
    if (!record) return undefined;
    return LoadedFile.fromRecord(record, memoriesDir, readTexts);
  }

  /** The record of `name` when `signature` is the version it was made from (taken: see loadedFor). */
  recordFor(name: string, signature: FileSignature): FileRecord | undefined {
    const saved = this.saved;
    if (!saved || !name.endsWith('.md')) return undefined;
    const row = this.rowOf.get(name.slice(0, -3));
    if (row === undefined) return undefined;
    if (saved.sizes[row] !== signature.size || saved.mtimes[row] !== signature.mtimeMs || saved.inos[row] !== signature.ino) return undefined;
    const record = this.recordOfRow(row, signature);
    this.take(row);
    if (!record) this.noteChange();
    return record ?? undefined;
  }

  /**
   * Parsed frontmatter (a copy the caller may keep) and the digest of its
   * text. `previous` is the version of the same file the store holds, if any:
   * a file rewritten below its frontmatter (a Summary edit, a checkout) reuses
   * its fields.
   */
  parse(frontmatter: string, previous?: { frontmatterDigest: string; memory: MemoryMeta }): { meta: MemoryMeta; digest: string } {
    const digest = frontmatterDigest(frontmatter);
    let meta = previous?.frontmatterDigest === digest ? previous.memory : (this.metaByDigest.get(digest) ?? this.metaOfSavedDigest(digest));
    if (!meta) {
      meta = parseFrontmatter(frontmatter);
      this.metaByDigest.set(digest, meta);
      this.noteChange();
    }
    return { meta: copyMeta(meta), digest };
  }

  /** Something the next save must reflect changed (a file parsed, removed or purged). */
  noteChange(): void {
    this.changed = true;
    this.changes++;
  }

  /**
   * Writes the records of the given live files, when anything changed since
   * loading or the last save. Parsed frontmatter is dropped: what is live is
   * in the live memories.
   */
  save(live: Iterable<[name: string, record: FileRecord]>): void {
    const records = this.recordsToSave(live);
    if (!records) return;
    try {
      writeFileAtomicFrom(this.file, (out) => writeSavedRecords(records, (text) => out.writeText(text)), { durable: false });
      this.changed = false;
    } catch {
      // Read-only checkouts still open; they only open more slowly.
    }
  }

  /**
   * save(), giving way to the event loop every few milliseconds (a server's
   * pause: ~150 ms of writing at 50,000 memories, which a request that came
   * meanwhile would wait for). The records are taken when it starts; if
   * anything that changes them happens before the file is in place, the file
   * is left as it was and the cache stays unsaved (the next save writes it).
   */
  async saveInSlices(live: Iterable<[name: string, record: FileRecord]>, slices: SliceOptions = {}): Promise<void> {
    const records = this.recordsToSave(live);
    if (!records) return;
    const changes = this.changes;
    const unchanged = () => this.changes === changes;
    // Overtaken, or a read-only checkout: the cache stays unsaved.
    if (await writeFileAtomicInSlices(this.file, 'the record cache', (out) => savedRecordsSteps(records, (text) => out.writeText(text)), unchanged, slices, { durable: false })) this.changed = false;
  }

  /** The records save() writes (null: nothing changed since loading or the last save), the loaded ones let go. */
  private recordsToSave(live: Iterable<[name: string, record: FileRecord]>): FileRecord[] | null {
    // Rows never taken are of files that changed or went away since the last save.
    const write = this.changed || this.rowOf.size > 0;
    this.dropSaved();
    this.metaByDigest.clear();
    if (!write) return null;
    // A live file's name is its memory's ID (see DiskMirror.files): the ID column stands for both.
    const records: FileRecord[] = [];
    for (const [, r] of live) records.push(r);
    return records;
  }

  private take(row: number): void {
    const saved = this.saved!;
    this.rowOf.delete(saved.ids[row]!);
    this.rowOfDigest?.delete(saved.digests[row]!);
    // Every row used: the columns are not needed any more (the strings live on in the memories).
    if (this.rowOf.size === 0) this.dropSaved();
  }

  private dropSaved(): void {
    this.saved = null;
    this.tagLists = [];
    this.rowOf.clear();
    this.rowOfDigest = null;
  }

  /** The fields of a row not taken whose frontmatter has this digest (a file edited below its frontmatter). */
  private metaOfSavedDigest(digest: string): MemoryMeta | undefined {
    const saved = this.saved;
    if (!saved) return undefined;
    if (!this.rowOfDigest) {
      this.rowOfDigest = new Map();
      for (const row of this.rowOf.values()) this.rowOfDigest.set(saved.digests[row]!, row);
    }
    const row = this.rowOfDigest.get(digest);
    return row === undefined ? undefined : (this.recordOfRow(row, null)?.meta ?? undefined);
  }

  /**
   * Row `row` as a record, checked field by field (cheaply: this runs 10,000
   * times per open), or null. The cache is ours and git-ignored, but a damaged
   * or hand-edited one must not put a malformed memory in front of the store.
   * The columns' types were checked on loading; what is left are the values.
   */
  private recordOfRow(row: number, signature: FileSignature | null): FileRecord | null {
    const s = this.saved!;
    const phase = s.phases[row];
    if (phase !== 0 && phase !== 1 && phase !== 2) return null;
    const tags = this.tagList(s.tags[row]!);
    if (!tags) return null;
    const rest = s.rest[row];
    if (rest !== 0 && !isSavedRest(rest)) return null;
    const meta: MemoryMeta = {
      id: s.ids[row]!,
      topic: s.topics[row]!,
      tags: tags as string[],
      phase,
      difficulty: s.difficulties[row]!,
      created_at: s.createdAt[row]!,
      created_session: s.createdSessions[row]!,
      phase_history: rest === 0 ? NO_ITEMS : (rest.phase_history ?? NO_ITEMS),
      keywords: rest === 0 ? NO_ITEMS : (rest.keywords ?? NO_ITEMS),
      anchors: rest === 0 ? NO_ITEMS : (rest.anchors ?? NO_ITEMS),
      ...(rest !== 0 && rest.unreadable_anchors ? { unreadable_anchors: rest.unreadable_anchors } : {}),
      status: rest === 0 ? undefined : rest.status,
    };
    return {
      signature: signature ?? { size: s.sizes[row]!, mtimeMs: s.mtimes[row]!, ino: s.inos[row]! },
      frontmatterDigest: s.digests[row]!,
      meta,
      summary: s.summaries[row]!,
      hasSections: s.hasSections[row]!,
    };
  }

  /** Tag set `index`, checked and frozen once (memories with the same tags share it), or null. */
  private tagList(index: number): readonly string[] | null {
    const known = this.tagLists[index];
    if (known !== undefined && known !== null) return known;
    const set = this.saved!.tagSets[index];
    if (!Array.isArray(set) || !set.every(isString)) return null;
    return (this.tagLists[index] = Object.freeze(set));
  }
}

/** Column values stringified between two writes (writeSavedRecords): a few hundred KB of text at most. */
const VALUES_PER_PIECE = 4096;

/** How each column of parse-cache.json is taken from a record, in the order the file lists them. */
const COLUMNS: readonly (readonly [keyof SavedRecords, (r: FileRecord, tagSet: number) => unknown])[] = [
  ['ids', (r) => r.meta.id],
  ['sizes', (r) => r.signature.size],
  ['mtimes', (r) => r.signature.mtimeMs],
  ['inos', (r) => r.signature.ino],
  ['digests', (r) => r.frontmatterDigest],
  ['topics', (r) => r.meta.topic],
  ['tags', (_r, tagSet) => tagSet],
  ['phases', (r) => r.meta.phase],
  ['difficulties', (r) => r.meta.difficulty],
  ['createdAt', (r) => r.meta.created_at],
  ['createdSessions', (r) => r.meta.created_session],
  ['summaries', (r) => r.summary],
  ['hasSections', (r) => r.hasSections],
  ['rest', (r) => savedRest(r.meta)],
];

/** The fields of a memory saved in the `rest` column: only non-empty lists, and `status` only when proposed. */
function savedRest(m: MemoryMeta): SavedRest {
  const rest: Exclude<SavedRest, 0> = {};
  if (m.phase_history.length > 0) rest.phase_history = m.phase_history;
  if (m.keywords.length > 0) rest.keywords = m.keywords;
  if (m.anchors.length > 0) rest.anchors = m.anchors;
  if (m.unreadable_anchors) rest.unreadable_anchors = m.unreadable_anchors;
  if (m.status === 'proposed') rest.status = 'proposed';
  return Object.keys(rest).length > 0 ? rest : 0;
}

/**
 * Gives `write` the text of parse-cache.json for `records` (what
 * JSON.stringify of its columns would give), a column and then a few thousand
 * values at a time. Before, the columns were built whole and stringified as
 * one string: at 50,000 memories ~15 MB of text, its bytes and the arrays
 * behind it, all at once, in the first pause of every server.
 */
export function writeSavedRecords(records: readonly FileRecord[], write: (text: string) => void, valuesPerPiece = VALUES_PER_PIECE): void {
  for (const step of savedRecordsSteps(records, write, valuesPerPiece)) void step;
}

/**
 * writeSavedRecords a piece at a time: each step gives `write` the next
 * piece, so that a caller can give way to the event loop between two
 * (MemoryRecordCache.saveInSlices). The records are the caller's snapshot.
 */
export function* savedRecordsSteps(records: readonly FileRecord[], write: (text: string) => void, valuesPerPiece = VALUES_PER_PIECE): Generator<void, void, undefined> {
  // Each distinct tag list once, by its JSON text (tags are text from outside: never a plain-object key).
  const tagSetOf = new Map<string, number>();
  const tagSets: (readonly string[])[] = [];
  const tagSetOfRow = new Uint32Array(records.length);
  for (let row = 0; row < records.length; row++) {
    if (row % valuesPerPiece === valuesPerPiece - 1) yield;
    const tags = records[row]!.meta.tags;
    const key = JSON.stringify(tags);
    let tagSet = tagSetOf.get(key);
    if (tagSet === undefined) {
      tagSet = tagSets.length;
      tagSets.push(tags);
      tagSetOf.set(key, tagSet);
    }
    tagSetOfRow[row] = tagSet;
  }
  write(`{"version":${JSON.stringify(RECORDS_VERSION)}`);
  for (const [name, value] of COLUMNS) {
    write(`,${JSON.stringify(name)}:[`);
    for (let at = 0; at < records.length; at += valuesPerPiece) {
      yield;
      const values: unknown[] = [];
      for (let row = at; row < Math.min(records.length, at + valuesPerPiece); row++) values.push(value(records[row]!, tagSetOfRow[row]!));
      const text = JSON.stringify(values);
      write(`${at > 0 ? ',' : ''}${text.slice(1, -1)}`);
    }
    write(']');
    // The tag sets' column comes just before the rows' indexes into it, as SavedRecords lists them.
    if (name === 'topics') write(`,"tagSets":${JSON.stringify(tagSets)}`);
  }
  write('}');
}

const isString = (v: unknown): v is string => typeof v === 'string';
const isNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const isBoolean = (v: unknown): v is boolean => typeof v === 'boolean';
const isIndex = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 0;
const isSessionOrNull = (v: unknown): v is number | null => v === null || isNumber(v);

/**
 * The file's columns when they are all there, as long as `ids`, and of the
 * right element types; else null. Loops over numbers and strings only, no
 * object is made: the values of a row are checked when it is used.
 */
function checkedColumns(data: unknown): SavedRecords | null {
  if (!data || typeof data !== 'object' || Array.isArray(data)) return null;
  const d = data as Record<keyof SavedRecords, unknown>;
  if (d.version !== RECORDS_VERSION || !Array.isArray(d.ids) || !Array.isArray(d.tagSets)) return null;
  const n = d.ids.length;
  const column = <T>(value: unknown, is: (v: unknown) => v is T): value is T[] => Array.isArray(value) && value.length === n && value.every(is);
  const tagSetCount = d.tagSets.length;
  const ok =
    column(d.ids, isString) &&
    column(d.sizes, isNumber) &&
    column(d.mtimes, isNumber) &&
    column(d.inos, isNumber) &&
    column(d.digests, isString) &&
    column(d.topics, isString) &&
    column(d.tags, (v: unknown): v is number => isIndex(v) && v < tagSetCount) &&
    column(d.phases, isNumber) &&
    column(d.difficulties, isNumber) &&
    column(d.createdAt, isString) &&
    column(d.createdSessions, isSessionOrNull) &&
    column(d.summaries, isString) &&
    column(d.hasSections, isBoolean) &&
    column(d.rest, (v: unknown): v is SavedRest => v === 0 || (!!v && typeof v === 'object' && !Array.isArray(v)));
  return ok ? (data as SavedRecords) : null;
}

function isSavedAnchor(a: unknown): boolean {
  if (!a || typeof a !== 'object') return false;
  const { path, lines, hash } = a as { path?: unknown; lines?: unknown; hash?: unknown };
  return isString(path) && isString(hash) && (lines === undefined || (Array.isArray(lines) && lines.length === 2 && lines.every(isNumber)));
}

function isSavedUnreadableAnchor(u: unknown): boolean {
  if (!u || typeof u !== 'object') return false;
  const { entry, path, reason } = u as { entry?: unknown; path?: unknown; reason?: unknown };
  return isString(entry) && isString(reason) && (path === undefined || isString(path));
}

function isPhaseChange(h: unknown): boolean {
  return !!h && typeof h === 'object' && isNumber((h as { phase?: unknown }).phase) && isString((h as { at?: unknown }).at) && isString((h as { event?: unknown }).event);
}

/** A `rest` entry as savedRest makes it: only non-empty lists, and `status` only when proposed. */
function isSavedRest(rest: unknown): rest is Exclude<SavedRest, 0> {
  const r = rest as Record<string, unknown>;
  const list = (v: unknown, is: (item: unknown) => boolean) => v === undefined || (Array.isArray(v) && v.length > 0 && v.every(is));
  return (
    list(r.phase_history, isPhaseChange) &&
    list(r.keywords, isString) &&
    list(r.anchors, isSavedAnchor) &&
    list(r.unreadable_anchors, isSavedUnreadableAnchor) &&
    (r.status === undefined || r.status === 'proposed')
  );
}
