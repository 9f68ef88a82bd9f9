/**
 * A writer that takes the store's cross-process lock (the engine's own
 * StoreLock) and never lets go, for kills.test.ts: it prints "locked" once it
 * holds the lock, then waits to be killed (-9).
 *   node --import tsx lockHolder.worker.ts <project>
 */
import { StoreLock } from '../../src/core/lock';
import { storePaths } from '../../src/core/storeFiles';

const paths = storePaths(process.argv[2]!);
setInterval(() => undefined, 60_000);
void new StoreLock(paths.root, paths.lock).run(async () => {
  process.stdout.write('locked\n');
  await new Promise(() => undefined);
});
