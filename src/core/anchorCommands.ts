/**
 * The commands that write a memory's anchors (anchors.ts, storeAnchors.ts):
 * set them from specs, hash them again ("still true"), and follow code that
 * moved. Each memory's anchors are written in a turn of the store's lock of
 * their own (`mutate`, MemoryStore's), after the code was read outside it:
 * anchoring reads project files, never memories.
 */
import { anchorsToFrontmatter, type Anchor } from './anchors';
import { LtmError } from './errors';
import { updateFrontmatter } from './memoryFile';
import { requireActive, type StoreParts } from './storeParts';
import type { MemoryView, UpdateResult } from './storeTypes';

export interface AnchorCommandParts extends Pick<StoreParts, 'mirror' | 'queries' | 'anchoring'> {
  /** Runs `work` under the store's lock after a refresh (MemoryStore's mutate). */
  mutate<T>(work: () => T | Promise<T>): Promise<T>;
}

/** Writes `next(current anchors)` as the `anchors` field of a memory, under the lock; nothing else in the file changes. */
export function writeAnchors(parts: AnchorCommandParts, id: string, next: (current: readonly Anchor[]) => readonly Anchor[]): Promise<MemoryView> {
  const { mirror, queries } = parts;
  return parts.mutate(() => {
    mirror.refreshOne(id);
    requireActive(mirror, id);
    const file = mirror.files.get(id)!;
    const anchors = next(file.memory.anchors);
    const raw = updateFrontmatter(file.raw, { anchors: anchors.length > 0 ? anchorsToFrontmatter(anchors) : undefined });
    if (raw !== file.raw) mirror.writeMemoryFile(id, raw);
    return queries.view(id);
  });
}

/**
 * "Still true": the memory's anchors hashed again from the code as it is
 * now, where their text moved or their file was renamed, else at the same
 * lines; the memory is no longer stale. Refused when an anchored file is gone.
 */
export function reanchor(parts: AnchorCommandParts, id: string): Promise<MemoryView> {
  const { mirror, anchoring } = parts;
  mirror.refreshOne(id);
  requireActive(mirror, id);
  const anchors = anchoring.reanchored(mirror.files.get(id)!.memory.anchors);
  return writeAnchors(parts, id, (current) => {
    // Changed by another writer since they were read: anchor what is there now.
    if (JSON.stringify(current) !== JSON.stringify(mirror.files.get(id)!.memory.anchors)) return anchoring.reanchored(current);
    return anchors;
  });
}

/**
 * Writes where anchored text moved to, or what its file was renamed to, into
 * the memories that follow it (the caller refreshed the mirror). Returns the IDs written.
 */
export async function followAnchors(parts: AnchorCommandParts): Promise<string[]> {
  const { mirror, anchoring } = parts;
  const moved = anchoring.pass(() => [...mirror.files.keys()].filter((id) => anchoring.followed(mirror.files.get(id)!.memory.anchors) !== null));
  const written: string[] = [];
  for (const id of moved) {
    try {
      await writeAnchors(parts, id, (current) => anchoring.followed(current) ?? current);
      written.push(id);
    } catch (error) {
      // Forgotten or changed meanwhile: left for the next pass.
      if (!(error instanceof LtmError)) throw error;
    }
  }
  return written;
}

/**
 * An update that also sets a memory's anchors from `specs`, hashed before anything is written (reading code
 * can fail, and a bad anchor must change nothing): then the text (`updateText`, when `text` gives a field),
 * then the anchors, each in a turn of the lock of its own. `changed` names `anchors` when they changed.
 */
export async function updateWithAnchors(
  parts: AnchorCommandParts,
  id: string,
  specs: readonly string[],
  text: object,
  updateText: () => Promise<UpdateResult>,
): Promise<UpdateResult> {
  const anchors = parts.anchoring.anchorsFor(specs);
  const textGiven = Object.values(text).some((v) => v !== undefined);
  const result = textGiven ? await updateText() : { memory: activeView(parts, id), changed: [], redactions: [], versions: [] };
  const before = JSON.stringify(activeView(parts, id).anchors);
  const memory = await writeAnchors(parts, id, () => anchors);
  return JSON.stringify(memory.anchors) === before ? result : { ...result, memory, changed: [...result.changed, 'anchors'] };
}

/** A memory as its file is now (checked again, a hand edit seen at once); not_found unless active. */
function activeView({ mirror, queries }: AnchorCommandParts, id: string): MemoryView {
  mirror.refreshOne(id);
  requireActive(mirror, id);
  return queries.view(id);
}
