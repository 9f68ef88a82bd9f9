/**
 * What every view shares: the channel to the extension, the notice bar and the
 * busy state. They belong to the page, not to a view, so they outlive a render.
 */
import type { FromWebview } from '../src/shared/protocol';
import { h } from './dom';

/** How a view talks to the extension; main.ts passes it down, so no view reaches for the VS Code API. */
export type PostMessage = (message: FromWebview) => void;

let noticeTimer: number | undefined;

export function notice(level: 'info' | 'error', message: string): void {
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

/** Disables every button while the extension works, except those a view keeps disabled itself. */
export function setBusy(busy: boolean): void {
  document.body.classList.toggle('busy', busy);
  for (const b of Array.from(document.querySelectorAll('vscode-button'))) {
    if (busy) b.setAttribute('disabled', '');
    else if (!b.hasAttribute('data-keep-disabled')) b.removeAttribute('disabled');
  }
}
