/**
 * The memory panel: one memory's topic, tags, Summary (editable), Content,
 * priority, details and phase history. Memory text goes on the page only as
 * text nodes or an element's value.
 */
import type { MemoryDetails, MemoryPanelConstants } from '../src/shared/protocol';
import { anchorsSection } from './anchorsSection';
import { button, formatDate, h, icon, nameField } from './dom';
import type { PostMessage } from './page';

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

export function memoryView(app: HTMLElement, post: PostMessage) {
  function show(m: MemoryDetails, constants: MemoryPanelConstants): void {
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
      ),
    );

    const summaryInput = h('vscode-textarea', { id: 'summary', rows: '3', resize: 'vertical', 'aria-label': 'Summary', value: m.summary }) as HTMLElement & { value: string };
    summaryInput.value = m.summary;
    nameField(summaryInput, 'Summary');
    const save = button('Save summary', () => post({ type: 'saveSummary', id: m.id, summary: summaryInput.value }), { id: 'save-summary', disabled: true });
    save.setAttribute('data-keep-disabled', '');
    summaryInput.addEventListener('input', () => {
      const changed = summaryInput.value.trim() !== m.summary.trim() && summaryInput.value.trim() !== '';
      if (changed) {
        save.removeAttribute('disabled');
        save.removeAttribute('data-keep-disabled');
      } else {
        save.setAttribute('disabled', '');
        save.setAttribute('data-keep-disabled', '');
      }
    });
    const summarySection = archived
      ? h('section', {}, h('h2', {}, 'Summary'), h('p', { id: 'summary-text', className: 'summary' }, m.summary))
      : h('section', {}, h('h2', {}, 'Summary'), h('p', { className: 'muted hint' }, 'Editing the summary rewrites only the ## Summary section of the file.'), summaryInput, h('div', { className: 'actions' }, save));

    const contentTitle = m.phase === 0 ? 'Content' : m.phase === 1 ? 'Content (hint: first paragraph)' : m.phase === 2 ? 'Content (abstract)' : 'Content (archived full text)';
    const contentSection = h('section', {}, h('h2', {}, contentTitle), h('pre', { id: 'content', className: 'content' }, m.content || '(empty)'));
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
    app.replaceChildren(header, staleAnchors ?? '', summarySection, contentSection, freshAnchors ?? '', archiveSection ?? '', prioritySection ?? '', usageSection ?? '', h('section', {}, h('h2', {}, 'Details'), facts), history);
  }

  /** The panel's memory no longer exists in its folder (forgotten, or the store went away). */
  function gone(message: string): void {
    app.replaceChildren(h('header', {}, h('h1', {}, 'Memory not found')), h('p', {}, message));
  }

  return { show, gone };
}
