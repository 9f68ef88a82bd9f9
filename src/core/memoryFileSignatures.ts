/**
 * The signatures of every *.md file in memories/ as last read, by file name,
 * without a map entry per memory: a valid memory's signature is its
 * LoadedFile's (its file name is `<id>.md`), and only the other files
 * (invalid ones) are kept here. At 10,000 memories a second map keyed by name
 * held ~90 bytes a memory (its entry and the name string) for nothing new.
 */
import type { FileSignature } from './files';
import type { LoadedFile } from './loadedFile';

export class MemoryFileSignatures {
  /** *.md files read that are not a valid memory (DiskMirror.invalidFiles), by name. */
  private readonly others = new Map<string, FileSignature>();

  constructor(private readonly files: ReadonlyMap<string, LoadedFile>) {}

  get(name: string): FileSignature | undefined {
    return this.others.get(name) ?? (name.endsWith('.md') ? this.files.get(name.slice(0, -3))?.signature : undefined);
  }

  has(name: string): boolean {
    return this.get(name) !== undefined;
  }

  get size(): number {
    return this.files.size + this.others.size;
  }

  *keys(): IterableIterator<string> {
    for (const id of this.files.keys()) yield `${id}.md`;
    yield* this.others.keys();
  }

  *values(): IterableIterator<FileSignature> {
    for (const file of this.files.values()) yield file.signature;
    yield* this.others.values();
  }

  /** Records the signature of a file read that is not a valid memory (a memory's is in its LoadedFile). */
  setOther(name: string, signature: FileSignature): void {
    this.others.set(name, signature);
  }

  /** Forgets a file kept by setOther (it became a memory, or went away). */
  deleteOther(name: string): void {
    this.others.delete(name);
  }
}
