/**
 * Memory text rendered as Markdown (src/shared/markdown.ts: raw HTML off,
 * http(s)/mailto links only). This is the one place the page takes HTML: the
 * renderer's output, built here from text the page was sent as data. A link
 * never navigates the page: a click asks the extension to open it outside.
 */
import { renderMarkdown } from '../src/shared/markdown';
import { h } from './dom';
import type { PostMessage } from './page';

export function markdownBlock(text: string, post: PostMessage, props: Record<string, unknown> = {}): HTMLElement {
  const block = h('div', { ...props, className: `markdown ${String(props.className ?? '')}`.trim() });
  block.innerHTML = renderMarkdown(text);
  block.addEventListener('click', (event) => {
    const link = (event.target as Element | null)?.closest('a');
    if (!link) return;
    event.preventDefault();
    const url = link.getAttribute('href');
    if (url) post({ type: 'openLink', url });
  });
  return block;
}
