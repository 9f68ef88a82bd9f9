/**
 * File primitives: atomic writes, change signatures and stable JSON.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { insertionPoint } from './sortedStrings';

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
  writeThroughTemp(file, options, (fd) => {
    if (typeof data === 'string') fs.writeFileSync(fd, data, 'utf8');
    else writeAll(fd, data);
  });
}

/**
 * writeFileAtomic of what `produce` writes, a piece at a time: each piece is
 * written to the temporary file when it is given, so that a large file (a
 * search index of 50,000 memories is ~40 MB) never needs all its bytes at once.
 * A piece may be reused by its producer once `write` returns.
 */
export function writeFileAtomicFrom(file: string, produce: (write: (piece: Uint8Array) => void) => void, options: WriteOptions = {}): void {
  writeThroughTemp(file, options, (fd) =>
    produce((piece) => {
      for (let at = 0; at < piece.length; ) at += fs.writeSync(fd, piece, at, piece.length - at);
    }),
  );
}

/** The temporary file, written by `write`, flushed unless not durable, and renamed over `file`; removed on any failure. */
function writeThroughTemp(file: string, options: WriteOptions, write: (fd: number) => void): void {
  replaceWithTemp(writeTempFileWith(file, options, write), file);
}

/**
 * The first half of writeFileAtomic: the temporary file next to `file`,
 * written (and flushed unless not durable), for the caller to rename over
 * `file` (replaceWithTemp) or discard.
 */
export function writeTempFile(file: string, data: string, options: WriteOptions = {}): TempFile {
  return writeTempFileWith(file, options, (fd) => fs.writeFileSync(fd, data, 'utf8'));
}

function writeTempFileWith(file: string, options: WriteOptions, write: (fd: number) => void): TempFile {
  const temp = tempPathFor(file);
  const fd = fs.openSync(temp, 'wx', options.mode ?? 0o666);
  let signature: FileSignature;
  try {
    write(fd);
    if (options.durable !== false) fs.fsyncSync(fd);
    signature = signatureOf(fs.fstatSync(fd));
  } catch (error) {
    fs.closeSync(fd);
    fs.rmSync(temp, { force: true });
    throw error;
  }
  fs.closeSync(fd);
  return { temp, signature };
}

/** A temporary file's name next to `file`: hidden, this process's, unique, and ending in TEMP_SUFFIX. */
function tempPathFor(file: string): string {
  return path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.${randomBytes(4).toString('hex')}${TEMP_SUFFIX}`);
}

/**
 * writeFileAtomic on libuv's thread pool: the same temporary file, flush and
 * rename, but the event loop stays free meanwhile. A rename or flush can take
 * tens of milliseconds when the disk is busy, and a server writing its
 * bookkeeping must go on answering. Returns the new file's signature (taken
 * before the rename, which keeps inode, size and mtime).
 */
export async function writeFileAtomicAsync(file: string, data: string | readonly Buffer[], options: WriteOptions = {}): Promise<FileSignature> {
  const { temp, signature } = await writeTempFileAsync(file, data, options);
  try {
    await fs.promises.rename(temp, file);
  } catch (error) {
    await fs.promises.rm(temp, { force: true });
    throw error;
  }
  return signature;
}

/** A temporary file written for `file` (writeTempFileAsync), to be renamed over it or discarded. */
export interface TempFile {
  temp: string;
  /** The temporary file's signature, which the rename keeps. */
  signature: FileSignature;
}

/**
 * The first half of writeFileAtomicAsync: the temporary file next to `file`,
 * written (and flushed unless not durable). The caller renames it over `file`
 * (replaceWithTemp) or discards it; a process killed before leaves it for
 * `fix` like any `*.ltm-tmp`.
 */
export async function writeTempFileAsync(file: string, data: string | readonly Buffer[], options: WriteOptions = {}): Promise<TempFile> {
  const temp = tempPathFor(file);
  const handle = await fs.promises.open(temp, 'wx', options.mode ?? 0o666);
  let signature: FileSignature;
  try {
    if (typeof data === 'string') await handle.writeFile(data, 'utf8');
    // The pieces as they are: joining them first held the file's bytes twice (index.json is ~17 MB at 50,000 memories).
    else await writeAllAsync(handle, data);
    if (options.durable !== false) await handle.sync();
    signature = signatureOf(await handle.stat());
  } catch (error) {
    await handle.close();
    await fs.promises.rm(temp, { force: true });
    throw error;
  }
  await handle.close();
  return { temp, signature };
}

/** Renames a temporary file over `file` at once (the second half of writeFileAtomicAsync); removes it if that fails. */
export function replaceWithTemp(written: TempFile, file: string): void {
  try {
    fs.renameSync(written.temp, file);
  } catch (error) {
    fs.rmSync(written.temp, { force: true });
    throw error;
  }
}

/** Buffers being written by writev, which takes at most IOV_MAX (1024) buffers a call and may write only a part. */
class PendingBuffers {
  private readonly buffers: Buffer[];
  private next = 0;
  /** Bytes of buffers[next] already written. */
  private offset = 0;

  constructor(buffers: readonly Buffer[]) {
    this.buffers = buffers.filter((b) => b.length > 0);
  }

  get done(): boolean {
    return this.next >= this.buffers.length;
  }

  /** The next writev call's buffers. */
  batch(): Buffer[] {
    const batch = this.buffers.slice(this.next, this.next + 1024);
    if (this.offset > 0) batch[0] = batch[0]!.subarray(this.offset);
    return batch;
  }

  /** Marks `written` more bytes as written. */
  advance(written: number): void {
    while (written > 0 && !this.done) {
      const left = this.buffers[this.next]!.length - this.offset;
      if (written < left) {
        this.offset += written;
        return;
      }
      written -= left;
      this.next++;
      this.offset = 0;
    }
  }
}

function writeAll(fd: number, buffers: readonly Buffer[]): void {
  const pending = new PendingBuffers(buffers);
  while (!pending.done) pending.advance(fs.writevSync(fd, pending.batch()));
}

/** writeAll on a FileHandle, from the start of the file. */
async function writeAllAsync(handle: fs.promises.FileHandle, buffers: readonly Buffer[]): Promise<void> {
  const pending = new PendingBuffers(buffers);
  let position = 0;
  while (!pending.done) {
    const { bytesWritten } = await handle.writev(pending.batch(), position);
    position += bytesWritten;
    pending.advance(bytesWritten);
  }
}

/** Identifies one version of a file: an atomic rename always changes the inode. */
export interface FileSignature {
  ino: number;
  size: number;
  mtimeMs: number;
}

export function signatureOf(stat: Pick<fs.Stats, 'ino' | 'size' | 'mtimeMs'>): FileSignature {
  return { ino: smallInteger(stat.ino), size: smallInteger(stat.size), mtimeMs: stat.mtimeMs };
}

/**
 * The same number, as a small integer where it is one. fs.Stats hands out
 * every field as a boxed double (16 bytes); a signature is kept per memory
 * file, and an inode number or size that V8 stores unboxed costs nothing more.
 */
function smallInteger(value: number): number {
  return value >= 0 && value <= 0x3fffffff && Number.isInteger(value) ? value | 0 : value;
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
    // The bytes, then their text: Node 20's readFileSync(file, 'utf8') took twice as long for the
    // megabytes of parse-cache.json and stats.json a store opens with (3.7 MB: ~11 ms, ~6 ms this way).
    return fs.readFileSync(file).toString('utf8');
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

interface Chunk {
  /** Sorted; every key of a chunk sorts before every key of the next one. */
  keys: string[];
  bytes: Buffer | null;
}

/** Chunks split above this many members, so one change re-renders few. */
const MAX_CHUNK = 64;

/**
 * How many chunks (up to MAX_CHUNK members each, ~0.3 ms to render) a
 * rendering in slices (JsonMapChunks.buffersInSlices) renders between two
 * looks at the event loop: ~10 ms at most.
 */
export const CHUNKS_PER_SLICE = 32;

/**
 * The members of one large JSON map (`"key": value`, indented as in
 * JSON.stringify(value, null, 2) one level down), kept as bytes in chunks of
 * consecutive keys. Changing one member re-renders one small chunk; a write
 * reuses the bytes of every other chunk. index.json and stats.json are
 * rewritten on every store at 10,000 memories, so this keeps a store fast,
 * whatever the IDs look like.
 */
export class JsonMapChunks<V> {
  private chunks: Chunk[] = [];
  private readonly chunkOfKey = new Map<string, Chunk>();
  private value: (key: string) => V = () => {
    throw new Error('JsonMapChunks.sync() or update() must run before rendering');
  };

  constructor(private readonly render: (value: V) => unknown) {}

  /** Makes the map hold exactly `keys`; `value` is asked only for members that must be rendered. */
  sync(keys: ReadonlySet<string>, value: (key: string) => V): void {
    this.value = value;
    const removed = [...this.chunkOfKey.keys()].filter((key) => !keys.has(key));
    const added = [...keys].filter((key) => !this.chunkOfKey.has(key));
    // Many changes (the first write, an index replaced by another process): lay the chunks out again.
    if (removed.length + added.length > keys.size / 4) {
      this.rebuild([...keys].sort());
      return;
    }
    for (const key of removed) this.remove(key);
    for (const key of added) this.add(key);
  }

  /** Adds, keeps or removes one member: the incremental form of sync(). */
  update(key: string, present: boolean, value: (key: string) => V): void {
    this.value = value;
    if (!present) this.remove(key);
    else if (this.chunkOfKey.has(key)) this.invalidate(key);
    else this.add(key);
  }

  /** The member's value changed: its chunk is rendered again on the next write. */
  invalidate(key: string): void {
    const chunk = this.chunkOfKey.get(key);
    if (chunk) chunk.bytes = null;
  }

  clear(): void {
    this.chunks = [];
    this.chunkOfKey.clear();
  }

  private rebuild(sortedKeys: string[]): void {
    this.clear();
    for (let i = 0; i < sortedKeys.length; i += MAX_CHUNK / 2) {
      const chunk: Chunk = { keys: sortedKeys.slice(i, i + MAX_CHUNK / 2), bytes: null };
      this.chunks.push(chunk);
      for (const key of chunk.keys) this.chunkOfKey.set(key, chunk);
    }
  }

  private add(key: string): void {
    if (this.chunks.length === 0) this.chunks.push({ keys: [], bytes: null });
    // The last chunk whose first key sorts before this key (or the first chunk).
    let lo = 0;
    let hi = this.chunks.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.chunks[mid]!.keys[0]! <= key) lo = mid;
      else hi = mid - 1;
    }
    const index = lo;
    const chunk = this.chunks[index]!;
    chunk.keys.splice(insertionPoint(chunk.keys, key), 0, key);
    chunk.bytes = null;
    this.chunkOfKey.set(key, chunk);
    if (chunk.keys.length > MAX_CHUNK) {
      const upper: Chunk = { keys: chunk.keys.splice(MAX_CHUNK / 2), bytes: null };
      for (const k of upper.keys) this.chunkOfKey.set(k, upper);
      this.chunks.splice(index + 1, 0, upper);
    }
  }

  private remove(key: string): void {
    const chunk = this.chunkOfKey.get(key);
    if (!chunk) return;
    this.chunkOfKey.delete(key);
    chunk.keys.splice(insertionPoint(chunk.keys, key), 1);
    chunk.bytes = null;
    if (chunk.keys.length === 0) this.chunks.splice(this.chunks.indexOf(chunk), 1);
  }

  /** The map's members as buffers, in key order, separated as JSON requires. */
  buffers(): Buffer[] {
    const out: Buffer[] = [];
    for (const chunk of this.chunks) {
      if (out.length > 0) out.push(MEMBER_SEPARATOR);
      out.push(this.bytesOf(chunk));
    }
    return out;
  }

  /**
   * buffers(), giving way to the event loop after every `chunksPerSlice`
   * chunks it had to render: the first write after opening renders every
   * member (~100 ms at 10,000 index.json entries, ~0.5 s at 50,000), and a
   * server answers hooks meanwhile. A member invalidated meanwhile is
   * rendered with what `value` gives now, and again at the next write; a
   * caller that lets members be added or removed meanwhile must not use the
   * result (IndexWriter drops such a flush: see its generation).
   */
  async buffersInSlices(chunksPerSlice: number): Promise<Buffer[]> {
    const out: Buffer[] = [];
    let rendered = 0;
    for (const chunk of [...this.chunks]) {
      if (chunk.bytes === null && ++rendered % chunksPerSlice === 0) await new Promise<void>((resolve) => setImmediate(resolve));
      if (out.length > 0) out.push(MEMBER_SEPARATOR);
      out.push(this.bytesOf(chunk));
    }
    return out;
  }

  private bytesOf(chunk: Chunk): Buffer {
    chunk.bytes ??= Buffer.from(chunk.keys.map((key) => renderMember(key, this.render(this.value(key)))).join(',\n'), 'utf8');
    return chunk.bytes;
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
