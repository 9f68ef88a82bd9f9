/**
 * StatsWriter: stats.json's side of the store: access counts, the priority
 * stored with each memory, and the file's incremental rendering.
 *
 * Stats change on every access, so the writer keeps each member's bytes and
 * renders again only the memories changed since the last write, and says when
 * there is nothing to write at all. The stats themselves are the mirror's
 * (DiskMirror.stats, replaced when the file is read again); this class changes
 * them and tracks what its bytes are missing.
 */
import type { DiskMirror } from './diskMirror';
import { JsonMapChunks, jsonWithMaps } from './files';
import type { Memory, MemoryStats } from './model';
import { statsEntryJson } from './storeFiles';
import { countsAsAccess, type UsageKind } from './usage';

/** What the stats need from the rest of the store. */
export interface StatsInputs {
  /** A memory's current priority, rounded. */
  score(id: string, memory: Memory): number;
  /** Called when a memory's stats (a ranking input) were set or removed. */
  touched(id: string): void;
}

export class StatsWriter {
  private readonly members = new JsonMapChunks<MemoryStats>(statsEntryJson);
  private readonly dirty = new Set<string>();
  private needsFullSync = true;

  constructor(
    private readonly mirror: DiskMirror,
    private readonly inputs: StatsInputs,
  ) {}

  /** stats.json was read again: every member is rendered anew. */
  replaced(): void {
    this.needsFullSync = true;
    this.members.clear();
  }

  /** Sets a memory's stats, or removes them (undefined). */
  set(id: string, stats: MemoryStats | undefined): void {
    if (stats) this.mirror.stats.set(id, stats);
    else this.mirror.stats.delete(id);
    this.changed(id);
    this.inputs.touched(id);
  }

  /** Counts one access of each memory, in session number `session`, and stores their new priorities. */
  recordAccess(ids: readonly string[], session: number): void {
    const at = new Date().toISOString();
    for (const id of ids) {
      const old = this.mirror.stats.get(id);
      this.set(id, {
        // The usage counters (usage.ts) are kept.
        ...old,
        access_count: (old?.access_count ?? 0) + 1,
        accessed_at: at,
        last_session: Math.max(session, old?.last_session ?? 0),
        priority: old?.priority ?? 0,
      });
      this.storePriority(id);
    }
  }

  /**
   * Records one use of each memory in session number `session` (see usage.ts):
   * its usage counter, and for every use but a recall an access as
   * recordAccess counts it. An injection counts once per session.
   */
  recordUsage(ids: readonly string[], session: number, kind: UsageKind): void {
    if (countsAsAccess(kind)) this.recordAccess(ids, session);
    const at = new Date().toISOString();
    for (const id of ids) {
      const old = this.mirror.stats.get(id);
      const memory = this.mirror.files.get(id)?.memory;
      // A memory without stats (stored by hand, or by another tool) keeps the recency it is ranked by now.
      const next: MemoryStats = old
        ? { ...old }
        : { access_count: 0, accessed_at: memory?.created_at ?? at, last_session: memory?.created_session ?? 0, priority: 0 };
      switch (kind) {
        case 'injected':
          // Sessions are numbered as they start: a lower or equal number is a session already counted.
          if (session <= (old?.last_injected_session ?? 0)) continue;
          next.injected_sessions = (old?.injected_sessions ?? 0) + 1;
          next.last_injected_session = session;
          break;
        case 'offered':
          next.offer_count = (old?.offer_count ?? 0) + 1;
          break;
        case 'recalled':
        case 'read':
          if (kind === 'read') next.read_count = (old?.read_count ?? 0) + 1;
          else next.recall_count = (old?.recall_count ?? 0) + 1;
          next.last_used_session = Math.max(session, old?.last_used_session ?? 0);
          next.last_used_at = at;
          break;
      }
      this.set(id, next);
      if (!old) this.storePriority(id);
    }
  }

  /** Stores an active memory's current priority with its stats (readers of the reference format use it). */
  storePriority(id: string): void {
    const stats = this.mirror.stats.get(id);
    if (!stats) return;
    const priority = this.inputs.score(id, this.mirror.files.get(id)!.memory);
    if (priority === stats.priority) return;
    stats.priority = priority;
    this.changed(id);
  }

  /** Writes stats.json when anything changed. */
  write(): void {
    const bytes = this.render();
    if (bytes) this.mirror.writeStats(bytes);
  }

  /** write() without blocking the event loop, for hooks that Claude Code waits on. */
  async writeAsync(): Promise<void> {
    const bytes = this.render();
    if (bytes) await this.mirror.writeStatsAsync(bytes);
  }

  /** A memory's member must be rendered again. */
  private changed(id: string): void {
    this.members.invalidate(id);
    this.dirty.add(id);
  }

  /** stats.json as bytes, or null when nothing changed since this process last wrote (or read) it. */
  private render(): Buffer[] | null {
    const { stats } = this.mirror;
    if (!this.needsFullSync && this.dirty.size === 0 && this.mirror.statsStatus.kind === 'ok' && this.mirror.statsSignature) return null;
    const value = (id: string) => stats.get(id)!;
    if (this.needsFullSync) this.members.sync(new Set(stats.keys()), value);
    else for (const id of this.dirty) this.members.update(id, stats.has(id), value);
    this.needsFullSync = false;
    this.dirty.clear();
    return jsonWithMaps([['memories', this.members.buffers()]]);
  }
}
