/**
 * One eviction cycle's changes to the files: when memories/ holds more than
 * `max_memories`, the batch eviction.ts selects advances one phase each,
 * every full text archived first and the Summary never changed. Run under the
 * store's lock after a refresh (MemoryStore takes it, one cycle per turn);
 * the end of sessions runs a cycle per ended session, each in a turn of its own.
 */
import { archiveEntryFor, ensureArchived } from './archiving';
import { ChangedOnDiskError } from './errors';
import { selectEvictionBatch } from './eviction';
import { reduceToAbstract, reduceToHint, renderBody, replaceBody, updateFrontmatter } from './memoryFile';
import { nowIso, unregisterMemory, type StoreParts } from './storeParts';
import type { EvictionResult } from './storeTypes';
import { storeEndedSessionPriorities } from './usageRecording';

/** What a cycle works through. */
export type EvictionParts = Pick<StoreParts, 'mirror' | 'index' | 'stats' | 'queries'>;

/** One eviction cycle; the caller holds the lock. */
export function evictOnce(parts: EvictionParts): EvictionResult {
  const { mirror, index, stats, queries } = parts;
  // Limits read from a state.json that cannot be read are the defaults, not the person's: nothing is reduced on a guess.
  mirror.stateFile.requireReadable();
  const config = mirror.state.config;
  // The ranking table counts the active memories without walking them all.
  const count = queries.activeCount();
  const result: EvictionResult = { ran: false, before: count, after: count, max_memories: config.max_memories, steps: [] };
  if (count <= config.max_memories) return result;
  const batch = selectEvictionBatch(queries.evictionCandidates(), config);
  if (batch.length === 0) return result;
  // What is archived must be the file as it is now, hand edits included.
  for (const c of batch) mirror.refreshOne(c.id);
  const files = batch.filter((c) => mirror.isActive(c.id)).map((c) => ({ id: c.id, file: mirror.files.get(c.id)! }));
  // 1. Every full text is safe in archives/ before anything is reduced or removed.
  for (const { id, file } of files) {
    if (file.memory.phase === 0) mirror.writeArchiveFile(id, file.raw);
    else ensureArchived(parts, id, file);
  }
  // 2. Memories about to leave memories/ are listed as archived first.
  const leaving = files.filter(({ file }) => file.memory.phase === 2);
  for (const { file } of leaving) mirror.archiveIndex.memories.set(file.memory.id, archiveEntryFor(file.memory, 'eviction'));
  if (leaving.length > 0) mirror.writeArchiveIndex();
  // 3. Reduce or remove.
  let listedBack = false;
  for (const { id, file } of files) {
    const { memory } = file;
    const from = memory.phase;
    if (from === 2) {
      try {
        mirror.deleteMemoryFile(id);
      } catch (error) {
        if (!(error instanceof ChangedOnDiskError)) throw error;
        // Saved after it was listed as archived: it stays, and the entry is taken back (written below).
        mirror.archiveIndex.memories.delete(id);
        listedBack = true;
        continue;
      }
      unregisterMemory(parts, id);
      stats.set(id, undefined);
    } else {
      const content = from === 0 ? reduceToHint(memory.content) : reduceToAbstract(memory.content, memory.summary);
      const history = [...memory.phase_history, { phase: from + 1, at: nowIso(), event: 'evicted' }];
      const reduced = replaceBody(updateFrontmatter(file.raw, { phase: from + 1, phase_history: history }), renderBody(memory.summary, content));
      try {
        mirror.writeMemoryFile(id, reduced);
      } catch (error) {
        // A person saved it after it was archived: it stays as saved (a memory being edited is in use), the rest go on.
        if (error instanceof ChangedOnDiskError) continue;
        throw error;
      }
    }
    result.steps.push({ id, topic: memory.topic, from, to: from + 1 });
  }
  if (listedBack) mirror.writeArchiveIndex();
  index.write();
  stats.write();
  mirror.stateFile.update((state) => {
    state.last_eviction = nowIso();
  });
  result.ran = true;
  result.after = mirror.files.size;
  return result;
}

/**
 * What the end of sessions calls for: the priorities of memories accessed in them stored again, then one
 * eviction cycle per ended session, each in a turn of the store's lock of its own (`mutate`, MemoryStore's):
 * a backlog of cycles (many sessions ended at once, or max_memories lowered) must not hold a server's hooks for long.
 */
export async function maintainAfterSessions(
  parts: EvictionParts,
  mutate: <T>(work: () => T | Promise<T>) => Promise<T>,
  sessionNumbers: readonly number[],
): Promise<EvictionResult[]> {
  await mutate(() => storeEndedSessionPriorities(parts, sessionNumbers));
  const results: EvictionResult[] = [];
  for (const _ of sessionNumbers) results.push(await mutate(() => evictOnce(parts)));
  return results;
}
