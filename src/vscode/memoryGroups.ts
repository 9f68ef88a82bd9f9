/**
 * How the Memories view groups a folder's memories, and which memories a
 * filter keeps. Pure functions over MemoryView (no `vscode`), so that the
 * rules are tested without VS Code (test/unit/memoryGroups.test.ts).
 */
import { Phase, PHASE_NAMES } from '../core/model';
import { isImportanceTag } from '../core/priority';
import type { MemoryView } from '../core/storeTypes';

export type GroupBy = 'phase' | 'tag';

/** A group of the view: a phase, a tag, "(untagged)", or the archived memories when grouped by tag. */
export interface MemoryGroup {
  label: string;
  /** Set for phase groups, and for the Archived group when grouped by tag. */
  phase?: Phase;
  /** The tag of a tag group; null for "(untagged)". */
  tag?: string | null;
  memories: MemoryView[];
  collapsed: boolean;
}

/** More tag groups than this and they start collapsed: a long list of open groups is a wall of rows. */
export const EXPANDED_TAG_GROUPS_MAX = 5;

export const UNTAGGED_LABEL = '(untagged)';

/**
 * `memories`: active ones in the view's order, then archived ones.
 * By phase: one group per phase that has memories; Archived collapsed.
 * By tag: one group per tag of active memories, largest first; `importance:*`
 * tags are not topics (the rows show importance) and make no group; active
 * memories with no other tag are "(untagged)"; archived memories stay in one
 * Archived group, last and collapsed.
 */
export function groupMemories(memories: readonly MemoryView[], groupBy: GroupBy): MemoryGroup[] {
  if (groupBy === 'phase') {
    return Object.values(Phase)
      .map((phase) => ({ label: PHASE_NAMES[phase], phase, memories: memories.filter((m) => m.phase === phase), collapsed: phase === Phase.Archived }))
      .filter((g) => g.memories.length > 0);
  }
  const byTag = new Map<string, MemoryView[]>();
  const untagged: MemoryView[] = [];
  const archived: MemoryView[] = [];
  for (const m of memories) {
    if (m.phase === Phase.Archived) {
      archived.push(m);
      continue;
    }
    const tags = [...new Set(m.tags.filter((t) => !isImportanceTag(t)))];
    if (tags.length === 0) untagged.push(m);
    for (const tag of tags) {
      const group = byTag.get(tag);
      if (group) group.push(m);
      else byTag.set(tag, [m]);
    }
  }
  const tagGroups: { label: string; tag: string | null; memories: MemoryView[] }[] = [...byTag]
    .sort((a, b) => b[1].length - a[1].length || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    .map(([tag, group]) => ({ label: tag, tag, memories: group }));
  if (untagged.length > 0) tagGroups.push({ label: UNTAGGED_LABEL, tag: null, memories: untagged });
  const collapsed = tagGroups.length > EXPANDED_TAG_GROUPS_MAX;
  const groups: MemoryGroup[] = tagGroups.map((g) => ({ ...g, collapsed }));
  if (archived.length > 0) groups.push({ label: PHASE_NAMES[Phase.Archived], phase: Phase.Archived, memories: archived, collapsed: true });
  return groups;
}

/** What the view shows: memories containing `text` (topic, summary, tags or ID; any case) and tagged `tag`. */
export interface MemoryFilter {
  text?: string;
  tag?: string;
}

/** The filter without its empty parts; undefined when nothing is left. */
export function normalizeFilter(filter: MemoryFilter | undefined): MemoryFilter | undefined {
  const text = filter?.text?.trim() || undefined;
  const tag = filter?.tag?.trim() || undefined;
  if (!text && !tag) return undefined;
  return { ...(text ? { text } : {}), ...(tag ? { tag } : {}) };
}

export function matchesFilter(m: MemoryView, filter: MemoryFilter | undefined): boolean {
  if (!filter) return true;
  if (filter.tag !== undefined && !m.tags.includes(filter.tag)) return false;
  if (filter.text !== undefined) {
    const needle = filter.text.toLowerCase();
    const haystack = [m.topic, m.summary, m.id, ...m.tags].map((s) => s.toLowerCase());
    if (!haystack.some((s) => s.includes(needle))) return false;
  }
  return true;
}

/** The filter in words, for the view's description and messages: `"pool" · tag postgres`. */
export function filterText(filter: MemoryFilter): string {
  return [...(filter.text !== undefined ? [`"${filter.text}"`] : []), ...(filter.tag !== undefined ? [`tag ${filter.tag}`] : [])].join(' · ');
}
