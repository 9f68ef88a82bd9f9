/**
 * StatsWriter: renders stats.json (access counts, last session, stored
 * priority of each memory) incrementally.
 *
 * Stats change on every access, so the writer keeps each member's bytes and
 * renders again only the memories changed since the last write, and says when
 * there is nothing to write at all. The stats themselves are the mirror's
 * (DiskMirror.stats); this class only tracks what its bytes are missing.
 */
import { JsonMapChunks, jsonWithMaps } from './files';
import type { DiskMirror } from './diskMirror';
import type { MemoryStats } from './model';
import { statsEntryJson } from './storeFiles';

export class StatsWriter {
  private readonly members = new JsonMapChunks<MemoryStats>(statsEntryJson);
  private readonly dirty = new Set<string>();
  private needsFullSync = true;

  constructor(private readonly mirror: DiskMirror) {}

  /** A memory's stats were set, removed or changed in place. */
  changed(id: string): void {
    this.members.invalidate(id);
    this.dirty.add(id);
  }

  /** stats.json was read again: every member is rendered anew. */
  replaced(): void {
    this.needsFullSync = true;
    this.members.clear();
  }

  /** stats.json as bytes, or null when nothing changed since this process last wrote (or read) it. */
  render(): Buffer[] | null {
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
