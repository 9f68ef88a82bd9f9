/**
 * Whether memories still describe the code they are anchored to (anchors.ts),
 * kept cheap enough to ask on every `get`: each anchored file is read again
 * only when its signature (size, mtime, inode) changed, and what an anchor's
 * check found is kept until then. A store of 10,000 memories over 1,000
 * anchored files costs a stat per file to refresh, and a read and hash only
 * for the files that changed.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { checkAnchor, describeAnchor, type Anchor, type AnchorCheck } from './anchors';
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

interface FileState {
  signature: FileSignature | null;
  /** Check results by anchor key, valid for `signature`. */
  checks: Map<string, AnchorCheck>;
}

export class StalenessTracker {
  private readonly files = new Map<string, FileState>();

  /** @param renames where a file that is gone went (optional: without it a gone file is stale). */
  constructor(
    private readonly projectRoot: string,
    private readonly renames?: RenameLookup,
  ) {}

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
    const file = path.join(this.projectRoot, ...relativePath.split('/'));
    const signature = this.signature(file);
    let state = this.files.get(relativePath);
    if (!state || !sameSignature(state.signature, signature)) {
      state = { signature, checks: new Map() };
      this.files.set(relativePath, state);
    }
    const key = `${anchor.lines ? `${anchor.lines[0]}-${anchor.lines[1]}` : '*'}:${anchor.hash}`;
    let check = state.checks.get(key);
    if (!check) {
      check = checkAnchor(anchor, signature ? this.read(file) : null);
      state.checks.set(key, check);
    }
    return check;
  }

  private signature(file: string): FileSignature | null {
    try {
      const stat = fs.statSync(file);
      return stat.isFile() ? signatureOf(stat) : null;
    } catch (error) {
      if (isNotFound(error) || (error as NodeJS.ErrnoException).code === 'ENOTDIR') return null;
      throw error;
    }
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
