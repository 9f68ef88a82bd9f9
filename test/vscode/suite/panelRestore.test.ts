/**
 * After a window reload VS Code brings LTM's panels back through its webview
 * serializers, with the state each page kept. The suite cannot reload the
 * window it runs in, so it does what VS Code does: it makes a panel of the
 * view type (`createWebviewPanel`) and hands it, with a saved state, to the
 * extension's serializer (`restorePanel`). The page that then loads in it is
 * spoken for through the panel's `receive`, as in memoryPanel.test.ts.
 */
import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { MemoryStore } from '../../../src/core/store';
import type { LtmApi } from '../../../src/extension';
import type { MemoryFields, NewMemoryInput, PersistedPanelState, ToWebview, WebviewView } from '../../../src/shared/protocol';
import { PANEL_VIEW_TYPES } from '../../../src/vscode/webviewHtml';
import type { PanelHandle } from '../../../src/vscode/ltmPanel';
import { EXTENSION_ID, fieldsOnDisk, newProjectFolder, readyApi, removeProjectFolder, runCli, waitFor } from './hostKit';

/** A panel as VS Code hands it to a serializer after a reload: of the view's type, its page not yet set up. */
function vscodeRestoredPanel(view: WebviewView): vscode.WebviewPanel {
  return vscode.window.createWebviewPanel(PANEL_VIEW_TYPES[view], 'restored', vscode.ViewColumn.Active, {});
}

/** Sends the page's `ready`, as the page loaded in the restored panel does, and returns what the panel told it. */
async function pageReady(panel: PanelHandle): Promise<ToWebview[]> {
  const posted: ToWebview[] = [];
  const listening = panel.onDidPost((m) => posted.push(m));
  try {
    await panel.receive({ type: 'ready' });
  } finally {
    listening.dispose();
  }
  return posted;
}

const disposed = (panel: vscode.WebviewPanel) => new Promise<void>((resolve) => panel.onDidDispose(() => resolve()));

describe('panels come back after a window reload (webview serializers)', () => {
  let api: LtmApi;
  let project: string;
  let folderUri: string;
  const ids = { pool: '', retry: '', cache: '' };
  const onDisk = (id: string): MemoryFields => fieldsOnDisk(project, id);
  const memoryState = (id: string, edit: { base: MemoryFields; draft: MemoryFields } | null, pinned = false): PersistedPanelState => ({
    panel: { view: 'memory', folder: folderUri, id, pinned },
    edit,
    form: null,
  });
  const probe = (id: string) => waitFor(() => api.memoryPanels().find((p) => p.id === id), `a panel showing ${id}`);

  before(async function () {
    this.timeout(60_000);
    api = await readyApi();
    project = newProjectFolder('restore-');
    folderUri = vscode.Uri.file(project).toString();
    const store = MemoryStore.open(project);
    try {
      ids.pool = (await store.store({ topic: 'Postgres pool exhausted by batch jobs', summary: 'Raise the pool to 50.', content: 'Pool of 10 ran dry.', tags: ['postgres'] })).memory.id;
      ids.retry = (await store.store({ topic: 'Retries need jitter', content: 'Without jitter the retries came in waves.', tags: ['http'] })).memory.id;
      ids.cache = (await store.store({ topic: 'Cache keys include the locale', content: 'A German page was served to an English reader.', tags: ['cache'] })).memory.id;
      store.flushCaches();
    } finally {
      store.dispose();
    }
    assert.ok(vscode.workspace.updateWorkspaceFolders(vscode.workspace.workspaceFolders!.length, 0, { uri: vscode.Uri.file(project) }));
    await waitFor(() => api.folders().find((f) => f.path === project && f.memories === 3), 'the extension to open the store', 30_000);
  });

  afterEach(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  after(async () => {
    await removeProjectFolder(api, project);
  });

  it('is declared for every panel, so that VS Code starts the extension to restore one', () => {
    const manifest = vscode.extensions.getExtension(EXTENSION_ID)!.packageJSON as { activationEvents: string[] };
    for (const viewType of Object.values(PANEL_VIEW_TYPES)) assert.ok(manifest.activationEvents.includes(`onWebviewPanel:${viewType}`), viewType);
  });

  it('brings a memory panel back showing its memory, with the unsaved draft still unsaved, and saves it', async () => {
    const base = onDisk(ids.pool);
    const draft = { ...base, summary: 'Raise the pool to 60.', tags: ['postgres', 'batch'] };
    const panel = vscodeRestoredPanel('memory');
    const restored = await api.restorePanel(panel, memoryState(ids.pool, { base, draft }));
    assert.ok(restored && !restored.isDisposed, 'the panel is taken over');
    const shown = await probe(ids.pool);
    assert.equal(shown.dirty, true, 'the draft came back unsaved');
    assert.deepEqual(shown.edit, { base, draft });
    assert.equal(shown.pinned, true, 'a panel with a draft is kept, as when editing started');
    assert.equal(shown.title, '● Postgres pool exhausted by batch jobs');
    assert.equal(panel.title, '● Postgres pool exhausted by batch jobs', 'VS Code’s restored tab is the panel');

    const posted = await pageReady(restored);
    assert.deepEqual(posted[0], { type: 'identity', panel: { view: 'memory', folder: folderUri, id: ids.pool, pinned: true } }, 'the page learns which panel it is first');
    const memory = posted.find((m) => m.type === 'memory');
    assert.ok(memory && memory.type === 'memory');
    assert.equal(memory.memory.id, ids.pool);
    assert.deepEqual(memory.panel.edit, { base, draft }, 'the page shows the draft in edit mode');
    assert.equal(posted.some((m) => m.type === 'conflict'), false, 'nothing changed on disk: no conflict');
    const token = api.folders().find((f) => f.path === project)?.token;
    assert.ok(token, 'the folder has a server and token');
    assert.equal(JSON.stringify(posted).includes(token), false, 'the token never reaches the page');
    assert.equal(onDisk(ids.pool).summary, 'Raise the pool to 50.', 'restoring saved nothing');

    await restored.receive({ type: 'save', id: ids.pool, overwrite: false });
    assert.deepEqual(onDisk(ids.pool), draft);
    assert.equal((await probe(ids.pool)).dirty, false);
  });

  it('says at once when the memory changed on disk meanwhile, and overwrites only when asked', async () => {
    const base = onDisk(ids.retry);
    const draft = { ...base, content: 'Mine: add full jitter.' };
    await runCli(project, 'update', ids.retry, '--content', 'Theirs: add equal jitter.');
    const restored = (await api.restorePanel(vscodeRestoredPanel('memory'), memoryState(ids.retry, { base, draft })))!;
    const posted = await pageReady(restored);
    const conflict = posted.find((m) => m.type === 'conflict');
    assert.ok(conflict && conflict.type === 'conflict', 'the page shows the conflict with the restored draft');
    assert.deepEqual(conflict.fields, ['content']);
    assert.equal(conflict.theirs.content, 'Theirs: add equal jitter.');
    await restored.receive({ type: 'save', id: ids.retry, overwrite: false });
    assert.equal(onDisk(ids.retry).content, 'Theirs: add equal jitter.', 'their change is not overwritten silently');
    assert.equal((await probe(ids.retry)).dirty, true, 'the draft is kept');
    await restored.receive({ type: 'save', id: ids.retry, overwrite: true });
    assert.equal(onDisk(ids.retry).content, 'Mine: add full jitter.');
  });

  it('restores an unpinned preview without a draft as the preview', async () => {
    const restored = await api.restorePanel(vscodeRestoredPanel('memory'), memoryState(ids.cache, null));
    assert.ok(restored);
    const shown = await probe(ids.cache);
    assert.deepEqual([shown.dirty, shown.pinned, shown.title], [false, false, 'Cache keys include the locale (Preview)']);
  });

  it('says so when the memory was forgotten or no longer exists, and keeps the draft in view', async () => {
    await runCli(project, 'forget', ids.cache);
    const base = { topic: 'Cache keys include the locale', tags: ['cache'], importance: 'normal', summary: 'A German page was served to an English reader.', content: 'A German page was served to an English reader.' } satisfies MemoryFields;
    const draft = { ...base, summary: 'Key by locale and currency.' };
    const archived = (await api.restorePanel(vscodeRestoredPanel('memory'), memoryState(ids.cache, { base, draft })))!;
    const shown = (await pageReady(archived)).find((m) => m.type === 'memory');
    assert.ok(shown && shown.type === 'memory');
    assert.equal(shown.memory.phase, 3, 'the panel shows the memory archived');
    assert.equal(shown.memory.fields, null, 'an archived memory is not edited');
    assert.deepEqual(shown.panel.edit?.draft, draft, 'the draft comes with it, for the page to show');

    const unknown = 'mem_0000dead';
    const gone = (await api.restorePanel(vscodeRestoredPanel('memory'), memoryState(unknown, { base, draft })))!;
    assert.match((await probe(unknown)).title, /^● mem_0000dead \(gone\)$/);
    const posted = await pageReady(gone);
    assert.deepEqual(
      posted.find((m) => m.type === 'memoryGone'),
      { type: 'memoryGone', id: unknown, message: `${unknown} no longer exists in ${path.basename(project)}.`, draft },
    );
  });

  it('shows why a panel of a folder no longer open cannot be shown, with its draft as escaped text', async () => {
    const base = onDisk(ids.pool);
    const draft = { ...base, content: 'Mine: <script>alert(1)</script> & more' };
    const gone = vscode.Uri.file(path.join(path.dirname(project), 'closed-project')).toString();
    const panel = vscodeRestoredPanel('memory');
    const restored = await api.restorePanel(panel, { panel: { view: 'memory', folder: gone, id: ids.pool, pinned: true }, edit: { base, draft }, form: null });
    assert.equal(restored, undefined, 'no memory panel: nothing to show');
    assert.equal(api.memoryPanels().some((p) => p.id === ids.pool), false);
    assert.equal(panel.title, '● Memory (folder not open)');
    const html = panel.webview.html;
    assert.match(html, /The folder “closed-project” is not open in this window/);
    assert.ok(html.includes('Mine: &#60;script&#62;alert(1)&#60;/script&#62; &#38; more'), 'the draft is there, escaped');
    assert.equal(html.includes('<script'), false, 'the page runs no script at all');
    assert.equal(panel.webview.options.enableScripts, false);

    const form = vscodeRestoredPanel('newMemory');
    assert.equal(await api.restorePanel(form, { panel: { view: 'newMemory', folder: gone }, edit: null, form: null }), undefined);
    assert.match(form.webview.html, /cannot be shown\. Close this tab, or add the folder back/);
  });

  it('closes a panel whose saved state is not one LTM keeps', async () => {
    const hostile: [WebviewView, unknown][] = [
      ['memory', undefined],
      ['memory', {}],
      ['memory', { panel: { view: 'memory', folder: folderUri, id: '../../etc/passwd', pinned: true } }],
      ['memory', JSON.parse(`{"__proto__": ${JSON.stringify(memoryState(ids.pool, null))}}`)],
      ['integrity', memoryState(ids.pool, null)],
      ['archives', 'archives'],
    ];
    for (const [view, state] of hostile) {
      const panel = vscodeRestoredPanel(view);
      const closing = disposed(panel);
      assert.equal(await api.restorePanel(panel, state), undefined);
      await closing;
    }
    assert.equal(api.memoryPanels().length, 0);
  });

  it('brings the New memory form back filled in as typed, and the integrity and archives panels showing the store now', async () => {
    const typed: NewMemoryInput = { topic: 'Deploys wait for the migration', summary: '', content: 'Run it first.', tags: 'deploy', importance: 'important', files: '' };
    const form = (await api.restorePanel(vscodeRestoredPanel('newMemory'), { panel: { view: 'newMemory', folder: folderUri }, edit: null, form: typed }))!;
    const setUp = (await pageReady(form)).find((m) => m.type === 'newMemoryForm');
    assert.ok(setUp && setUp.type === 'newMemoryForm');
    assert.deepEqual(setUp.draft, typed);
    assert.equal(await vscode.commands.executeCommand('ltm.newMemory', { folder: project }), form, 'it is the folder’s one form');

    const integrity = (await api.restorePanel(vscodeRestoredPanel('integrity'), { panel: { view: 'integrity', folder: folderUri }, edit: null, form: null }))!;
    const report = (await pageReady(integrity)).find((m) => m.type === 'integrity');
    assert.ok(report && report.type === 'integrity');
    assert.equal(report.report.folder, path.basename(project));

    const archives = (await api.restorePanel(vscodeRestoredPanel('archives'), { panel: { view: 'archives' }, edit: null, form: null }))!;
    const listed = (await pageReady(archives)).find((m) => m.type === 'archives');
    assert.ok(listed && listed.type === 'archives');
    assert.ok(listed.items.some((i) => i.id === ids.cache), 'the memory forgotten above is in the archives');
  });
});
