/**
 * "LTM: New memory" as one form, its extension side in a real VS Code: the
 * panel is driven with the messages its page sends (NewMemoryPanel.receive).
 * Valid fields become a memory written by a person (approved at once, even
 * with review on) that opens in its panel; input the store refuses comes back
 * as an error under its field, and nothing is written.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { MemoryStore } from '../../../src/core/store';
import type { LtmApi } from '../../../src/extension';
import type { NewMemoryInput, ToWebview } from '../../../src/shared/protocol';
import { newProjectFolder, readyApi, removeProjectFolder, waitFor } from './hostKit';

/** What the tests use of the form panel the command returns. */
interface FormPanel {
  receive(raw: unknown): Promise<void>;
  onDidPost: vscode.Event<ToWebview>;
  readonly isDisposed: boolean;
}

const tabLabels = () => vscode.window.tabGroups.all.flatMap((g) => g.tabs.map((t) => t.label));

describe('LTM: New memory (the form)', () => {
  let api: LtmApi;
  let project: string;
  let form: FormPanel;
  let posted: ToWebview[];
  let listening: vscode.Disposable | undefined;
  const memoryFiles = () => fs.readdirSync(path.join(project, '.claude', 'ltm', 'memories')).sort();
  const fields = (over: Partial<NewMemoryInput>): NewMemoryInput => ({ topic: '', summary: '', content: '', tags: '', importance: 'normal', files: '', ...over });
  /** Sends Save with these fields; returns what the page was told. */
  const save = async (memory: unknown): Promise<ToWebview[]> => {
    posted = [];
    await form.receive({ type: 'createMemory', memory });
    return posted.filter((m) => m.type !== 'busy');
  };

  before(async function () {
    this.timeout(60_000);
    api = await readyApi();
    project = newProjectFolder('form-');
    fs.mkdirSync(path.join(project, 'src'));
    fs.writeFileSync(path.join(project, 'src', 'pool.ts'), 'export const POOL_SIZE = 50;\nexport const IDLE_MS = 1000;\n');
    const store = MemoryStore.open(project);
    try {
      // Review on: a memory a person writes is approved at once all the same.
      await store.setReviewNewMemories(true);
    } finally {
      store.dispose();
    }
    assert.ok(vscode.workspace.updateWorkspaceFolders(vscode.workspace.workspaceFolders!.length, 0, { uri: vscode.Uri.file(project) }));
    await waitFor(() => api.folders().find((f) => f.path === project && f.port !== null), 'the extension to open the store', 30_000);
  });

  beforeEach(async () => {
    form = (await vscode.commands.executeCommand<FormPanel>('ltm.newMemory', { folder: project }))!;
    assert.ok(form && typeof form.receive === 'function', 'the command returns the form');
    posted = [];
    // Run again while the form is open, the command brings the same form to the front.
    listening = form.onDidPost((m) => posted.push(m));
  });

  afterEach(() => listening?.dispose());

  after(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await removeProjectFolder(api, project);
  });

  it('sets the page up with the engine\'s importance levels and the folder', async () => {
    await form.receive({ type: 'ready' });
    const setUp = posted.find((m) => m.type === 'newMemoryForm');
    assert.deepEqual(setUp, { type: 'newMemoryForm', form: { folder: path.basename(project), importanceLevels: ['critical', 'important', 'normal', 'low'], defaultImportance: 'normal' }, draft: null });
  });

  it('answers input the store refuses with its message under the field, and writes nothing', async () => {
    const before = memoryFiles();
    assert.deepEqual(await save(fields({ topic: '   ', content: 'Some text.' })), [{ type: 'formError', field: 'topic', message: 'topic is required and must not be empty' }]);
    assert.deepEqual(await save(fields({ topic: 'A topic', content: ' \n ' })), [{ type: 'formError', field: 'content', message: 'content is required and must not be empty' }]);
    const [anchorError] = await save(fields({ topic: 'A topic', content: 'Text.', files: 'src/pool.ts#L1-1\nsrc/missing.ts#L1-2' }));
    assert.equal(anchorError?.type, 'formError');
    assert.equal(anchorError.type === 'formError' && anchorError.field, 'files');
    assert.match(anchorError.type === 'formError' ? anchorError.message : '', /^cannot anchor "src\/missing\.ts#L1-2": src\/missing\.ts does not exist in the project$/);
    assert.deepEqual(await save(fields({ topic: 'A topic', content: 'Text.', importance: 'urgent' })), [
      { type: 'formError', field: 'importance', message: 'importance must be one of critical, important, normal, low, not "urgent"' },
    ]);
    assert.deepEqual(await save(fields({ topic: 'A topic', content: 'Text.', summary: 'One.\n## Content\nTwo.' })), [
      { type: 'formError', field: 'summary', message: 'the summary must not contain a "## Content" heading line' },
    ]);
    // A message that is not the protocol's is ignored: no answer, nothing written.
    assert.deepEqual(await save({ topic: 'A topic', content: 'Text.', tags: ['not', 'a', 'string'] }), []);
    assert.deepEqual(memoryFiles(), before, 'nothing was written');
    assert.equal(form.isDisposed, false, 'the form stays open to be corrected');
  });

  it('stores valid fields as a person\'s memory, approved at once, and opens it', async () => {
    assert.deepEqual(
      await save(
        fields({
          topic: 'Batch jobs need a pool of 50',
          summary: 'Raise the pool to 50 for batch jobs.',
          content: 'The nightly import ran the pool of 10 dry.\nRaised to 50.',
          tags: 'postgres, batch',
          importance: 'important',
          files: 'src/pool.ts#L1-1',
        }),
      ),
      [],
    );
    const [file] = memoryFiles();
    assert.ok(file, 'a memory file was written');
    const store = MemoryStore.open(project);
    try {
      const memory = store.peek(file.replace(/\.md$/, ''));
      assert.equal(memory.topic, 'Batch jobs need a pool of 50');
      assert.deepEqual(memory.tags, ['postgres', 'batch', 'importance:important']);
      assert.equal(memory.summary, 'Raise the pool to 50 for batch jobs.');
      assert.equal(memory.content, 'The nightly import ran the pool of 10 dry.\nRaised to 50.');
      assert.deepEqual(memory.anchors.map((a) => [a.path, a.lines]), [['src/pool.ts', [1, 1]]]);
      assert.equal(memory.status, undefined, 'a person\'s memory is approved at once');
    } finally {
      store.dispose();
    }
    assert.equal(form.isDisposed, true, 'the form closes');
    // A memory opens in the preview tab (its title says so) until it is kept open.
    await waitFor(() => tabLabels().some((label) => label.startsWith('Batch jobs need a pool of 50')), 'the new memory\'s panel');
    await waitFor(() => api.folders().find((f) => f.path === project && f.memories === 1), 'the view to count it');
  });

  it('refreshes the views once per saved memory: index.json, written by the server a moment later, does not refresh them again', async () => {
    // The earlier tests' writes have settled.
    const pending = path.join(project, '.claude', 'ltm', 'index-pending.json');
    await waitFor(() => !fs.existsSync(pending), 'index.json to be written');
    await new Promise((r) => setTimeout(r, 500));
    const refreshes: number[] = [];
    const started = Date.now();
    const counting = api.onDidChangeMemories((folder) => {
      if (folder === project) refreshes.push(Date.now() - started);
    });
    try {
      assert.deepEqual(await save(fields({ topic: 'Idle connections close after a second', content: 'IDLE_MS is 1000 on purpose.' })), []);
      await waitFor(() => refreshes.length > 0, 'the views to refresh');
      await waitFor(() => !fs.existsSync(pending), 'index.json to be written');
      // Longer than a file event's debounce (150 ms) after index.json was written.
      await new Promise((r) => setTimeout(r, 800));
      assert.equal(refreshes.length, 1, `the views refreshed ${refreshes.length} times (at ${refreshes.join(', ')} ms)`);
    } finally {
      counting.dispose();
    }
  });

  it('closes on Cancel, writing nothing', async () => {
    const before = memoryFiles();
    await form.receive({ type: 'cancel' });
    assert.equal(form.isDisposed, true);
    assert.deepEqual(memoryFiles(), before);
  });
});
