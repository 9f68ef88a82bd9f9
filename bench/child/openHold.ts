/**
 * Run in a fresh process (bundled by bench/lib/child.ts): opens a store as
 * the extension does in its host (MemoryStore.openAsync with the search
 * index worker, serving meanwhile: `untilSearchIndex: false, inSlices: true`),
 * waits for the search index and searches once, and reports the longest time
 * the thread was held in one go meanwhile: how long every other extension in
 * the host would have waited at worst. Then it does what the extension does
 * next (ranks the memories, saves the caches in slices, prepares the first
 * store) and reports the longest hold of that too: what a request or another
 * extension waits for at worst once the store answers. A callback that
 * re-queues itself with setImmediate measures the gaps between turns of the
 * event loop.
 *
 *   node openHold.js < job.json      (prints one JSON line: OpenHoldResult)
 */
import * as fs from 'node:fs';
import { MemoryStore } from '../../src/core/store';
import { storePaths } from '../../src/core/storeFiles';
import { jobMain } from '../lib/jobMain';

export interface OpenHoldJob {
  projectDir: string;
  /** dist/search-index-worker.js, as the extension finds it next to its bundle. */
  workerScript: string;
  /** `deleted`: parse-cache.json and search-index.bin are removed first (a fresh clone). */
  caches: 'kept' | 'deleted';
}

export interface OpenHoldResult {
  /** The longest gap between two turns of the event loop until the first search was answered, ms. */
  longestHoldMs: number;
  /** The same from then until the caches were saved and the first store prepared, ms. */
  longestHoldAfterMs: number;
  /** openAsync called → the first search answered, ms. */
  untilSearchMs: number;
}

jobMain(async (job: OpenHoldJob): Promise<OpenHoldResult> => {
  if (job.caches === 'deleted') {
    const paths = storePaths(job.projectDir);
    fs.rmSync(paths.parseCache, { force: true });
    fs.rmSync(paths.searchIndex, { force: true });
  }
  let last = performance.now();
  let longest = 0;
  let measuring = true;
  const turn = () => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
    if (measuring) setImmediate(turn);
  };
  setImmediate(turn);
  const t0 = performance.now();
  const store = await MemoryStore.openAsync(job.projectDir, { watch: true, searchIndexWorker: job.workerScript }, { untilSearchIndex: false, inSlices: true });
  try {
    await store.untilSearchIndexReady();
    store.search('postgres deadlock', { limit: 10 });
    const untilSearchMs = performance.now() - t0;
    // The search's own hold counts too: measured at the next turn.
    await new Promise((resolve) => setImmediate(resolve));
    const longestHoldMs = longest;
    longest = 0;
    // What the extension does next (FolderMemory.open): the memories ranked, the caches saved, the first store prepared.
    await store.warmUp();
    await store.flushCachesInSlices();
    await store.prepareForStores();
    await new Promise((resolve) => setImmediate(resolve));
    measuring = false;
    return { longestHoldMs, longestHoldAfterMs: longest, untilSearchMs };
  } finally {
    store.dispose();
  }
});
