/**
 * The persisted search index (`.claude/ltm/search-index.bin`, git-ignored):
 * what lets a fresh process answer its first search without tokenizing every
 * memory (at 10,000 memories, ~0.1 s to load instead of ~0.9 s to build).
 *
 * A cache in the strict sense: the memory files are the truth, and the index
 * is rebuilt from them whenever the file is missing, damaged, of another
 * format, or not git-ignored. Each document carries the signature of the file
 * it was indexed from and the digest of its text; on loading, documents whose
 * file changed (in its text, not only its signature), appeared or went away
 * since are indexed again, one by one.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { readTextIfExists, writeFileAtomic, writeFileAtomicFrom, type FileSignature } from './files';
import { MemorySearchIndex } from './search';
import { searchedTextDigest, type SearchableMemory } from './searchedText';
import { writeFileAtomicInSlices, type SliceOptions } from './slices';

/** An indexed memory as the cache sees it: its text and the signature of its file. */
export interface IndexedFile {
  memory: SearchableMemory;
  signature: FileSignature;
}

/** A search index as loadSearchIndex leaves it. */
export interface LoadedSearchIndex {
  index: MemorySearchIndex;
  /** False when the file held exactly these documents. */
  changed: boolean;
  /** How many documents were indexed from their text here (all of them when the index was built). */
  indexedHere: number;
}

/** The saved index as read, before it is brought up to date with the files. */
export type SavedSearchIndex = NonNullable<ReturnType<typeof MemorySearchIndex.deserialize>>;

/** The index saved in `file`; null when there is none to use. Nothing else is looked at: see loadSearchIndex. */
export function readSearchIndex(file: string): SavedSearchIndex | null {
  let bytes: Buffer;
  try {
    bytes = fs.readFileSync(file);
  } catch {
    return null;
  }
  return MemorySearchIndex.deserialize(bytes);
}

/**
 * The index of `files`: loaded from `file` (or from `saved`, read from it
 * before) and brought up to date, or built.
 */
export function loadSearchIndex(
  file: string,
  files: ReadonlyMap<string, IndexedFile>,
  saved: SavedSearchIndex | null = readSearchIndex(file),
  /** Files already found to hold the text their entry indexed (see StoreQueries.memoryChanged): not digested again. */
  knownSameText: (file: IndexedFile) => boolean = () => false,
): LoadedSearchIndex {
  if (!saved) return { index: MemorySearchIndex.build([...files.values()].map((f) => f.memory)), changed: true, indexedHere: files.size };
  const { index, versions } = saved;
  const gone: string[] = [];
  for (const id of index.ids()) if (!files.has(id)) gone.push(id);
  const stale: [string, IndexedFile][] = [];
  let sameText = 0;
  // Read before the index changes: the versions are by slot, as loaded.
  for (const entry of files) {
    const slot = index.slotOfDocument(entry[0]);
    if (slot !== undefined && versions.isAt(slot, entry[1].signature)) continue;
    // Another version of the file, with the text indexed (a copied or restored project: every file has a
    // new inode and time; a checkout that rewrote it unchanged): kept, and saved under its new signature.
    if (slot !== undefined && (knownSameText(entry[1]) || index.textDigestAt(slot) === searchedTextDigest(entry[1].memory))) sameText++;
    else stale.push(entry);
  }
  // Out in one pass, then in again: many documents may be stale at once.
  index.removeMany([...gone, ...stale.map(([id]) => id)]);
  for (const [, f] of stale) index.upsert(f.memory);
  return { index, changed: gone.length + stale.length + sameText > 0, indexedHere: stale.length };
}

/**
 * Writes the index to `file`, only where .gitignore keeps it out of git (an
 * older store's .gitignore gains the line on its next write); true when
 * written. Best effort: a read-only checkout only opens more slowly. With
 * `keepBytes`, the bytes written are returned too (the whole file in memory
 * at once); without, they are written a piece at a time.
 */
export function saveSearchIndex(file: string, index: MemorySearchIndex, files: ReadonlyMap<string, IndexedFile>, options: { keepBytes?: boolean } = {}): { bytes: Buffer | null } | null {
  if (!ignoredByGit(file)) return null;
  const versionOf = (id: string) => files.get(id)?.signature;
  try {
    if (options.keepBytes) {
      const bytes = index.serialize(versionOf);
      writeFileAtomic(file, [bytes], { durable: false });
      return { bytes };
    }
    writeFileAtomicFrom(file, (out) => index.writeSerialized(versionOf, (piece) => out.write(piece)), { durable: false });
    return { bytes: null };
  } catch {
    return null;
  }
}

/**
 * saveSearchIndex, a piece at a time, giving way to the event loop every few
 * milliseconds (a server's pause: ~100 ms of writing at 50,000 memories). If
 * the index changes between two pieces, the file is left as it was; false
 * then, as when it is not git-ignored or cannot be written.
 */
export async function saveSearchIndexInSlices(file: string, index: MemorySearchIndex, files: ReadonlyMap<string, IndexedFile>, slices: SliceOptions = {}): Promise<boolean> {
  if (!ignoredByGit(file)) return false;
  const versionOf = (id: string) => files.get(id)?.signature;
  const changes = index.changeCount;
  const unchanged = () => index.changeCount === changes;
  return writeFileAtomicInSlices(file, 'the search index', (out) => index.serializationSteps(versionOf, (piece) => out.write(piece)), unchanged, slices, { durable: false });
}

/** Whether .gitignore keeps `file` (a cache in the store's folder) out of git: a cache is only written where it does. */
function ignoredByGit(file: string): boolean {
  const gitignore = readTextIfExists(path.join(path.dirname(file), '.gitignore')) ?? '';
  return gitignore.split(/\r?\n/).some((line) => line.trim() === path.basename(file));
}

/** Deletes the persisted index (a purged memory's words must not survive in it). */
export function discardSearchIndex(file: string): void {
  fs.rmSync(file, { force: true });
}
