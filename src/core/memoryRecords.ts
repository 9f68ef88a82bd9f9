/**
 * The record cache (`.claude/ltm/parse-cache.json`, git-ignored): what a
 * fresh process opens the store from without reading every memory file.
 *
 * Per file name, the signature (size, mtime, inode) of the version last read
 * and everything parsed from it but the Content: its frontmatter fields and
 * Summary. A file whose signature still matches is taken from its record
 * (its Content is read when asked for: see LoadedFile); any other file is read
 * and parsed. Parsed frontmatter is also kept by the digest of its text, so a
 * file rewritten with the same frontmatter (a git checkout, a Summary edit)
 * needs no YAML parse either (~65 µs a file). Parsing is a pure function of
 * the text, so nothing here can be stale: a record is only ever used for the
 * exact file version it was made from.
 *
 * A missing, damaged or older-format file leaves the cache empty: the store
 * only opens more slowly, and the next save writes it anew.
 */
import { createHash } from 'node:crypto';
import { readTextIfExists, writeFileAtomic, type FileSignature } from './files';
import type { FileRecord } from './loadedFile';
import { copyMeta, parseFrontmatter } from './memoryFile';
import type { MemoryMeta, UnreadableAnchor } from './model';

/**
 * 'ltm-records-4' did not keep the `anchors` entries loading left out (`unreadable_anchors`), which `check`
 * names: its records would hide them. 'ltm-records-3' had no `keywords`. 'ltm-records-1' had no `status` or `anchors`: its records of files that say `status: proposed`
 * would make them approved, and of anchored files would lose their anchors. The format before
 * it ('ltm-frontmatter-1') was keyed by frontmatter text.
 */
const RECORDS_VERSION = 'ltm-records-5';

/** One record as saved: [name, size, mtimeMs, ino, frontmatterDigest, meta, summary, hasSections]. */
type SavedRecord = [string, number, number, number, string, MemoryMeta, string, boolean];

export function frontmatterDigest(frontmatter: string): string {
  return createHash('sha1').update(frontmatter).digest('base64url');
}

export class MemoryRecordCache {
  private readonly byName = new Map<string, FileRecord>();
  private readonly metaByDigest = new Map<string, MemoryMeta>();
  /** Set when what would be saved differs from the file: a file parsed anew, or a record dropped. */
  private changed = false;

  constructor(private readonly file: string) {}

  /** Reads the cache file; anything unusable in it is left out. */
  load(): void {
    const text = readTextIfExists(this.file);
    if (!text) return;
    try {
      const data = JSON.parse(text) as { version?: unknown; records?: unknown };
      if (data.version !== RECORDS_VERSION || !Array.isArray(data.records)) {
        this.changed = true;
        return;
      }
      for (const saved of data.records as unknown[]) {
        const record = recordFrom(saved);
        if (!record) {
          this.changed = true;
          continue;
        }
        this.byName.set(record[0], record[1]);
        this.metaByDigest.set(record[1].frontmatterDigest, record[1].meta);
      }
    } catch {
      // A damaged cache is only a slower open.
      this.changed = true;
    }
  }

  /** The record of `name` when `signature` is the version it was made from. */
  recordFor(name: string, signature: FileSignature): FileRecord | undefined {
    const record = this.byName.get(name);
    if (!record) return undefined;
    const s = record.signature;
    if (s.size === signature.size && s.mtimeMs === signature.mtimeMs && s.ino === signature.ino) {
      // Taken once: the store keeps the file from now on, and saves from it. (Its meta object is shared
      // with metaByDigest, whose hits are copied, and memories are replaced, never changed.)
      this.byName.delete(name);
      return record;
    }
    return undefined;
  }

  /** Parsed frontmatter (a copy the caller may keep) and the digest of its text. */
  parse(frontmatter: string): { meta: MemoryMeta; digest: string } {
    const digest = frontmatterDigest(frontmatter);
    let meta = this.metaByDigest.get(digest);
    if (!meta) {
      meta = parseFrontmatter(frontmatter);
      this.metaByDigest.set(digest, meta);
      this.changed = true;
    }
    return { meta: copyMeta(meta), digest };
  }

  /** Something the next save must reflect changed (a file parsed, removed or purged). */
  noteChange(): void {
    this.changed = true;
  }

  /**
   * Writes the records of the given live files, when anything changed since
   * loading or the last save. Parsed frontmatter of other texts is dropped.
   */
  save(live: Iterable<[name: string, record: FileRecord]>): void {
    // Records never taken are of files that changed or went away since the last save.
    if (!this.changed && this.byName.size === 0) return;
    const records: SavedRecord[] = [];
    this.metaByDigest.clear();
    for (const [name, r] of live) {
      records.push([name, r.signature.size, r.signature.mtimeMs, r.signature.ino, r.frontmatterDigest, r.meta, r.summary, r.hasSections]);
      this.metaByDigest.set(r.frontmatterDigest, r.meta);
    }
    this.byName.clear();
    try {
      writeFileAtomic(this.file, JSON.stringify({ version: RECORDS_VERSION, records }), { durable: false });
      this.changed = false;
    } catch {
      // Read-only checkouts still open; they only open more slowly.
    }
  }
}

const isString = (v: unknown): v is string => typeof v === 'string';
const isNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

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

/**
 * A saved record checked field by field (cheaply: this runs 10,000 times per
 * open), or null. The cache is ours and git-ignored, but a damaged or
 * hand-edited one must not put a malformed memory in front of the store.
 */
function recordFrom(saved: unknown): [string, FileRecord] | null {
  if (!Array.isArray(saved) || saved.length !== 8) return null;
  const [name, size, mtimeMs, ino, digest, meta, summary, hasSections] = saved as unknown[];
  if (!isString(name) || !isNumber(size) || !isNumber(mtimeMs) || !isNumber(ino) || !isString(digest)) return null;
  if (!isString(summary) || typeof hasSections !== 'boolean' || !meta || typeof meta !== 'object') return null;
  const m = meta as Record<string, unknown>;
  if (
    !isString(m.id) ||
    !isString(m.topic) ||
    !Array.isArray(m.tags) ||
    !m.tags.every(isString) ||
    (m.phase !== 0 && m.phase !== 1 && m.phase !== 2) ||
    !isNumber(m.difficulty) ||
    !isString(m.created_at) ||
    !(m.created_session === null || isNumber(m.created_session)) ||
    !Array.isArray(m.phase_history) ||
    !m.phase_history.every((h: unknown) => !!h && typeof h === 'object' && isNumber((h as { phase?: unknown }).phase) && isString((h as { at?: unknown }).at) && isString((h as { event?: unknown }).event)) ||
    !Array.isArray(m.keywords) ||
    !m.keywords.every(isString) ||
    !Array.isArray(m.anchors) ||
    !m.anchors.every(isSavedAnchor) ||
    !(m.unreadable_anchors === undefined || (Array.isArray(m.unreadable_anchors) && m.unreadable_anchors.every(isSavedUnreadableAnchor))) ||
    !(m.status === undefined || m.status === 'proposed')
  ) {
    return null;
  }
  return [
    name,
    {
      signature: { size, mtimeMs, ino },
      frontmatterDigest: digest,
      meta: {
        id: m.id,
        topic: m.topic,
        tags: m.tags as string[],
        phase: m.phase,
        difficulty: m.difficulty,
        created_at: m.created_at,
        created_session: m.created_session as number | null,
        phase_history: m.phase_history as MemoryMeta['phase_history'],
        keywords: m.keywords as string[],
        anchors: m.anchors as MemoryMeta['anchors'],
        ...(m.unreadable_anchors ? { unreadable_anchors: m.unreadable_anchors as UnreadableAnchor[] } : {}),
        status: m.status as MemoryMeta['status'],
      },
      summary,
      hasSections,
    },
  ];
}
