/**
 * "LTM: Show status" in a real VS Code: a quick pick with one row per fact and
 * a section per folder (the suite's workspace already has the interop store;
 * this test adds a folder of its own), and the rows' actions: the possibly
 * outdated memory opens, the Inbox reviews, Check integrity opens its panel.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { MemoryStore } from '../../../src/core/store';
import type { LtmApi } from '../../../src/extension';
import type { StatusEntry } from '../../../src/vscode/statusView';
import { newProjectFolder, readyApi, removeProjectFolder, waitFor } from './hostKit';

/** The labels of every open tab (webview panels are tabs titled as the panel). */
const tabLabels = () => vscode.window.tabGroups.all.flatMap((g) => g.tabs.map((t) => t.label));

describe('LTM: Show status', () => {
  let api: LtmApi;
  let project: string;
  const ids: Record<string, string> = {};

  before(async function () {
    this.timeout(60_000);
    api = await readyApi();
    project = newProjectFolder('status-');
    fs.mkdirSync(path.join(project, 'src'));
    fs.writeFileSync(path.join(project, 'src', 'pool.ts'), 'export const POOL_SIZE = 10;\nexport const IDLE_MS = 1000;\n');
    const store = MemoryStore.open(project);
    try {
      ids.anchored = (await store.store({ topic: 'Pool size is 10 for the batch jobs', content: 'Batch jobs share a pool of 10.', anchors: ['src/pool.ts#L1-1'] })).memory.id;
      ids.plain = (await store.store({ topic: 'The build writes dist/', content: 'esbuild writes dist/.' })).memory.id;
      await store.setReviewNewMemories(true);
      ids.proposed = (await store.store({ topic: 'Claude noticed the flaky test', content: 'The e2e test needs a longer timeout.', author: 'claude' })).memory.id;
      store.flushCaches();
    } finally {
      store.dispose();
    }
    // The anchored line changes: the memory is possibly outdated.
    fs.writeFileSync(path.join(project, 'src', 'pool.ts'), 'export const POOL_SIZE = 50;\nexport const IDLE_MS = 1000;\n');
    assert.ok(vscode.workspace.updateWorkspaceFolders(vscode.workspace.workspaceFolders!.length, 0, { uri: vscode.Uri.file(project) }));
    await waitFor(() => api.folders().find((f) => f.path === project && f.memories === 3 && f.port !== null), 'the extension to open the store', 30_000);
  });

  afterEach(async () => {
    await vscode.commands.executeCommand('workbench.action.closeQuickOpen');
  });

  after(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await removeProjectFolder(api, project);
  });

  it('shows one row per fact, a section per folder, and says which rows act', async () => {
    const entries = await vscode.commands.executeCommand<StatusEntry[]>('ltm.showStatus');
    assert.ok(Array.isArray(entries), 'the command returns the rows it shows');
    const folders = [...new Set(entries.map((e) => e.folder))];
    assert.deepEqual(folders, (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath), 'a section per folder, in workspace order');
    const mine = new Map(entries.filter((e) => e.folder === project).map((e) => [e.key, e]));
    assert.deepEqual([...mine.keys()], ['memories', 'review', 'outdated', 'demotion', 'archived', 'sessions', 'lastEviction', 'storage', 'integrity', 'config', 'server']);
    const row = (key: string) => mine.get(key as StatusEntry['key'])!;
    assert.equal(row('memories').label, '$(database) Memories');
    assert.equal(row('memories').description, '3 — Full 3 · Hint 0 · Abstract 0');
    assert.equal(row('review').description, '1 — not used until you approve it');
    assert.equal(row('review').action, 'Review them in the Inbox');
    assert.equal(row('outdated').label, '$(warning) Possibly outdated');
    assert.equal(row('outdated').description, '1 memory whose anchored code changed');
    assert.equal(row('outdated').action, 'Open it');
    assert.equal(row('demotion').description, 'none');
    assert.equal(row('demotion').action, null, 'nothing to act on');
    assert.equal(row('archived').description, '0');
    assert.equal(row('lastEviction').description, 'never');
    assert.match(row('storage').description, new RegExp(`^\\d+(\\.\\d)? (B|KB) in ${path.join(project, '.claude', 'ltm').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`));
    assert.equal(row('integrity').action, 'Check integrity');
    assert.match(row('config').description, /^max 100 memories · load 10 per session · evict 10 per cycle · review on · stale label$/);
    assert.equal(row('config').action, 'Open settings');
    const port = api.folders().find((f) => f.path === project)!.port;
    assert.equal(row('server').description, `127.0.0.1:${port}`);
  });

  it('opens the possibly outdated memory', async () => {
    const opened = await vscode.commands.executeCommand('ltm.showStatus', { run: 'outdated', folder: project });
    assert.equal(opened, ids.anchored);
    // A memory opens in the preview tab (its title says so) until it is kept open.
    await waitFor(() => tabLabels().some((label) => label.startsWith('Pool size is 10 for the batch jobs')), 'the memory panel');
  });

  it('opens the integrity panel of the folder', async () => {
    await vscode.commands.executeCommand('ltm.showStatus', { run: 'integrity', folder: project });
    await waitFor(() => tabLabels().includes(`Integrity: ${path.basename(project)}`), 'the integrity panel');
  });

  it('reviews from the Inbox: picking the memory, then Approve, approves it', async () => {
    const store = () => fs.readFileSync(path.join(project, '.claude', 'ltm', 'memories', `${ids.proposed}.md`), 'utf8');
    assert.match(store(), /^status: "?proposed"?$/m);
    // The panels the tests above opened are closed first: a webview that takes
    // the focus while loading hides a quick pick, which then answers nothing.
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    const running = Promise.resolve(vscode.commands.executeCommand('ltm.showStatus', { run: 'review', folder: project }));
    let settled = false;
    void running.finally(() => (settled = true));
    // The Inbox asks which memory (only this one awaits review), then what to do: Approve is first.
    // Each quick pick opens when it opens: accept until the command is done.
    for (let i = 0; i < 100 && !settled; i++) {
      await new Promise((r) => setTimeout(r, 150));
      await vscode.commands.executeCommand('workbench.action.acceptSelectedQuickOpenItem');
    }
    await running;
    await waitFor(() => !/^status: "?proposed"?$/m.test(store()), 'the memory to be approved');
  });

  it('refuses a row that does not exist', async () => {
    // The command reports the error as a message and returns nothing.
    assert.equal(await vscode.commands.executeCommand('ltm.showStatus', { run: 'nonsense', folder: project }), undefined);
  });
});
