/**
 * The persisted frontmatter parse cache (`.claude/ltm/` git-ignored file).
 *
 * YAML parsing costs ~65 µs a file; a persisted map from frontmatter text to
 * its parsed fields makes opening 10,000 memories fast. Parsing is a pure
 * function of the text, so an entry can never be stale: the cache needs no
 * invalidation, only pruning to what is still in use when it is saved.
 */
import { readTextIfExists, writeFileAtomic } from './files';
import { copyMeta, parseFrontmatter, splitFrontmatter } from './memoryFile';
import type { MemoryMeta } from './model';

const PARSE_CACHE_VERSION = 'ltm-frontmatter-1';

export class FrontmatterParseCache {
  private readonly entries = new Map<string, MemoryMeta>();
  /** Changes since the last save: parses that missed, and entries dropped. */
  private misses = 0;

  constructor(private readonly file: string) {}

  /** Reads the cache file; a missing, damaged or older-version file leaves the cache empty. */
  load(): void {
    const text = readTextIfExists(this.file);
    if (!text) return;
    try {
      const data = JSON.parse(text) as { version?: string; entries?: [string, MemoryMeta][] };
      if (data.version !== PARSE_CACHE_VERSION || !Array.isArray(data.entries)) return;
      for (const entry of data.entries) {
        if (Array.isArray(entry) && typeof entry[0] === 'string' && entry[1] && typeof entry[1] === 'object') {
          this.entries.set(entry[0], entry[1]);
        }
      }
    } catch {
      // A damaged cache is only a slower open.
    }
  }

  /** The parsed fields of a frontmatter text; a copy, so callers may keep or change it. */
  parse(frontmatter: string): MemoryMeta {
    const cached = this.entries.get(frontmatter);
    if (cached) return copyMeta(cached);
    const meta = parseFrontmatter(frontmatter);
    this.entries.set(frontmatter, meta);
    this.misses++;
    return copyMeta(meta);
  }

  /**
   * Writes the entries of the given memory file texts, when anything changed
   * since the last save. Entries of files no longer present are left out.
   */
  save(liveFileTexts: Iterable<string>): void {
    if (this.misses === 0) return;
    const live = new Map<string, MemoryMeta>();
    for (const raw of liveFileTexts) {
      const fm = splitFrontmatter(raw).frontmatter;
      const meta = this.entries.get(fm);
      if (meta) live.set(fm, meta);
    }
    try {
      writeFileAtomic(this.file, JSON.stringify({ version: PARSE_CACHE_VERSION, entries: [...live] }), { durable: false });
      this.misses = 0;
    } catch {
      // Read-only checkouts still open; they only open more slowly.
    }
  }

  /**
   * Drops the entry of a memory file's text (a purged memory's text must not
   * survive anywhere, the git-ignored cache included). False when the text has
   * no frontmatter to drop; then there is nothing to save either.
   */
  drop(raw: string): boolean {
    try {
      this.entries.delete(splitFrontmatter(raw).frontmatter);
    } catch {
      return false;
    }
    this.misses++;
    return true;
  }
}
