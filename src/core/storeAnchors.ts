/**
 * The store's side of anchors (anchors.ts): turning what a caller asks to
 * anchor (`src/db/pool.ts#L10-24`) into anchors by reading the project's
 * files, and telling which memories no longer match their code (staleness.ts).
 * Reading project files happens here, outside the store lock: anchoring reads
 * code, never memories.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { InvalidAnchor, MAX_ANCHORS, createAnchor, describeAnchor, parseAnchorSpec, type Anchor } from './anchors';
import { invalidInput } from './errors';
import { StalenessTracker, followedAnchors, type RenameLookup, type StaleReport } from './staleness';

/** Anchored files larger than this are refused: a memory about a 20 MB file is about none of it. */
const MAX_ANCHORED_FILE_BYTES = 5 * 1024 * 1024;

export class StoreAnchors {
  private readonly tracker: StalenessTracker;

  constructor(
    private readonly projectRoot: string,
    renames?: RenameLookup,
  ) {
    this.tracker = new StalenessTracker(projectRoot, renames);
  }

  /**
   * Anchors for specs, each hashed from its file as it is now; throws an
   * invalid-input error naming the first spec that cannot be anchored.
   */
  anchorsFor(specs: readonly string[] | undefined): Anchor[] {
    if (specs === undefined) return [];
    if (!Array.isArray(specs) || specs.some((s) => typeof s !== 'string')) throw invalidInput('anchors must be a list of file paths, each maybe with #L10-24');
    if (specs.length > MAX_ANCHORS) throw invalidInput(`at most ${MAX_ANCHORS} anchors`);
    const anchors: Anchor[] = [];
    for (const spec of specs) {
      const anchor = this.anchorOf(spec);
      // The same anchor twice is one anchor.
      if (!anchors.some((a) => describeAnchor(a) === describeAnchor(anchor))) anchors.push(anchor);
    }
    return anchors;
  }

  private anchorOf(spec: string): Anchor {
    try {
      const parsed = parseAnchorSpec(this.projectRoot, spec);
      const file = path.join(this.projectRoot, ...parsed.path.split('/'));
      let stat: fs.Stats;
      try {
        stat = fs.statSync(file);
      } catch {
        throw new InvalidAnchor(`${parsed.path} does not exist in the project`);
      }
      if (!stat.isFile()) throw new InvalidAnchor(`${parsed.path} is not a file`);
      if (stat.size > MAX_ANCHORED_FILE_BYTES) throw new InvalidAnchor(`${parsed.path} is larger than ${MAX_ANCHORED_FILE_BYTES / 1024 / 1024} MB`);
      return createAnchor(parsed, fs.readFileSync(file, 'utf8'));
    } catch (error) {
      if (error instanceof InvalidAnchor) throw invalidInput(`cannot anchor "${spec}": ${error.message}`);
      throw error;
    }
  }

  /** Runs reports of many memories as one pass: each anchored file stat()ed once (StalenessTracker.pass). */
  pass<T>(work: () => T): T {
    return this.tracker.pass(work);
  }

  /** How a memory's anchors stand now; null for a memory without anchors. */
  report(anchors: readonly Anchor[]): StaleReport | null {
    return anchors.length === 0 ? null : this.tracker.report(anchors);
  }

  /** Where anchors whose lines moved or whose file was renamed are now (null: none moved). */
  followed(anchors: readonly Anchor[]): Anchor[] | null {
    const report = this.report(anchors);
    return report ? followedAnchors(report) : null;
  }

  /**
   * The anchors hashed again from the code as it is now ("still true"): each
   * at the lines its text moved to, under the name its file was renamed to,
   * else at the same lines. A file that is gone cannot be anchored again.
   */
  reanchored(anchors: readonly Anchor[]): Anchor[] {
    const report = this.tracker.report(anchors);
    return report.anchors.map((status) => {
      const where = status.renamedTo ?? status.anchor.path;
      const lines = status.check.state === 'moved' ? status.check.lines : status.anchor.lines;
      const spec = lines ? `${where}#L${lines[0]}-${lines[1]}` : where;
      return this.anchorOf(spec);
    });
  }
}
