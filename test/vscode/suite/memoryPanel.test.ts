/**
 * The memory panel behaves like an editor, in a real VS Code: one preview tab
 * that the next memory opened replaces (unless pinned: "Keep open", a
 * double-click in the tree, `ltm.openMemory` with `pin`, or starting to edit),
 * edit mode with "●" in the title while unsaved, Ctrl+S saving only the
 * changed fields, a change made on disk meanwhile never overwritten silently,
 * and unsaved changes kept when the tab is closed.
 *
 * The page's DOM is out of the extension host's reach: the tests speak for it
 * through `memoryPanels()[i].receive`, which checks and handles a message
 * exactly as one the page posts. The tabs are VS Code's own (tabGroups).
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { MemoryStore } from '../../../src/core/store';
import type { LtmApi } from '../../../src/extension';
import type { MemoryFields } from '../../../src/shared/protocol';
import type { MemoryTreeNode } from '../../../src/vscode/memoryTree';
import { EXTENSION_ID, fieldsOnDisk, newProjectFolder, readyApi, removeProjectFolder, runCli, waitFor } from './hostKit';

/** The memory panels' tabs, as VS Code shows them. */
function memoryTabs(): vscode.Tab[] {
  return vscode.window.tabGroups.all.flatMap((g) => g.tabs).filter((t) => t.input instanceof vscode.TabInputWebview && t.input.viewType.endsWith('ltm.memory'));
}

describe('the memory panel: preview, edit, save', () => {
  let api: LtmApi;
  let project: string;
  const ids: Record<'pool' | 'retry' | 'cache', string> = { pool: '', retry: '', cache: '' };
  const file = (id: string) => path.join(project, '.claude', 'ltm', 'memories', `${id}.md`);
  const onDisk = (id: string): MemoryFields => fieldsOnDisk(project, id);
  const panels = () => api.memoryPanels().filter((p) => Object.values(ids).includes(p.id));
  const panelOf = (id: string) => waitFor(() => panels().find((p) => p.id === id), `a panel showing ${id}`);
  const open = (id: string, pin?: boolean) => vscode.commands.executeCommand('ltm.openMemory', { id, folder: project, ...(pin ? { pin } : {}) });
  const cli = (...args: string[]) => runCli(project, ...args);
  /** VS Code tells the extension host of tabs a moment after they change. */
  const tabCount = (count: number) => waitFor(() => memoryTabs().length === count, `${count} memory tab(s)`);
  const closeMemoryTabs = async () => {
    await tabCount(panels().length);
    await vscode.window.tabGroups.close(memoryTabs());
    await waitFor(() => panels().length === 0, 'the memory panels to close');
  };

  before(async function () {
    this.timeout(60_000);
    api = await readyApi();
    project = newProjectFolder('panel-');
    const store = MemoryStore.open(project);
    try {
      ids.pool = (await store.store({ topic: 'Postgres pool exhausted by batch jobs', summary: 'Raise the pool to 50.', content: 'Pool of 10 ran dry; raised to **50**.', tags: ['postgres', 'importance:critical'] })).memory.id;
      ids.retry = (await store.store({ topic: 'Retries need jitter', content: 'Without jitter the retries came in waves.', tags: ['http'] })).memory.id;
      ids.cache = (await store.store({ topic: 'Cache keys include the locale', content: 'A German page was served to an English reader.', tags: ['cache'] })).memory.id;
      store.flushCaches();
    } finally {
      store.dispose();
    }
    assert.ok(vscode.workspace.updateWorkspaceFolders(vscode.workspace.workspaceFolders!.length, 0, { uri: vscode.Uri.file(project) }));
    await waitFor(() => api.folders().find((f) => f.path === project && f.memories === 3), 'the extension to open the store', 30_000);
  });

  after(async () => {
    await vscode.window.tabGroups.close(memoryTabs()).then(undefined, () => undefined);
    await removeProjectFolder(api, project);
  });

  it('opens memories in one preview tab, which the next replaces; opening one already open reveals it', async () => {
    await closeMemoryTabs();
    await open(ids.pool);
    const first = await panelOf(ids.pool);
    assert.equal(first.pinned, false);
    assert.equal(first.title, 'Postgres pool exhausted by batch jobs (Preview)');
    await open(ids.retry);
    await waitFor(() => panels().length === 1 && panels()[0]!.id === ids.retry, 'the preview to show the second memory');
    await open(ids.cache);
    await waitFor(() => panels().length === 1 && panels()[0]!.id === ids.cache, 'the preview to show the third memory');
    await tabCount(1); // three memories opened, one tab
    await waitFor(() => memoryTabs()[0]!.label === 'Cache keys include the locale (Preview)', 'the tab to name the preview');
    await open(ids.cache);
    assert.equal(panels().length, 1, 'opening the memory shown reveals it');
    await tabCount(1);
  });

  it('keeps a panel open when pinned: "Keep open", `ltm.openMemory` with pin, or a double-click in the tree', async () => {
    // "Keep open" on the preview: it stays, and the next memory gets a new preview.
    await (await panelOf(ids.cache)).receive({ type: 'pin' });
    assert.equal((await panelOf(ids.cache)).title, 'Cache keys include the locale');
    await open(ids.retry);
    await waitFor(() => panels().length === 2, 'a new preview next to the kept panel');
    assert.equal((await panelOf(ids.retry)).pinned, false);
    // Opened pinned: a panel of its own, the preview untouched.
    await open(ids.pool, true);
    await waitFor(() => panels().length === 3, 'a pinned panel');
    assert.equal((await panelOf(ids.pool)).pinned, true);
    await tabCount(3);
    // A double-click in the tree (its command twice in quick succession) pins the preview it opened.
    const walk = async (nodes: MemoryTreeNode[]): Promise<MemoryTreeNode | undefined> => {
      for (const node of nodes) {
        if (node.kind === 'memory') {
          if (node.memory.id === ids.retry && node.folder.folder.uri.fsPath === project) return node;
          continue;
        }
        const found = await walk(((await api.memoryTree.getChildren(node)) ?? []) as MemoryTreeNode[]);
        if (found) return found;
      }
      return undefined;
    };
    const node = await walk(((await api.memoryTree.getChildren()) ?? []) as MemoryTreeNode[]);
    assert.ok(node, 'the memory is in the tree');
    await vscode.commands.executeCommand('ltm.openMemory', node);
    assert.equal((await panelOf(ids.retry)).pinned, false, 'one click: still the preview');
    await vscode.commands.executeCommand('ltm.openMemory', node);
    assert.equal((await panelOf(ids.retry)).pinned, true, 'two quick clicks: kept');
    assert.equal(panels().length, 3);
    await closeMemoryTabs();
  });

  it('edits every field: "●" while unsaved, Ctrl+S saves only the changed fields, the previous text archived first', async () => {
    const manifest = vscode.extensions.getExtension(EXTENSION_ID)!.packageJSON as { contributes: { keybindings: { command: string; key: string; mac: string; when: string }[] } };
    assert.ok(
      manifest.contributes.keybindings.some((k) => k.command === 'ltm.saveMemoryPanel' && k.key === 'ctrl+s' && k.mac === 'cmd+s' && k.when === "activeWebviewPanelId == 'ltm.memory'"),
      'Ctrl+S / Cmd+S in a memory panel saves it',
    );
    const before = fs.readFileSync(file(ids.pool), 'utf8');
    await open(ids.pool);
    const panel = await panelOf(ids.pool);
    assert.equal(panel.pinned, false);
    const base = onDisk(ids.pool);
    assert.deepEqual([base.tags, base.importance], [['postgres'], 'critical']);
    // A message the page could not have sent (an unknown importance) is refused and changes nothing.
    await panel.receive({ type: 'edit', id: ids.pool, edit: { base, draft: { ...base, importance: 'urgent' } } });
    assert.equal((await panelOf(ids.pool)).dirty, false);
    const draft: MemoryFields = { ...base, importance: 'important', tags: ['postgres', 'batch'], summary: 'Raise the pool to 60.' };
    await panel.receive({ type: 'edit', id: ids.pool, edit: { base, draft } });
    const dirty = await panelOf(ids.pool);
    assert.equal(dirty.dirty, true);
    assert.equal(dirty.title, '● Postgres pool exhausted by batch jobs', 'the title marks it unsaved; editing kept the preview open');
    assert.equal(dirty.pinned, true);
    await waitFor(() => memoryTabs()[0]?.label === '● Postgres pool exhausted by batch jobs', 'the tab to show "●"');

    assert.equal(await vscode.commands.executeCommand('ltm.saveMemoryPanel'), 'saved');
    const after = fs.readFileSync(file(ids.pool), 'utf8');
    const saved = onDisk(ids.pool);
    assert.deepEqual(saved, { ...base, importance: 'important', tags: ['postgres', 'batch'], summary: 'Raise the pool to 60.' });
    // Only what changed was rewritten: the topic line and the Content keep every byte.
    const topicLine = before.split('\n').find((l) => l.startsWith('topic:'))!;
    assert.ok(after.includes(`${topicLine}\n`), 'the topic line is unchanged');
    assert.ok(after.includes('Pool of 10 ran dry; raised to **50**.'), 'the Content is unchanged');
    const index = JSON.parse(fs.readFileSync(path.join(project, '.claude', 'ltm', 'archive_index.json'), 'utf8')) as { memories: Record<string, { version_of?: string }> };
    const versions = Object.entries(index.memories).filter(([, e]) => e.version_of === ids.pool);
    assert.equal(versions.length, 1, 'the previous text was archived');
    assert.match(fs.readFileSync(path.join(project, '.claude', 'ltm', 'archives', `${versions[0]![0]}.md`), 'utf8'), /Raise the pool to 50\./);
    const clean = await waitFor(() => panels().find((p) => p.id === ids.pool && !p.dirty), 'the panel to be clean');
    assert.equal(clean.title, 'Postgres pool exhausted by batch jobs');
    assert.equal(await vscode.commands.executeCommand('ltm.saveMemoryPanel'), 'nothing', 'a second Ctrl+S has nothing to save');
  });

  it('never overwrites a change made on disk meanwhile without asking; a change to another field is kept', async () => {
    const panel = await panelOf(ids.pool);
    const base = onDisk(ids.pool);
    await panel.receive({ type: 'edit', id: ids.pool, edit: { base, draft: { ...base, summary: 'Mine: the pool holds 70.' } } });
    await cli('update', ids.pool, '--summary', 'Theirs: the pool holds 80.');
    await panel.receive({ type: 'save', id: ids.pool, overwrite: false });
    assert.deepEqual((await panelOf(ids.pool)).conflict, ['summary'], 'the page is told what changed on disk');
    assert.equal(onDisk(ids.pool).summary, 'Theirs: the pool holds 80.', 'their change was not overwritten');
    assert.equal((await panelOf(ids.pool)).dirty, true, 'the edit is kept');
    // The person chose to overwrite, having seen theirs.
    await panel.receive({ type: 'save', id: ids.pool, overwrite: true });
    assert.equal(onDisk(ids.pool).summary, 'Mine: the pool holds 70.');
    assert.equal((await panelOf(ids.pool)).dirty, false);

    // Their Content and my Summary: no conflict, both kept.
    const base2 = onDisk(ids.pool);
    await panel.receive({ type: 'edit', id: ids.pool, edit: { base: base2, draft: { ...base2, summary: 'Mine again.' } } });
    await cli('update', ids.pool, '--content', 'Theirs: connections are released between chunks.');
    await panel.receive({ type: 'save', id: ids.pool, overwrite: false });
    const both = onDisk(ids.pool);
    assert.deepEqual([both.summary, both.content], ['Mine again.', 'Theirs: connections are released between chunks.']);
    assert.equal((await panelOf(ids.pool)).conflict, null);
  });

  it('keeps unsaved changes when the tab is closed, and restores them when the memory is opened again', async () => {
    await closeMemoryTabs();
    await open(ids.cache);
    const panel = await panelOf(ids.cache);
    const base = onDisk(ids.cache);
    await panel.receive({ type: 'edit', id: ids.cache, edit: { base, draft: { ...base, topic: 'Cache keys include locale and currency' } } });
    assert.equal((await panelOf(ids.cache)).dirty, true);
    await closeMemoryTabs();
    assert.equal(onDisk(ids.cache).topic, 'Cache keys include the locale', 'closing saved nothing');
    await open(ids.cache);
    const restored = await panelOf(ids.cache);
    assert.equal(restored.dirty, true, 'the edit came back');
    assert.equal(restored.title, '● Cache keys include the locale');
    await restored.receive({ type: 'save', id: ids.cache, overwrite: false });
    assert.equal(onDisk(ids.cache).topic, 'Cache keys include locale and currency');
    await closeMemoryTabs();
  });
});
