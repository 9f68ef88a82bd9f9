/**
 * One large JSON map (`"key": value` members, indented as in
 * JSON.stringify(value, null, 2) one level down), written in chunks of
 * consecutive keys: index.json's memories and tag index and stats.json's
 * memories, rewritten on every store at 10,000 memories (or in a server's
 * pause after one).
 *
 * A chunk changed since the last write is rendered again; every other chunk
 * is copied from the file this map wrote last, where the chunk remembers its
 * place (checked by the file's signature: a file replaced or edited since is
 * not copied from, and every chunk is rendered again). The rendered bytes
 * are not kept: at 50,000 memories they were ~25 MB (index.json and
 * stats.json) held for the whole life of a server, beside the files that
 * hold the same bytes.
 */
import type { FileSignature, PieceWriter } from './files';
import { openIfUnchanged, readExactly } from './files';
import * as fs from 'node:fs';
import { insertionPoint } from './sortedStrings';
import { giveWay } from './slices';

interface Chunk {
  /** Sorted; every key of a chunk sorts before every key of the next one. */
  keys: string[];
  /** Where the chunk's bytes are in the file this map wrote last; -1: to be rendered at the next write. */
  at: number;
  length: number;
  /** Where they went in the file being written (-1: not yet, or changed since): `at` once that file is in place. */
  writtenAt: number;
  writtenLength: number;
}

/** Chunks split above this many members (unless told otherwise), so one change re-renders few. */
const MAX_CHUNK = 64;

/**
 * How many chunks (up to MAX_CHUNK members each, ~0.3 ms to render) a
 * write in slices (JsonMapChunks.writeInSlices) renders between two looks
 * at the event loop: ~10 ms at most.
 */
export const CHUNKS_PER_SLICE = 32;

/** Consecutive chunks copied from the last file are read and written together, up to this many bytes. */
const COPY_BLOCK = 1 << 20;
/**
 * The block they are read into: one for the process, made when first needed
 * (a block made per write would wait outside the heap for a full collection),
 * as a run is read and written before CopiedRun.flush returns.
 */
let copyBlock: Buffer | null = null;

const MEMBER_SEPARATOR = Buffer.from(',\n');

export class JsonMapChunks<V> {
  /**
   * In key order. A key's chunk is found by bisecting them (chunkIndexFor), not looked up in a map of
   * every key: such a map took ~1.8 MB at 50,000 members, for index.json and stats.json each, for a
   * server's life, while a change touches a few keys.
   */
  private chunks: Chunk[] = [];
  private value: (key: string) => V = () => {
    throw new Error('JsonMapChunks.sync() or update() must run before rendering');
  };
  /** The file the chunks' places are in (`committed`), as this map wrote it; null before the first write. */
  private lastFile: FileSignature | null = null;

  /** Members a chunk holds at most; a full one splits in two. */
  private readonly maxChunk: number;
  /** Members of a chunk laid out anew, and of each half of a split one. */
  private readonly halfChunk: number;

  /**
   * `maxChunk`: 1 for maps whose members are large and change one at a time (index.json's tag index:
   * a tag many memories share lists thousands of IDs, rendered again only when its own list changes).
   */
  constructor(
    private readonly render: (value: V) => unknown,
    options: { maxChunk?: number } = {},
  ) {
    this.maxChunk = Math.max(1, options.maxChunk ?? MAX_CHUNK);
    this.halfChunk = Math.max(1, Math.floor(this.maxChunk / 2));
  }

  get isEmpty(): boolean {
    return this.chunks.length === 0;
  }

  /** Makes the map hold exactly `keys`; `value` is asked only for members that must be rendered. */
  sync(keys: ReadonlySet<string>, value: (key: string) => V): void {
    this.value = value;
    if (this.chunks.length === 0) {
      this.rebuild([...keys].sort());
      return;
    }
    const held = new Set<string>();
    for (const chunk of this.chunks) for (const key of chunk.keys) held.add(key);
    const removed = [...held].filter((key) => !keys.has(key));
    const added = [...keys].filter((key) => !held.has(key));
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
    else if (this.chunkWith(key)) this.invalidate(key);
    else this.add(key);
  }

  /** The member's value changed: its chunk is rendered again on the next write. */
  invalidate(key: string): void {
    const chunk = this.chunkWith(key);
    if (chunk) changed(chunk);
  }

  clear(): void {
    this.chunks = [];
  }

  /**
   * Writes the map's members to `out`, in key order, separated as JSON
   * requires: rendered where they changed, copied from `lastFile` (the path
   * this map was last written to) where they did not. The caller then tells
   * whether the file written was put in place (committed) or not (abandoned).
   */
  writeTo(out: PieceWriter, lastFile: string): void {
    for (const rendered of this.writeSteps(out, lastFile)) void rendered;
  }

  /**
   * writeTo(), giving way to the event loop after every `chunksPerSlice`
   * chunks it had to render: the first write after opening renders every
   * member (~100 ms at 10,000 index.json entries, ~0.5 s at 50,000), and a
   * server answers hooks meanwhile. A member invalidated meanwhile is
   * rendered with what `value` gives now, and again at the next write; a
   * caller that lets members be added or removed meanwhile must not put the
   * file in place (IndexWriter drops such a flush: see its generation).
   */
  async writeInSlices(out: PieceWriter, lastFile: string, chunksPerSlice: number): Promise<void> {
    let rendered = 0;
    for (const step of this.writeSteps(out, lastFile)) {
      if (step && ++rendered % chunksPerSlice === 0) await giveWay();
    }
  }

  /** The file written (signed `signature`) is in place: the chunks are where it holds them. */
  committed(signature: FileSignature): void {
    for (const chunk of this.chunks) {
      chunk.at = chunk.writtenAt;
      chunk.length = chunk.writtenLength;
      chunk.writtenAt = -1;
    }
    this.lastFile = signature;
  }

  /** The file written was not put in place: the chunks stay where the last file holds them, if it does. */
  abandoned(): void {
    for (const chunk of this.chunks) chunk.writtenAt = -1;
  }

  /** Writes chunk after chunk; yields true after a chunk it rendered, false after one it copied. */
  private *writeSteps(out: PieceWriter, lastFile: string): Generator<boolean, void, undefined> {
    const source = this.lastFile;
    const from = source === null ? null : openIfUnchanged(lastFile, source);
    const run = from === null ? null : new CopiedRun(from, out);
    try {
      let first = true;
      for (const chunk of [...this.chunks]) {
        const separated = !first;
        first = false;
        // A write committed while this one gave way (a flush in slices) moved the chunks' places to its own file.
        if (run && chunk.at >= 0 && this.lastFile === source) {
          if (!run.extend(chunk)) {
            run.flush();
            if (separated) out.write(MEMBER_SEPARATOR);
            run.begin(chunk);
          }
          yield false;
          continue;
        }
        run?.flush();
        if (separated) out.write(MEMBER_SEPARATOR);
        chunk.writtenAt = out.position;
        out.writeText(chunk.keys.map((key) => renderMember(key, this.render(this.value(key)))).join(',\n'));
        chunk.writtenLength = out.position - chunk.writtenAt;
        yield true;
      }
      run?.flush();
    } finally {
      if (from !== null) fs.closeSync(from);
    }
  }

  private rebuild(sortedKeys: string[]): void {
    this.clear();
    for (let i = 0; i < sortedKeys.length; i += this.halfChunk) this.chunks.push(newChunk(sortedKeys.slice(i, i + this.halfChunk)));
  }

  /** The index of the last chunk whose first key sorts at or before `key` (0 when none does); the map has a chunk. */
  private chunkIndexFor(key: string): number {
    let lo = 0;
    let hi = this.chunks.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.chunks[mid]!.keys[0]! <= key) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  /** The chunk holding `key`, or null when the map does not. */
  private chunkWith(key: string): Chunk | null {
    if (this.chunks.length === 0) return null;
    const chunk = this.chunks[this.chunkIndexFor(key)]!;
    return chunk.keys[insertionPoint(chunk.keys, key)] === key ? chunk : null;
  }

  private add(key: string): void {
    if (this.chunks.length === 0) this.chunks.push(newChunk([]));
    const index = this.chunkIndexFor(key);
    const chunk = this.chunks[index]!;
    if (this.maxChunk === 1 && chunk.keys.length > 0) {
      // A member a chunk: the new one gets its own, and its neighbour's bytes are still copied.
      this.chunks.splice(key < chunk.keys[0]! ? index : index + 1, 0, newChunk([key]));
      return;
    }
    chunk.keys.splice(insertionPoint(chunk.keys, key), 0, key);
    changed(chunk);
    if (chunk.keys.length > this.maxChunk) this.chunks.splice(index + 1, 0, newChunk(chunk.keys.splice(this.halfChunk)));
  }

  private remove(key: string): void {
    const chunk = this.chunkWith(key);
    if (!chunk) return;
    chunk.keys.splice(insertionPoint(chunk.keys, key), 1);
    changed(chunk);
    if (chunk.keys.length === 0) this.chunks.splice(this.chunks.indexOf(chunk), 1);
  }
}

function newChunk(keys: string[]): Chunk {
  return { keys, at: -1, length: 0, writtenAt: -1, writtenLength: 0 };
}

/** Its bytes are rendered at the next write, and those being written now (if any) do not describe it. */
function changed(chunk: Chunk): void {
  chunk.at = -1;
  chunk.writtenAt = -1;
}

/**
 * Chunks copied from the last file that lie there one after the other (with
 * the separator between them, as in the file being written): read and
 * written together, a block at a time.
 */
class CopiedRun {
  private readonly chunks: Chunk[] = [];
  /** Where the run starts and ends in the last file. */
  private start = 0;
  private end = 0;

  constructor(
    private readonly from: number,
    private readonly out: PieceWriter,
  ) {}

  begin(chunk: Chunk): void {
    this.chunks.push(chunk);
    this.start = chunk.at;
    this.end = chunk.at + chunk.length;
  }

  /** Adds `chunk` if it follows the run in the last file and the run stays within a block. */
  extend(chunk: Chunk): boolean {
    if (this.chunks.length === 0 || chunk.at !== this.end + MEMBER_SEPARATOR.length) return false;
    if (chunk.at + chunk.length - this.start > COPY_BLOCK) return false;
    this.chunks.push(chunk);
    this.end = chunk.at + chunk.length;
    return true;
  }

  /** Writes the run, if any; its chunks learn where they went. */
  flush(): void {
    if (this.chunks.length === 0) return;
    const length = this.end - this.start;
    // A single chunk longer than a block (members of many KB) is read on its own.
    const into = length > COPY_BLOCK ? Buffer.allocUnsafe(length) : (copyBlock ??= Buffer.allocUnsafe(COPY_BLOCK));
    readExactly(this.from, into, length, this.start);
    for (const chunk of this.chunks) {
      chunk.writtenAt = this.out.position + (chunk.at - this.start);
      chunk.writtenLength = chunk.length;
    }
    this.out.write(into.subarray(0, length));
    this.chunks.length = 0;
  }
}

function renderMember(key: string, value: unknown): string {
  return `    ${JSON.stringify(key)}: ${JSON.stringify(value, null, 2).replace(/\n/g, '\n    ')}`;
}

/** The start of `{ "version": 1, "<map>": { ...members }, ... }`, exactly as JSON.stringify(value, null, 2) writes it. */
export const JSON_MAPS_START = Buffer.from('{\n  "version": 1');
/** Its end, and the newline after it. */
export const JSON_MAPS_END = Buffer.from('\n}\n');

/** What comes before a map's members (after the previous map): `,\n  "key": {\n`, or the whole `{}` of an empty map. */
export function mapOpening(key: string, empty: boolean): Buffer {
  return Buffer.from(empty ? `,\n  ${JSON.stringify(key)}: {}` : `,\n  ${JSON.stringify(key)}: {\n`);
}

/** What comes after a map's members (none for an empty map, which mapOpening closed). */
export function mapClosing(empty: boolean): Buffer {
  return empty ? Buffer.alloc(0) : MAP_CLOSING;
}

const MAP_CLOSING = Buffer.from('\n  }');
