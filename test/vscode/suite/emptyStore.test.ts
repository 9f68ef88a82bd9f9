/**
 * The Memories view on a workspace whose store was just initialized and holds
 * nothing (test/e2e/vscodeExtension.test.ts runs this file alone on such a
 * workspace): the view has no rows, so its welcome for an empty store shows
 * and says what to do next; once a first memory is stored, the rows replace it.
 */
import { strict as assert } from 'node:assert';
import * as vscode from 'vscode';
import { MemoryStore } from '../../../src/core/store';
import type { LtmApi } from '../../../src/extension';
import { EXTENSION_ID, waitFor } from './hostKit';

describe('the Memories view on an initialized, empty store', () => {
  let api: LtmApi;
  let folder: string;

  before(async function () {
    // Only on its own workspace (LTM_TEST_SUITE_FILES names it); a runner that takes every file (.vscode-test.mjs) skips it.
    if (!process.env.LTM_TEST_SUITE_FILES?.split(',').includes('emptyStore.test.js')) this.skip();
    api = await vscode.extensions.getExtension<LtmApi>(EXTENSION_ID)!.activate();
    await api.ready;
    folder = vscode.workspace.workspaceFolders![0]!.uri.fsPath;
  });

  it('has no rows and sets ltm.emptyStore, whose welcome says what to do next', async () => {
    assert.equal(api.folders()[0]?.port !== null, true, 'the store is open and served');
    assert.deepEqual(await api.memoryTree.getChildren(), [], 'no rows: VS Code shows the welcome');
    assert.equal(api.memoryView().emptyStore, true);
    const manifest = vscode.extensions.getExtension(EXTENSION_ID)!.packageJSON as { contributes: { viewsWelcome: { view: string; contents: string; when: string }[] } };
    const shown = manifest.contributes.viewsWelcome.filter((w) => w.view === 'ltm.memories' && /(^|&& )ltm\.emptyStore\b/.test(w.when));
    assert.equal(shown.length, 1, JSON.stringify(shown));
    for (const next of ['command:ltm.setUpClaude', 'command:ltm.newMemory', '/remember']) assert.ok(shown[0]!.contents.includes(next), `it offers ${next}`);
  });

  it('shows the first memory stored (here as the CLI or Claude Code would, on disk) instead of the welcome', async () => {
    const store = MemoryStore.open(folder);
    try {
      await store.store({ topic: 'The first memory', content: 'Stored from outside VS Code.' });
    } finally {
      store.dispose();
    }
    await waitFor(() => api.memoryView().emptyStore === false, 'ltm.emptyStore to be cleared');
    assert.deepEqual(api.memoryRows().map((r) => r.label), ['The first memory']);
  });
});
