/**
 * Anchored memories in a real VS Code: CodeLens over the anchored lines of a
 * real file, following code that moves, "possibly outdated" once an edit
 * inside the range is saved, the tree's mark, the memory panel's view of the
 * anchors, re-anchoring through the command, and "Remember selection"
 * anchoring a memory to the selected lines. The project is a folder added
 * next to the workspace's first one, with a store written by the engine.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { MemoryStore, initStoreFiles } from '../../../src/core/store';
import { storePaths } from '../../../src/core/storeFiles';
import type { LtmApi } from '../../../src/extension';
import { memoryDetails } from '../../../src/vscode/memoryDetails';
import type { MemoryTreeNode } from '../../../src/vscode/memoryTree';
import { EXTENSION_ID, waitFor } from './hostKit';

const FILE = 'src/pool.ts';
const code = (n: number) => Array.from({ length: n }, (_, i) => `export const setting${i + 1} = ${i + 1};`).join('\n') + '\n';

/**
 * The commands the tree's context menu offers on an item with this
 * contextValue, by the manifest's `when` clauses (`viewItem == x` or
 * `viewItem =~ /re/`, as package.json writes them).
 */
function contextMenuCommands(contextValue: string): string[] {
  const manifest = vscode.extensions.getExtension(EXTENSION_ID)!.packageJSON as { contributes: { menus: Record<string, { command: string; when?: string; group?: string }[]> } };
  return manifest.contributes.menus['view/item/context']!.filter((entry) => {
    if (entry.group?.startsWith('inline')) return false;
    const when = entry.when ?? '';
    const equal = /viewItem == ([\w.]+)/.exec(when);
    const regex = /viewItem =~ \/(.+)\/$/.exec(when);
    return equal ? equal[1] === contextValue : regex ? new RegExp(regex[1]!).test(contextValue) : false;
  }).map((entry) => entry.command);
}

/** Reads the store as another process would: a fresh instance on the files. */
function onDisk<T>(project: string, read: (store: MemoryStore) => T): T {
  const store = MemoryStore.open(project);
  try {
    return read(store);
  } finally {
    store.dispose();
  }
}

describe('Anchored memories: CodeLens, staleness, re-anchor, Remember selection', () => {
  let api: LtmApi;
  let project: string;
  let uri: vscode.Uri;
  let sizeId: string;
  let timeoutId: string;

  const folderIndex = () => (vscode.workspace.workspaceFolders ?? []).findIndex((f) => f.uri.fsPath === project);

  /** The LTM lenses of the file, by 0-based line. */
  const lenses = async (): Promise<Map<number, vscode.CodeLens>> => {
    const all = (await vscode.commands.executeCommand<vscode.CodeLens[]>('vscode.executeCodeLensProvider', uri)) ?? [];
    return new Map(all.filter((l) => l.command?.title.startsWith('LTM:')).map((l) => [l.range.start.line, l]));
  };
  const lensTitles = async () => [...(await lenses())].sort((a, b) => a[0] - b[0]).map(([line, l]) => `${line + 1}: ${l.command!.title}`);

  /** The Memories view's item for a memory of the project, as the view draws it. */
  const treeItem = async (id: string): Promise<vscode.TreeItem> => {
    const tree = api.memoryTree;
    const walk = async (nodes: MemoryTreeNode[]): Promise<vscode.TreeItem | undefined> => {
      for (const node of nodes) {
        if (node.kind === 'memory') {
          if (node.memory.id === id && node.folder.folder.uri.fsPath === project) return tree.getTreeItem(node);
          continue;
        }
        const found = await walk(((await tree.getChildren(node)) ?? []) as MemoryTreeNode[]);
        if (found) return found;
      }
      return undefined;
    };
    const item = await walk(((await tree.getChildren()) ?? []) as MemoryTreeNode[]);
    assert.ok(item, `${id} is in the Memories view`);
    return item;
  };
  /** The tooltip's text, without the escapes appendText adds to Markdown. */
  const tooltipOf = (item: vscode.TreeItem) =>
    (item.tooltip instanceof vscode.MarkdownString ? item.tooltip.value : String(item.tooltip ?? '')).replace(/&nbsp;/g, ' ').replace(/\\([^\s])/g, '$1');

  const editAndSave = async (edit: (e: vscode.WorkspaceEdit, document: vscode.TextDocument) => void) => {
    const document = await vscode.workspace.openTextDocument(uri);
    const e = new vscode.WorkspaceEdit();
    edit(e, document);
    assert.ok(await vscode.workspace.applyEdit(e));
    assert.ok(await document.save());
  };

  before(async function () {
    this.timeout(60_000);
    api = await vscode.extensions.getExtension<LtmApi>(EXTENSION_ID)!.activate();
    await api.ready;
    const first = vscode.workspace.workspaceFolders![0]!.uri.fsPath;
    project = fs.mkdtempSync(path.join(path.dirname(first), 'anchors-'));
    fs.mkdirSync(path.join(project, 'src'));
    fs.writeFileSync(path.join(project, FILE), code(30));
    uri = vscode.Uri.file(path.join(project, FILE));

    initStoreFiles(storePaths(project));
    const store = MemoryStore.open(project);
    try {
      sizeId = (await store.store({ topic: 'Pool size is 50 for the nightly batch', content: 'Settings 10 to 14 size the pool.', anchors: [`${FILE}#L10-14`] })).memory.id;
      timeoutId = (await store.store({ topic: 'Pool timeout is 60 s', content: 'Settings 10 to 12 time out idle clients.', anchors: [`${FILE}#L10-12`] })).memory.id;
      await store.store({ topic: 'Unanchored', content: 'About nothing in particular.' });
      store.flushCaches();
    } finally {
      store.dispose();
    }
    assert.ok(vscode.workspace.updateWorkspaceFolders(vscode.workspace.workspaceFolders!.length, 0, { uri: vscode.Uri.file(project) }));
    await waitFor(() => api.folders().find((f) => f.path === project && f.memories === 3), 'the extension to open the store', 30_000);
  });

  after(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await vscode.workspace.getConfiguration('ltm').update('codeLens', undefined, vscode.ConfigurationTarget.Workspace);
    if (project && folderIndex() >= 0) {
      vscode.workspace.updateWorkspaceFolders(folderIndex(), 1);
      await waitFor(() => !api.folders().some((f) => f.path === project), 'the folder to be closed').catch(() => undefined);
    }
    if (project) fs.rmSync(project, { recursive: true, force: true });
  });

  it('shows "LTM: 2 memories" on the first anchored line, opening them', async () => {
    await vscode.window.showTextDocument(uri);
    const titles = await waitFor(async () => {
      const t = await lensTitles();
      return t.length > 0 ? t : null;
    }, 'the CodeLens');
    assert.deepEqual(titles, ['10: LTM: 2 memories']);
    const lens = (await lenses()).get(9)!;
    assert.equal(lens.command!.command, 'ltm.openAnchoredMemories');
    assert.deepEqual((lens.command!.arguments![0] as { ids: string[] }).ids.sort(), [sizeId, timeoutId].sort());
    assert.match(lens.command!.tooltip ?? '', /Pool size is 50[\s\S]*Pool timeout is 60 s|Pool timeout is 60 s[\s\S]*Pool size is 50/);
  });

  it('follows lines that moved: the lens moves with them, and after the save the memory says where they are', async () => {
    await editAndSave((e) => e.insert(uri, new vscode.Position(0, 0), '// one\n// two\n// three\n'));
    await waitFor(async () => (await lensTitles()).join() === '13: LTM: 2 memories', 'the lens on line 13');
    // Written back a moment after the save (debounced), so the memory stays right for hooks and the CLI.
    await waitFor(() => String(onDisk(project, (s) => s.peek(sizeId).anchors[0]?.lines)) === '13,17', 'the moved lines to be written into the memory');
    assert.equal(onDisk(project, (s) => s.staleness(sizeId)?.stale), false, 'moved is not stale');
    assert.equal(String(onDisk(project, (s) => s.peek(timeoutId).anchors[0]?.lines)), '13,15');
  });

  it('says "possibly outdated" once an edit inside the range is saved, and the tree marks that memory', async () => {
    // Line 17 is the last of the pool-size range (13–17), outside the timeout range (13–15).
    await editAndSave((e, document) => e.replace(uri, document.lineAt(16).range, 'export const setting14 = 200; // raised'));
    await waitFor(async () => (await lensTitles()).join() === '13: LTM: 2 memories · 1 possibly outdated', 'the lens to say possibly outdated');

    const stale = await waitFor(async () => {
      const item = await treeItem(sizeId);
      return String(item.description).startsWith('possibly outdated') ? item : null;
    }, 'the tree to mark the memory');
    assert.match(tooltipOf(stale), /Possibly outdated/);
    assert.match(tooltipOf(stale), /src\/pool\.ts#L13-17: the lines changed/);
    assert.equal((stale.iconPath as vscode.ThemeIcon).id, 'warning');
    const fresh = await treeItem(timeoutId);
    assert.doesNotMatch(String(fresh.description), /possibly outdated/);
    // Its context menu offers "Still true — re-anchor", and still everything a memory's menu has; a fresh one's does not.
    assert.equal(stale.contextValue, 'memory.full.outdated');
    assert.equal(fresh.contextValue, 'memory.full');
    assert.deepEqual(contextMenuCommands('memory.full.outdated').sort(), [...contextMenuCommands('memory.full'), 'ltm.reanchor'].sort());
    assert.ok(!contextMenuCommands('memory.reduced').includes('ltm.reanchor'));
    assert.deepEqual(contextMenuCommands('memory.reduced.outdated').sort(), [...contextMenuCommands('memory.reduced'), 'ltm.reanchor'].sort());

    // The memory panel's view: the anchor, its state, and the text at its lines now (the old text is only a hash).
    const details = onDisk(project, (s) => memoryDetails(s, sizeId, 'anchors'));
    assert.equal(details?.anchors?.stale, true);
    const [anchor] = details!.anchors!.items;
    assert.deepEqual([anchor!.spec, anchor!.state, anchor!.lines], ['src/pool.ts#L13-17', 'changed', [13, 17]]);
    assert.match(anchor!.reason ?? '', /the text at these lines changed since the memory was written/);
    assert.match(anchor!.currentText ?? '', /setting14 = 200; \/\/ raised/);
  });

  it('"Still true — re-anchor" clears it: the lens, the tree and the store agree', async () => {
    const view = await vscode.commands.executeCommand<{ anchors: { lines?: number[] }[] }>('ltm.reanchor', { folder: project, id: sizeId });
    assert.deepEqual(view?.anchors.map((a) => a.lines), [[13, 17]]);
    assert.equal(onDisk(project, (s) => s.staleness(sizeId)?.stale), false);
    await waitFor(async () => (await lensTitles()).join() === '13: LTM: 2 memories', 'the lens to drop "possibly outdated"');
    await waitFor(async () => !String((await treeItem(sizeId)).description).includes('possibly outdated'), 'the tree to drop the mark');
    assert.equal((await treeItem(sizeId)).contextValue, 'memory.full', 'no re-anchor in its menu any more');
  });

  it('"Remember selection" stores a memory anchored to the selected lines, with the code in its content', async () => {
    const editor = await vscode.window.showTextDocument(uri);
    // Lines 20–22, selected whole with Shift+Down: the selection ends at the start of line 23.
    editor.selection = new vscode.Selection(19, 0, 22, 0);
    const expectedCode = [19, 20, 21].map((l) => editor.document.lineAt(l).text).join('\n');
    const running = Promise.resolve(vscode.commands.executeCommand<{ id: string; topic: string; content: string; anchors: { path: string; lines?: number[] }[] } | undefined>('ltm.remember'));
    let settled = false;
    void running.finally(() => (settled = true));
    // Three questions: what is true (empty: the code alone), the topic (prefilled), the tags (empty: suggested).
    for (let i = 0; i < 100 && !settled; i++) {
      await new Promise((r) => setTimeout(r, 150));
      await vscode.commands.executeCommand('workbench.action.acceptSelectedQuickOpenItem');
    }
    const memory = await running;
    assert.ok(memory, 'a memory was stored');
    assert.deepEqual(memory.anchors.map((a) => [a.path, a.lines]), [[FILE, [20, 22]]]);
    assert.equal(memory.topic, editor.document.lineAt(19).text.trim(), 'the topic is prefilled from the code');
    assert.ok(memory.content.includes(`From ${FILE}#L20-22:\n\n\`\`\`typescript\n${expectedCode}\n\`\`\``), memory.content);
    assert.equal(onDisk(project, (s) => s.staleness(memory.id)?.stale), false);
    await waitFor(async () => (await lensTitles()).join() === '13: LTM: 2 memories,20: LTM: 1 memory', 'a lens on the new memory’s lines');
  });

  it('refuses to anchor a file outside the workspace’s folders', async () => {
    const outside = path.join(path.dirname(project), `outside-${path.basename(project)}.ts`);
    fs.writeFileSync(outside, 'export const x = 1;\n');
    try {
      const before = api.folders().find((f) => f.path === project)!.memories;
      await vscode.window.showTextDocument(vscode.Uri.file(outside));
      assert.equal(await vscode.commands.executeCommand('ltm.remember'), undefined);
      assert.equal(api.folders().find((f) => f.path === project)!.memories, before, 'nothing was stored');
    } finally {
      await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
      fs.rmSync(outside, { force: true });
    }
  });

  it('shows no lens with ltm.codeLens off', async () => {
    await vscode.workspace.getConfiguration('ltm').update('codeLens', false, vscode.ConfigurationTarget.Workspace);
    await waitFor(async () => (await lensTitles()).length === 0, 'the lenses to go');
    await vscode.workspace.getConfiguration('ltm').update('codeLens', undefined, vscode.ConfigurationTarget.Workspace);
    await waitFor(async () => (await lensTitles()).length === 2, 'the lenses to come back');
  });

  it('notices an anchored file changed outside VS Code (Claude Code editing it, a checkout)', async () => {
    const file = path.join(project, FILE);
    const lines = fs.readFileSync(file, 'utf8').split('\n');
    lines[12] = 'export const setting10 = 0; // changed by another process';
    fs.writeFileSync(file, lines.join('\n'));
    await waitFor(async () => String((await treeItem(timeoutId)).description).startsWith('possibly outdated'), 'the tree to mark the memory');
    await waitFor(async () => (await lensTitles())[0] === '13: LTM: 2 memories · 2 possibly outdated', 'the lens to say so');
  });
});
