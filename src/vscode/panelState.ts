/**
 * Checking the state a panel's page kept with VS Code (PersistedPanelState,
 * src/shared/protocol.ts) when VS Code hands it back after the window
 * reloads. It is the page's word, kept on disk, so it is checked as a
 * message is (parseFromWebview) before anything is looked up with it.
 * Pure (no `vscode`): the serializer (panelRestore.ts) uses it, unit tests
 * feed it hostile shapes.
 */
import { MAX_CONTENT_CHARS } from '../core/storeInput';
import { isMemoryId } from '../core/model';
import {
  isMemoryEdit,
  isNewMemoryInput,
  NEW_MEMORY_FIELDS,
  type MemoryEdit,
  type MemoryFields,
  type NewMemoryInput,
  type PanelIdentity,
  type PersistedPanelState,
  type WebviewView,
} from '../shared/protocol';

/** The longest folder URI kept: far beyond a real path, far short of a hostile blob. */
const MAX_FOLDER_URI_CHARS = 8_192;

/**
 * A plain object's own properties, by name: an inherited one (a key under
 * `__proto__`, an object made with Object.create) is not the page's data.
 */
function ownRecord(value: unknown): Record<string, unknown> | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const own: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  for (const key of Object.keys(value)) own[key] = (value as Record<string, unknown>)[key];
  return own;
}

/** No string of a draft is longer than the longest the store takes (its content): more is not a person's draft. */
function bounded(strings: readonly string[]): boolean {
  return strings.every((s) => s.length <= MAX_CONTENT_CHARS);
}

function identityOf(raw: unknown): PanelIdentity | null {
  const value = ownRecord(raw);
  if (!value) return null;
  const folder = typeof value.folder === 'string' && value.folder.length > 0 && value.folder.length <= MAX_FOLDER_URI_CHARS ? value.folder : null;
  switch (value.view) {
    case 'memory':
      return folder && typeof value.id === 'string' && isMemoryId(value.id) && typeof value.pinned === 'boolean' ? { view: 'memory', folder, id: value.id, pinned: value.pinned } : null;
    case 'newMemory':
    case 'integrity':
      return folder ? { view: value.view, folder } : null;
    case 'archives':
      return { view: 'archives' };
    default:
      return null;
  }
}

/** A copy holding the fields only: nothing else the page's object carried comes along. */
function copyFields(f: MemoryFields): MemoryFields {
  return { topic: f.topic, tags: [...f.tags], importance: f.importance, summary: f.summary, content: f.content };
}

function editOf(value: unknown): MemoryEdit | null {
  if (!isMemoryEdit(value)) return null;
  const strings = [value.base, value.draft].flatMap((f) => [f.topic, f.summary, f.content, ...f.tags]);
  return bounded(strings) ? { base: copyFields(value.base), draft: copyFields(value.draft) } : null;
}

function formOf(value: unknown): NewMemoryInput | null {
  if (!isNewMemoryInput(value) || !bounded(NEW_MEMORY_FIELDS.map((f) => value[f]))) return null;
  return { topic: value.topic, summary: value.summary, content: value.content, tags: value.tags, importance: value.importance, files: value.files };
}

/**
 * The state a restored panel of `view` may use, or null: not an object, no
 * valid identity, or the identity of another view. A draft of the wrong shape
 * or size is dropped, not the panel: it comes back without it.
 */
export function parsePanelState(raw: unknown, view: WebviewView): PersistedPanelState | null {
  try {
    const value = ownRecord(raw);
    if (!value) return null;
    const panel = identityOf(value.panel);
    if (!panel || panel.view !== view) return null;
    return {
      panel,
      edit: panel.view === 'memory' ? editOf(value.edit) : null,
      form: panel.view === 'newMemory' ? formOf(value.form) : null,
    };
  } catch {
    // Not data VS Code could have kept (a getter that throws, a revoked proxy): no state.
    return null;
  }
}

/** The draft as plain text, for a panel that can no longer show it as a form (its folder is gone): the person can still copy it. */
export function draftText(state: PersistedPanelState): string | null {
  if (state.edit) {
    const d = state.edit.draft;
    return `Topic: ${d.topic}\nTags: ${d.tags.join(', ')}\nImportance: ${d.importance}\n\nSummary:\n${d.summary}\n\nContent:\n${d.content}`;
  }
  if (state.form) {
    const f = state.form;
    return `Topic: ${f.topic}\nTags: ${f.tags}\nImportance: ${f.importance}\nFiles: ${f.files}\n\nSummary:\n${f.summary}\n\nContent:\n${f.content}`;
  }
  return null;
}
