/**
 * Changing a stored memory: what `update` and `merge` write, as pure
 * functions of the input and the memory's current text. The store archives
 * the previous text first and writes the result under its lock (store.ts).
 *
 * - update: only the fields given change; they are checked, capped and
 *   redacted exactly as `store` does (prepareInput), so an update cannot
 *   write what a store would have refused.
 * - merge: the target keeps its topic and Summary and gains the other
 *   memory's text below its own, under a heading naming it, and its tags.
 *
 * A memory that eviction reduced (phase 1 or 2) and is given new content is
 * full again (phase 0): the content given is the memory's whole text now, and
 * nothing about it was reduced. Its own archive (the text from before the
 * reduction) becomes a previous version, so that `restore` cannot bring the
 * old text back over the new. A reduced memory whose content is not given
 * (a new topic, tags or Summary) stays reduced, its archive untouched.
 */
import { invalidInput } from './errors';
import { renderBody, replaceBody, replaceSummary, updateFrontmatter } from './memoryFile';
import type { Memory, PhaseChange } from './model';
import { IMPORTANCE_TAGS } from './priority';
import type { Redaction } from './secrets';
import { prepareInput } from './storeInput';
import type { StoreInput } from './storeTypes';

/** The fields update may change; the ones not given keep their value. */
export type UpdateInput = Partial<Pick<StoreInput, 'topic' | 'summary' | 'content' | 'tags'>>;

export interface PreparedUpdate {
  topic?: string;
  summary?: string;
  content?: string;
  tags?: string[];
  redactions: Redaction[];
}

const UPDATABLE = ['topic', 'summary', 'content', 'tags'] as const;
/** Stands for a required field the update does not change, so that prepareInput checks only the given ones. */
const UNCHANGED = 'unchanged';

/** Checks and cleans an update; throws naming the first problem. Pure: nothing is read or written. */
export function prepareUpdate(raw: UpdateInput): PreparedUpdate {
  if (raw === null || typeof raw !== 'object') throw invalidInput('the update must be an object of fields');
  const given = UPDATABLE.filter((field) => raw[field] !== undefined);
  if (given.length === 0) throw invalidInput(`give at least one field to change: ${UPDATABLE.join(', ')}`);
  if (raw.summary !== undefined && (typeof raw.summary !== 'string' || !raw.summary.trim())) {
    throw invalidInput('summary must not be empty (leave it out to keep the current one)');
  }
  const prepared = prepareInput({
    topic: raw.topic ?? UNCHANGED,
    content: raw.content ?? UNCHANGED,
    summary: raw.summary,
    tags: raw.tags,
  });
  return {
    ...(raw.topic !== undefined ? { topic: prepared.topic } : {}),
    ...(raw.summary !== undefined ? { summary: prepared.summary } : {}),
    ...(raw.content !== undefined ? { content: prepared.content } : {}),
    ...(raw.tags !== undefined ? { tags: prepared.tags } : {}),
    redactions: prepared.redactions,
  };
}

export interface UpdatedFile {
  /** The new file text; equal to the old one when the update changes nothing. */
  text: string;
  /** The fields whose value changed. */
  changed: (typeof UPDATABLE)[number][];
  /** The phase the memory has after the update. */
  phase: number;
}

/**
 * The text of a memory file after an update. `memory` is the file's memory,
 * `now` the time recorded when a reduced memory becomes full again.
 */
export function applyUpdate(raw: string, memory: Memory, update: PreparedUpdate, now: string, event: PhaseChange['event'] = 'updated'): UpdatedFile {
  const changed: UpdatedFile['changed'] = [];
  if (update.topic !== undefined && update.topic !== memory.topic) changed.push('topic');
  if (update.tags !== undefined && update.tags.join('\n') !== memory.tags.join('\n')) changed.push('tags');
  if (update.summary !== undefined && update.summary !== memory.summary) changed.push('summary');
  if (update.content !== undefined && (update.content !== memory.content || memory.phase > 0)) changed.push('content');
  if (changed.length === 0) return { text: raw, changed, phase: memory.phase };

  const frontmatter: Record<string, unknown> = {};
  if (changed.includes('topic')) frontmatter.topic = update.topic;
  if (changed.includes('tags')) frontmatter.tags = update.tags;
  let phase: number = memory.phase;
  if (changed.includes('content') && memory.phase > 0) {
    phase = 0;
    frontmatter.phase = 0;
    frontmatter.phase_history = [...memory.phase_history, { phase: 0, at: now, event }];
  }
  let text = Object.keys(frontmatter).length > 0 ? updateFrontmatter(raw, frontmatter) : raw;
  if (changed.includes('content')) {
    text = replaceBody(text, renderBody(update.summary ?? memory.summary, update.content!));
  } else if (changed.includes('summary')) {
    // Only the Summary section: the Content keeps every byte.
    text = replaceSummary(text, update.summary!);
  }
  return { text, changed, phase };
}

/** An archived copy of a memory's text under another ID (a previous version). */
export function versionText(raw: string, versionId: string): string {
  return updateFrontmatter(raw, { id: versionId });
}

export interface MergeSide {
  id: string;
  topic: string;
  summary: string;
  content: string;
  tags: readonly string[];
}

/**
 * What the target of a merge holds afterwards: its own content, then the
 * other memory's, under a heading naming it (its topic on one line and its ID),
 * with the other's Summary when the content does not start with it.
 */
export function mergedContent(target: MergeSide, source: MergeSide): string {
  const topic = source.topic.replace(/\s+/g, ' ').trim();
  const parts = [target.content.replace(/\s+$/, ''), '', `### Merged from "${topic}" (${source.id})`, ''];
  const summary = source.summary.trim();
  if (summary && !source.content.trimStart().startsWith(summary)) parts.push(summary, '');
  parts.push(source.content.replace(/\s+$/, ''));
  return parts.join('\n');
}

/**
 * The target's tags, then the other's not yet there. The other's importance
 * tag is taken only when the target has none: the target's standing is kept.
 */
export function mergedTags(target: readonly string[], source: readonly string[]): string[] {
  const importance = new Set<string>(IMPORTANCE_TAGS);
  const targetHasImportance = target.some((t) => importance.has(t));
  const tags = [...target];
  for (const tag of source) {
    if (tags.includes(tag)) continue;
    if (targetHasImportance && importance.has(tag)) continue;
    tags.push(tag);
  }
  return tags;
}
