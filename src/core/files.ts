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
  writeThroughTemp(file, options, (fd) => {
    if (typeof data === 'string') fs.writeFileSync(fd, data, 'utf8');
    else writeAll(fd, data);
  });
}

/**
 * writeFileAtomic of what `produce` writes, a piece at a time: each piece is
 * written to the temporary file when it is given, so that a large file (a
 * search index of 50,000 memories is ~40 MB) never needs all its bytes at once.
 * A piece may be reused by its producer once `out.write` returns.
 */
export function writeFileAtomicFrom(file: string, produce: (out: PieceWriter) => void, options: WriteOptions = {}): void {
  replaceWithTemp(writeTempFileFrom(file, produce, options), file);
}

/** Text up to this many UTF-16 units is encoded into the writer's own block (PieceWriter.writeText). */
const TEXT_BLOCK_UNITS = 1 << 18;

/**
 * The block writeText encodes into (3 bytes a UTF-16 unit is the most UTF-8
 * takes): one for the process, made when first needed, as each piece is
 * encoded and written before writeText returns.
 */
let textBlock: Buffer | null = null;

/** Writes pieces one after the other to an open file, counting where the next one starts. */
export class PieceWriter {
  /** Bytes written so far: the position of the next piece in the file. */
  position = 0;

  constructor(private readonly fd: number) {}

  write(piece: Uint8Array): void {
    for (let at = 0; at < piece.length; ) at += fs.writeSync(this.fd, piece, at, piece.length - at);
    this.position += piece.length;
  }

  /**
   * Writes text as UTF-8, encoded into one block reused from piece to piece
   * (and from file to file):
   * a Buffer made for each piece stays outside the heap until a full
   * collection, which an idle server may not run for a long time (the ~15 MB
   * of parse-cache.json at 50,000 memories stayed, once written, in its
   * resident memory).
   */
  writeText(text: string): void {
    if (text.length > TEXT_BLOCK_UNITS) {
      this.write(Buffer.from(text, 'utf8'));
      return;
    }
    textBlock ??= Buffer.allocUnsafe(TEXT_BLOCK_UNITS * 3);
    this.write(textBlock.subarray(0, textBlock.write(text, 'utf8')));
  }
}

/**
 * The temporary file next to `file`, written piece by piece by `produce`
 * (see writeTempFile), for the caller to rename over `file` (replaceWithTemp)
 * or discard. A large file never needs all its bytes at once.
 */
export function writeTempFileFrom(file: string, produce: (out: PieceWriter) => void, options: WriteOptions = {}): TempFile {
  return writeTempFileWith(file, options, (fd) => produce(new PieceWriter(fd)));
}

/**
 * writeTempFileFrom with a producer that gives way to the event loop between
 * its pieces (a rendering in slices): the writes themselves are synchronous,
 * a piece at a time, so that no piece waits in memory for the thread pool.
 */
export async function writeTempFileFromAsync(file: string, produce: (out: PieceWriter) => Promise<void>, options: WriteOptions = {}): Promise<TempFile> {
  const open = openTemp(file, options);
  try {
    await produce(new PieceWriter(open.fd));
  } catch (error) {
    discardTemp(open);
    throw error;
  }
  return closeTemp(open, options);
}

/**
 * Opens `file` for reading if it is still the version `signature` names
 * (checked on the open descriptor, so a file replaced meanwhile is not read);
 * null when it is gone, changed or cannot be read.
 */
export function openIfUnchanged(file: string, signature: FileSignature): number | null {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch {
    return null;
  }
  try {
    if (sameSignature(signatureOf(fs.fstatSync(fd)), signature)) return fd;
  } catch {
    // Unreadable: as if changed.
  }
  fs.closeSync(fd);
  return null;
}

/** Reads exactly `length` bytes at `position` into `into`; throws if the file is shorter. */
export function readExactly(fd: number, into: Buffer, length: number, position: number): void {
  for (let done = 0; done < length; ) {
    const read = fs.readSync(fd, into, done, length - done, position + done);
    if (read === 0) throw new Error(`the file ended ${length - done} bytes early`);
    done += read;
  }
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
  const open = openTemp(file, options);
  try {
    write(open.fd);
  } catch (error) {
    discardTemp(open);
    throw error;
  }
  return closeTemp(open, options);
}

interface OpenTemp {
  temp: string;
  fd: number;
}

function openTemp(file: string, options: WriteOptions): OpenTemp {
  const temp = tempPathFor(file);
  return { temp, fd: fs.openSync(temp, 'wx', options.mode ?? 0o666) };
}

/** Flushes (unless not durable), signs and closes a temporary file written; removes it if that fails. */
function closeTemp(open: OpenTemp, options: WriteOptions): TempFile {
  try {
    if (options.durable !== false) fs.fsyncSync(open.fd);
    const signature = signatureOf(fs.fstatSync(open.fd));
    fs.closeSync(open.fd);
    return { temp: open.temp, signature };
  } catch (error) {
    discardTemp(open);
    throw error;
  }
}

function discardTemp(open: OpenTemp): void {
  try {
    fs.closeSync(open.fd);
  } catch {
    // Closed already (its close failed): the file is removed all the same.
  }
  fs.rmSync(open.temp, { force: true });
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
  const written = await writeTempFileAsync(file, data, options);
  await replaceWithTempAsync(written, file);
  return written.signature;
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

/**
 * Renames a temporary file over `file` at once (the second half of
 * writeFileAtomic); removes it if that fails.
 *
 * The rename that drops the old file's last link also has the file system
 * release it: on ext4, its blocks freed (and trimmed, on a disk mounted with
 * `discard`) and the new file's delayed blocks allocated. Measured here: ~3 ms
 * of the event loop for a 4 MB index.json (10,000 memories) and ~10 ms at
 * 17 MB (50,000), against 0.4 and 0.9 ms when the old file is held open
 * across the rename. So it is: the release then happens at the last close,
 * which libuv's thread pool makes. Not on Windows, where the rename works
 * differently and an open file may refuse it.
 */
export function replaceWithTemp(written: TempFile, file: string): void {
  const replaced = holdReplaced(file);
  try {
    fs.renameSync(written.temp, file);
  } catch (error) {
    fs.rmSync(written.temp, { force: true });
    throw error;
  } finally {
    if (replaced !== null) releaseHeld(replaced);
  }
}

/**
 * The most replaced files held at once, their closes waiting for the thread
 * pool: past it a rename releases the old file itself, as before. A pool kept
 * busy (slow disks, a network file system) while thousands of files are
 * rewritten in one go must not use up the process's descriptors, which the
 * next write's temporary file needs.
 */
export const MAX_HELD_REPLACED = 64;
let heldReplaced = 0;

/**
 * The file a rename is about to replace, opened for reading, or null (none,
 * unreadable, a symbolic link, Windows, MAX_HELD_REPLACED held). Without
 * blocking: a FIFO put in the file's place opens at once, where a plain open
 * would wait for a writer forever. Not through a link: the rename replaces the
 * link, and the file it points to stays.
 */
function holdReplaced(file: string): number | null {
  if (process.platform === 'win32' || heldReplaced >= MAX_HELD_REPLACED) return null;
  try {
    const fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK | fs.constants.O_NOFOLLOW);
    heldReplaced++;
    return fd;
  } catch {
    return null;
  }
}

/** Closes a held file on the thread pool; a failed close of a file only held for its release has nothing left to lose or report. */
function releaseHeld(fd: number): void {
  fs.close(fd, () => heldReplaced--);
}

/** replaceWithTemp on libuv's thread pool. */
export async function replaceWithTempAsync(written: TempFile, file: string): Promise<void> {
  try {
    await fs.promises.rename(written.temp, file);
  } catch (error) {
    await fs.promises.rm(written.temp, { force: true });
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

