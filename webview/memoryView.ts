/**
 * The memory panel: one memory's topic, tags, Summary and Content (rendered
 * Markdown, or the edit mode of memoryEditor.ts), priority, details and phase
 * history. Memory text goes on the page as text nodes, an element's value, or
 * through the Markdown renderer with raw HTML off (markdownView.ts).
 */
import type { EditableField, MemoryDetails, MemoryEdit, MemoryFields, MemoryPanelConstants, MemoryPanelState } from '../src/shared/protocol';
import { anchorsSection } from './anchorsSection';
import { button, formatDate, h, icon } from './dom';
import { markdownBlock } from './markdownView';
import { memoryEditor } from './memoryEditor';
import { notice, type PostMessage } from './page';

function priorityRow(label: string, weight: string, value: number, contribution: number): HTMLElement {
  const bar = h('div', { className: 'bar', role: 'meter', 'aria-valuemin': '0', 'aria-valuemax': '1', 'aria-valuenow': value.toFixed(2), 'aria-label': label });
  const fill = h('div', { className: 'fill' });
  // CSSOM, not a style attribute: the CSP allows no inline styles.
  fill.style.width = `${Math.round(Math.max(0, Math.min(1, value)) * 100)}%`;
  bar.append(fill);
  return h('tr', {}, h('th', { scope: 'row' }, label), h('td', { className: 'num' }, value.toFixed(2)), h('td', {}, bar), h('td', { className: 'num muted' }, weight), h('td', { className: 'num' }, (contribution >= 0 ? '+' : '') + contribution.toFixed(2)));
}

/** A weight as the priority table shows it: "× 0.4". */
function weightLabel(weight: number): string {
  return `× ${weight}`;
}

/**
 * An unsaved edit the panel cannot show as a form (its memory was archived or
 * is gone since), as text the person can still copy.
 */
function draftSection(draft: MemoryFields, note: string): HTMLElement {
  const field = (label: string, text: string) => h('div', {}, h('h3', {}, label), h('pre', { className: 'content' }, text || '(empty)'));
  return h(
    'section',
    { id: 'unsaved-draft', role: 'alert' },
    h('h2', {}, '● Your unsaved changes'),
    h('p', {}, icon('warning'), ` ${note}`),
    field('Topic', draft.topic),
    field('Tags', `${draft.tags.join(', ')}; importance ${draft.importance}`),
    field('Summary', draft.summary),
    field('Content', draft.content),
  );
}

export function memoryView(app: HTMLElement, post: PostMessage) {
  /** The memory shown, as last sent; while editing it is kept without rendering, so the edit is not interrupted. */
  let shown: { memory: MemoryDetails; constants: MemoryPanelConstants; panel: MemoryPanelState } | null = null;
  let editor: ReturnType<typeof memoryEditor> | null = null;
  let editingId: string | null = null;

  // Ctrl+S / Cmd+S saves the edit. (VS Code's keybinding may save it too; the extension saves once.)
  document.addEventListener('keydown', (event) => {
    if ((event.ctrlKey || event.metaKey) && !event.altKey && event.key.toLowerCase() === 's' && editor) {
      event.preventDefault();
      editor.save();
    }
  });

  function show(m: MemoryDetails, constants: MemoryPanelConstants, panel: MemoryPanelState): void {
    shown = { memory: m, constants, panel };
    if (editingId === m.id) return;
    editor = null;
    editingId = null;
    if (panel.edit && m.fields) startEditing(panel.edit, true);
    else render();
  }

  function startEditing(edit: MemoryEdit, restored: boolean): void {
    if (!shown) return;
    const m = shown.memory;
    editingId = m.id;
    // Editing keeps the panel (the extension pins it on the first change): no "Keep open" while editing.
    shown = { ...shown, panel: { ...shown.panel, pinned: true } };
    const reducedNote =
      m.phase > 0 ? 'This memory was reduced: its Content is the reduced text. Saving a changed Content makes the memory full again with what you write; the original stays in the archive.' : null;
    editor = memoryEditor({ id: m.id, edit, levels: shown.constants.importanceLevels, reducedNote, post, onCancel: stopEditing });
    render();
    if (restored) notice('info', 'Your unsaved changes to this memory were restored.');
  }

  function stopEditing(): void {
    editor = null;
    editingId = null;
    render();
  }

  /** The extension saved the edit: back to reading (the saved memory follows). */
  function saved(id: string): void {
    if (editingId === id) stopEditing();
  }

  function conflict(id: string, fields: EditableField[], theirs: MemoryFields): void {
    if (editingId === id) editor?.conflict(fields, theirs);
  }

  function render(): void {
    if (!shown) return;
    const { memory: m, constants, panel } = shown;
    const { phaseNames, priorityWeights: w, importanceTagPrefix, defaultImportance } = constants;
    const archived = m.phase === 3;
    const importance = m.priority?.importance ?? defaultImportance;
    const header = h(
      'header',
      {},
      h('h1', { id: 'topic' }, m.topic),
      h(
        'div',
        { className: 'badges' },
        h('vscode-badge', { variant: 'counter', id: 'phase', title: `Phase ${m.phase}` }, phaseNames[m.phase] ?? String(m.phase)),
        importance !== defaultImportance ? h('vscode-badge', { className: `importance ${importance}` }, `importance: ${importance}`) : null,
        ...m.tags.filter((t) => !t.startsWith(importanceTagPrefix)).map((t) => h('vscode-badge', { className: 'tag' }, t)),
      ),
      h(
        'div',
        { className: 'actions' },
        button('Open file', () => post({ type: 'openFile', id: m.id }), { icon: 'go-to-file', secondary: true, id: 'open-file' }),
        m.phase > 0 && m.archivedContent !== null
          ? button('Restore full text', () => post({ type: 'restore', id: m.id }), { icon: 'history', id: 'restore' })
          : null,
        m.phase < 3 ? button('Merge into…', () => post({ type: 'mergeInto', id: m.id }), { icon: 'merge', secondary: true, id: 'merge-into' }) : null,
        m.fields && !editor ? button('Edit', () => m.fields && startEditing({ base: m.fields, draft: m.fields }, false), { icon: 'edit', id: 'edit' }) : null,
        panel.pinned ? null : button('Keep open', () => post({ type: 'pin' }), { icon: 'pin', secondary: true, id: 'keep-open' }),
      ),
    );

    const summarySection = h('section', {}, h('h2', {}, 'Summary'), markdownBlock(m.summary, post, { id: 'summary-text', className: 'summary' }));
    const contentTitle = m.phase === 0 ? 'Content' : m.phase === 1 ? 'Content (hint: first paragraph)' : m.phase === 2 ? 'Content (abstract)' : 'Content (archived full text)';
    const contentSection = h('section', {}, h('h2', {}, contentTitle), m.content ? markdownBlock(m.content, post, { id: 'content' }) : h('p', { id: 'content', className: 'muted' }, '(empty)'));
    const archiveSection =
      m.archivedContent !== null && m.phase > 0 && m.phase < 3
        ? h('vscode-collapsible', { title: 'Full original text (from the archive)', id: 'archived-text' }, h('pre', { className: 'content' }, m.archivedContent))
        : null;

    const p = m.priority;
    const prioritySection = p
      ? h(
          'section',
          {},
          h('h2', {}, 'Priority ', h('span', { id: 'priority-total', className: 'total' }, p.total.toFixed(2))),
          h(
            'table',
            { className: 'priority' },
            h(
              'tbody',
              {},
              priorityRow('Difficulty', weightLabel(w.difficulty), p.difficulty, p.difficulty * w.difficulty),
              priorityRow('Recency', weightLabel(w.recency), p.recency, p.recency * w.recency),
              priorityRow('Frequency', weightLabel(w.frequency), p.frequency, p.frequency * w.frequency),
            ),
            h('tfoot', {}, h('tr', {}, h('th', { scope: 'row' }, 'Importance'), h('td', { className: 'num' }, p.importance), h('td', {}), h('td', {}), h('td', { className: 'num' }, (p.importanceBoost >= 0 ? '+' : '') + p.importanceBoost.toFixed(2)))),
          ),
          h(
            'p',
            { className: 'muted' },
            `Priority = difficulty·${w.difficulty} + recency·${w.recency} + frequency·${w.frequency} + importance, clamped to 0–1. ` +
              `Recency falls with sessions since the last access; frequency counts accesses up to ${w.frequencyCap}.`,
          ),
        )
      : null;

    const u = m.usage;
    const usageSection = u
      ? h(
          'section',
          { id: 'usage-section' },
          h('h2', {}, 'Usage'),
          h('p', { id: 'usage' }, `${u.text.charAt(0).toUpperCase()}${u.text.slice(1)}.`),
          u.demotionCandidate
            ? h(
                'p',
                { id: 'demotion', className: 'demotion' },
                icon('warning'),
                ` ${u.demotionText.charAt(0).toUpperCase()}${u.demotionText.slice(1)}. Nothing is done automatically: lower its importance, shorten it or forget it if it no longer earns its place.`,
              )
            : null,
          h(
            'p',
            { className: 'muted' },
            'Injected: put in the context at a session’s start (once per session). Offered: put next to a prompt, a failure, a file or a subagent’s task. ' +
              'Recalled: returned by recall. Read: read in full (get_memory, ltm get). Last used: the last session it was read or recalled in.',
          ),
        )
      : null;

    const facts = h(
      'dl',
      { className: 'facts' },
      h('dt', {}, 'ID'),
      h('dd', { id: 'memory-id' }, m.id),
      h('dt', {}, 'Folder'),
      h('dd', {}, m.folder),
      h('dt', {}, 'Created'),
      h('dd', {}, `${formatDate(m.createdAt)}${m.createdSession !== null ? ` (session ${m.createdSession})` : ''}`),
      ...(archived
        ? [h('dt', {}, 'Archived'), h('dd', {}, `${formatDate(m.archivedAt ?? '')}${m.archivedReason ? ` (${m.archivedReason})` : ''}`)]
        : [h('dt', {}, 'Accesses'), h('dd', {}, `${m.accessCount}, last ${formatDate(m.accessedAt)}`), h('dt', {}, 'Difficulty'), h('dd', {}, m.difficulty.toFixed(2))]),
    );

    const history = h(
      'section',
      {},
      h('h2', {}, 'Phase history'),
      h(
        'ol',
        { className: 'history', id: 'history' },
        h('li', {}, `Created at phase 0 (${phaseNames[0] ?? '?'}), ${formatDate(m.createdAt)}`),
        ...m.history.map((e) => h('li', {}, `${e.event === 'restored' ? 'Restored to' : e.event === 'evicted' ? 'Evicted to' : `${e.event}:`} phase ${e.phase} (${phaseNames[e.phase] ?? '?'}), ${formatDate(e.at)}`)),
      ),
    );

    // A possibly outdated memory says so before anything else.
    const anchors = m.anchors ? anchorsSection(m.id, m.anchors, post) : null;
    const [staleAnchors, freshAnchors] = anchors && m.anchors?.stale ? [anchors, null] : [null, anchors];
    // An edit kept from before (a reload, a closed tab) of a memory archived since: shown, not lost, until restored.
    const stranded = !editor && panel.edit && !m.fields ? draftSection(panel.edit.draft, 'This memory was archived after you changed it, so the changes cannot be edited here. Restore it to go on editing them, or copy them.') : null;
    const body = editor ? [editor.element] : [stranded ?? '', summarySection, contentSection];
    app.replaceChildren(header, staleAnchors ?? '', ...body, freshAnchors ?? '', archiveSection ?? '', prioritySection ?? '', usageSection ?? '', h('section', {}, h('h2', {}, 'Details'), facts), history);
  }

  /** The panel's memory no longer exists in its folder (forgotten, or the store went away). */
  function gone(message: string, draft: MemoryFields | null): void {
    editor = null;
    editingId = null;
    const kept = draft ? draftSection(draft, 'They could not be saved: the memory no longer exists. Copy them before you close this tab.') : null;
    app.replaceChildren(h('header', {}, h('h1', {}, 'Memory not found')), h('p', { id: 'gone' }, message), kept ?? '');
  }

  return { show, gone, saved, conflict };
}
