/**
 * Work the server does after answering: session counts, access counts,
 * tool-call counters, and maintenance (priorities and eviction after a
 * session ends). None of it is needed by an answer, so it waits for a quiet
 * moment between requests, and never longer than a deadline.
 *
 * Claude Code sends hooks in bursts (a tool call is a PreToolUse and a
 * PostToolUse a few milliseconds apart; a prompt brings several): the next
 * hook of a burst should not wait behind a write of state.json or stats.json.
 */

/** Follow-up work runs after this long without a request... */
export const QUIET_MS = 15;
/** ...or after this long at the most. */
export const MAX_DEFER_MS = 250;
/**
 * Maintenance (priorities and eviction after a session ends) is needed by no
 * answer, and an eviction cycle at 10,000 memories holds the event loop for
 * tens of milliseconds: it waits for a pause between hooks (Claude Code makes
 * one whenever the model thinks), or this long when hooks never pause.
 */
export const MAINTENANCE_MAX_DEFER_MS = 60_000;
/** A pause for maintenance is this many times the quiet time (150 ms by default). */
export const MAINTENANCE_PAUSE_FACTOR = 10;

export interface FollowUpQueueOptions {
  /** How long without a request counts as a pause (default QUIET_MS). */
  quietMs?: number;
  /** The longest follow-up work waits (default MAX_DEFER_MS; tests shorten it). */
  maxDeferMs?: number;
  /** The longest maintenance waits (default MAINTENANCE_MAX_DEFER_MS; tests shorten it). */
  maintenanceMaxDeferMs?: number;
  /** Where the errors of follow-up work go (they never reach a caller). */
  log?: (message: string) => void;
}

interface QueuedWork {
  what: string;
  work: () => Promise<unknown>;
  /** When it runs even if requests keep coming (Date.now() time). */
  deadline: number;
  maintenance: boolean;
}

/**
 * The server tells the queue of each request (beginRequest) and hands it the
 * work an answer leaves behind (queue); stopping, or a caller that must see
 * everything written, drains it.
 */
export class FollowUpQueue {
  private queued: QueuedWork[] = [];
  private readonly running = new Set<Promise<unknown>>();
  private timer: NodeJS.Timeout | null = null;
  private lastRequest = 0;
  /** Requests begun and not yet answered (beginRequest). */
  private inFlight = 0;
  /** Waiting for no request to be in flight (requestsAnswered). */
  private answeredWaiters: (() => void)[] = [];

  constructor(private readonly options: FollowUpQueueOptions = {}) {}

  private get quietMs(): number {
    return this.options.quietMs ?? QUIET_MS;
  }

  /**
   * Queues work for after the answer went out. It runs once no request has
   * come for the quiet time, and never later than `maxDeferMs`; maintenance
   * waits for a longer pause (MAINTENANCE_PAUSE_FACTOR times the quiet time),
   * and never longer than `maintenanceMaxDeferMs`. Errors go to the log.
   */
  queue(what: string, work: () => Promise<unknown>, { maintenance = false }: { maintenance?: boolean } = {}): void {
    const maxDeferMs = maintenance ? (this.options.maintenanceMaxDeferMs ?? MAINTENANCE_MAX_DEFER_MS) : (this.options.maxDeferMs ?? MAX_DEFER_MS);
    this.queued.push({ what, work, deadline: Date.now() + maxDeferMs, maintenance });
    this.schedule();
  }

  /**
   * When the last request came in or was answered (Date.now() time; 0 before
   * the first); now while one is being answered, which is no pause.
   */
  get lastRequestAt(): number {
    return this.inFlight > 0 ? Date.now() : this.lastRequest;
  }

  /** A request came in and needs nothing more: queued work waits for a quiet moment. */
  noteRequest(): void {
    this.lastRequest = Date.now();
    this.schedule();
  }

  /**
   * A request came in; call the function returned once it is answered. Until
   * then there is no pause (only deadlines start work), and the quiet time
   * counts from the answer: a store that awaits its fsync for 20 ms is not a
   * pause in which to write state.json beside it.
   */
  beginRequest(): () => void {
    this.inFlight++;
    this.noteRequest();
    let answered = false;
    return () => {
      if (answered) return;
      answered = true;
      this.inFlight--;
      this.noteRequest();
      if (this.inFlight === 0) {
        const waiters = this.answeredWaiters;
        this.answeredWaiters = [];
        for (const resolve of waiters) resolve();
      }
    };
  }

  /** Resolves once no request is being answered (at once when none is). */
  requestsAnswered(): Promise<void> {
    if (this.inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => this.answeredWaiters.push(resolve));
  }

  /** Starts all queued work now, whatever its kind and however recent the last request. */
  runAllNow(): void {
    this.start(() => true);
  }

  /**
   * Starts all queued work now and resolves once nothing runs any more
   * (work queued meanwhile waits for its own quiet moment).
   */
  async drain(): Promise<void> {
    this.runAllNow();
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }

  /** Sets the timer for the next look at the queue: after the quiet time, or at the first deadline if that comes sooner. */
  private schedule(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.queued.length === 0) return;
    const firstDeadline = this.queued.reduce((first, w) => Math.min(first, w.deadline), Infinity);
    const wait = Math.max(0, Math.min(this.quietMs, firstDeadline - Date.now()));
    this.timer = setTimeout(() => this.runDue(), wait);
  }

  /**
   * What has waited as long as it may, and in a pause between requests the
   * rest: maintenance only in a longer pause (a hiccup of the client is not the
   * model thinking, and a hook arriving mid-cycle would wait for the cycle).
   */
  private runDue(): void {
    const now = Date.now();
    const quietFor = now - this.lastRequestAt;
    const pause = (maintenance: boolean) => quietFor >= (maintenance ? MAINTENANCE_PAUSE_FACTOR * this.quietMs : this.quietMs);
    // Once one entry of a kind is due, all of that kind run together: under a steady stream of
    // hooks each entry would otherwise reach its own deadline, and the state and stats files
    // would be written once per session instead of once per MAX_DEFER_MS.
    const kindDue = (maintenance: boolean) => pause(maintenance) || this.queued.some((w) => w.maintenance === maintenance && w.deadline <= now);
    const regularDue = kindDue(false);
    const maintenanceDue = kindDue(true);
    this.start((w) => (w.maintenance ? maintenanceDue : regularDue));
    this.schedule();
  }

  private start(due: (w: QueuedWork) => boolean): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const ready = this.queued.filter(due);
    const started = new Set(ready);
    this.queued = this.queued.filter((w) => !started.has(w));
    for (const { what, work } of ready) {
      let result: Promise<unknown>;
      try {
        result = work();
      } catch (error) {
        // Work that throws before it is under way is logged like any other failure, and the rest still starts.
        result = Promise.reject(error);
      }
      const running = result
        .catch((error: unknown) => this.options.log?.(`${what} failed: ${(error as Error).stack ?? String(error)}`))
        .finally(() => this.running.delete(running));
      this.running.add(running);
    }
  }
}
