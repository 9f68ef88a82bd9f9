/**
 * "LTM: Preview injected context" in a real VS Code: the command run as a
 * person runs it (and with arguments, as a keybinding would), on a folder
 * with a real store of real memory files, next to the workspace's first
 * folder. The document must say what `ltm context` says, and the store must
 * be exactly as it was.
 */
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { ContextPreview } from '../../../src/core/contextPreview';
import { MemoryStore, initStoreFiles } from '../../../src/core/store';
import { storePaths } from '../../../src/core/storeFiles';
import type { LtmApi } from '../../../src/extension';
import { EXTENSION_ID, waitFor } from './hostKit';

const COMMAND = 'ltm.previewContext';
const PROMPT = 'why does the postgres connection pool run dry during our nightly batch jobs';
const UNRELATED = 'make the login button blue and round on small screens';

/** The store's files that a preview must leave alone: memories, archives, indexes, access counts, sessions. */
function storeFiles(project: string): Map<string, string> {
  const root = path.join(project, '.claude', 'ltm');
  const files = new Map<string, string>();
  for (const dir of ['memories', 'archives']) {
    for (const name of fs.existsSync(path.join(root, dir)) ? fs.readdirSync(path.join(root, dir)) : []) files.set(`${dir}/${name}`, fs.readFileSync(path.join(root, dir, name), 'utf8'));
  }
  for (const name of ['index.json', 'archive_index.json', 'stats.json', 'stats.log', 'state.json']) {
    if (fs.existsSync(path.join(root, name))) files.set(name, fs.readFileSync(path.join(root, name), 'utf8'));
  }
  return files;
}

function accessCounts(project: string): Record<string, number> {
  const store = MemoryStore.open(project);
  try {
    return Object.fromEntries(store.list({ limit: 1000 }).memories.map((m) => [m.id, m.access_count]));
  } finally {
    store.dispose();
  }
}

function documentOf(uri: vscode.Uri | undefined): vscode.TextDocument {
  assert.ok(uri, 'the command returned the preview’s URI');
  const document = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
  assert.ok(document, 'the preview is open');
  return document;
}

describe('LTM: Preview injected context', () => {
  let api: LtmApi;
  let cli: string;
  let project: string;
  let bare: string;
  let poolId: string;
  let topId: string;
  let filesBefore: Map<string, string>;
  let countsBefore: Record<string, number>;

  const folderIndex = (dir: string) => (vscode.workspace.workspaceFolders ?? []).findIndex((f) => f.uri.fsPath === dir);
  const cliContext = (prompt: string): ContextPreview => {
    const run = spawnSync(process.execPath, [cli, 'context', '--project', project, '--prompt', prompt, '--json'], { encoding: 'utf8' });
    assert.equal(run.status, 0, run.stderr);
    return JSON.parse(run.stdout) as ContextPreview;
  };

  before(async function () {
    this.timeout(60_000);
    const extension = vscode.extensions.getExtension<LtmApi>(EXTENSION_ID)!;
    api = await extension.activate();
    await api.ready;
    cli = path.join(extension.extensionPath, 'dist', 'cli.js');
    const first = vscode.workspace.workspaceFolders![0]!.uri.fsPath;
    project = fs.mkdtempSync(path.join(path.dirname(first), 'preview-'));
    bare = fs.mkdtempSync(path.join(path.dirname(first), 'no-store-'));

    // A real store: memory files written by the engine, one of them the only one a session starts with.
    initStoreFiles(storePaths(project));
    const store = MemoryStore.open(project);
    try {
      topId = (await store.store({ topic: 'Always run migrations before tests', content: 'The test database needs the latest schema.', tags: ['importance:critical'] })).memory.id;
      poolId = (
        await store.store({
          topic: 'Postgres connection pool exhaustion under batch jobs',
          content: 'A pool of 10 ran dry when the nightly batch jobs held connections; raised to 50 with a 60 s timeout (src/db/pool.ts).',
          tags: ['postgres'],
        })
      ).memory.id;
      await store.store({ topic: 'CSS grid gaps', content: 'Use gap, not margins, between grid items.' });
      await store.updateState((s) => {
        s.config.memories_to_load = 1;
      });
      store.flushCaches();
    } finally {
      store.dispose();
    }

    assert.ok(vscode.workspace.updateWorkspaceFolders(vscode.workspace.workspaceFolders!.length, 0, { uri: vscode.Uri.file(project) }, { uri: vscode.Uri.file(bare) }));
    await waitFor(() => api.folders().find((f) => f.path === project && f.memories === 3 && f.port !== null), 'the extension to open the store and serve it', 30_000);
    await waitFor(() => api.folders().some((f) => f.path === bare), 'the folder without a store');
    // What the server writes once when it starts (caches, server.json) is not the preview's doing.
    await new Promise((r) => setTimeout(r, 500));
    filesBefore = storeFiles(project);
    countsBefore = accessCounts(project);
  });

  after(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    for (const dir of [bare, project]) {
      if (dir && folderIndex(dir) >= 0) {
        vscode.workspace.updateWorkspaceFolders(folderIndex(dir), 1);
        await waitFor(() => !api.folders().some((f) => f.path === dir), 'the folder to be closed').catch(() => undefined);
      }
    }
    for (const dir of [bare, project]) if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('shows the memory a typed prompt is about, why, and exactly the text `ltm context` gives, as a read-only Markdown document', async () => {
    const expected = cliContext(PROMPT);
    assert.deepEqual(expected.prompt!.memories.map((m) => m.id), [poolId], 'the CLI offers the pool memory');
    const uri = await vscode.commands.executeCommand<vscode.Uri>(COMMAND, { folder: project, prompt: PROMPT });
    const document = documentOf(uri);
    assert.equal(document.uri.scheme, 'ltm-context');
    assert.equal(document.languageId, 'markdown');
    assert.equal(vscode.window.activeTextEditor?.document.uri.toString(), uri.toString(), 'shown in the editor');
    const text = document.getText();
    assert.match(text, new RegExp(`^# What Claude Code would be given: ${path.basename(project)}\\n`));
    assert.match(text, /## With this prompt: 1 memory, ~\d+ tokens/);
    assert.match(text, new RegExp(`\\| \`${poolId}\` \\| Postgres connection pool exhaustion under batch jobs \\| [a-z, ]*\\bpostgres\\b[a-z, ]*\\bpool\\b[a-z, ]*\\|`), 'the memory and the words it matched');
    assert.ok(text.includes(`\n${expected.prompt!.text}\n`), 'the same prompt context as ltm context, whole');
    assert.ok(text.includes(`\n${expected.session_start.text}\n`), 'the same session start as ltm context, whole');
    assert.match(text, new RegExp(`\\| 1 \\| \`${topId}\` \\| Always run migrations before tests \\| Full \\|`));
    assert.match(text, /2000 tokens at session start \(`ltm\.injectionTokenBudget`\), 600 with a prompt/, 'the budgets the server uses');

    // Read-only: what a person types there goes nowhere (typing into an untitled document shows that it would).
    const control = await vscode.workspace.openTextDocument({ content: '' });
    await vscode.window.showTextDocument(control);
    await vscode.commands.executeCommand('type', { text: 'x' });
    assert.equal(control.getText(), 'x', 'typing reaches a writable editor');
    await vscode.commands.executeCommand('workbench.action.revertAndCloseActiveEditor');
    await vscode.window.showTextDocument(document);
    await vscode.commands.executeCommand('type', { text: 'x' });
    assert.equal(document.getText(), text);
    assert.equal(document.isDirty, false);
  });

  it('says nothing would be injected with an unrelated prompt', async () => {
    assert.deepEqual(cliContext(UNRELATED).prompt!.memories, []);
    const text = documentOf(await vscode.commands.executeCommand<vscode.Uri>(COMMAND, { folder: project, prompt: UNRELATED })).getText();
    assert.match(text, /## With this prompt: nothing\n/);
    assert.match(text, /Nothing would be injected: no memory that the session start does not already give matches enough of the prompt/);
    assert.ok(text.includes(UNRELATED));
    assert.ok(!text.includes(poolId), 'the pool memory is neither offered nor given at session start');
  });

  it('asks for the folder and what to preview when run from the palette (session start first)', async () => {
    const running = Promise.resolve(vscode.commands.executeCommand<vscode.Uri | undefined>(COMMAND));
    let settled = false;
    void running.finally(() => (settled = true));
    // Each question is a quick pick: the first folder, then "Session start".
    for (let i = 0; i < 100 && !settled; i++) {
      await new Promise((r) => setTimeout(r, 150));
      await vscode.commands.executeCommand('workbench.action.acceptSelectedQuickOpenItem');
    }
    const text = documentOf(await running).getText();
    const first = vscode.workspace.workspaceFolders![0]!;
    assert.match(text, new RegExp(`^# What Claude Code would be given: ${first.name}\\n`));
    assert.match(text, /## At session start: \d+ memor(y|ies)/);
    assert.doesNotMatch(text, /## With this (prompt|failure|file)/);
  });

  it('opens nothing in a folder without a store', async () => {
    const active = vscode.window.activeTextEditor?.document.uri.toString();
    assert.equal(await vscode.commands.executeCommand(COMMAND, { folder: bare, prompt: PROMPT }), undefined);
    assert.equal(vscode.window.activeTextEditor?.document.uri.toString(), active);
  });

  it('counted no access and changed no file of the store', () => {
    assert.deepEqual(accessCounts(project), countsBefore);
    const after = storeFiles(project);
    assert.deepEqual([...after.keys()].sort(), [...filesBefore.keys()].sort());
    for (const [name, text] of filesBefore) assert.equal(after.get(name), text, `${name} changed`);
  });

  it('builds an open preview again when the memories change', async () => {
    const uri = await vscode.commands.executeCommand<vscode.Uri>(COMMAND, { folder: project, prompt: UNRELATED });
    const stored = spawnSync(
      process.execPath,
      [cli, 'store', '--project', project, '--topic', 'Login button styling on small screens', '--content', 'The login button is blue and round; small screens use the compact variant.'],
      { encoding: 'utf8' },
    );
    assert.equal(stored.status, 0, stored.stderr);
    await waitFor(() => documentOf(uri).getText().includes('| Login button styling on small screens |'), 'the preview to offer the new memory');
  });
});
