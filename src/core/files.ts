/**
 * File primitives: atomic writes, change signatures and stable JSON.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';

/** Temporary files are named so that the store's .gitignore and readers skip them. */
export const TEMP_SUFFIX = '.ltm-tmp';

/**
 * Writes a file atomically: a temporary file in the same directory, flushed to
 * disk, then renamed over the target. A reader sees the old or the new file,
 * never a part; a crash leaves at worst a stray temporary file.
 */
export function writeFileAtomic(file: string, data: string, mode?: number): void {
  const dir = path.dirname(file);
  const temp = path.join(dir, `.${path.basename(file)}.${process.pid}.${randomBytes(4).toString('hex')}${TEMP_SUFFIX}`);
  const fd = fs.openSync(temp, 'wx', mode ?? 0o666);
  try {
    fs.writeFileSync(fd, data, 'utf8');
    fs.fsyncSync(fd);
  } catch (error) {
    fs.closeSync(fd);
    fs.rmSync(temp, { force: true });
    throw error;
  }
  fs.closeSync(fd);
  try {
    fs.renameSync(temp, file);
  } catch (error) {
    fs.rmSync(temp, { force: true });
    throw error;
  }
}

/** Identifies one version of a file: an atomic rename always changes the inode. */
export interface FileSignature {
  ino: number;
  size: number;
  mtimeMs: number;
}

export function signatureOf(stat: fs.Stats): FileSignature {
  return { ino: stat.ino, size: stat.size, mtimeMs: stat.mtimeMs };
}

export function statSignature(file: string): FileSignature | null {
  try {
    return signatureOf(fs.statSync(file));
  } catch (error) {
    if (isNotFound(error)) return null;
    throw error;
  }
}

export function sameSignature(a: FileSignature | null, b: FileSignature | null): boolean {
  if (a === null || b === null) return a === b;
  return a.ino === b.ino && a.size === b.size && a.mtimeMs === b.mtimeMs;
}

export function isNotFound(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';
}

export function readTextIfExists(file: string): string | null {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (error) {
    if (isNotFound(error)) return null;
    throw error;
  }
}

/** Lists a directory's names, or none when it does not exist. */
export function listDir(dir: string): string[] {
  try {
    return fs.readdirSync(dir);
  } catch (error) {
    if (isNotFound(error)) return [];
    throw error;
  }
}

export function hasConflictMarkers(text: string): boolean {
  return /^(?:<{7}|>{7})(?: |$)/m.test(text);
}

/** 2-space JSON with a trailing newline, as the reference implementation writes. */
export function toJsonText(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

/**
 * Renders `{ ...head, [mapKey]: { k: v, ... }, ...tail }` as 2-space JSON,
 * reusing the rendered text of members that did not change. Large maps
 * (index.json and stats.json at 10,000 memories) are rewritten on every store;
 * re-serialising only the changed member keeps that cheap.
 */
export class JsonMemberCache<V> {
  private readonly rendered = new Map<string, string>();

  constructor(private readonly render: (value: V) => unknown) {}

  member(key: string, value: V): string {
    let text = this.rendered.get(key);
    if (text === undefined) {
      text = `    ${JSON.stringify(key)}: ${JSON.stringify(this.render(value), null, 2).replace(/\n/g, '\n    ')}`;
      this.rendered.set(key, text);
    }
    return text;
  }

  invalidate(key: string): void {
    this.rendered.delete(key);
  }

  clear(): void {
    this.rendered.clear();
  }
}

/** Joins rendered members into the text of a top-level object with one nested map. */
export function renderJsonWithMap(
  head: Record<string, unknown>,
  mapKey: string,
  members: readonly string[],
  tail: Record<string, unknown> = {},
): string {
  const parts: string[] = [];
  for (const [k, v] of Object.entries(head)) parts.push(`  ${JSON.stringify(k)}: ${indentJson(v)}`);
  parts.push(members.length === 0 ? `  ${JSON.stringify(mapKey)}: {}` : `  ${JSON.stringify(mapKey)}: {\n${members.join(',\n')}\n  }`);
  for (const [k, v] of Object.entries(tail)) parts.push(`  ${JSON.stringify(k)}: ${indentJson(v)}`);
  return `{\n${parts.join(',\n')}\n}\n`;
}

function indentJson(value: unknown): string {
  return JSON.stringify(value, null, 2).replace(/\n/g, '\n  ');
}
