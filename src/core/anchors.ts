/**
 * Anchors: the code a memory is about. An anchor is a file of the project,
 * optionally a range of its lines, and a hash of that text when the memory was
 * anchored. When the text under the anchor no longer hashes the same, the
 * memory may be describing code that is gone: it is stale.
 *
 * Lines that only moved (code inserted or removed above them) are found again
 * by their hash, and the anchor follows them rather than going stale. Only the
 * text's meaning counts: line endings and trailing whitespace are ignored, so
 * a checkout with other line endings or a formatter trimming spaces does not
 * make every memory stale.
 *
 * Pure: reading files and asking git about renames is the caller's (see
 * staleness.ts), so this module can be tested on strings.
 */
import * as path from 'node:path';
import type { Anchor } from './model';

export type { Anchor } from './model';

/** What anchoring asks for: a file and maybe lines, before the text is read. */
export interface AnchorSpec {
  path: string;
  lines?: readonly [number, number];
}

/** At most this many anchors per memory: a memory about 50 files is about none of them. */
export const MAX_ANCHORS = 20;
/** The longest anchored range: beyond it, anchor the whole file. */
export const MAX_ANCHOR_LINES = 2000;
const MAX_PATH_LENGTH = 1024;
const HASH_PREFIX = 'poly64:';
const HASH_HEX_DIGITS = 16;

export class InvalidAnchor extends Error {}

/**
 * A project-relative path with `/` separators, or an error: absolute paths,
 * paths that leave the project, and paths inside `.git` are refused.
 */
export function normaliseAnchorPath(projectRoot: string, file: string): string {
  if (!file.trim()) throw new InvalidAnchor('an anchor needs a file path');
  if (file.length > MAX_PATH_LENGTH) throw new InvalidAnchor(`an anchor's path is longer than ${MAX_PATH_LENGTH} characters`);
  if (/[\0\r\n]/.test(file)) throw new InvalidAnchor('an anchor\'s path has a control character');
  const absolute = path.resolve(projectRoot, file);
  const relative = path.relative(projectRoot, absolute);
  if (!relative || relative.startsWith('..') || path.isAbsolute(relative)) throw new InvalidAnchor(`"${file}" is not a file inside the project`);
  const posix = relative.split(path.sep).join('/');
  if (posix === '.git' || posix.startsWith('.git/')) throw new InvalidAnchor(`"${file}" is inside .git`);
  return posix;
}

/**
 * Parses `src/db/pool.ts`, `src/db/pool.ts#L10` or `src/db/pool.ts#L10-24`
 * (GitHub's `#L10-L24` too) into a path relative to the project and a range.
 */
export function parseAnchorSpec(projectRoot: string, spec: string): AnchorSpec {
  const at = spec.lastIndexOf('#');
  const file = at < 0 ? spec : spec.slice(0, at);
  const fragment = at < 0 ? undefined : spec.slice(at + 1);
  const anchorPath = normaliseAnchorPath(projectRoot, file.trim());
  if (fragment === undefined) return { path: anchorPath };
  const match = /^L(\d{1,7})(?:-L?(\d{1,7}))?$/.exec(fragment.trim());
  if (!match) throw new InvalidAnchor(`"${spec}": lines are written #L10 or #L10-24`);
  return { path: anchorPath, lines: checkedRange(Number(match[1]), Number(match[2] ?? match[1]), spec) };
}

function checkedRange(start: number, end: number, what: string): [number, number] {
  if (!Number.isInteger(start) || !Number.isInteger(end) || start < 1 || end < start) throw new InvalidAnchor(`${what}: lines must be 1 or more, the first no later than the last`);
  if (end - start + 1 > MAX_ANCHOR_LINES) throw new InvalidAnchor(`${what}: at most ${MAX_ANCHOR_LINES} lines; anchor the whole file instead`);
  return [start, end];
}

/** A file's lines as anchoring sees them: any line ending, trailing whitespace dropped. */
export function anchorLines(text: string): string[] {
  const lines = text.split(/\r\n|\r|\n/).map((line) => line.replace(/\s+$/, ''));
  // A final newline ends the last line; it does not start another.
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
  return lines;
}

// Two 32-bit string hashes per line (FNV-1a with two offset bases), each
// folded into a polynomial over the lines (mod 2^32, odd bases). A window's
// hash then comes from two prefix sums in O(1): looking for moved text costs
// one comparison per place tried instead of hashing the range again. 64 bits
// keep an accidental match out of reach; this is change detection, not a
// defence against someone forging code to hide a change.
const OFFSET_A = 0x811c9dc5;
const OFFSET_B = 0x050c5d1f;
const FNV_PRIME = 0x01000193;
const BASE_A = 0x9e3779b1;
const BASE_B = 0x85ebca77;

function lineHash(line: string, offset: number): number {
  let h = offset;
  for (let i = 0; i < line.length; i++) h = Math.imul(h ^ line.charCodeAt(i), FNV_PRIME);
  return h >>> 0;
}

/** A file's lines, hashed once, so that the hash of any range of them is O(1). */
export class LineIndex {
  readonly count: number;
  private readonly prefixA: Uint32Array;
  private readonly prefixB: Uint32Array;
  private readonly powerA: Uint32Array;
  private readonly powerB: Uint32Array;

  constructor(lines: readonly string[]) {
    const n = lines.length;
    this.count = n;
    this.prefixA = new Uint32Array(n + 1);
    this.prefixB = new Uint32Array(n + 1);
    this.powerA = new Uint32Array(n + 1);
    this.powerB = new Uint32Array(n + 1);
    this.powerA[0] = 1;
    this.powerB[0] = 1;
    for (let i = 0; i < n; i++) {
      const line = lines[i]!;
      this.prefixA[i + 1] = (Math.imul(this.prefixA[i]!, BASE_A) + lineHash(line, OFFSET_A)) >>> 0;
      this.prefixB[i + 1] = (Math.imul(this.prefixB[i]!, BASE_B) + lineHash(line, OFFSET_B)) >>> 0;
      this.powerA[i + 1] = Math.imul(this.powerA[i]!, BASE_A) >>> 0;
      this.powerB[i + 1] = Math.imul(this.powerB[i]!, BASE_B) >>> 0;
    }
  }

  static of(text: string): LineIndex {
    return new LineIndex(anchorLines(text));
  }

  /** The hash of lines `start`…`end` (1-based, inclusive), as an anchor keeps it. */
  hash(start: number, end: number): string {
    const a = (this.prefixA[end]! - Math.imul(this.prefixA[start - 1]!, this.powerA[end - start + 1]!)) >>> 0;
    const b = (this.prefixB[end]! - Math.imul(this.prefixB[start - 1]!, this.powerB[end - start + 1]!)) >>> 0;
    return HASH_PREFIX + a.toString(16).padStart(8, '0') + b.toString(16).padStart(8, '0');
  }

  /** The hash of every line: a whole-file anchor's. */
  whole(): string {
    return this.hash(1, this.count);
  }
}

/** The hash of some lines as an anchor keeps it. */
export function hashLines(lines: readonly string[]): string {
  return new LineIndex(lines).whole();
}

/** Anchors `spec` to a file's current text; an error when the lines are not in it. */
export function createAnchor(spec: AnchorSpec, fileText: string): Anchor {
  const index = LineIndex.of(fileText);
  if (!spec.lines) return { path: spec.path, hash: index.whole() };
  const [start, end] = spec.lines;
  if (end > index.count) throw new InvalidAnchor(`${spec.path} has ${index.count} lines; #L${start}-${end} is past its end`);
  return { path: spec.path, lines: [start, end], hash: index.hash(start, end) };
}

/** What became of an anchor's text. */
export type AnchorCheck =
  | { state: 'fresh' }
  /** The same text, at other lines: the anchor should follow it. */
  | { state: 'moved'; lines: [number, number] }
  | { state: 'changed' }
  | { state: 'missing' };

/**
 * Checks an anchor against its file (its text, or its LineIndex when several
 * anchors share the file; null when the file is gone). A range whose text is
 * no longer at its lines is looked for elsewhere in the file, nearest first:
 * the same lines moved by an edit above them are found.
 */
export function checkAnchor(anchor: Anchor, file: string | LineIndex | null): AnchorCheck {
  if (file === null) return { state: 'missing' };
  const index = typeof file === 'string' ? LineIndex.of(file) : file;
  if (!anchor.lines) return index.whole() === anchor.hash ? { state: 'fresh' } : { state: 'changed' };
  const [start, end] = anchor.lines;
  const length = end - start + 1;
  if (end <= index.count && index.hash(start, end) === anchor.hash) return { state: 'fresh' };
  // Nearest offsets first, so that of two copies of the text the one closer to where it was wins.
  const lastStart = index.count - length + 1;
  const farthest = Math.max(start - 1, lastStart - start);
  for (let distance = 1; distance <= farthest; distance++) {
    for (const candidate of [start - distance, start + distance]) {
      if (candidate < 1 || candidate > lastStart) continue;
      if (index.hash(candidate, candidate + length - 1) === anchor.hash) return { state: 'moved', lines: [candidate, candidate + length - 1] };
    }
  }
  return { state: 'changed' };
}

/** How an anchor is written: `src/db/pool.ts#L10-24`, or the path for a whole file. */
export function describeAnchor(anchor: Pick<Anchor, 'path' | 'lines'>): string {
  if (!anchor.lines) return anchor.path;
  const [start, end] = anchor.lines;
  return start === end ? `${anchor.path}#L${start}` : `${anchor.path}#L${start}-${end}`;
}

// ---------------------------------------------------------------------------
// Frontmatter

/**
 * Anchors as written in frontmatter, keys in a fixed order that reads well in
 * a diff: `- path: src/db/pool.ts` / `lines: 10-24` / `hash: poly64:…`.
 */
export function anchorsToFrontmatter(anchors: readonly Anchor[]): Record<string, string>[] {
  return anchors.map((a) => ({ path: a.path, ...(a.lines ? { lines: `${a.lines[0]}-${a.lines[1]}` } : {}), hash: a.hash }));
}

/**
 * Reads the `anchors` frontmatter field (absent: none). People edit these by
 * hand, so an entry is checked field by field and a wrong one is refused with
 * the reason, rather than guessed at.
 */
export function anchorsFromFrontmatter(value: unknown): Anchor[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new InvalidAnchor('anchors must be a list');
  if (value.length > MAX_ANCHORS) throw new InvalidAnchor(`at most ${MAX_ANCHORS} anchors`);
  return value.map((entry: unknown, i) => anchorFromFrontmatterEntry(entry, i));
}

/** One entry of the `anchors` frontmatter field (the `index`th, named so in the error), checked field by field. */
export function anchorFromFrontmatterEntry(entry: unknown, index: number): Anchor {
  const where = `anchors[${index}]`;
  if (!entry || typeof entry !== 'object' || Array.isArray(entry)) throw new InvalidAnchor(`${where} must have path and hash`);
  const fields = new Map(Object.entries(entry as object));
  const file = fields.get('path');
  const hash = fields.get('hash');
  const lines = fields.get('lines');
  if (typeof file !== 'string' || !file || file.length > MAX_PATH_LENGTH || file.startsWith('/') || file.split('/').includes('..')) {
    throw new InvalidAnchor(`${where}.path must be a path inside the project`);
  }
  if (typeof hash !== 'string' || !new RegExp(`^${HASH_PREFIX}[0-9a-f]{${HASH_HEX_DIGITS}}$`).test(hash)) {
    throw new InvalidAnchor(`${where}.hash must be ${HASH_PREFIX} and ${HASH_HEX_DIGITS} hex digits`);
  }
  if (lines === undefined || lines === null) return { path: file, hash };
  const match = /^(\d{1,7})(?:-(\d{1,7}))?$/.exec(String(lines));
  if (!match) throw new InvalidAnchor(`${where}.lines must be written 10-24`);
  return { path: file, lines: checkedRange(Number(match[1]), Number(match[2] ?? match[1]), `${where}.lines`), hash };
}
