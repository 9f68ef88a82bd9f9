/**
 * The memory panel's Anchors section: the code the memory is about, each
 * anchor a link that opens it at its lines, what became of its text, and for
 * a possibly outdated memory the two ways out: "Still true — re-anchor" and
 * "Update memory". Everything from the memory or the code goes on the page as
 * text (dom.ts).
 */
import type { AnchorStateView, AnchorView, AnchorsView } from '../src/shared/protocol';
import { button, h, icon } from './dom';
import type { PostMessage } from './page';

const STATES: Record<AnchorStateView, { label: string; icon: string }> = {
  fresh: { label: 'holds', icon: 'pass' },
  moved: { label: 'moved', icon: 'arrow-swap' },
  changed: { label: 'changed', icon: 'warning' },
  missing: { label: 'gone', icon: 'error' },
};

/** Where an anchor is now, as written in anchors: `src/db/pool.ts#L12-26`. */
function location(a: AnchorView): string {
  if (!a.lines) return a.path;
  return a.lines[0] === a.lines[1] ? `${a.path}#L${a.lines[0]}` : `${a.path}#L${a.lines[0]}-${a.lines[1]}`;
}

function anchorItem(id: string, a: AnchorView, index: number, post: PostMessage): HTMLElement {
  const state = STATES[a.state];
  const here = location(a);
  const link =
    a.state === 'missing'
      ? h('span', { className: 'anchor-path' }, a.spec)
      : h('a', { href: '#', className: 'anchor-path', title: `Open ${here}`, onClick: (e: Event) => {
            e.preventDefault();
            post({ type: 'openAnchor', id, index });
          },
        }, here);
  return h(
    'li',
    { className: `anchor ${a.state}`, 'data-state': a.state },
    h('div', {}, link, ' ', h('span', { className: `anchor-state ${a.state}` }, icon(state.icon), ` ${state.label}`), here !== a.spec && a.state !== 'missing' ? h('span', { className: 'muted' }, ` (written as ${a.spec})`) : null),
    a.reason ? h('div', { className: 'muted anchor-reason' }, a.reason) : null,
    a.currentText !== null
      ? h(
          'div',
          { className: 'anchor-now' },
          h('p', { className: 'muted hint' }, 'The text at these lines now. The memory keeps only a hash of the code it was written against, so the earlier text cannot be shown.'),
          h('pre', { className: 'content' }, a.currentText || '(empty)'),
          a.currentTextCut ? h('p', { className: 'muted hint' }, 'Cut short: open the file to see all of it.') : null,
        )
      : null,
  );
}

export function anchorsSection(id: string, anchors: AnchorsView, post: PostMessage): HTMLElement {
  // A file that is gone cannot be hashed again: only updating the memory (and its anchors) helps.
  const gone = anchors.items.some((a) => a.state === 'missing');
  const reanchor = button('Still true — re-anchor', () => post({ type: 'reanchor', id }), { icon: 'check', id: 'reanchor', disabled: gone });
  if (gone) reanchor.setAttribute('data-keep-disabled', '');
  return h(
    'section',
    { id: 'anchors', className: anchors.stale ? 'stale' : '' },
    h('h2', {}, 'Anchors ', anchors.stale ? h('vscode-badge', { className: 'stale-badge', id: 'stale-badge' }, 'possibly outdated') : null),
    anchors.stale
      ? h('p', { className: 'stale-note', role: 'status' }, icon('warning'), ' The code this memory is anchored to changed since it was written. If the memory still holds, re-anchor it; if not, update it.')
      : h('p', { className: 'muted hint' }, 'The code this memory is about. It is marked possibly outdated when that code changes; lines that only move are followed.'),
    h('ul', { className: 'anchors', id: 'anchor-list' }, ...anchors.items.map((a, i) => anchorItem(id, a, i, post))),
    anchors.stale ? h('div', { className: 'actions' }, reanchor, button('Update memory', () => post({ type: 'editMemory', id }), { icon: 'edit', secondary: true, id: 'update-memory' })) : null,
    gone ? h('p', { className: 'muted hint' }, `A file it is anchored to is gone, so it cannot be re-anchored. Update the memory, and its anchors with ltm anchor ${id} --files … (or --none).`) : null,
  );
}
