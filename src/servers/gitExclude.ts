/**
 * Keeps `.claude/settings.local.json` out of git without changing a tracked
 * file. A running server writes this machine's port and the project's path
 * into it (hookSettings.ts) and takes them out when it stops, so a committed
 * or merely untracked copy would show in every `git status`. Claude Code
 * means the file to stay local, but ignores it only when it creates the file
 * itself. `ltm init` adds two lines (a marker and the pattern) to the clone's
 * own `info/exclude`, unless git already ignores the file; `ltm uninit`
 * removes exactly those lines. Outside a git work tree, or without git, both
 * do nothing.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { readTextIfExists } from '../core/files';
import { writeIfChanged, type Change } from './jsonFileEdit';

const LOCAL_SETTINGS = '.claude/settings.local.json';
export const EXCLUDE_MARKER = "# LTM: Claude Code's local settings hold this machine's hook port while a server runs (added by ltm init; ltm uninit removes these two lines)";

/** git's answer (trimmed stdout), or null when git is missing, fails or says no. */
function git(project: string, args: string[]): string | null {
  const run = spawnSync('git', args, { cwd: project, encoding: 'utf8', timeout: 5000, stdio: ['ignore', 'pipe', 'ignore'] });
  return run.status === 0 ? run.stdout.trim() : null;
}

/** The clone's info/exclude file, or null outside a git work tree. */
function excludeFile(project: string): string | null {
  if (git(project, ['rev-parse', '--is-inside-work-tree']) !== 'true') return null;
  const file = git(project, ['rev-parse', '--git-path', 'info/exclude']);
  return file ? path.resolve(project, file) : null;
}

/** A path as a gitignore pattern anchored at the repository's top: glob and special characters escaped. */
function anchoredPattern(relativePath: string): string {
  return `/${relativePath.replace(/[\\*?[\]!#]/g, '\\$&').replace(/ $/, '\\ ')}`;
}

/** Adds settings.local.json to the clone's info/exclude unless git ignores it already. */
export function excludeLocalSettings(project: string, changes: Change[]): void {
  const file = excludeFile(project);
  if (!file) return;
  // Exit 0: already ignored (by .gitignore, a global excludes file, or our own earlier lines).
  if (spawnSync('git', ['check-ignore', '-q', LOCAL_SETTINGS], { cwd: project, timeout: 5000, stdio: 'ignore' }).status === 0) return;
  const prefix = git(project, ['rev-parse', '--show-prefix']) ?? '';
  const existing = readTextIfExists(file) ?? '';
  const separator = existing && !existing.endsWith('\n') ? '\n' : '';
  fs.mkdirSync(path.dirname(file), { recursive: true });
  writeIfChanged(file, `${existing}${separator}${EXCLUDE_MARKER}\n${anchoredPattern(`${prefix}${LOCAL_SETTINGS}`)}\n`, changes);
}

/** Removes the lines excludeLocalSettings added, and nothing else. */
export function removeLocalSettingsExclude(project: string, changes: Change[]): void {
  const file = excludeFile(project);
  const existing = file ? readTextIfExists(file) : null;
  if (!file || existing === null || !existing.includes(EXCLUDE_MARKER)) return;
  const lines = existing.split('\n');
  const at = lines.indexOf(EXCLUDE_MARKER);
  const count = lines[at + 1]?.endsWith(LOCAL_SETTINGS) ? 2 : 1;
  lines.splice(at, count);
  writeIfChanged(file, lines.join('\n'), changes);
}
