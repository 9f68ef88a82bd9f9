/** What the search index does on this thread while a test runs. */
import { MemorySearchIndex } from '../../src/core/search';
import type { SearchableMemory } from '../../src/core/searchedText';

/** Counts MemorySearchIndex.upsert calls on this thread during `work`: each is a document indexed here (not on a worker). */
export async function upsertsDuring(work: () => Promise<void> | void): Promise<number> {
  const original = MemorySearchIndex.prototype.upsert;
  let calls = 0;
  MemorySearchIndex.prototype.upsert = function (this: MemorySearchIndex, memory: SearchableMemory) {
    calls++;
    original.call(this, memory);
  };
  try {
    await work();
  } finally {
    MemorySearchIndex.prototype.upsert = original;
  }
  return calls;
}
