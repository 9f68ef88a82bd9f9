/**
 * Memory text (Summary and Content) as HTML, for the memory panel. The one
 * place Markdown is rendered, with markdown-it:
 *
 * - `html: false`: raw HTML in a memory is escaped, shown as the text it is;
 * - links only to http(s) and mailto (links.ts): any other link (javascript:,
 *   data:, file:, command:, a relative path) stays text;
 * - images off: the page's CSP loads no remote image, and a broken image
 *   says less than the link text it becomes.
 *
 * It runs in the webview (the page renders what it was sent as data), not on
 * the host: the page never receives HTML over the message channel, and its
 * CSP stays `script-src 'nonce-…'` with no inline styles, so even markup that
 * got through could neither run script nor restyle the page.
 */
import MarkdownIt from 'markdown-it';
import { isSafeLinkUrl } from './links';

const md = new MarkdownIt({ html: false, linkify: true, typographer: false, breaks: false });
md.validateLink = isSafeLinkUrl;
md.disable('image');

export function renderMarkdown(text: string): string {
  return md.render(text);
}
