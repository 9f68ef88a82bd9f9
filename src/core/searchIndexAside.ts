/**
 * The search index of a store that has no saved one (search-index.bin
 * missing: a fresh clone, a deleted cache), built on a worker thread while
 * the store opens. Without it, a first search waits for the memory files to
 * be read (~0.45 s at 10,000 memories) and then for the index to be built
 * from them (~0.5 s, mostly tokenizing). With it, the opening thread hands
 * each memory to the worker as it reads it, and the worker indexes it there,
 * on the machine's other core: the index is ready soon after the last file
 * is read.
 *
 * A worker that read and parsed the files itself would do both halves of
 * the work in one thread (measured at 10,000 memories: ~1.1 s, slower than
 * the opening thread doing them in turn); the files are read once, here.
 *
 * The worker answers a snapshot in search-index.bin's form, each document
 * keyed by the signature of the file its text was read from. It is brought
 * up to date with the files exactly as a saved index is (searchIndexCache.ts,
 * loadSearchIndex): a memory that changed, appeared or went away after it
 * was handed over is indexed again or dropped there.
 */
import { Worker, type MessagePort } from 'node:worker_threads';
import type { FileSignature } from './files';
import type { SearchableMemory } from './searchedText';
import { SearchSnapshotBuilder } from './searchSnapshotBuilder';
import { firstAnswer } from './workerAnswer';

/** A memory as handed to the worker: its searched text and the signature of the file it was read from. */
interface HandedMemory {
  id: string;
  signature: FileSignature;
  topic: string;
  tags: readonly string[];
  keywords: readonly string[];
  summary: string;
  content: string;
}

/** Memories per message: few enough that the worker starts early, enough that messages cost little. */
const BATCH = 256;

/**
 * Below this many memories the index is built where it is needed: it takes
 * a few milliseconds, less than waiting for a worker to load its script.
 */
export const INDEX_ASIDE_MIN_MEMORIES = 1_000;

/** The opening thread's side: hands memories over, then asks for the index. */
export class SearchIndexFeed {
  private batch: HandedMemory[] = [];
  private handed = 0;
  private readonly answer: Promise<Buffer | null>;

  private constructor(private readonly worker: Worker) {
    this.answer = firstAnswer(worker, (message) => (message instanceof Uint8Array ? Buffer.from(message.buffer, message.byteOffset, message.byteLength) : null));
    // A process that is done must not wait for a worker nobody asked to finish (finish() holds it).
    worker.unref();
  }

  /**
   * Starts a worker running `workerScript` (the bundle of
   * src/searchIndexWorker.ts); null when it cannot start: the index is then
   * built where it is needed, as without a worker.
   */
  static start(workerScript: string): SearchIndexFeed | null {
    try {
      return new SearchIndexFeed(new Worker(workerScript));
    } catch {
      return null;
    }
  }

  /** How many memories were handed over. */
  get size(): number {
    return this.handed;
  }

  /** Hands over a memory read from a file with `signature` (its Content is read now if it was not). */
  add(memory: SearchableMemory, signature: FileSignature): void {
    this.batch.push({
      id: memory.id,
      signature,
      topic: memory.topic,
      tags: memory.tags,
      keywords: memory.keywords ?? [],
      summary: memory.summary,
      content: memory.content,
    });
    this.handed++;
    if (this.batch.length >= BATCH) this.send();
  }

  /**
   * The index of what was handed over, serialized (MemorySearchIndex.deserialize
   * reads it: when it is needed, not when it arrives, which may be while the
   * thread answers a request that does not search); null when the worker failed.
   */
  finish(): Promise<Buffer | null> {
    this.send();
    this.worker.postMessage(null);
    // Asked for: the process waits for the answer (an unreferenced worker would let it exit meanwhile).
    this.worker.ref();
    return this.answer;
  }

  /** Stops the worker; nothing is answered. */
  cancel(): void {
    void this.worker.terminate();
  }

  private send(): void {
    if (this.batch.length === 0) return;
    this.worker.postMessage(this.batch);
    this.batch = [];
  }
}

/**
 * The worker's side (src/searchIndexWorker.ts runs it on its parent port):
 * indexes each batch as it arrives; at the end (null), answers the serialized
 * index, its buffer transferred, or null when it cannot.
 */
export function indexHandedMemories(port: MessagePort): void {
  // Kept only as the snapshot holds it: half the heap of a searchable index (searchSnapshotBuilder.ts).
  const index = new SearchSnapshotBuilder();
  const signatures = new Map<string, FileSignature>();
  const onMessage = (batch: HandedMemory[] | null) => {
    try {
      if (batch !== null) {
        for (const memory of batch) {
          signatures.set(memory.id, memory.signature);
          index.add(memory);
        }
        return;
      }
      port.off('message', onMessage);
      const bytes = index.serialize((id) => signatures.get(id));
      // Transferred, not copied: a Buffer that is a view into a larger (pooled) one cannot be given away.
      const own = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? bytes : new Uint8Array(bytes);
      port.postMessage(own, [own.buffer as ArrayBuffer]);
    } catch {
      port.off('message', onMessage);
      port.postMessage(null);
    }
  };
  port.on('message', onMessage);
}
