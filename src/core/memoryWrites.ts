/**
 * The commands that write memories: store a new one, change its Summary or
 * its text (update), merge one into another, forget (or purge) one, restore
 * one from its archive. Each runs under the store's lock after a refresh (the
 * caller, MemoryStore, takes it) on input the caller validated, and archives
 * first (archiving.ts): every text a command replaces or removes is safe in
 * archives/ before the memory file changes.
 */
import type { Anchor } from './anchors';
import { archiveEntryFor, archiveForRemoval, archiveVersions, ensureArchived, fullTextOf, removeArchivedFile, takeBackArchiveEntry } from './archiving';
import { suggestTags } from './autotag';
import { ChangedOnDiskError, LtmError, notFound } from './errors';
import { InvalidMemoryFile, renderNewMemoryFile, replaceSummary, updateFrontmatter } from './memoryFile';
import { newMemoryId } from './memoryIds';
import { applyUpdate, mergedContent, mergedTags, prepareUpdate, type PreparedUpdate } from './memoryUpdate';
import type { MemoryMeta } from './model';
import { withImportance, type Importance } from './priority';
import type { PreparedInput } from './storeInput';
import { dropActiveMemory, nowIso, registerMemory, requireActive, unregisterMemory, type StoreParts } from './storeParts';
import type { ForgetResult, MemoryView, MergeResult, StoreInput, StoreResult, UpdateResult } from './storeTypes';

/** What the memory writes work through. */
export type MemoryWriteParts = Pick<StoreParts, 'mirror' | 'index' | 'stats' | 'queries'>;

/** Writes a new memory from checked input (prepareInput) and anchors made from the code (StoreAnchors). */
export function storeMemory(parts: MemoryWriteParts, input: StoreInput, prepared: PreparedInput, anchors: readonly Anchor[]): Omit<StoreResult, 'similar'> {
  const { mirror, index, stats, queries } = parts;
  const id = newMemoryId(parts);
  const createdAt = nowIso();
  const session = input.session ?? mirror.state.session_count;
  let tags = prepared.tags;
  if (input.autoTag && tags.length === 0) tags = suggestTags(`${prepared.topic}\n${prepared.content}`);
  // Decided under the lock, from state.json as it is now: a setting changed a moment ago counts.
  const proposed = input.author === 'claude' && mirror.state.config.review_new_memories === true;
  const raw = renderNewMemoryFile({
    ...(proposed ? { status: 'proposed' as const } : {}),
    id,
    topic: prepared.topic,
    tags,
    keywords: prepared.keywords,
    phase: 0,
    difficulty: prepared.difficulty ?? 0.5,
    created_at: createdAt,
    created_session: session,
    summary: prepared.summary,
    content: prepared.content,
    anchors,
  });
  mirror.writeMemoryFile(id, raw);
  registerMemory(parts, id);
  stats.set(id, { access_count: 0, accessed_at: createdAt, last_session: session, priority: 0 });
  stats.storePriority(id);
  index.write();
  stats.write();
  return { memory: queries.view(id), redactions: prepared.redactions };
}

/** Rewrites only the Summary section of a memory (`summary` checked and redacted: prepareSummary); the rest of the file keeps every byte. */
export function writeSummary(parts: MemoryWriteParts, id: string, summary: string): MemoryView {
  const { mirror, queries } = parts;
  mirror.refreshOne(id);
  requireActive(mirror, id);
  const file = mirror.files.get(id)!;
  const raw = replaceSummary(file.raw, summary);
  if (raw !== file.raw) mirror.writeMemoryFile(id, raw);
  return queries.view(id);
}

/** Changes the fields `prepared` gives (prepareUpdate), the previous text archived first; a change of nothing writes nothing. */
export function updateMemory(parts: MemoryWriteParts, id: string, prepared: PreparedUpdate): UpdateResult {
  const { mirror, index, stats, queries } = parts;
  mirror.refreshOne(id);
  requireActive(mirror, id);
  const file = mirror.files.get(id)!;
  const updated = applyUpdate(file.raw, file.memory, prepared, nowIso());
  if (updated.changed.length === 0) return { memory: queries.view(id), changed: [], redactions: prepared.redactions, versions: [] };
  const becomesFull = updated.phase === 0 && file.memory.phase > 0;
  // 1. Every previous text is safe in archives/ before the memory changes.
  const { versions, ownArchiveKept } = archiveVersions(parts, id, file, 'updated', becomesFull);
  mirror.writeArchiveIndex();
  // 2. The memory.
  mirror.writeMemoryFile(id, updated.text);
  if (becomesFull && ownArchiveKept) mirror.deleteArchiveFile(id);
  stats.storePriority(id);
  index.write();
  stats.write();
  return { memory: queries.view(id), changed: updated.changed, redactions: prepared.redactions, versions };
}

/** Merges memory `sourceId` into `targetId` (two different IDs), both originals archived first. */
export function mergeMemories(parts: MemoryWriteParts, sourceId: string, targetId: string): MergeResult {
  const { mirror, index, stats, queries } = parts;
  mirror.refreshOne(sourceId);
  mirror.refreshOne(targetId);
  requireActive(mirror, sourceId);
  requireActive(mirror, targetId);
  const source = mirror.files.get(sourceId)!;
  const target = mirror.files.get(targetId)!;
  // A reduced memory's whole text is its archive: that is what is merged.
  const sourceFull = fullTextOf(parts, sourceId, source);
  const targetFull = fullTextOf(parts, targetId, target);
  const prepared = prepareUpdate({
    content: mergedContent({ ...targetFull, id: targetId }, { ...sourceFull, id: sourceId }),
    tags: mergedTags(target.memory.tags, source.memory.tags),
  });
  const updated = applyUpdate(target.raw, target.memory, prepared, nowIso(), 'merged');
  const becomesFull = updated.phase === 0 && target.memory.phase > 0;
  // 1. Both originals are safe in archives/ before anything changes.
  const { versions, ownArchiveKept } = archiveVersions(parts, targetId, target, 'merged', becomesFull);
  ensureArchived(parts, sourceId, source);
  mirror.archiveIndex.memories.set(sourceId, { ...archiveEntryFor(source.memory, 'merged'), merged_into: targetId });
  mirror.writeArchiveIndex();
  // 2. The target, then the source leaves; neither is written over or removed once a person saved it (ChangedOnDiskError).
  try {
    mirror.writeMemoryFile(targetId, updated.text);
  } catch (error) {
    if (error instanceof ChangedOnDiskError) takeBackArchiveEntry(parts, sourceId);
    throw error;
  }
  if (becomesFull && ownArchiveKept) mirror.deleteArchiveFile(targetId);
  let sourceSaved = false;
  try {
    removeArchivedFile(parts, sourceId);
    unregisterMemory(parts, sourceId);
    stats.set(sourceId, undefined);
  } catch (error) {
    if (!(error instanceof ChangedOnDiskError)) throw error;
    sourceSaved = true;
  }
  stats.storePriority(targetId);
  index.write();
  stats.write();
  // Merging again would add the source a second time: say what happened instead of "try again".
  if (sourceSaved) {
    throw new LtmError('busy', `${sourceId} was saved in an editor while it was merged into ${targetId}: ${targetId} holds the merged text, ${sourceId} stays as saved. Compare them; forget ${sourceId} if the merge covers it.`);
  }
  return { target: queries.view(targetId), source: { id: sourceId, topic: source.memory.topic }, versions };
}

/**
 * Removes a memory from the active set, keeping its text in archives/ unless
 * `purge`; `saveRecordsWithout` saves the record cache without the memory
 * (a purge leaves no copy of its text in a cache).
 */
export function forgetMemory(parts: MemoryWriteParts, id: string, options: { purge?: boolean }, saveRecordsWithout: (id: string) => void): ForgetResult {
  const { mirror, queries } = parts;
  mirror.refreshOne(id);
  const active = mirror.isActive(id);
  const archived = mirror.archiveIndex.memories.has(id) && mirror.archiveFiles.has(id);
  if (!active && !(options.purge && (archived || mirror.archiveFiles.has(id)))) {
    throw notFound(
      archived ? `${id} is already archived (use purge to delete its text for good)` : `no memory with ID ${id}`,
    );
  }
  const topic = active ? mirror.files.get(id)!.memory.topic : (mirror.archiveIndex.memories.get(id)?.topic ?? '');
  if (options.purge) {
    // A purged memory's text must not survive anywhere, the git-ignored caches included: they go first.
    if (active) saveRecordsWithout(id);
    if (active) queries.discardSavedSearchIndex();
    mirror.archiveIndex.memories.delete(id);
    mirror.archiveIndex.purged.set(id, { purged_at: nowIso() });
    mirror.writeArchiveIndex();
    mirror.deleteArchiveFile(id);
    if (active) mirror.deleteMemoryFile(id, { evenIfChanged: true });
  } else {
    archiveForRemoval(parts, id, mirror.files.get(id)!, 'forgotten');
    removeArchivedFile(parts, id);
  }
  dropActiveMemory(parts, id);
  return { id, topic, archived: !options.purge, purged: Boolean(options.purge) };
}

/** Brings a memory back at phase 0 with the full text of its archive: an archived memory, or a reduced active one. */
export function restoreMemory(parts: MemoryWriteParts, id: string, options: { importance?: Importance }): MemoryView {
  const { mirror, index, stats, queries } = parts;
  mirror.refreshOne(id);
  const archiveRaw = mirror.readArchiveText(id);
  if (archiveRaw === null) {
    throw notFound(mirror.isActive(id) ? `${id} is not reduced: it has no archive to restore` : `no archive for ${id}`);
  }
  // A memory restored before keeps its archive until it is reduced again; restoring it once more
  // would put that older text over the full one it has now (and any edit since).
  if (mirror.isActive(id) && mirror.files.get(id)!.memory.phase === 0) {
    throw new LtmError('invalid_input', `${id} is not reduced: it is at phase 0 with its full text, so there is nothing to restore`);
  }
  let meta: MemoryMeta;
  try {
    meta = mirror.parseMemory(archiveRaw);
  } catch (error) {
    if (error instanceof InvalidMemoryFile) throw new LtmError('invalid_input', `the archive of ${id} is unreadable: ${error.reason}`);
    throw error;
  }
  // The archive was written before the first reduction; the history since is in the reduced file, if any.
  const entry = mirror.archiveIndex.memories.get(id);
  const earlier = mirror.files.get(id)?.memory.phase_history ??
    (entry ? [...meta.phase_history, { phase: 3, at: entry.archived_at, event: entry.reason === 'eviction' ? 'evicted' : entry.reason }] : meta.phase_history);
  const history = [...earlier, { phase: 0, at: nowIso(), event: 'restored' }];
  const changes: Record<string, unknown> = { phase: 0, restored_from_archive: true, phase_history: history };
  if (meta.id !== id) changes.id = id;
  if (options.importance) {
    changes.tags = withImportance(meta.tags, options.importance);
  }
  mirror.writeMemoryFile(id, updateFrontmatter(archiveRaw, changes));
  mirror.archiveIndex.memories.delete(id);
  mirror.writeArchiveIndex();
  registerMemory(parts, id);
  stats.set(id, { access_count: 0, accessed_at: nowIso(), last_session: mirror.state.session_count, priority: 0 });
  stats.storePriority(id);
  index.write();
  stats.write();
  return queries.view(id);
}
