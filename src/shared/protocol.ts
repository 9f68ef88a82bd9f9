/**
 * The messages between the extension and its webview, typed in both
 * directions. Imported by src/vscode (extension side) and webview/ (browser
 * side); it depends on neither. Of the engine it takes types, and
 * isImportance for checking a message from the page; the browser imports
 * types only from here, so its bundle takes no engine code.
 */
import { isImportance, type Importance, type PriorityWeights } from '../core/priority';

export type { Importance, PriorityWeights };

export type WebviewView = 'memory' | 'integrity' | 'archives' | 'newMemory';

export interface PriorityView {
  total: number;
  difficulty: number;
  recency: number;
  frequency: number;
  importance: Importance;
  importanceBoost: number;
}

export interface UsageView {
  injectedSessions: number;
  offerCount: number;
  recallCount: number;
  readCount: number;
  /** 0 for never. */
  lastUsedSession: number;
  /** '' for never. */
  lastUsedAt: string;
  /** The counters in plain words, as the tooltip and `ltm get` say them. */
  text: string;
  demotionCandidate: boolean;
  /** Why it is a candidate for demotion, in words ('' when it is not). */
  demotionText: string;
}

export interface PhaseEventView {
  phase: number;
  at: string;
  event: string;
}

export interface MemoryDetails {
  id: string;
  topic: string;
  tags: string[];
  /** 0 full, 1 hint, 2 abstract, 3 archived */
  phase: number;
  summary: string;
  content: string;
  difficulty: number;
  accessCount: number;
  createdAt: string;
  accessedAt: string;
  createdSession: number | null;
  /** Absent for archived memories, which have no live priority. */
  priority: PriorityView | null;
  /** How the memory was used (src/core/usage.ts); absent for archived memories. */
  usage: UsageView | null;
  history: PhaseEventView[];
  /** The full original text kept in archives/, when the memory was reduced or archived. */
  archivedContent: string | null;
  /** Why and when it left memories/, for archived memories. */
  archivedReason: string | null;
  archivedAt: string | null;
  /** The folder the memory belongs to (multi-root). */
  folder: string;
  /** The code the memory is anchored to and how it stands now; null without anchors (and for archived memories). */
  anchors: AnchorsView | null;
  /** What the panel's edit mode starts from; null for archived memories, which are not edited. */
  fields: MemoryFields | null;
}

/** The fields the memory panel edits. Tags leave out the `importance:` tags: importance is its own field. */
export interface MemoryFields {
  topic: string;
  tags: string[];
  importance: Importance;
  summary: string;
  content: string;
}

/** The fields an edit can change, as the store's update names them (importance is a tag). */
export type EditableField = 'topic' | 'tags' | 'summary' | 'content';

/**
 * An edit in the memory panel: the fields as the edit started from them (so
 * that a save notices a change made on disk meanwhile) and as they are now.
 */
export interface MemoryEdit {
  base: MemoryFields;
  draft: MemoryFields;
}

/** How the panel showing a memory stands. */
export interface MemoryPanelState {
  /** A pinned panel stays; an unpinned one is the preview, which the next memory opened replaces. */
  pinned: boolean;
  /** Unsaved changes the panel holds (restored after the panel was closed with them), or null. */
  edit: MemoryEdit | null;
}

/** What became of an anchor's text: as written, moved (followed), changed, or its file gone. */
export type AnchorStateView = 'fresh' | 'moved' | 'changed' | 'missing';

export interface AnchorView {
  /** As written in the memory: `src/db/pool.ts#L10-24`, or the path of a whole-file anchor. */
  spec: string;
  /** Where the anchored text is now: the path (the new one when git saw it renamed) and lines (null: the whole file). */
  path: string;
  lines: [number, number] | null;
  state: AnchorStateView;
  /** One sentence on what happened to it; null when it holds where it was. */
  reason: string | null;
  /**
   * The text at the anchored lines now, when it changed (the memory keeps only
   * a hash, so the text it was written against cannot be shown); null otherwise.
   */
  currentText: string | null;
  /** The range is longer than what currentText shows. */
  currentTextCut: boolean;
}

export interface AnchorsView {
  stale: boolean;
  /** The engine's reasons ("src/a.ts#L10-12: the lines changed"), as hooks and the CLI give them. */
  reasons: string[];
  items: AnchorView[];
}

export interface ProblemView {
  kind: string;
  /** `warning`: a person's text LTM works around; it leaves the store healthy and fix leaves it alone. */
  level: 'error' | 'warning';
  title: string;
  detail: string;
}

export interface IntegrityView {
  healthy: boolean;
  problems: ProblemView[];
  counts: Record<string, number>;
  folder: string;
}

export interface FixView {
  actions: string[];
  healthy: boolean;
}

export interface ArchivedItemView {
  id: string;
  topic: string;
  summary: string;
  tags: string[];
  archivedAt: string;
  folder: string;
}

/**
 * The engine's constants the memory panel explains a memory with. They are
 * sent with every memory rather than copied into the page, so the panel
 * always shows the numbers the engine computes with.
 */
export interface MemoryPanelConstants {
  /** Phase names by phase number (0 Full … 3 Archived). */
  phaseNames: Readonly<Record<number, string>>;
  priorityWeights: PriorityWeights;
  /** Tags with this prefix set the importance, which the panel shows as its own badge. */
  importanceTagPrefix: string;
  /** The importance of a memory without such a tag: no badge. */
  defaultImportance: Importance;
  /** The importances, strongest first: the edit mode's choices. */
  importanceLevels: readonly Importance[];
}

/** The fields of the New memory form, as typed: the extension splits tags and files and validates it all. */
export interface NewMemoryInput {
  topic: string;
  summary: string;
  content: string;
  /** Comma-separated. */
  tags: string;
  importance: string;
  /** Anchors: paths relative to the folder, each maybe with #L10-24; one per line or comma-separated. */
  files: string;
}

export type NewMemoryField = keyof NewMemoryInput;

export const NEW_MEMORY_FIELDS: readonly NewMemoryField[] = ['topic', 'summary', 'content', 'tags', 'importance', 'files'];

/** What the New memory form is set up with: the engine's importance levels (one source) and the folder. */
export interface NewMemoryFormView {
  folder: string;
  importanceLevels: readonly Importance[];
  defaultImportance: Importance;
}

/**
 * Which panel a page is: what it keeps with VS Code (with its draft, see
 * panelState.ts) so that the panel comes back after the window reloads.
 * Folders are named by their URI (two folders may share a name); nothing
 * secret belongs here.
 */
export type PanelIdentity =
  | { view: 'memory'; folder: string; id: string; pinned: boolean }
  | { view: 'newMemory'; folder: string }
  | { view: 'integrity'; folder: string }
  | { view: 'archives' };

/**
 * What a panel's page keeps with VS Code (`acquireVsCodeApi().setState`) so
 * that after the window reloads the panel comes back showing what it showed,
 * with the person's unsaved draft. It holds no token and nothing secret:
 * which panel, and the draft. The extension checks it (src/vscode/panelState.ts)
 * as it checks a message.
 */
export interface PersistedPanelState {
  panel: PanelIdentity;
  /** The memory panel's unsaved edit; null for none and for the other views. */
  edit: MemoryEdit | null;
  /** The New memory form's fields as typed; null for none and for the other views. */
  form: NewMemoryInput | null;
}

/** Extension → webview. */
export type ToWebview =
  /** Which panel this page is (on ready, and when the preview shows another memory or is kept). */
  | { type: 'identity'; panel: PanelIdentity }
  | { type: 'memory'; memory: MemoryDetails; constants: MemoryPanelConstants; panel: MemoryPanelState }
  /** The edit was saved: leave edit mode (the saved memory follows). */
  | { type: 'saved'; id: string }
  /** The fields the edit changes were changed on disk too since it started: the page asks whether to overwrite. */
  | { type: 'conflict'; id: string; fields: EditableField[]; theirs: MemoryFields }
  /** The memory no longer exists; `draft` is the unsaved edit the panel held, shown so that it can still be copied. */
  | { type: 'memoryGone'; id: string; message: string; draft: MemoryFields | null }
  | { type: 'integrity'; report: IntegrityView; fix: FixView | null }
  | { type: 'archives'; query: string; items: ArchivedItemView[] }
  | { type: 'busy'; busy: boolean }
  | { type: 'notice'; level: 'info' | 'error'; message: string }
  /** `draft`: the fields as typed before the window reloaded, or null for an empty form. */
  | { type: 'newMemoryForm'; form: NewMemoryFormView; draft: NewMemoryInput | null }
  /** The store refused the form's input (nothing was written): the message, under the field it is about (null: the form's). */
  | { type: 'formError'; field: NewMemoryField | null; message: string };

/** Webview → extension. */
export type FromWebview =
  | { type: 'ready' }
  /** The panel's edit as it stands (null: no unsaved changes). Sent on every change. */
  | { type: 'edit'; id: string; edit: MemoryEdit | null }
  /** Save the edit last sent; `overwrite` after the person chose to overwrite a change made on disk. */
  | { type: 'save'; id: string; overwrite: boolean }
  /** "Keep open": the preview panel becomes a panel of its own. */
  | { type: 'pin' }
  /** A link in rendered memory text: opened outside VS Code by the extension, never in the page. */
  | { type: 'openLink'; url: string }
  | { type: 'restore'; id: string }
  | { type: 'openFile'; id: string }
  | { type: 'mergeInto'; id: string }
  | { type: 'openMemory'; id: string; folder: string }
  | { type: 'runCheck' }
  | { type: 'runFix'; cleanArchives: boolean }
  | { type: 'searchArchives'; query: string }
  /** Open the code of a memory's anchor (by its position in the memory's anchors: the page never names a path). */
  | { type: 'openAnchor'; id: string; index: number }
  /** "Still true": hash the memory's anchors again from the code as it is now. */
  | { type: 'reanchor'; id: string }
  /** "Update memory": edit the memory's file. */
  | { type: 'editMemory'; id: string }
  /** The New memory form's Save. */
  | { type: 'createMemory'; memory: NewMemoryInput }
  /** The New memory form's Cancel. */
  | { type: 'cancel' };

/** What the page is told when it loads (a data attribute of its body). */
export interface WebviewBoot {
  view: WebviewView;
}

const FROM_WEBVIEW_TYPES = new Set<FromWebview['type']>([
  'ready',
  'edit',
  'save',
  'pin',
  'openLink',
  'restore',
  'openFile',
  'mergeInto',
  'openMemory',
  'runCheck',
  'runFix',
  'searchArchives',
  'openAnchor',
  'reanchor',
  'editMemory',
  'createMemory',
  'cancel',
]);

/** The extension trusts nothing from the page: a message is checked before it is used. */
export function parseFromWebview(value: unknown): FromWebview | null {
  if (!value || typeof value !== 'object') return null;
  const m = value as Record<string, unknown>;
  if (typeof m.type !== 'string' || !FROM_WEBVIEW_TYPES.has(m.type as FromWebview['type'])) return null;
  const str = (k: string) => typeof m[k] === 'string';
  switch (m.type) {
    case 'edit':
      return str('id') && (m.edit === null || isMemoryEdit(m.edit)) ? (m as FromWebview) : null;
    case 'save':
      return str('id') && typeof m.overwrite === 'boolean' ? (m as FromWebview) : null;
    case 'openLink':
      return str('url') ? (m as FromWebview) : null;
    case 'restore':
    case 'openFile':
    case 'mergeInto':
    case 'reanchor':
    case 'editMemory':
      return str('id') ? (m as FromWebview) : null;
    case 'openAnchor':
      return str('id') && Number.isInteger(m.index) && (m.index as number) >= 0 ? (m as FromWebview) : null;
    case 'openMemory':
      return str('id') && str('folder') ? (m as FromWebview) : null;
    case 'runFix':
      return typeof m.cleanArchives === 'boolean' ? (m as FromWebview) : null;
    case 'searchArchives':
      return str('query') ? (m as FromWebview) : null;
    case 'createMemory':
      return isNewMemoryInput(m.memory) ? (m as FromWebview) : null;
    default:
      return m as FromWebview;
  }
}

/** The most tags an edit may carry; the store caps them further. */
const MAX_EDIT_TAGS = 200;

function isMemoryFields(value: unknown): value is MemoryFields {
  if (!value || typeof value !== 'object') return false;
  const f = value as Record<string, unknown>;
  return (
    typeof f.topic === 'string' &&
    typeof f.summary === 'string' &&
    typeof f.content === 'string' &&
    typeof f.importance === 'string' &&
    isImportance(f.importance) &&
    Array.isArray(f.tags) &&
    f.tags.length <= MAX_EDIT_TAGS &&
    f.tags.every((t) => typeof t === 'string')
  );
}

export function isMemoryEdit(value: unknown): value is MemoryEdit {
  if (!value || typeof value !== 'object') return false;
  const e = value as Record<string, unknown>;
  return isMemoryFields(e.base) && isMemoryFields(e.draft);
}

export function isNewMemoryInput(value: unknown): value is NewMemoryInput {
  if (!value || typeof value !== 'object') return false;
  const input = value as Record<string, unknown>;
  return NEW_MEMORY_FIELDS.every((field) => typeof input[field] === 'string');
}
