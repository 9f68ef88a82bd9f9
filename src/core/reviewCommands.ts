/**
 * Review before use (design.md, "Review"): the memories awaiting a person's
 * review, and the person's decision on one. approve and reject run under the
 * store's lock after a refresh (MemoryStore takes it).
 */
import { archiveForRemoval, removeArchivedFile } from './archiving';
import type { DiskMirror, LoadedFile } from './diskMirror';
import { invalidInput } from './errors';
import { updateFrontmatter } from './memoryFile';
import { dropActiveMemory, nowIso, requireActive, type StoreParts } from './storeParts';
import type { MemoryView, ReviewResult } from './storeTypes';

/** What review works through. */
export type ReviewParts = Pick<StoreParts, 'mirror' | 'index' | 'stats' | 'queries'>;

/** The memories awaiting review (status proposed), oldest first: a person's inbox. */
export function awaitingReview(parts: Pick<StoreParts, 'mirror' | 'queries'>): MemoryView[] {
  const ids: { id: string; created_at: string }[] = [];
  for (const [id, file] of parts.mirror.files) if (file.memory.status === 'proposed') ids.push({ id, created_at: file.memory.created_at });
  return ids.sort((a, b) => (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : a.id < b.id ? -1 : 1)).map(({ id }) => parts.queries.view(id));
}

/** The file of a memory awaiting review; the caller holds the lock and refreshed it. */
export function requireProposed(mirror: Pick<DiskMirror, 'isActive' | 'archiveIndex' | 'files'>, id: string): LoadedFile {
  requireActive(mirror, id);
  const file = mirror.files.get(id)!;
  if (file.memory.status !== 'proposed') throw invalidInput(`${id} is not awaiting review (it is approved already)`);
  return file;
}

/**
 * A person approves a memory awaiting review: its `status` line is removed
 * (the file is then what an approved memory's file has always been) and from
 * now on it is injected, offered, recalled and ranked like any other. Its
 * recency counts from the approval, as if it had been stored now.
 */
export function approveMemory(parts: ReviewParts, id: string): ReviewResult {
  const { mirror, index, queries } = parts;
  mirror.refreshOne(id);
  const file = requireProposed(mirror, id);
  mirror.writeMemoryFile(id, updateFrontmatter(file.raw, { status: undefined }));
  const stats = mirror.stats.get(id);
  const session = mirror.state.session_count;
  parts.stats.set(id, { access_count: stats?.access_count ?? 0, accessed_at: nowIso(), last_session: session, priority: stats?.priority ?? 0 });
  parts.stats.storePriority(id);
  queries.touched(id);
  index.write();
  parts.stats.write();
  return { id, topic: file.memory.topic, decision: 'approved' };
}

/**
 * A person rejects a memory awaiting review: archived as a forgotten memory
 * is (the text first, then the archive index with reason `rejected`, then
 * the file leaves memories/), so it stays searchable in the archives and
 * restorable; restored, it is awaiting review again.
 */
export function rejectMemory(parts: ReviewParts, id: string): ReviewResult {
  const { mirror } = parts;
  mirror.refreshOne(id);
  const file = requireProposed(mirror, id);
  // Its own full text, whatever an archive of it held before.
  archiveForRemoval(parts, id, file, 'rejected', true);
  removeArchivedFile(parts, id);
  dropActiveMemory(parts, id);
  return { id, topic: file.memory.topic, decision: 'rejected' };
}
