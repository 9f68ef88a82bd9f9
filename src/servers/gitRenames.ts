/**
 * Where a file that is gone went, as git can tell: renames in the index
 * (`git mv` not yet committed) and in recent commits, followed through chains
 * (a → b, later b → c). What lets an anchored memory follow its file
 * (staleness.ts) instead of going stale at every rename.
 *
 * Git runs only when an anchored file is missing, and its answer is kept for
 * a short while, so a store with many memories on one renamed file asks once.
 */
import { execFileSync } from 'node:child_process';
import type { RenameLookup } from '../core/staleness';

/** How far back commits are searched for renames. */
const HISTORY_COMMITS = 500;
/** How long an answer from git is reused. */
const REUSE_MS = 30_000;
/** Git is asked synchronously; a slow or stuck git must not hold a hook. */
const GIT_TIMEOUT_MS = 3_000;
const MAX_CHAIN = 10;

function git(cwd: string, args: readonly string[]): string | null {
  try {
    return execFileSync('git', args, { cwd, encoding: 'utf8', timeout: GIT_TIMEOUT_MS, stdio: ['ignore', 'pipe', 'ignore'], maxBuffer: 16 * 1024 * 1024 });
  } catch {
    return null;
  }
}

/**
 * Renames in `-z --name-status` output (`R<score>\0old\0new\0`), old → new,
 * relative to the repository root. Earlier entries win: git lists the newest
 * commits first, and the index before them.
 */
export function parseRenames(output: string, into: Map<string, string> = new Map()): Map<string, string> {
  const fields = output.split('\0');
  for (let i = 0; i < fields.length; i++) {
    const status = fields[i]!;
    if (/^[RC]\d*$/.test(status) && i + 2 < fields.length) {
      const from = fields[i + 1];
      const to = fields[i + 2];
      if (status.startsWith('R') && from && to && !into.has(from)) into.set(from, to);
      i += 2;
    }
  }
  return into;
}

/** A lookup of renames for the project at `projectRoot` (which may be a folder inside the repository). */
export function gitRenameLookup(projectRoot: string): RenameLookup {
  let known: { at: number; prefix: string; renames: Map<string, string> } | null = null;
  const load = () => {
    if (known && Date.now() - known.at < REUSE_MS) return known;
    const prefix = git(projectRoot, ['rev-parse', '--show-prefix'])?.trim() ?? null;
    const renames = new Map<string, string>();
    if (prefix !== null) {
      parseRenames(git(projectRoot, ['diff', '--cached', '-M', '--name-status', '--diff-filter=R', '-z']) ?? '', renames);
      parseRenames(git(projectRoot, ['log', '-M', '--diff-filter=R', '--name-status', '--format=', '-z', '-n', String(HISTORY_COMMITS)]) ?? '', renames);
    }
    known = { at: Date.now(), prefix: prefix ?? '', renames };
    return known;
  };
  return (relativePath) => {
    const { prefix, renames } = load();
    if (renames.size === 0) return undefined;
    let current = prefix + relativePath;
    for (let step = 0; step < MAX_CHAIN; step++) {
      const next = renames.get(current);
      if (!next) break;
      current = next;
    }
    const moved = current.startsWith(prefix) ? current.slice(prefix.length) : undefined;
    return moved && moved !== relativePath ? moved : undefined;
  };
}
