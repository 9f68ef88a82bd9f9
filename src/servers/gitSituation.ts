/**
 * Reads a project's git situation for session start (src/core/situation.ts):
 * the branch checked out, the files changed in the working tree and the files
 * the last few commits changed.
 *
 * It runs while Claude Code waits for the SessionStart hook, so it must be
 * quick and can never fail: three git processes at once, each killed after a
 * short timeout; no git, no repository, a detached HEAD, a timeout or any
 * error gives no situation (null), and session start ranks by priority alone.
 * The arguments are fixed (nothing from outside, no secret, ever reaches
 * git's command line), and git is told not to take optional locks, so that
 * reading the status never holds up a git command the person runs meanwhile.
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { SessionSituation } from '../core/situation';
import { STORE_FOLDER } from '../core/storeFiles';

/** Each git process is killed after this long; a repository this slow gets no situation. */
export const GIT_TIMEOUT_MS = 800;
/** How many of the latest commits count as recent. */
export const RECENT_COMMITS = 3;
/** The most files kept of each kind: the situation names files to look up, not a whole tree. */
export const MAX_SITUATION_FILES = 50;

export interface GitSituationOptions {
  timeoutMs?: number;
  /** The git program; tests pass a missing one. */
  gitPath?: string;
}

function git(dir: string, args: readonly string[], options: GitSituationOptions): Promise<string | null> {
  return new Promise((resolve) => {
    try {
      execFile(
        options.gitPath ?? 'git',
        args,
        {
          cwd: dir,
          timeout: options.timeoutMs ?? GIT_TIMEOUT_MS,
          killSignal: 'SIGKILL',
          maxBuffer: 4 * 1024 * 1024,
          windowsHide: true,
          // No prompt for credentials or a pager, no optional locks (index.lock), messages in English.
          env: { ...process.env, GIT_OPTIONAL_LOCKS: '0', GIT_TERMINAL_PROMPT: '0', GIT_PAGER: 'cat', LC_ALL: 'C' },
        },
        (error, stdout) => resolve(error ? null : stdout),
      );
    } catch {
      resolve(null);
    }
  });
}

/** The NUL-separated fields of `-z` output, without the empty one after the last NUL. */
function fields(output: string): string[] {
  return output.split('\0').filter((f) => f.length > 0);
}

/**
 * Parses `git status --porcelain=v2 --branch -z`: the branch (null when
 * detached), and every changed, renamed, unmerged or untracked path
 * (relative to the repository's top level).
 */
export function parseStatus(output: string): { branch: string | null; paths: string[] } {
  let branch: string | null = null;
  const paths: string[] = [];
  const entries = fields(output);
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i]!;
    if (entry.startsWith('# branch.head ')) {
      const head = entry.slice('# branch.head '.length);
      branch = head === '(detached)' ? null : head;
    } else if (entry.startsWith('1 ')) {
      // 1 XY sub mH mI mW hH hI path
      paths.push(entry.split(' ').slice(8).join(' '));
    } else if (entry.startsWith('2 ')) {
      // 2 XY sub mH mI mW hH hI Xscore path, then the original path as the next field.
      paths.push(entry.split(' ').slice(9).join(' '));
      i++;
    } else if (entry.startsWith('u ')) {
      // u XY sub m1 m2 m3 mW h1 h2 h3 path
      paths.push(entry.split(' ').slice(10).join(' '));
    } else if (entry.startsWith('? ')) {
      paths.push(entry.slice(2));
    }
  }
  return { branch, paths };
}

/**
 * Whether a project-relative path is in LTM's own store (memory files,
 * index.json): a session that stored memories, or a commit that shares them,
 * changes those files, and they say nothing of what the work is about. Each
 * would also be a search at session start (a memory ID for a query).
 */
function inStore(projectPath: string): boolean {
  return projectPath.startsWith(`${STORE_FOLDER}/`);
}

/** Paths relative to the top level, as paths relative to the project (`prefix`: the project's place in the repository). */
function underProject(paths: readonly string[], prefix: string): string[] {
  return paths.filter((p) => p.startsWith(prefix)).map((p) => p.slice(prefix.length));
}

/**
 * The git situation of `dir` (the project), or null when there is none to
 * tell: not in a repository, git missing or too slow, or a detached HEAD (a
 * checkout for looking at, such as a bisect, a rebase or a CI build, rather
 * than a line of work: its tree and last commits say little about what the
 * session is for).
 */
export async function readGitSituation(dir: string, options: GitSituationOptions = {}): Promise<SessionSituation | null> {
  const [status, prefix, log] = await Promise.all([
    // Only the project's files, and not the store's: git status stats every tracked file it looks at, and the
    // memory files (left out below anyway) were most of them: ~26 → ~13 ms a run at 13,160 memory files. Pathspecs
    // are relative to the project; another project's store in a subfolder is still looked at, as before.
    git(dir, ['status', '--porcelain=v2', '--branch', '-z', '--untracked-files=normal', '--', '.', `:(exclude)${STORE_FOLDER}`], options),
    git(dir, ['rev-parse', '--show-prefix'], options),
    // Paths relative to the current directory and only those under it: --relative. A repository with no commit fails here: no recent files.
    git(dir, ['log', `-n${RECENT_COMMITS}`, '--no-merges', '--name-only', '--format=', '-z', '--relative'], options),
  ]);
  if (status === null || prefix === null) return null;
  const { branch, paths } = parseStatus(status);
  if (branch === null) return null;
  // An untracked directory is listed as `dir/`: it names no file.
  const changedFiles = [...new Set(underProject(paths, prefix.trim()).filter((p) => !p.endsWith('/') && !inStore(p)))].slice(0, MAX_SITUATION_FILES);
  const changed = new Set(changedFiles);
  const recentFiles = [...new Set(fields(log ?? '').map((f) => f.trim()))].filter((f) => f && !changed.has(f) && !inStore(f)).slice(0, MAX_SITUATION_FILES);
  return { branch, changedFiles, recentFiles };
}

/**
 * Whether `dir` looks like a place in a git working tree (a `.git` in it or in a folder above): a few
 * stats, where asking git takes a process. Said before git answers, to guess whether a session start
 * will have a situation to rank by; git's answer decides.
 */
export function insideGitWorkTree(dir: string): boolean {
  for (let at = path.resolve(dir); ; at = path.dirname(at)) {
    if (fs.existsSync(path.join(at, '.git'))) return true;
    if (path.dirname(at) === at) return false;
  }
}

/** How long a situation read is reused: sessions started together (a burst, parallel terminals) see the same tree. */
export const SITUATION_MAX_AGE_MS = 5_000;

/**
 * readGitSituation for one project, shared: one read at a time, and its
 * answer reused for `maxAgeMs`, so a burst of session starts costs one
 * read of git (about 40 ms on a busy 2-CPU machine) rather than one each.
 */
export function cachedGitSituation(dir: string, options: GitSituationOptions & { maxAgeMs?: number; now?: () => number } = {}): () => Promise<SessionSituation | null> {
  const maxAge = options.maxAgeMs ?? SITUATION_MAX_AGE_MS;
  const now = options.now ?? Date.now;
  let last: { at: number; read: Promise<SessionSituation | null> } | null = null;
  return () => {
    if (!last || now() - last.at > maxAge) last = { at: now(), read: readGitSituation(dir, options) };
    return last.read;
  };
}
