/**
 * Run in a fresh process (bundled by bench/lib/child.ts, like dist/cli.js):
 * opens a store, lists it once, flushes its caches as the CLI does, and
 * prints what that cost as one JSON line. With `--held`, it then loads (or
 * builds) the search index and flushes the caches again, as a server does
 * once it has opened, and adds the heap the open store holds after that.
 *
 *   node --expose-gc open-probe.js <projectDir> [--held]
 */
import { MemoryStore } from '../../src/core/store';

async function main(): Promise<void> {
  const projectDir = process.argv[2];
  if (!projectDir) throw new Error('usage: open-probe.js <projectDir>');
  // performance.now() counts from the process's time origin: this is node's startup and module loading.
  const loadedAt = performance.now();
  const t0 = performance.now();
  const store = MemoryStore.open(projectDir);
  const t1 = performance.now();
  const list = store.list();
  const t2 = performance.now();
  // As the CLI does after every command: saves what was parsed (a no-op when the record cache was complete).
  store.flushCaches();
  const t3 = performance.now();
  const gc = () => (globalThis as { gc?: () => void }).gc?.();
  let heldHeapUsed: number | undefined;
  if (process.argv[3] === '--held') {
    await store.warmUp();
    store.flushCaches();
    gc();
    heldHeapUsed = process.memoryUsage().heapUsed;
  }
  store.dispose();
  gc();
  const memory = process.memoryUsage();
  process.stdout.write(
    `${JSON.stringify({
      loadedAtMs: loadedAt,
      openMs: t1 - t0,
      listMs: t2 - t1,
      openListMs: t2 - t0,
      flushMs: t3 - t2,
      sinceStartMs: t2,
      total: list.total,
      rss: memory.rss,
      heapUsed: memory.heapUsed,
      ...(heldHeapUsed === undefined ? {} : { heldHeapUsed }),
    })}\n`,
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
