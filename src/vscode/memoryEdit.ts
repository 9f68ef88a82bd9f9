/**
 * What saving the memory panel's edit writes, and whether it would overwrite
 * a change made on disk meanwhile (by Claude Code, the CLI, another window).
 * Pure: the panel (webviewPanels.ts) reads the memory and calls the store.
 *
 * An edit holds the fields as it started (`base`) and as they are now
 * (`draft`). Only the fields the person changed are written, in one
 * `store.update` (which archives the previous text first). A conflict is a
 * field the edit changes whose text on disk is no longer its base: a change
 * on disk to a field the edit leaves alone is kept, not a conflict.
 */
import { DEFAULT_IMPORTANCE, importanceOf, withImportance } from '../core/priority';
import type { UpdateInput } from '../core/memoryUpdate';
import type { EditableField, MemoryEdit, MemoryFields } from '../shared/protocol';

const EDITABLE_FIELDS: readonly EditableField[] = ['topic', 'tags', 'summary', 'content'];

/** A memory's fields as the panel edits them: importance apart from the other tags. */
export function fieldsOf(memory: { topic: string; tags: readonly string[]; summary: string; content: string }): MemoryFields {
  return {
    topic: memory.topic,
    tags: withImportance(memory.tags, DEFAULT_IMPORTANCE),
    importance: importanceOf(memory.tags),
    summary: memory.summary,
    content: memory.content,
  };
}

/** The memory's tags: the other tags, then the importance's tag (none for normal). */
export function tagsOf(fields: MemoryFields): string[] {
  return withImportance(fields.tags, fields.importance);
}

function valueOf(fields: MemoryFields, field: EditableField): string {
  return field === 'tags' ? tagsOf(fields).join('\n') : fields[field];
}

/** The fields whose value differs between two versions. */
export function differingFields(a: MemoryFields, b: MemoryFields): EditableField[] {
  return EDITABLE_FIELDS.filter((field) => valueOf(a, field) !== valueOf(b, field));
}

/** The update a save makes: the changed fields only (empty when nothing changed). */
export function updateFor(edit: MemoryEdit): UpdateInput {
  const update: UpdateInput = {};
  for (const field of differingFields(edit.base, edit.draft)) {
    if (field === 'tags') update.tags = tagsOf(edit.draft);
    else update[field] = edit.draft[field];
  }
  return update;
}

/**
 * The fields the edit changes that changed on disk too since `base`: saving
 * them would overwrite someone else's change without their being seen.
 */
export function conflictingFields(edit: MemoryEdit, onDisk: MemoryFields, base: MemoryFields = edit.base): EditableField[] {
  const changedOnDisk = new Set(differingFields(base, onDisk));
  return differingFields(edit.base, edit.draft).filter((field) => changedOnDisk.has(field));
}
