/**
 * "LTM: Merge into…" in a real VS Code: run on a folder with a real store, as
 * a keybinding would (`{ id, into }`). The target must hold both texts, both
 * originals must be in archives/, the source must be gone from the view's
 * count, and the manifest must offer the command on a memory in the tree.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { MemoryStore, type MergeResult } from '../../../src/core/store';
import type { LtmApi } from '../../../src/extension';
import { EXTENSION_ID, newProjectFolder, readyApi, removeProjectFolder, waitFor } from './hostKit';

describe('LTM: Merge into…', () => {
  let api: LtmApi;
  let project: string;
  let sourceId: string;
  let targetId: string;

  before(async function () {
    this.timeout(60_000);
    api = await readyApi();
    project = newProjectFolder('merge-');
    const store = MemoryStore.open(project);
    try {
      targetId = (await store.store({ topic: 'Postgres pool exhausted by batch jobs', content: 'Pool of 10 ran dry; raised to 50.', tags: ['postgres'] })).memory.id;
      sourceId = (await store.store({ topic: 'Nightly import starves the DB pool', content: 'Release connections between chunks.', tags: ['batch'] })).memory.id;
      store.flushCaches();
    } finally {
      store.dispose();
    }
    assert.ok(vscode.workspace.updateWorkspaceFolders(vscode.workspace.workspaceFolders!.length, 0, { uri: vscode.Uri.file(project) }));
    await waitFor(() => api.folders().find((f) => f.path === project && f.memories === 2), 'the extension to open the store', 30_000);
  });

  after(async () => {
    await removeProjectFolder(api, project);
  });

  it('is offered on full and reduced memories in the tree, and in the palette', () => {
    const manifest = vscode.extensions.getExtension(EXTENSION_ID)!.packageJSON as { contributes: { menus: Record<string, { command: string; when?: string }[]> } };
    const item = manifest.contributes.menus['view/item/context']!.find((m) => m.command === 'ltm.mergeInto');
    assert.ok(item && /memory\\\.\(full\|reduced\)/.test(item.when ?? ''), JSON.stringify(item));
    assert.ok(manifest.contributes.menus.commandPalette!.some((m) => m.command === 'ltm.mergeInto'));
  });

  it('merges: the target holds both texts, both originals are archived, the view counts one memory', async () => {
    const changed = new Promise<void>((resolve) => {
      const sub = api.onDidChangeMemories(() => {
        sub.dispose();
        resolve();
      });
    });
    const result = await vscode.commands.executeCommand<MergeResult>('ltm.mergeInto', { id: sourceId, into: targetId });
    assert.ok(result, 'the command returned the merge');
    assert.equal(result.target.id, targetId);
    const root = path.join(project, '.claude', 'ltm');
    const target = fs.readFileSync(path.join(root, 'memories', `${targetId}.md`), 'utf8');
    assert.match(target, /Pool of 10 ran dry; raised to 50\.[\s\S]*Release connections between chunks\./);
    assert.ok(!fs.existsSync(path.join(root, 'memories', `${sourceId}.md`)));
    assert.match(fs.readFileSync(path.join(root, 'archives', `${sourceId}.md`), 'utf8'), /Release connections between chunks\./);
    assert.match(fs.readFileSync(path.join(root, 'archives', `${result.versions[0]}.md`), 'utf8'), /Pool of 10 ran dry; raised to 50\.\n/);
    await Promise.race([changed, new Promise((r) => setTimeout(r, 5_000))]);
    await waitFor(() => api.folders().find((f) => f.path === project && f.memories === 1), 'the view to count one memory');
  });
});
