/**
 * Whether memories still describe the code they are anchored to (anchors.ts),
 * kept cheap enough to ask on every `get`: each anchored file is read again
 * only when its signature (size, mtime, inode) changed, its lines are hashed
 * once (LineIndex) for all the anchors in it, and what an anchor's check found
 * is kept until then. A whole-store pass (`pass`) stats each anchored file
 * once, and reads and hashes only the files that changed.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { LineIndex, checkAnchor, describeAnchor, type Anchor, type AnchorCheck } from './anchors';
import { isNotFound, sameSignature, signatureOf, type FileSignature } from './files';

/** Where a file that is gone went, if anything can tell (git's rename detection); see gitRenames.ts. */
export type RenameLookup = (relativePath: string) => string | undefined;

export interface AnchorStatus {
  anchor: Anchor;
  check: AnchorCheck;
  /** Set when the file was renamed: `check` is then about the file under this path. */
  renamedTo?: string;
}

export interface StaleReport {
  stale: boolean;
  /** One sentence per anchor that no longer holds: "src/a.ts#L10-12: the lines changed". */
  reasons: string[];
  /** Every anchor's status, in order: what a re-anchor or a follow-up writes. */
  anchors: AnchorStatus[];
}

/** Anchors whose text moved or whose file was renamed: where they are now. */
export function followedAnchors(report: StaleReport): Anchor[] | null {
  const holds = (s: AnchorStatus) => s.check.state === 'fresh' || s.check.state === 'moved';
  if (!report.anchors.some((s) => holds(s) && (s.renamedTo || s.check.state === 'moved'))) return null;
  // Only anchors whose text still holds follow it; a stale one keeps what the memory was written against.
  return report.anchors.map((s) => (holds(s) ? { ...s.anchor, path: s.renamedTo ?? s.anchor.path, ...(s.check.state === 'moved' ? { lines: s.check.lines } : {}) } : s.anchor));
}

function reasonOf(status: AnchorStatus): string | null {
  const where = describeAnchor(status.anchor);
  switch (status.check.state) {
    case 'fresh':
    case 'moved':
      return null;
    case 'missing':
      return `${where}: the file is gone`;
    case 'changed': {
      const renamed = status.renamedTo ? `renamed to ${status.renamedTo}, and ` : '';
      return `${where}: ${renamed}${status.anchor.lines ? 'the lines changed' : 'the file changed'}`;
    }
  }
}

/** An anchor's key among its file's checks: its lines and hash. Anchors live as long as their memory's record, so it is kept. */
const keys = new WeakMap<Anchor, string>();
function keyOf(anchor: Anchor): string {
  let key = keys.get(anchor);
  if (key === undefined) {
    key = `${anchor.lines ? `${anchor.lines[0]}-${anchor.lines[1]}` : '*'}:${anchor.hash}`;
    keys.set(anchor, key);
  }
  return key;
}

interface FileState {
  signature: FileSignature | null;
  /** The file's lines, hashed (anchors.ts LineIndex); built on the first check that needs them. */
  index: LineIndex | null;
  /** Check results by anchor key, valid for `signature`. */
  checks: Map<string, AnchorCheck>;
}

export class StalenessTracker {
  private readonly files = new Map<string, FileState>();
  /** Signatures taken during the current pass (see `pass`): one stat per file however many anchors it has. */
  private passSignatures: Map<string, FileSignature | null> | null = null;

  /** @param renames where a file that is gone went (optional: without it a gone file is stale). */
  constructor(
    private readonly projectRoot: string,
    private readonly renames?: RenameLookup,
  ) {}

  /**
   * Runs `work` (reports of many memories) as one pass: each anchored file is
   * stat()ed once in it, not once per anchor.
   */
  pass<T>(work: () => T): T {
    if (this.passSignatures) return work();
    this.passSignatures = new Map();
    try {
      return work();
    } finally {
      this.passSignatures = null;
    }
  }

  /** How anchored files stand now. Files are stat()ed; only changed ones are read. */
  report(anchors: readonly Anchor[]): StaleReport {
    const statuses = anchors.map((anchor) => this.status(anchor));
    const reasons = statuses.map(reasonOf).filter((r): r is string => r !== null);
    return { stale: reasons.length > 0, reasons, anchors: statuses };
  }

  private status(anchor: Anchor): AnchorStatus {
    const check = this.check(anchor.path, anchor);
    if (check.state !== 'missing' || !this.renames) return { anchor, check };
    const renamed = this.renames(anchor.path);
    if (!renamed || renamed === anchor.path) return { anchor, check };
    const followed = this.check(renamed, anchor);
    return followed.state === 'missing' ? { anchor, check } : { anchor, check: followed, renamedTo: renamed };
  }

  private check(relativePath: string, anchor: Anchor): AnchorCheck {
    const signature = this.signature(relativePath);
    let state = this.files.get(relativePath);
    if (!state || !sameSignature(state.signature, signature)) {
      state = { signature, index: null, checks: new Map() };
      this.files.set(relativePath, state);
    }
    const key = keyOf(anchor);
    let check = state.checks.get(key);
    if (!check) {
      if (signature && !state.index) {
        const text = this.read(this.absolute(relativePath));
        state.index = text === null ? null : LineIndex.of(text);
      }
      check = checkAnchor(anchor, state.index);
      state.checks.set(key, check);
    }
    return check;
  }

  private absolute(relativePath: string): string {
    return path.join(this.projectRoot, ...relativePath.split('/'));
  }

  private signature(relativePath: string): FileSignature | null {
    const taken = this.passSignatures?.get(relativePath);
    if (taken !== undefined) return taken;
    let signature: FileSignature | null;
    try {
      const stat = fs.statSync(this.absolute(relativePath));
      signature = stat.isFile() ? signatureOf(stat) : null;
    } catch (error) {
      if (!isNotFound(error) && (error as NodeJS.ErrnoException).code !== 'ENOTDIR') throw error;
      signature = null;
    }
    this.passSignatures?.set(relativePath, signature);
    return signature;
  }

  private read(file: string): string | null {
    try {
      return fs.readFileSync(file, 'utf8');
    } catch (error) {
      if (isNotFound(error)) return null;
      throw error;
    }
  }

  /** Forgets what was read: the next report reads every anchored file again. */
  clear(): void {
    this.files.clear();
  }
}
