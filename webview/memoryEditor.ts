/**
 * The memory panel's edit mode: topic, tags, importance, Summary and Content.
 * Every change is sent to the extension (which marks the tab "●" and keeps
 * the edit if the tab is closed); Save, Ctrl+S or Cmd+S saves. A conflict
 * (a field changed on disk meanwhile) shows both versions and asks.
 */
import type { EditableField, Importance, MemoryEdit, MemoryFields } from '../src/shared/protocol';
import { button, h, icon, nameField } from './dom';
import type { PostMessage } from './page';

type Field = HTMLElement & { value: string };

const FIELD_NAMES: Record<EditableField, string> = { topic: 'topic', tags: 'tags or importance', summary: 'Summary', content: 'Content' };

function tagsText(tags: readonly string[]): string {
  return tags.join(', ');
}

function parseTags(text: string): string[] {
  return text
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean);
}

function sameFields(a: MemoryFields, b: MemoryFields): boolean {
  return a.topic === b.topic && a.summary === b.summary && a.content === b.content && a.importance === b.importance && a.tags.join('\n') === b.tags.join('\n');
}

export interface EditorOptions {
  id: string;
  edit: MemoryEdit;
  levels: readonly Importance[];
  /** Why a reduced memory's Content differs from its full text, or null. */
  reducedNote: string | null;
  post: PostMessage;
  /** Leave edit mode without saving. */
  onCancel: () => void;
}

export function memoryEditor(options: EditorOptions): { element: HTMLElement; save: () => void; conflict: (fields: EditableField[], theirs: MemoryFields) => void; edit: () => MemoryEdit } {
  const { id, levels, post } = options;
  const base = options.edit.base;
  let draft = options.edit.draft;

  const topic = h('vscode-textfield', { id: 'edit-topic' }) as Field;
  nameField(topic, 'Topic');
  topic.value = draft.topic;
  const tags = h('vscode-textfield', { id: 'edit-tags', placeholder: 'Tags, separated by commas' }) as Field;
  nameField(tags, 'Tags, separated by commas');
  tags.value = tagsText(draft.tags);
  const importance = h('select', { id: 'edit-importance', 'aria-label': 'Importance', className: 'select' }, ...levels.map((l) => h('option', { value: l }, l))) as HTMLSelectElement;
  importance.value = draft.importance;
  const summary = h('vscode-textarea', { id: 'edit-summary', rows: '3', resize: 'vertical' }) as Field;
  nameField(summary, 'Summary');
  summary.value = draft.summary;
  const content = h('vscode-textarea', { id: 'edit-content', rows: '14', resize: 'vertical', className: 'code' }) as Field;
  nameField(content, 'Content (Markdown)');
  content.value = draft.content;

  const status = h('span', { id: 'dirty', className: 'muted', role: 'status' });
  const save = button('Save', () => post({ type: 'save', id, overwrite: false }), { icon: 'save', id: 'save' });
  const cancel = button('Cancel', () => {
    post({ type: 'edit', id, edit: null });
    options.onCancel();
  }, { secondary: true, id: 'cancel-edit' });
  const conflictBox = h('div', { id: 'conflict-box' });

  function refresh(): void {
    const dirty = !sameFields(base, draft);
    status.textContent = dirty ? '● Unsaved changes' : 'No changes';
    if (dirty) save.removeAttribute('data-keep-disabled');
    else save.setAttribute('data-keep-disabled', '');
    if (dirty && !document.body.classList.contains('busy')) save.removeAttribute('disabled');
    else save.setAttribute('disabled', '');
  }

  function changed(): void {
    draft = { topic: topic.value, tags: parseTags(tags.value), importance: importance.value as Importance, summary: summary.value, content: content.value };
    refresh();
    post({ type: 'edit', id, edit: sameFields(base, draft) ? null : { base, draft } });
  }
  for (const field of [topic, tags, summary, content]) field.addEventListener('input', changed);
  importance.addEventListener('change', changed);

  const label = (forId: string, text: string) => h('label', { for: forId, className: 'field-label' }, text);
  const element = h(
    'section',
    { id: 'editor', 'aria-label': 'Edit memory' },
    h('h2', {}, 'Edit'),
    conflictBox,
    label('edit-topic', 'Topic'),
    topic,
    h('div', { className: 'row' }, h('div', { className: 'grow' }, label('edit-tags', 'Tags'), tags), h('div', {}, label('edit-importance', 'Importance'), importance)),
    label('edit-summary', 'Summary'),
    summary,
    label('edit-content', 'Content (Markdown)'),
    options.reducedNote ? h('p', { className: 'muted hint' }, options.reducedNote) : null,
    content,
    h('div', { className: 'actions' }, save, cancel, status),
    h('p', { className: 'muted hint' }, 'Ctrl+S (Cmd+S) saves. Only the fields you change are written; the previous text is archived first.'),
  );
  refresh();

  function conflict(fields: EditableField[], theirs: MemoryFields): void {
    const theirsText = (f: EditableField) => (f === 'tags' ? `${tagsText(theirs.tags) || '(none)'}; importance ${theirs.importance}` : theirs[f]);
    conflictBox.replaceChildren(
      h(
        'div',
        { className: 'conflict', id: 'conflict', role: 'alert' },
        h('p', {}, icon('warning'), ` Changed on disk since you started editing: ${fields.map((f) => FIELD_NAMES[f]).join(', ')}. Saving would overwrite that change.`),
        ...fields.map((f) => h('div', {}, h('h3', {}, `On disk now: ${FIELD_NAMES[f]}`), h('pre', { className: 'content' }, theirsText(f)))),
        h(
          'div',
          { className: 'actions' },
          button('Overwrite with mine', () => post({ type: 'save', id, overwrite: true }), { icon: 'save', id: 'overwrite' }),
          button('Discard mine', () => {
            post({ type: 'edit', id, edit: null });
            options.onCancel();
          }, { secondary: true, id: 'discard-mine' }),
        ),
      ),
    );
  }

  return { element, save: () => !sameFields(base, draft) && post({ type: 'save', id, overwrite: false }), conflict, edit: () => ({ base, draft }) };
}
