/**
 * File primitives: atomic writes, change signatures and stable JSON.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';

/** Temporary files are named so that the store's .gitignore and readers skip them. */
export const TEMP_SUFFIX = '.ltm-tmp';

export interface WriteOptions {
  mode?: number;
  /**
   * Flush to disk before the rename (default). Caches that can be rebuilt from
   * other files (index.json, stats.json) skip it: they are still replaced
   * atomically, and a power cut can at worst leave them for a rebuild.
   */
  durable?: boolean;
}

/**
 * Writes a file atomically: a temporary file in the same directory, then
 * renamed over the target. A reader sees the old or the new file, never a
 * part; a crash leaves at worst a stray temporary file.
 */
export function writeFileAtomic(file: string, data: string | readonly Buffer[], options: WriteOptions = {}): void {
  const dir = path.dirname(file);
  const temp = path.join(dir, `.${path.basename(file)}.${process.pid}.${randomBytes(4).toString('hex')}${TEMP_SUFFIX}`);
  const fd = fs.openSync(temp, 'wx', options.mode ?? 0o666);
  try {
    if (typeof data === 'string') fs.writeFileSync(fd, data, 'utf8');
    else writeAll(fd, data);
    if (options.durable !== false) fs.fsyncSync(fd);
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

function writeAll(fd: number, buffers: readonly Buffer[]): void {
  let pending = buffers.filter((b) => b.length > 0);
  while (pending.length > 0) {
    // writev takes at most IOV_MAX (1024) buffers and may write only a part.
    let written = fs.writevSync(fd, pending.slice(0, 1024));
    while (written > 0 && pending.length > 0) {
      const first = pending[0]!;
      if (written >= first.length) {
        written -= first.length;
        pending = pending.slice(1);
      } else {
        pending = [first.subarray(written), ...pending.slice(1)];
        written = 0;
      }
    }
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
 * The members of one large JSON map (`"key": value`, indented as in
 * JSON.stringify(value, null, 2) one level down), kept as bytes in chunks of
 * keys that share a prefix. Changing one member re-renders one small chunk; a
 * write reuses the bytes of every other chunk. index.json and stats.json are
 * rewritten on every store at 10,000 memories, so this keeps a store fast.
 */
export class JsonMapChunks<V> {
  private readonly keysByChunk = new Map<string, Set<string>>();
  private readonly chunkBytes = new Map<string, Buffer>();
  private sortedChunks: string[] | null = null;

  constructor(private readonly render: (value: V) => unknown) {}

  private static chunkOf(key: string): string {
    // Sorting chunks by this prefix, then keys within a chunk, sorts all keys.
    return key.slice(0, 6);
  }

  /** Makes the map hold exactly `keys`; `value` is asked only for members that must be rendered. */
  sync(keys: ReadonlySet<string>, value: (key: string) => V): void {
    this.value = value;
    for (const [chunk, members] of this.keysByChunk) {
      for (const key of members) {
        if (!keys.has(key)) {
          members.delete(key);
          this.chunkBytes.delete(chunk);
        }
      }
      if (members.size === 0) {
        this.keysByChunk.delete(chunk);
        this.sortedChunks = null;
      }
    }
    for (const key of keys) {
      const chunk = JsonMapChunks.chunkOf(key);
      let members = this.keysByChunk.get(chunk);
      if (!members) {
        members = new Set();
        this.keysByChunk.set(chunk, members);
        this.sortedChunks = null;
      }
      if (!members.has(key)) {
        members.add(key);
        this.chunkBytes.delete(chunk);
      }
    }
  }

  private value: (key: string) => V = () => {
    throw new Error('JsonMapChunks.sync() must run before rendering');
  };

  /** Adds, keeps or removes one member: the incremental form of sync(). */
  update(key: string, present: boolean, value: (key: string) => V): void {
    this.value = value;
    const chunk = JsonMapChunks.chunkOf(key);
    let members = this.keysByChunk.get(chunk);
    if (present) {
      if (!members) {
        members = new Set();
        this.keysByChunk.set(chunk, members);
        this.sortedChunks = null;
      }
      members.add(key);
      this.chunkBytes.delete(chunk);
    } else if (members?.delete(key)) {
      this.chunkBytes.delete(chunk);
      if (members.size === 0) {
        this.keysByChunk.delete(chunk);
        this.sortedChunks = null;
      }
    }
  }

  /** The member's value changed: its chunk is rendered again on the next write. */
  invalidate(key: string): void {
    this.chunkBytes.delete(JsonMapChunks.chunkOf(key));
  }

  clear(): void {
    this.keysByChunk.clear();
    this.chunkBytes.clear();
    this.sortedChunks = null;
  }

  /** The map's members as buffers, in key order, separated as JSON requires. */
  buffers(): Buffer[] {
    this.sortedChunks ??= [...this.keysByChunk.keys()].sort();
    const out: Buffer[] = [];
    for (const chunk of this.sortedChunks) {
      let bytes = this.chunkBytes.get(chunk);
      if (!bytes) {
        const members = [...this.keysByChunk.get(chunk)!].sort().map((key) => renderMember(key, this.render(this.value(key))));
        bytes = Buffer.from(members.join(',\n'), 'utf8');
        this.chunkBytes.set(chunk, bytes);
      }
      if (out.length > 0) out.push(MEMBER_SEPARATOR);
      out.push(bytes);
    }
    return out;
  }
}

const MEMBER_SEPARATOR = Buffer.from(',\n');

function renderMember(key: string, value: unknown): string {
  return `    ${JSON.stringify(key)}: ${JSON.stringify(value, null, 2).replace(/\n/g, '\n    ')}`;
}

/**
 * The bytes of `{ "version": 1, "<map>": { ...members }, ... }`, exactly as
 * JSON.stringify(value, null, 2) plus a newline would write them.
 */
export function jsonWithMaps(maps: readonly (readonly [string, readonly Buffer[]])[]): Buffer[] {
  const out: Buffer[] = [Buffer.from('{\n  "version": 1')];
  for (const [key, members] of maps) {
    if (members.length === 0) {
      out.push(Buffer.from(`,\n  ${JSON.stringify(key)}: {}`));
      continue;
    }
    out.push(Buffer.from(`,\n  ${JSON.stringify(key)}: {\n`), ...members, Buffer.from('\n  }'));
  }
  out.push(Buffer.from('\n}\n'));
  return out;
}

/** A map member whose value is a list of plain strings (IDs). */
export function stringListMember(key: string, values: readonly string[]): string {
  return renderMember(key, values);
}
