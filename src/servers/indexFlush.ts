/**
 * When a server writes index.json. A store in a server only marks index.json
 * as behind (MemoryStore.deferIndexWrites): rewriting every entry, ~320 bytes
 * per memory, on each store made a store's cost grow with the store. The
 * server writes it in a pause between requests, and at the latest
 * INDEX_FLUSH_MAX_DEFER_MS after the first change it lacks, so that readers of
 * index.json (the reference implementation, a diff, a commit) are at most
 * that far behind. Stopping writes it at once.
 */

/** A pause this long between requests is when index.json is written... */
export const INDEX_FLUSH_PAUSE_MS = 150;
/** ...or this long after the first change it lacks, whichever comes first. */
export const INDEX_FLUSH_MAX_DEFER_MS = 2_000;

export interface IndexFlushOptions {
  /** Writes index.json (MemoryStore.flushIndex). */
  flush: () => Promise<void>;
  /** When the last request came in (Date.now() time). */
  lastRequestAt: () => number;
  pauseMs?: number;
  maxDeferMs?: number;
  log?: (message: string) => void;
}

export class IndexFlushSchedule {
  private timer: NodeJS.Timeout | null = null;
  /** Set by close(): nothing more is scheduled. */
  private closed = false;
  private deadline = 0;
  private running: Promise<void> | null = null;

  constructor(private readonly options: IndexFlushOptions) {}

  /** index.json fell behind: it is written in the next pause, or by the deadline. */
  request(): void {
    if (this.timer || this.closed) return;
    this.deadline = Date.now() + (this.options.maxDeferMs ?? INDEX_FLUSH_MAX_DEFER_MS);
    this.wait();
  }

  /** Writes index.json now if a write was requested, and resolves once no write runs. */
  async flushNow(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
      this.start();
    }
    while (this.running) await this.running;
  }

  /** Writes what is requested and schedules nothing more (the server stops). */
  async close(): Promise<void> {
    this.closed = true;
    await this.flushNow();
  }

  private wait(): void {
    const pauseMs = this.options.pauseMs ?? INDEX_FLUSH_PAUSE_MS;
    const now = Date.now();
    const quietFor = now - this.options.lastRequestAt();
    if (quietFor >= pauseMs || now >= this.deadline) {
      this.timer = null;
      this.start();
      return;
    }
    this.timer = setTimeout(() => this.wait(), Math.min(pauseMs - quietFor, this.deadline - now));
  }

  private start(): void {
    const previous = this.running ?? Promise.resolve();
    const run: Promise<void> = previous
      .then(() => this.options.flush())
      .catch((error: unknown) => {
        this.options.log?.(`writing index.json failed: ${(error as Error).stack ?? String(error)}`);
        // The store stays behind (and says so): try again later, not in a loop.
        if (!this.closed) this.timer ??= setTimeout(() => {
          this.timer = null;
          this.request();
        }, this.options.maxDeferMs ?? INDEX_FLUSH_MAX_DEFER_MS);
      })
      .finally(() => {
        if (this.running === run) this.running = null;
      });
    this.running = run;
  }
}
