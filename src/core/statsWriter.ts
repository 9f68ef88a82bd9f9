/**
 * StatsWriter: stats.json's side of the store: access counts, the priority
 * stored with each memory, the stats journal and the file's incremental
 * rendering.
 *
 * Stats change on every access and every store, so a write appends the
 * changed entries to the stats journal (statsJournal.ts: O(1) bytes per
 * change), and stats.json is rewritten only when the journal is long, when
 * stats.json is missing or unusable, and on compact() (server stop, fix). For
 * those rewrites the writer renders again only the memories changed since the
 * last one, and copies the others from the stats.json it wrote (JsonMapChunks);
 * a server compacts in a pause (deferCompaction, compactAsync), rendering in
 * slices and answering requests between them. The stats themselves are the mirror's
 * (DiskMirror.stats, replaced when the file is read again); this class changes
 * them and tracks what its bytes are missing.
 */
import type { DiskMirror } from './diskMirror';
import type { PieceWriter } from './files';
import { CHUNKS_PER_SLICE, JSON_MAPS_END, JSON_MAPS_START, JsonMapChunks, mapClosing, mapOpening } from './jsonMapChunks';
import type { Memory, MemoryStats } from './model';
import { compactionDue, journalLine } from './statsJournal';
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
  /** Memories whose member must be rendered again at the next rewrite of stats.json. */
  private readonly dirty = new Set<string>();
  /** Memories whose stats changed since they were last written (journal or stats.json). */
  private readonly unwritten = new Set<string>();
  private needsFullSync = true;
  /** Counts the times stats.json was read again (replaced()): a rendering in slices overtaken by one is not written. */
  private readings = 0;
  /** Set by deferCompaction: told once a write finds the journal long enough to compact. */
  private onCompactionDue: (() => void) | null = null;
  /** The journal's length when onCompactionDue was last told, if no compaction ran since. */
  private askedAtLines: number | null = null;

  constructor(
    private readonly mirror: DiskMirror,
    private readonly inputs: StatsInputs,
    private readonly options: { chunksPerSlice?: number } = {},
  ) {}

  /** stats.json was read again: every member is rendered anew. */
  replaced(): void {
    this.readings++;
    this.needsFullSync = true;
    this.members.clear();
    // What was read is on disk; changes are always written in the same locked step that made them.
    this.unwritten.clear();
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

  /**
   * Writes what changed: appended to the journal, or (journal long, stats.json
   * missing or unusable) stats.json rewritten with every change.
   */
  write(): void {
    if (this.appendOrCompact()) this.rewrite();
  }

  /**
   * From now on a write appends to the journal however long it grows, and
   * tells `onDue` once it is long enough to compact (compactionDue), again
   * only if it doubles without a compaction; the
   * caller compacts it with compactAsync() when it suits it. For a server,
   * which compacts in a pause between requests: a compaction renders stats.json
   * under the lock (~150 ms at 50,000 memories the first time, ~80 ms later),
   * and a store's write compacted it in one go, holding every request. null:
   * writes compact it again.
   */
  deferCompaction(onDue: (() => void) | null): void {
    this.onCompactionDue = onDue;
    this.askedAtLines = null;
  }

  /** write() for a server, which answers requests meanwhile: a rewrite of stats.json renders in slices (rewriteInSlices). */
  async writeAsync(): Promise<void> {
    if (this.appendOrCompact()) await this.rewriteInSlices();
  }

  /**
   * Writes stats.json with the journal applied and removes the journal, when
   * there is one (or stats.json needs writing anyway): a stopping server and
   * fix leave stats.json whole for readers of the reference format.
   */
  compact(): void {
    if (this.compactionNeeded()) this.rewrite();
  }

  /** compact(), rendered in slices and written without blocking (rewriteInSlices): a server's compaction (deferCompaction). */
  async compactAsync(): Promise<void> {
    this.askedAtLines = null;
    if (this.compactionNeeded()) await this.rewriteInSlices();
  }

  private compactionNeeded(): boolean {
    return this.mirror.statsFile.hasJournal || this.unwritten.size > 0 || !this.statsFileUsable();
  }

  /**
   * stats.json rewritten with every change: its members rendered in slices,
   * with the event loop free between them, and written without blocking. A
   * server's first rewrite renders every member (~150 ms at 50,000 memories)
   * and later ones most of them (the memories used since are spread over all
   * the chunks: ~80 ms); rendered in one go, they held every request that came
   * in meanwhile. The caller holds the lock, so the stats change only when
   * stats.json is read again (a hand edit seen by a reader's refresh): what was
   * rendered is then out of date and is not written; the journal still holds
   * every change, and the next rewrite renders anew.
   */
  private async rewriteInSlices(): Promise<void> {
    const readings = this.readings;
    const members = this.renderMembers();
    const overtaken = () => readings !== this.readings;
    let signature;
    try {
      signature = await this.mirror.statsFile.writeAsync(async (out) => {
        this.writeStart(out, members);
        await members.writeInSlices(out, this.mirror.paths.stats, this.options.chunksPerSlice ?? CHUNKS_PER_SLICE);
        // Read again meanwhile: what was rendered is out of date and is not put in place.
        if (overtaken()) throw new OvertakenRewrite();
        this.writeEnd(out, members);
      });
    } catch (error) {
      members.abandoned();
      if (overtaken()) return;
      throw error;
    }
    members.committed(signature);
  }

  /** stats.json rewritten with every change, at once. */
  private rewrite(): void {
    const members = this.renderMembers();
    let signature;
    try {
      signature = this.mirror.statsFile.write((out) => {
        this.writeStart(out, members);
        members.writeTo(out, this.mirror.paths.stats);
        this.writeEnd(out, members);
      });
    } catch (error) {
      members.abandoned();
      throw error;
    }
    members.committed(signature);
  }

  private writeStart(out: PieceWriter, members: JsonMapChunks<MemoryStats>): void {
    out.write(JSON_MAPS_START);
    out.write(mapOpening('memories', members.isEmpty));
  }

  private writeEnd(out: PieceWriter, members: JsonMapChunks<MemoryStats>): void {
    out.write(mapClosing(members.isEmpty));
    out.write(JSON_MAPS_END);
  }

  /** Appends the unwritten changes; true when stats.json must be rewritten instead (or now as well). */
  private appendOrCompact(): boolean {
    if (!this.statsFileUsable()) return true;
    if (this.unwritten.size === 0) return false;
    const { stats } = this.mirror;
    this.mirror.statsFile.appendJournal([...this.unwritten].map((id) => journalLine(id, stats.get(id))));
    this.unwritten.clear();
    const lines = this.mirror.statsFile.journalLines;
    if (!compactionDue(lines, stats.size)) return false;
    if (!this.onCompactionDue) return true;
    // Told once, and again only if the journal doubled since without a compaction: the one asked for could
    // not run (the lock busy past its wait), and nothing else would ask again.
    if (this.askedAtLines === null || lines >= 2 * this.askedAtLines) {
      this.askedAtLines = lines;
      this.onCompactionDue();
    }
    return false;
  }

  /** stats.json exists as LTM reads it: a journal can apply to it. */
  private statsFileUsable(): boolean {
    return this.mirror.statsStatus.kind === 'ok' && this.mirror.statsSignature !== null;
  }

  /** A memory's member must be rendered again, and its entry written. */
  private changed(id: string): void {
    this.members.invalidate(id);
    this.dirty.add(id);
    this.unwritten.add(id);
  }

  /** The members brought in step with the stats, every change included: what remains is rendering their bytes. */
  private renderMembers(): JsonMapChunks<MemoryStats> {
    const { stats } = this.mirror;
    this.unwritten.clear();
    const value = (id: string) => stats.get(id)!;
    if (this.needsFullSync) this.members.sync(new Set(stats.keys()), value);
    else for (const id of this.dirty) this.members.update(id, stats.has(id), value);
    this.needsFullSync = false;
    this.dirty.clear();
    return this.members;
  }
}

/** A rewrite of stats.json that stats.json read again made out of date: dropped, not an error. */
class OvertakenRewrite extends Error {}
