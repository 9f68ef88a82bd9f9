/**
 * Serialises writers: an in-process queue for this process's own operations and
 * a lock file for every other process (other windows, the CLI, other servers).
 */
import lockfile from 'proper-lockfile';
import { LtmError } from './errors';

/** Another process held the lock for longer than a writer waits (about 10 s). */
export class StoreBusyError extends LtmError {
  constructor(lockPath: string) {
    super('busy', `the memory store is locked by another process (${lockPath}); try again`);
    this.name = 'StoreBusyError';
  }
}

export class StoreLock {
  private tail: Promise<unknown> = Promise.resolve();

  /**
   * @param directory the directory the lock protects (must exist while locked)
   * @param lockPath the lock directory proper-lockfile creates
   */
  constructor(
    private readonly directory: string,
    private readonly lockPath: string,
  ) {}

  /** Resolves when all work queued so far has run. */
  settled(): Promise<void> {
    return this.tail.then(() => undefined);
  }

  /** Runs `work` while holding both locks; waits up to about 10 s for other processes. */
  run<T>(work: () => T | Promise<T>): Promise<T> {
    const result = this.tail.then(() => this.withFileLock(work));
    this.tail = result.catch(() => undefined);
    return result;
  }

  private async withFileLock<T>(work: () => T | Promise<T>): Promise<T> {
    let release: () => Promise<void>;
    try {
      release = await lockfile.lock(this.directory, {
        lockfilePath: this.lockPath,
        realpath: false,
        // A holder that died leaves a lock whose mtime stops being refreshed.
        stale: 10_000,
        update: 2_000,
        retries: { retries: 400, factor: 1.2, minTimeout: 2, maxTimeout: 50, randomize: true },
        // The default throws from a timer and would crash the host. Operations
        // last milliseconds; a lock taken over as stale mid-operation means the
        // event loop stalled for 10 s, and the writes that follow are still atomic.
        onCompromised: () => undefined,
      });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ELOCKED') throw new StoreBusyError(this.lockPath);
      throw error;
    }
    try {
      return await work();
    } finally {
      await release().catch(() => undefined);
    }
  }
}
