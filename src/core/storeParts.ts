/**
 * The parts of one store that its commands work through, wired together:
 * the files as last seen (DiskMirror) and what is derived from them and kept
 * in step through its events (index.json, stats.json, the queries), with the
 * store's anchoring. MemoryStore builds them once and owns them; each command
 * module declares the few parts it needs (a Pick of StoreParts), so that no
 * command reaches the facade, its lock or another command.
 */
import { DiskMirror } from './diskMirror';
import { notFound } from './errors';
import { IndexWriter } from './indexWriter';
import type { MemoryRecordCache } from './memoryRecords';
import { StatsWriter } from './statsWriter';
import { StoreAnchors } from './storeAnchors';
import type { StorePaths } from './storeFiles';
import { StoreQueries } from './storeQueries';
import type { OpenOptions } from './storeTypes';

export interface StoreParts {
  readonly paths: StorePaths;
  /** What is on disk, as last seen. */
  readonly mirror: DiskMirror;
  // --- derived from the mirror, kept in step through its events ------------
  readonly index: IndexWriter;
  readonly stats: StatsWriter;
  readonly queries: StoreQueries;
  readonly anchoring: StoreAnchors;
}

/** Builds a store's parts on `paths`, each listening to the mirror's events as the others need. */
export function createStoreParts(paths: StorePaths, options: OpenOptions, records: MemoryRecordCache): StoreParts {
  // The mirror's events reach the parts built after it; none fires before the first refresh.
  let index: IndexWriter | undefined;
  let stats: StatsWriter | undefined;
  let queries: StoreQueries | undefined;
  const mirror = new DiskMirror(paths, options, records, {
    memoryChanged: (id, next) => {
      index!.memoryChanged(id);
      queries!.memoryChanged(id, next);
    },
    indexChanged: () => index!.indexChanged(),
    statsRead: () => {
      stats!.replaced();
      queries!.statsRead();
    },
    archivesChanged: () => queries!.archivesChanged(),
  });
  index = new IndexWriter(mirror);
  stats = new StatsWriter(mirror, {
    score: (id, memory) => queries!.score(id, memory),
    touched: (id) => queries!.touched(id),
  });
  queries = new StoreQueries(mirror);
  return { paths, mirror, index, stats, queries, anchoring: new StoreAnchors(paths.project, options.renames) };
}

/** A memory joins the active set in index.json and the ranking table (its file is written by the caller). */
export function registerMemory(parts: Pick<StoreParts, 'index' | 'queries'>, id: string): void {
  parts.index.register(id);
  parts.queries.touched(id);
}

/** A memory leaves index.json and the ranking table (its file is deleted by the caller). */
export function unregisterMemory(parts: Pick<StoreParts, 'index' | 'queries'>, id: string): void {
  parts.index.unregister(id);
  parts.queries.touched(id);
}

/**
 * What follows a memory's file leaving memories/ (deleted by the caller,
 * archived first): index.json and stats.json no longer list it, both written.
 */
export function dropActiveMemory(parts: Pick<StoreParts, 'index' | 'queries' | 'stats'>, id: string): void {
  unregisterMemory(parts, id);
  parts.stats.set(id, undefined);
  parts.index.write();
  parts.stats.write();
}

/** Throws not_found unless memory `id` is active, saying how to restore it when it is archived. */
export function requireActive(mirror: Pick<DiskMirror, 'isActive' | 'archiveIndex'>, id: string): void {
  if (mirror.isActive(id)) return;
  if (mirror.archiveIndex.memories.has(id)) {
    throw notFound(`${id} is archived; restore it first (ltm restore ${id})`);
  }
  throw notFound(`no memory with ID ${id}`);
}

/** The time every write stamps (created_at, archived_at, phase history), as ISO 8601. */
export function nowIso(): string {
  return new Date().toISOString();
}
