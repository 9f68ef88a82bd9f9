/**
 * The Memories view as a person uses it, in a real VS Code, on a folder of its
 * own (added to the workspace, removed afterwards): grouping by tag, Forget on
 * several memories and its Undo, Restore on the rows selected in the tree, the
 * filter, and invalid memory files in the Problems panel with their quick fix.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { MemoryStore, type MemoryView } from '../../../src/core/store';
import type { LtmApi } from '../../../src/extension';
import type { MemoryTreeNode } from '../../../src/vscode/memoryTree';
import { newProjectFolder, readyApi, removeProjectFolder, waitFor } from './hostKit';

describe('the Memories view', () => {
  let api: LtmApi;
  let project: string;
  const ids: Record<string, string> = {};
  const memoriesDir = () => path.join(project, '.claude', 'ltm', 'memories');

  /** The rows under this test's folder (the workspace has several folders: each is a root). */
  const folderRows = async (): Promise<MemoryTreeNode[]> => {
    const roots = (await api.memoryTree.getChildren()) ?? [];
    const folder = roots.find((n) => n.kind === 'folder' && n.folder.folder.uri.fsPath === project);
    assert.ok(folder, 'the folder is a root of the view');
    return (await api.memoryTree.getChildren(folder)) ?? [];
  };
  const groups = async () => (await folderRows()).filter((n): n is Extract<MemoryTreeNode, { kind: 'group' }> => n.kind === 'group');
  const rowOf = async (id: string) => {
    for (const group of await groups()) {
      for (const row of (await api.memoryTree.getChildren(group)) ?? []) if (row.kind === 'memory' && row.memory.id === id) return row;
    }
    return undefined;
  };
  const fileOf = (id: string) => path.join(memoriesDir(), `${id}.md`);

  before(async function () {
    this.timeout(60_000);
    api = await readyApi();
    project = newProjectFolder('tree-');
    const statePath = path.join(project, '.claude', 'ltm', 'state.json');
    const setLimit = (max: number) => {
      // No state.json until the first session: the shape the store writes.
      const state = (fs.existsSync(statePath)
        ? JSON.parse(fs.readFileSync(statePath, 'utf8'))
        : { version: 1, session_count: 0, sessions: {}, compaction_count: 0, last_eviction: null, config: { memories_to_load: 10 } }) as { config: Record<string, number> };
      state.config = { ...state.config, max_memories: max, eviction_batch_size: 1 };
      fs.writeFileSync(statePath, JSON.stringify(state, null, 2));
    };
    const store = MemoryStore.open(project);
    try {
      const add = async (key: string, topic: string, tags: string[]) => (ids[key] = (await store.store({ topic, content: `${topic}: the details.`, tags })).memory.id);
      await add('pool', 'Postgres pool exhausted by batch jobs', ['postgres', 'importance:critical']);
      await add('compose', 'Docker compose needs the db healthcheck', ['postgres', 'docker']);
      await add('lint', 'Lint before commit', []);
      await add('plain', 'The build writes dist/', []);
      await add('hooks', 'Hook curl uses 127.0.0.1', ['hooks', 'importance:important']);
      await add('old', 'Old pgbouncer setting', ['old', 'postgres']);
      await store.forget(ids.old!);
      // A reduced memory whose importance changed after the reduction: its archive holds the older one.
      await add('reduced', 'Staging uses its own bucket', ['importance:low']);
      store.flushCaches();
    } finally {
      store.dispose();
    }
    setLimit(5);
    const limited = MemoryStore.open(project);
    try {
      const evicted = await limited.evict();
      assert.deepEqual(evicted.steps.map((step) => step.id), [ids.reduced], JSON.stringify(evicted));
      // The text before the update is archived under an ID of its own: an archived row too.
      ids.version = (await limited.update(ids.reduced!, { tags: ['importance:important'] })).versions[0]!;
      assert.equal(limited.peek(ids.reduced!).phase, 1);
      limited.flushCaches();
    } finally {
      limited.dispose();
    }
    setLimit(100);
    assert.ok(vscode.workspace.updateWorkspaceFolders(vscode.workspace.workspaceFolders!.length, 0, { uri: vscode.Uri.file(project) }));
    await waitFor(() => api.folders().find((f) => f.path === project && f.memories === 6), 'the extension to open the store', 30_000);
  });

  after(async () => {
    await vscode.commands.executeCommand('ltm.clearFilter');
    await vscode.commands.executeCommand('ltm.groupByPhase');
    await removeProjectFolder(api, project);
  });

  it('groups by tag without importance:* groups, keeps archived memories in Archived (collapsed), and expands a few groups', async () => {
    await vscode.commands.executeCommand('ltm.groupByTag');
    const shown = await Promise.all(
      (await groups()).map(async (g) => {
        const item = await api.memoryTree.getTreeItem(g);
        return [item.label, g.group.memories.map((m) => m.id).sort(), item.collapsibleState === vscode.TreeItemCollapsibleState.Collapsed];
      }),
    );
    assert.deepEqual(shown, [
      ['postgres', [ids.pool, ids.compose].sort(), false],
      ['docker', [ids.compose], false],
      ['hooks', [ids.hooks], false],
      ['(untagged)', [ids.lint, ids.plain, ids.reduced].sort(), false],
      ['Archived', [ids.old, ids.version].sort(), true],
    ]);
    // A memory with two tags is a row of each group; VS Code refuses two rows with one ID.
    const rowIds: string[] = [];
    for (const group of await groups()) for (const row of (await api.memoryTree.getChildren(group)) ?? []) rowIds.push((await api.memoryTree.getTreeItem(row)).id!);
    assert.equal(new Set(rowIds).size, rowIds.length, `row IDs are unique: ${rowIds.join(', ')}`);
    const docker = (await groups()).find((g) => g.group.tag === 'docker')!;
    assert.equal((await api.memoryTree.getTreeItem(docker)).accessibilityInformation?.label, 'tag docker, 1 memory');
  });

  it('asks before forgetting the rows selected in the tree, and forgets nothing unless the person confirms', async () => {
    const rows = await Promise.all([rowOf(ids.pool!), rowOf(ids.plain!)]);
    // Nobody can answer here: VS Code refuses modal dialogs to extension tests, so the question fails, which must count as a "no".
    const outcome = await Promise.race([
      vscode.commands.executeCommand<unknown[] | undefined>('ltm.forget', rows[0], rows),
      new Promise((r) => setTimeout(() => r('still asking'), 5_000)),
    ]);
    assert.notEqual(outcome, 'still asking');
    assert.ok(!outcome || (Array.isArray(outcome) && outcome.length === 0), JSON.stringify(outcome));
    assert.ok(fs.existsSync(fileOf(ids.pool!)) && fs.existsSync(fileOf(ids.plain!)), 'nothing was forgotten');
  });

  it('Undo after Forget gives a reduced memory back the importance it had, not its archive\'s', async () => {
    await vscode.commands.executeCommand('ltm.forget', { ids: [ids.reduced] });
    assert.ok(!fs.existsSync(fileOf(ids.reduced!)));
    const [restored] = await vscode.commands.executeCommand<MemoryView[]>('ltm.undoForget');
    assert.ok(restored);
    assert.equal(restored.id, ids.reduced);
    assert.deepEqual(restored.tags, ['importance:important']);
    assert.equal(restored.phase, 0, 'with its full text');
  });

  it('forgets several memories at once, and Undo restores them as they were', async () => {
    const before = { pool: fs.readFileSync(fileOf(ids.pool!), 'utf8'), compose: fs.readFileSync(fileOf(ids.compose!), 'utf8') };
    const forgotten = await vscode.commands.executeCommand<{ id: string }[]>('ltm.forget', { ids: [ids.pool, ids.compose] });
    assert.deepEqual(forgotten.map((f) => f.id).sort(), [ids.pool, ids.compose].sort());
    for (const id of [ids.pool!, ids.compose!]) {
      assert.ok(!fs.existsSync(fileOf(id)), `${id} left memories/`);
      assert.ok(fs.existsSync(path.join(project, '.claude', 'ltm', 'archives', `${id}.md`)), `${id} is archived`);
    }
    await waitFor(async () => (await rowOf(ids.pool!))?.memory.phase === 3, 'the view to show the forgotten memory as archived');

    const restored = await vscode.commands.executeCommand<MemoryView[]>('ltm.undoForget');
    assert.deepEqual(restored.map((m) => m.id).sort(), [ids.pool, ids.compose].sort());
    const pool = MemoryStore.open(project);
    try {
      assert.deepEqual(pool.peek(ids.pool!).tags, ['postgres', 'importance:critical'], 'its importance is kept');
      assert.equal(pool.peek(ids.compose!).phase, 0);
    } finally {
      pool.dispose();
    }
    // The same text; only the phase history records the round trip.
    const body = (text: string) => text.slice(text.indexOf('\n---\n'));
    assert.equal(body(fs.readFileSync(fileOf(ids.pool!), 'utf8')), body(before.pool));
    assert.equal(body(fs.readFileSync(fileOf(ids.compose!), 'utf8')), body(before.compose));
    assert.deepEqual(await vscode.commands.executeCommand('ltm.undoForget'), [], 'one Undo per Forget');
  });

  it('restores every archived memory selected in the tree, not only the row it is run on', async () => {
    await vscode.commands.executeCommand('ltm.forget', { ids: [ids.lint] });
    const rows = await waitFor(async () => {
      const lint = await rowOf(ids.lint!);
      const old = await rowOf(ids.old!);
      return lint?.memory.phase === 3 && old ? [lint, old] : undefined;
    }, 'both archived rows');
    // As VS Code calls it: the row the menu was opened on, then the selection.
    // The same memory selected twice (grouped by tag, a row in each of two groups) is restored once.
    const restored = await vscode.commands.executeCommand<MemoryView[]>('ltm.restore', rows[0], [...rows, rows[1]]);
    assert.deepEqual(restored.map((m) => m.id).sort(), [ids.lint, ids.old].sort());
    assert.ok(fs.existsSync(fileOf(ids.lint!)) && fs.existsSync(fileOf(ids.old!)));
    await waitFor(() => api.folders().find((f) => f.path === project)?.memories === 7, 'the view to count seven memories');
  });

  it('filters by text and by tag, says so, and shows everything again when cleared', async () => {
    // By tag, a memory with two tags is a row of each group: the memories shown, once each.
    const ours = () => [...new Set(api.memoryRows().filter((r) => r.folder === project).map((r) => r.id))].sort();
    await vscode.commands.executeCommand('ltm.filter', { text: 'POOL' });
    await waitFor(() => ours().length === 1, 'the view to show the matching memory');
    assert.deepEqual(ours(), [ids.pool]);
    assert.equal(api.memoryView().description, 'filtered: "POOL"');
    assert.match(api.memoryView().message ?? '', /^Filtered by "POOL": \d+ memor(y matches|ies match)\.$/);

    await vscode.commands.executeCommand('ltm.filter', { tag: 'postgres' });
    await waitFor(() => ours().length === 3, 'the view to show the postgres memories');
    assert.deepEqual(ours(), [ids.pool, ids.compose, ids.old].sort());
    assert.equal(api.memoryView().description, 'filtered: tag postgres');

    await vscode.commands.executeCommand('ltm.filter', { text: 'no memory says this' });
    await waitFor(() => ours().length === 0, 'the view to show nothing');
    assert.match(api.memoryView().message ?? '', /no memory matches/);

    await vscode.commands.executeCommand('ltm.clearFilter');
    await waitFor(() => ours().length === 8, 'every memory again (seven and an archived version)');
    assert.equal(api.memoryView().description, undefined);
    assert.equal(api.memoryView().message, undefined);
  });

  it('asks for the filter in a quick input: the tags of the memories, and Clear filter when one is on', async () => {
    // The quick input opens asynchronously; the test cannot see it, so it gives it a moment.
    const settle = () => new Promise((r) => setTimeout(r, 1_000));
    // Nothing typed: the tags, most used first (postgres).
    const picked = vscode.commands.executeCommand<unknown>('ltm.filter');
    await settle();
    await vscode.commands.executeCommand('workbench.action.acceptSelectedQuickOpenItem');
    assert.deepEqual(await picked, { tag: 'postgres' });
    assert.equal(api.memoryView().description, 'filtered: tag postgres');
    // With a filter on, the quick input starts with its text ("Containing …" first), then Clear filter.
    await vscode.commands.executeCommand('ltm.filter', { text: 'pool' });
    const cleared = vscode.commands.executeCommand<unknown>('ltm.filter');
    await settle();
    await vscode.commands.executeCommand('workbench.action.quickOpenSelectNext');
    await vscode.commands.executeCommand('workbench.action.acceptSelectedQuickOpenItem');
    assert.equal(await cleared, undefined);
    assert.equal(api.memoryView().description, undefined);
  });

  it('shows an invalid memory file in the Problems panel, with a quick fix that repairs it and clears the mark', async function () {
    this.timeout(60_000);
    const bad = path.join(memoriesDir(), 'mem_0badf00d.md');
    fs.writeFileSync(bad, '---\nid: mem_0badf00d\ntopic: [unclosed\n---\nbody\n');
    const uri = vscode.Uri.file(bad);
    const diagnostic = await waitFor(() => vscode.languages.getDiagnostics(uri).find((d) => d.source === 'LTM'), 'the invalid file to be marked');
    assert.equal(diagnostic.severity, vscode.DiagnosticSeverity.Warning);
    assert.match(diagnostic.message, /^LTM cannot read this file as a memory/);
    assert.match(diagnostic.message, /quarantine/);

    // Code actions are asked of an open document, as when the person opens the file from the Problems panel.
    await vscode.window.showTextDocument(uri);
    // Asked again until answered: the editor's own request for the document it just opened can cancel ours (it then gives []).
    let offered: string[] = [];
    const fix = await waitFor(async () => {
      const actions = await vscode.commands.executeCommand<vscode.CodeAction[]>('vscode.executeCodeActionProvider', uri, diagnostic.range, vscode.CodeActionKind.QuickFix.value);
      offered = actions.map((a) => a.title);
      return actions.find((a) => a.title === 'Fix integrity (LTM)' && a.command);
    }, 'the quick fix to be offered').catch(() => assert.fail(`the quick fix is offered: ${JSON.stringify(offered)}`));
    assert.ok(fix.command);
    await vscode.commands.executeCommand(fix.command.command, ...(fix.command.arguments ?? []));
    assert.ok(!fs.existsSync(bad), 'the file left memories/');
    assert.ok(fs.readdirSync(path.join(project, '.claude', 'ltm', 'quarantine')).some((f) => f.endsWith('mem_0badf00d.md')), 'and is in quarantine/');
    await waitFor(() => !vscode.languages.getDiagnostics(uri).some((d) => d.source === 'LTM'), 'the mark to be cleared');
  });

  it('lets several rows be selected, and is not an empty store (its welcome: emptyStore.test.ts)', () => {
    assert.equal(api.memoryView().canSelectMany, true);
    assert.equal(api.memoryView().emptyStore, false);
  });
});
