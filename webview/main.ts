/**
 * The browser side of LTM's webviews: the memory panel, the integrity panel
 * and the archives view. Everything a memory contains is put on the page with
 * textContent or as an element's value: never parsed as HTML.
 */
import '@vscode-elements/elements/dist/vscode-badge/index.js';
import '@vscode-elements/elements/dist/vscode-button/index.js';
import '@vscode-elements/elements/dist/vscode-checkbox/index.js';
import '@vscode-elements/elements/dist/vscode-collapsible/index.js';
import '@vscode-elements/elements/dist/vscode-divider/index.js';
import '@vscode-elements/elements/dist/vscode-progress-ring/index.js';
import '@vscode-elements/elements/dist/vscode-textarea/index.js';
import '@vscode-elements/elements/dist/vscode-textfield/index.js';
import type {
  ArchivedItemView,
  FixView,
  FromWebview,
  IntegrityView,
  MemoryDetails,
  MemoryPanelConstants,
  ToWebview,
  WebviewView,
} from '../src/shared/protocol';

interface VsCodeApi {
  postMessage(message: FromWebview): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

const vscode = acquireVsCodeApi();
const app = document.getElementById('app')!;
const view = (document.body.dataset.view ?? 'memory') as WebviewView;

type Child = Node | string | null | undefined | false;

/** Builds an element; strings become text nodes, so nothing is ever parsed as HTML. */
function h<K extends keyof HTMLElementTagNameMap>(tag: K, props?: Record<string, unknown>, ...children: Child[]): HTMLElementTagNameMap[K];
function h(tag: string, props?: Record<string, unknown>, ...children: Child[]): HTMLElement;
function h(tag: string, props: Record<string, unknown> = {}, ...children: Child[]): HTMLElement {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith('on') && typeof value === 'function') el.addEventListener(key.slice(2).toLowerCase(), value as EventListener);
    else if (key === 'className') el.className = String(value);
    else if (key === 'value') (el as HTMLInputElement).value = String(value);
    else el.setAttribute(key, value === true ? '' : String(value));
  }
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    el.append(typeof child === 'string' ? document.createTextNode(child) : child);
  }
  return el;
}

function icon(name: string): HTMLElement {
  return h('span', { className: `codicon codicon-${name}`, 'aria-hidden': 'true' });
}

function button(label: string, onClick: () => void, options: { icon?: string; secondary?: boolean; id?: string; disabled?: boolean } = {}): HTMLElement {
  const b = h('vscode-button', { id: options.id, secondary: options.secondary, disabled: options.disabled, icon: options.icon }, label);
  b.addEventListener('click', () => {
    if (!b.hasAttribute('disabled')) onClick();
  });
  return b;
}

function formatDate(iso: string): string {
  if (!iso) return '—';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString();
}

let noticeTimer: number | undefined;
function notice(level: 'info' | 'error', message: string): void {
  let bar = document.getElementById('notice');
  if (!bar) {
    bar = h('div', { id: 'notice', role: 'status' });
    document.body.prepend(bar);
  }
  bar.className = `notice ${level}`;
  bar.textContent = message;
  window.clearTimeout(noticeTimer);
  if (level === 'info') noticeTimer = window.setTimeout(() => bar?.remove(), 4000);
}

function setBusy(busy: boolean): void {
  document.body.classList.toggle('busy', busy);
  for (const b of Array.from(document.querySelectorAll('vscode-button'))) {
    if (busy) b.setAttribute('disabled', '');
    else if (!b.hasAttribute('data-keep-disabled')) b.removeAttribute('disabled');
  }
}

// ---------------------------------------------------------------------------
// Memory panel

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

function renderMemory(m: MemoryDetails, constants: MemoryPanelConstants): void {
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
      button('Open file', () => vscode.postMessage({ type: 'openFile', id: m.id }), { icon: 'go-to-file', secondary: true, id: 'open-file' }),
      m.phase > 0 && m.archivedContent !== null
        ? button('Restore full text', () => vscode.postMessage({ type: 'restore', id: m.id }), { icon: 'history', id: 'restore' })
        : null,
    ),
  );

  const summaryInput = h('vscode-textarea', { id: 'summary', rows: '3', resize: 'vertical', 'aria-label': 'Summary', value: m.summary }) as HTMLElement & { value: string };
  summaryInput.value = m.summary;
  const save = button('Save summary', () => vscode.postMessage({ type: 'saveSummary', id: m.id, summary: summaryInput.value }), { id: 'save-summary', disabled: true });
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

  app.replaceChildren(header, summarySection, contentSection, archiveSection ?? '', prioritySection ?? '', h('section', {}, h('h2', {}, 'Details'), facts), history);
}

// ---------------------------------------------------------------------------
// Integrity panel

let cleanArchives = false;

function renderIntegrity(report: IntegrityView, fix: FixView | null): void {
  const checkbox = h('vscode-checkbox', { id: 'clean-archives', checked: cleanArchives, label: 'Also delete orphaned archives (by default they are kept and listed as restorable)' });
  checkbox.addEventListener('change', (e) => (cleanArchives = Boolean((e.target as HTMLInputElement).checked)));
  const status = h(
    'p',
    { id: 'integrity-status', className: report.healthy ? 'healthy' : 'unhealthy' },
    icon(report.healthy ? 'pass-filled' : 'warning'),
    report.healthy ? ' Healthy: no integrity issues found.' : ` ${report.problems.length} issue(s) found.`,
  );
  const counts = h('dl', { className: 'facts' }, ...Object.entries(report.counts).flatMap(([k, v]) => [h('dt', {}, k.replace(/_/g, ' ')), h('dd', {}, String(v))]));
  const groups = new Map<string, string[]>();
  for (const p of report.problems) groups.set(p.title, [...(groups.get(p.title) ?? []), p.detail]);
  const problems = h('div', { id: 'problems' }, ...[...groups].map(([title, details]) => h('section', { className: 'problem' }, h('h3', {}, title), h('ul', {}, ...details.map((d) => h('li', {}, d))))));
  const done = fix
    ? h('section', { id: 'fix-result' }, h('h2', {}, 'What fix did'), fix.actions.length === 0 ? h('p', {}, 'Nothing needed repair.') : h('ul', {}, ...fix.actions.map((a) => h('li', {}, a))))
    : null;
  app.replaceChildren(
    h('header', {}, h('h1', {}, `Integrity of ${report.folder}`)),
    h(
      'div',
      { className: 'actions' },
      button('Check again', () => vscode.postMessage({ type: 'runCheck' }), { icon: 'refresh', secondary: true, id: 'run-check' }),
      button('Fix', () => vscode.postMessage({ type: 'runFix', cleanArchives }), { icon: 'wrench', id: 'run-fix', disabled: report.healthy && !fix }),
    ),
    checkbox,
    status,
    done ?? '',
    problems,
    h('section', {}, h('h2', {}, 'Counts'), counts),
  );
}

// ---------------------------------------------------------------------------
// Archives view

let searchTimer: number | undefined;

function renderArchives(query: string, items: ArchivedItemView[]): void {
  let field = document.getElementById('archive-query') as (HTMLElement & { value: string }) | null;
  if (!field) {
    field = h('vscode-textfield', { id: 'archive-query', placeholder: 'Search archived memories (keywords, tags)', 'aria-label': 'Search archives' }) as HTMLElement & { value: string };
    field.addEventListener('input', () => {
      window.clearTimeout(searchTimer);
      searchTimer = window.setTimeout(() => vscode.postMessage({ type: 'searchArchives', query: field!.value }), 150);
    });
    app.replaceChildren(h('header', {}, h('h1', {}, 'Archived memories')), field, h('div', { id: 'archive-results' }));
    field.value = query;
  }
  const results = document.getElementById('archive-results')!;
  results.replaceChildren(
    h('p', { className: 'muted' }, items.length === 0 ? (query.trim() ? 'No archived memory matches.' : 'There are no archived memories.') : `${items.length} archived memor${items.length === 1 ? 'y' : 'ies'}`),
    ...items.map((item) =>
      h(
        'article',
        { className: 'archived', 'data-id': item.id },
        h('h3', {}, item.topic),
        h('p', {}, item.summary),
        h('p', { className: 'muted' }, `${item.id} · ${item.folder}${item.archivedAt ? ` · archived ${formatDate(item.archivedAt)}` : ''}${item.tags.length ? ` · ${item.tags.join(', ')}` : ''}`),
        h(
          'div',
          { className: 'actions' },
          button('Open', () => vscode.postMessage({ type: 'openMemory', id: item.id, folder: item.folder }), { secondary: true, icon: 'eye' }),
          button('Restore', () => vscode.postMessage({ type: 'restore', id: item.id }), { icon: 'history', id: `restore-${item.id}` }),
        ),
      ),
    ),
  );
}

// ---------------------------------------------------------------------------

window.addEventListener('message', (event: MessageEvent<ToWebview>) => {
  const message = event.data;
  switch (message.type) {
    case 'memory':
      if (view === 'memory') renderMemory(message.memory, message.constants);
      break;
    case 'memoryGone':
      app.replaceChildren(h('header', {}, h('h1', {}, 'Memory not found')), h('p', {}, message.message));
      break;
    case 'integrity':
      if (view === 'integrity') renderIntegrity(message.report, message.fix);
      break;
    case 'archives':
      if (view === 'archives') renderArchives(message.query, message.items);
      break;
    case 'busy':
      setBusy(message.busy);
      break;
    case 'notice':
      notice(message.level, message.message);
      break;
  }
});

app.append(h('vscode-progress-ring', { 'aria-label': 'Loading' }));
vscode.postMessage({ type: 'ready' });
