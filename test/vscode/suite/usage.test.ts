/**
 * Which memories earn their place, in a real VS Code: the Memories view sorts
 * by priority, last use or creation (its `…` menu's commands), marks a
 * demotion candidate, and says the counters in words in its tooltip.
 * Uses are recorded on disk by another store, as the server or the CLI of
 * another process would; the view follows within a second.
 */
import { strict as assert } from 'node:assert';
import * as vscode from 'vscode';
import { MemoryStore } from '../../../src/core/store';
import { DEMOTION_MIN_INJECTED_SESSIONS } from '../../../src/core/usage';
import type { LtmApi, MemoryRow } from '../../../src/extension';
import { EXTENSION_ID, waitFor } from './hostKit';

/** A tooltip's text without Markdown's escapes (appendText escapes punctuation and writes spaces as &nbsp;). */
const plain = (markdown: string) => markdown.replace(/&nbsp;/g, ' ').replace(/\\(.)/g, '$1');

describe('usage in the Memories view', () => {
  let api: LtmApi;
  let folder: string;

  before(async () => {
    api = await vscode.extensions.getExtension<LtmApi>(EXTENSION_ID)!.activate();
    await api.ready;
    folder = vscode.workspace.workspaceFolders![0]!.uri.fsPath;
  });
  after(async () => {
    await vscode.commands.executeCommand('ltm.sortByPriority');
  });

  let ids: string[] = [];
  /** The rows of the memories under test, in the view's order. */
  const rows = (): MemoryRow[] => api.memoryRows().filter((r) => r.folder === folder && ids.includes(r.id));

  it('sorts by last use, by creation and by priority; marks a demotion candidate; says the counters in words in the tooltip', async () => {
    const store = MemoryStore.open(folder);
    let unused: string;
    let recalled: string;
    let createdOrder: string[];
    let lastSession = 0;
    let injected = 0;
    try {
      // The view groups by phase: the order is checked among the full memories, one group.
      const full = () => store.list({ limit: 1000, phase: 0 }).memories;
      for (let i = full().length; i < 3; i++) await store.store({ topic: `Usage test memory ${i}`, content: `Stored to be used or not, ${i}.`, difficulty: 0.1 * i });
      ids = full().map((m) => m.id);
      createdOrder = store.list({ limit: 1000, phase: 0, sort: 'created' }).memories.map((m) => m.id);
      // The lowest-priority memory is recalled, so that sorting by last use visibly moves it to the top.
      recalled = ids.at(-1)!;
      unused = ids[0]!;
      // Sessions after those the earlier tests started (Claude Code's own were injected too).
      const base = store.sessionCount;
      for (let session = base + 1; session <= base + DEMOTION_MIN_INJECTED_SESSIONS; session++) await store.recordUsageBySession(new Map([[session, { injected: ids }]]));
      await store.recordRecalls(ids.filter((id) => id !== unused), base + 7);
      await store.recordRecalls([recalled], base + 9);
      lastSession = base + 9;
      injected = store.peek(unused).usage.injected_sessions;
      assert.ok(injected >= DEMOTION_MIN_INJECTED_SESSIONS);
      assert.equal(store.peek(unused).demotion_candidate, true);
    } finally {
      store.dispose();
    }

    const row = (id: string) => rows().find((r) => r.id === id);
    await waitFor(
      () => row(unused)?.description.includes(`▽ unused in ${injected} sessions`),
      `the view to mark the demotion candidate (rows: ${JSON.stringify(api.memoryRows().map((r) => [r.id, r.description]))})`,
    );
    const tooltip = plain(row(unused)!.tooltip);
    assert.ok(tooltip.includes(`Usage: injected in ${injected} sessions, never read, never recalled, last used never.`), tooltip);
    assert.ok(tooltip.includes(`⚠ candidate for demotion: injected in ${injected} sessions, never read nor recalled. Nothing is done automatically.`), tooltip);
    assert.match(plain(row(recalled)!.tooltip), new RegExp(`Usage: injected in \\d+ sessions, never read, recalled twice, last used in session ${lastSession} \\(just now\\)\\.`));
    assert.ok(!row(recalled)!.description.includes('unused'));

    const byPriority = rows().map((r) => r.id);
    await vscode.commands.executeCommand('ltm.sortByLastUsed');
    await waitFor(() => rows()[0]?.id === recalled, 'the view to sort by last use');
    const byUse = rows().map((r) => r.id);
    assert.equal(byUse.at(-1), unused, 'never used: last');
    assert.ok(row(recalled)!.description.includes(`used in session ${lastSession} (just now)`), row(recalled)!.description);
    assert.match(row(unused)!.description, /never used/);

    await vscode.commands.executeCommand('ltm.sortByCreated');
    await waitFor(() => rows()[0]?.id === createdOrder[0], 'the view to sort by creation');
    assert.deepEqual(rows().map((r) => r.id), createdOrder);

    await vscode.commands.executeCommand('ltm.sortByPriority');
    await waitFor(() => rows()[0]?.id === byPriority[0], 'the view to sort by priority again');
    assert.ok(rows().every((r) => !/used in session|never used/.test(r.description)), 'the last use is shown only when sorted by it');
  });
});
