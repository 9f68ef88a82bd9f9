/**
 * Uses of memories waiting to be written together (usage.ts): by session
 * number (-1: the current one) and kind. Each write takes the store's lock
 * and appends to the stats journal (~0.3 ms); a server that wrote each
 * recall's uses on its own ran ~60 such writes back to back every 250 ms
 * under a steady stream of recalls, and the recall that came in meanwhile
 * waited 10–20 ms (most of the MCP recall p99 at 10,000 memories).
 */
import type { UsageKind } from '../core/usage';

export type UsesBySession = Map<number, Partial<Record<UsageKind, string[]>>>;

export class UsageBatch {
  private pending: UsesBySession = new Map();

  /**
   * @param write writes a batch (MemoryStore.recordUsageBySession)
   * @param whenStarted called with flush() when a use comes into an empty batch: the caller says when it runs
   */
  constructor(
    private readonly write: (batch: UsesBySession) => Promise<void>,
    private readonly whenStarted?: (flush: () => Promise<void>) => void,
  ) {}

  add(session: number, kind: UsageKind, ids: readonly string[]): void {
    if (ids.length === 0) return;
    const started = this.pending.size === 0;
    let uses = this.pending.get(session);
    if (!uses) this.pending.set(session, (uses = {}));
    (uses[kind] ??= []).push(...ids);
    if (started) this.whenStarted?.(() => this.flush());
  }

  /** Writes what is waiting, in one write; nothing when nothing is. */
  async flush(): Promise<void> {
    if (this.pending.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    await this.write(batch);
  }
}
