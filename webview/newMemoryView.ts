/**
 * The New memory form: Topic and Content (required), Summary, Tags,
 * Importance and Files (optional). Save sends the fields as typed; the
 * extension validates them with the store and answers an error under the
 * field it is about. Ctrl+Enter (⌘+Enter) saves, Escape cancels.
 */
import { NEW_MEMORY_FIELDS, type NewMemoryField, type NewMemoryFormView, type NewMemoryInput } from '../src/shared/protocol';
import { button, h } from './dom';
import type { PostMessage } from './page';

type Control = HTMLElement & { value: string; invalid?: boolean };

interface FieldSpec {
  label: string;
  hint: string;
  required?: boolean;
  control: () => Control;
}

/** `onChange`: the fields as they stand after every change (kept for a window reload). */
export function newMemoryView(app: HTMLElement, post: PostMessage, onChange: (form: NewMemoryInput) => void) {
  const controls = new Map<NewMemoryField, Control>();
  const errors = new Map<NewMemoryField, HTMLElement>();

  function setError(field: NewMemoryField, message: string): void {
    const control = controls.get(field);
    const error = errors.get(field);
    if (!control || !error) return;
    error.textContent = message;
    error.hidden = message === '';
    control.invalid = message !== '';
    if (message) control.setAttribute('aria-invalid', 'true');
    else control.removeAttribute('aria-invalid');
  }

  function clearErrors(): void {
    for (const field of NEW_MEMORY_FIELDS) setError(field, '');
  }

  function values(): NewMemoryInput {
    return Object.fromEntries(NEW_MEMORY_FIELDS.map((f) => [f, controls.get(f)?.value ?? ''])) as unknown as NewMemoryInput;
  }

  function save(): void {
    clearErrors();
    const memory = values();
    // The extension checks again (the store's rules); these two are plain enough to say at once.
    const missing = (['topic', 'content'] as const).filter((f) => !memory[f].trim());
    for (const f of missing) setError(f, `${f === 'topic' ? 'Topic' : 'Content'} is required.`);
    if (missing.length > 0) {
      controls.get(missing[0]!)?.focus();
      return;
    }
    post({ type: 'createMemory', memory });
  }

  /** Sets the form up; `draft`: the fields as typed before the page was reloaded. */
  function show(form: NewMemoryFormView, draft: NewMemoryInput | null): void {
    controls.clear();
    errors.clear();
    const importance = form.importanceLevels.find((level) => level === draft?.importance) ?? form.defaultImportance;
    const specs: Record<NewMemoryField, FieldSpec> = {
      topic: { label: 'Topic', required: true, hint: 'A short title: what the memory is about.', control: () => h('vscode-textfield', { placeholder: 'Postgres pool exhausted by batch jobs' }) as Control },
      summary: {
        label: 'Summary',
        hint: 'Optional: one or two sentences Claude is given when the memory is shortened. Empty: the first sentence of the content.',
        control: () => h('vscode-textarea', { rows: '2', resize: 'vertical' }) as Control,
      },
      content: { label: 'Content', required: true, hint: 'What Claude Code should remember: the problem, the cause, the fix.', control: () => h('vscode-textarea', { rows: '8', resize: 'vertical' }) as Control },
      tags: { label: 'Tags', hint: 'Comma-separated. Empty: suggested from the text.', control: () => h('vscode-textfield', { placeholder: 'postgres, batch' }) as Control },
      importance: {
        label: 'Importance',
        hint: 'critical is never evicted; low is evicted first.',
        control: () => {
          const select = h('vscode-single-select', {}, ...form.importanceLevels.map((level) => h('vscode-option', { value: level, selected: level === importance }, level))) as Control;
          select.value = importance;
          return select;
        },
      },
      files: {
        label: 'Files',
        hint: 'Optional: the code this memory is about, relative to the folder, one per line, with #L10-24 for lines. The memory is marked possibly outdated when that code changes.',
        control: () => h('vscode-textarea', { rows: '2', resize: 'vertical', placeholder: 'src/db/pool.ts#L10-24' }) as Control,
      },
    };
    const fields = NEW_MEMORY_FIELDS.map((field) => {
      const spec = specs[field];
      const id = `field-${field}`;
      const control = spec.control();
      control.id = id;
      if (spec.required) control.setAttribute('required', '');
      // vscode-label gives the control its accessible name; the hint and the error are read with it.
      control.setAttribute('aria-describedby', `${id}-hint ${id}-error`);
      control.addEventListener('input', () => setError(field, ''));
      if (draft && field !== 'importance') control.value = draft[field];
      // A select reports a choice with change, a text field every key with input.
      for (const event of ['input', 'change']) control.addEventListener(event, () => onChange(values()));
      const error = h('p', { id: `${id}-error`, className: 'field-error', role: 'alert', hidden: true });
      controls.set(field, control);
      errors.set(field, error);
      return h(
        'div',
        { className: 'field' },
        h('vscode-label', { for: id, required: spec.required }, spec.label),
        control,
        h('p', { id: `${id}-hint`, className: 'muted hint' }, spec.hint),
        error,
      );
    });
    app.replaceChildren(
      h('header', {}, h('h1', {}, 'New memory'), h('p', { className: 'muted' }, `In ${form.folder}. Yours: approved at once.`)),
      h('form', { id: 'new-memory', 'aria-label': 'New memory', novalidate: true }, ...fields),
      h(
        'div',
        { className: 'actions' },
        button('Save', save, { icon: 'save', id: 'save' }),
        button('Cancel', () => post({ type: 'cancel' }), { secondary: true, id: 'cancel' }),
        h('span', { className: 'muted hint' }, 'Ctrl+Enter saves · Escape cancels'),
      ),
    );
    controls.get('topic')?.focus();
    if (draft) onChange(values());
  }

  /** The store refused the input: its message under the field (or for the whole form). */
  function error(field: NewMemoryField | null, message: string): boolean {
    if (!field || !controls.has(field)) return false;
    setError(field, message);
    controls.get(field)?.focus();
    return true;
  }

  document.addEventListener('keydown', (event) => {
    if (!app.querySelector('#new-memory')) return;
    if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      if (!document.body.classList.contains('busy')) save();
    } else if (event.key === 'Escape') {
      event.preventDefault();
      post({ type: 'cancel' });
    }
  });

  return { show, error };
}
