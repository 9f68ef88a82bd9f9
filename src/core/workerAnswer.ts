/**
 * The one answer a worker thread of the store gives (signatureSweep.ts,
 * searchIndexAside.ts): its first message, or nothing when it fails or exits
 * first. Either way the caller goes on without it, doing the work itself.
 */
import type { Worker } from 'node:worker_threads';

/**
 * `worker`'s first message as `read` takes it (null: not an answer to use),
 * or null when the worker fails or exits before it answers. The worker is
 * terminated once answered: it has nothing more to say.
 */
export function firstAnswer<T>(worker: Worker, read: (message: unknown) => T | null): Promise<T | null> {
  return new Promise((resolve) => {
    let answered = false;
    const answer = (value: () => T | null) => {
      if (answered) return;
      answered = true;
      try {
        resolve(value());
      } catch {
        resolve(null);
      }
      void worker.terminate();
    };
    worker.once('message', (message: unknown) => answer(() => read(message)));
    worker.once('error', () => answer(() => null));
    worker.once('exit', () => answer(() => null));
  });
}
