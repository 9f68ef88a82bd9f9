/**
 * The New memory form's fields, as typed, turned into what the store takes,
 * and the store's validation messages put back under the field they are
 * about. No `vscode`: the rules are tested without VS Code.
 */
import { invalidInput } from '../core/errors';
import { IMPORTANCE_LEVELS, isImportance, withImportance } from '../core/priority';
import type { StoreInput } from '../core/storeTypes';
import type { NewMemoryField, NewMemoryInput } from '../shared/protocol';

/** Tags: comma-separated. Files: one per line or comma-separated (a path holds neither). */
const splitList = (text: string, separator: RegExp): string[] =>
  text
    .split(separator)
    .map((part) => part.trim())
    .filter(Boolean);

/** The store's input for a person's memory (approved at once); throws invalid_input for an unknown importance. */
export function storeInputOf(form: NewMemoryInput): StoreInput {
  if (!isImportance(form.importance)) throw invalidInput(`importance must be one of ${IMPORTANCE_LEVELS.join(', ')}, not "${form.importance.slice(0, 40)}"`);
  const typed = splitList(form.tags, /,/);
  const files = splitList(form.files, /[\n,]/);
  return {
    topic: form.topic,
    content: form.content,
    summary: form.summary.trim() ? form.summary : undefined,
    tags: withImportance(typed, form.importance),
    // No tags typed: suggested from the text, as "Remember selection" does.
    autoTag: typed.length === 0,
    anchors: files.length > 0 ? files : undefined,
    author: 'person',
  };
}

/**
 * The field a store validation message is about. The store names the field
 * first ("topic is required…", "cannot anchor "src/x.ts"…"); a message that
 * names none belongs to the whole form (null).
 */
export function fieldOfMessage(message: string): NewMemoryField | null {
  if (/^topic\b/.test(message)) return 'topic';
  if (/^content\b/.test(message)) return 'content';
  if (/^(the )?summary\b/.test(message)) return 'summary';
  if (/^(a )?tags?\b/.test(message)) return 'tags';
  if (/^importance\b/.test(message)) return 'importance';
  if (/^(cannot anchor\b|anchors\b|at most \d+ anchors)/.test(message)) return 'files';
  return null;
}
