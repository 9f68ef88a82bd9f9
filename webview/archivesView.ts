/**
 * The archives view: search archived memories, open or restore them. The
 * search field is built once and kept, so typing is never interrupted by the
 * results it asks for; only the results are rebuilt.
 */
import type { ArchivedItemView } from '../src/shared/protocol';
import { button, formatDate, h, nameField } from './dom';
import type { PostMessage } from './page';

export function archivesView(app: HTMLElement, post: PostMessage) {
  let searchTimer: number | undefined;

  function show(query: string, items: ArchivedItemView[]): void {
    let field = document.getElementById('archive-query') as (HTMLElement & { value: string }) | null;
    if (!field) {
      field = h('vscode-textfield', { id: 'archive-query', placeholder: 'Search archived memories (keywords, tags)', 'aria-label': 'Search archives' }) as HTMLElement & { value: string };
      nameField(field, 'Search archives');
      field.addEventListener('input', () => {
        window.clearTimeout(searchTimer);
        searchTimer = window.setTimeout(() => post({ type: 'searchArchives', query: field!.value }), 150);
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
            button('Open', () => post({ type: 'openMemory', id: item.id, folder: item.folder }), { secondary: true, icon: 'eye' }),
            button('Restore', () => post({ type: 'restore', id: item.id }), { icon: 'history', id: `restore-${item.id}` }),
          ),
        ),
      ),
    );
  }

  return { show };
}
