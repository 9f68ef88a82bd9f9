/**
 * "LTM: Show status": a quick pick with one row per fact of each folder's
 * store (MemoryStore.status()), a section per folder. Picking a row that has
 * an action runs it: the Inbox, the possibly outdated memories, the archives,
 * the integrity check, the settings. `{ run, folder }` (a keybinding, a test)
 * runs a row's action without showing the list.
 */
import { countOf } from '../shared/wording';
import * as vscode from 'vscode';
import { describeError, LtmError } from '../core/errors';
import { formatBytes } from '../core/responses';
import type { StatusResult } from '../core/storeTypes';
import { CommandId } from './commandIds';
import { hasOpenStore, type FolderMemory, type FolderWithStore } from './folderMemory';
import type { Panels } from './webviewPanels';
import type { WorkspaceMemories } from './workspaceMemories';

/** Which fact a row states; stable, for `{ run }` and tests. */
export type StatusKey =
  | 'memories'
  | 'review'
  | 'outdated'
  | 'demotion'
  | 'archived'
  | 'sessions'
  | 'lastEviction'
  | 'storage'
  | 'invalid'
  | 'integrity'
  | 'config'
  | 'server'
  | 'initialize';

/** A row as the command returns it: what the quick pick shows, and the title of its action (null: a plain fact). */
export interface StatusEntry {
  key: StatusKey;
  /** The folder's path. */
  folder: string;
  label: string;
  description: string;
  action: string | null;
}

interface StatusRow extends StatusEntry {
  run?: () => unknown;
}

export interface StatusViewDeps {
  log: vscode.LogOutputChannel;
  memories: WorkspaceMemories;
  panels: Panels;
  /** The extension's ID, for the settings search (`@ext:…`). */
  extensionId: string;
}

/** A quick pick of memories (`items`) that opens the one picked; with one memory, opens it at once. */
async function openOneOf(panels: Panels, folder: FolderWithStore, items: { id: string; topic: string; detail: string }[], title: string): Promise<string | undefined> {
  if (items.length === 0) return undefined;
  const picked =
    items.length === 1
      ? items[0]
      : await vscode.window.showQuickPick(
          items.map((m) => ({ label: m.topic.replace(/\s+/g, ' '), description: m.id, detail: m.detail, id: m.id, topic: m.topic })),
          { title, matchOnDescription: true, matchOnDetail: true },
        );
  if (!picked) return undefined;
  panels.showMemory(folder, picked.id);
  return picked.id;
}

function folderRows(folder: FolderWithStore, s: StatusResult, deps: StatusViewDeps): StatusRow[] {
  const where = folder.folder.uri.fsPath;
  const row = (key: StatusKey, label: string, description: string, action?: { title: string; run: () => unknown }): StatusRow => ({
    key,
    folder: where,
    label,
    description,
    action: action?.title ?? null,
    run: action?.run,
  });
  const c = s.config;
  const server = folder.server;
  const rows: StatusRow[] = [
    row('memories', '$(database) Memories', `${s.total_memories} — Full ${s.by_phase.full} · Hint ${s.by_phase.hint} · Abstract ${s.by_phase.abstract}`, {
      title: 'Show the Memories view',
      run: () => vscode.commands.executeCommand('workbench.view.extension.ltm'),
    }),
    row(
      'review',
      '$(inbox) Awaiting review',
      s.awaiting_review > 0 ? `${s.awaiting_review} — not used until you approve ${s.awaiting_review === 1 ? 'it' : 'them'}` : `none${c.review_new_memories ? '' : ' (review of new memories is off)'}`,
      s.awaiting_review > 0 ? { title: 'Review them in the Inbox', run: () => vscode.commands.executeCommand(CommandId.Review) } : undefined,
    ),
    row(
      'outdated',
      s.stale_memories > 0 ? '$(warning) Possibly outdated' : '$(pass) Possibly outdated',
      s.stale_memories > 0 ? `${countOf(s.stale_memories, 'memory whose', 'memories whose')} anchored code changed` : 'none',
      s.stale_memories > 0
        ? {
            title: s.stale_memories === 1 ? 'Open it' : 'Pick one to open',
            run: () =>
              openOneOf(
                deps.panels,
                folder,
                folder.store.staleMemories().map((m) => ({ id: m.id, topic: m.topic, detail: m.reasons.join('; ') })),
                `Possibly outdated memories: ${folder.name}`,
              ),
          }
        : undefined,
    ),
    row(
      'demotion',
      '$(arrow-down) Demotion candidates',
      s.demotion_candidates > 0 ? `${s.demotion_candidates} — injected at many session starts, never read nor recalled` : 'none',
      s.demotion_candidates > 0
        ? {
            title: s.demotion_candidates === 1 ? 'Open it' : 'Pick one to open',
            run: () =>
              openOneOf(
                deps.panels,
                folder,
                folder.store
                  .list({ limit: Number.MAX_SAFE_INTEGER })
                  .memories.filter((m) => m.demotion_candidate)
                  .map((m) => ({ id: m.id, topic: m.topic, detail: m.summary.replace(/\s+/g, ' ') })),
                `Demotion candidates: ${folder.name}`,
              ),
          }
        : undefined,
    ),
    row('archived', '$(archive) Archived', String(s.total_archived), s.total_archived > 0 ? { title: 'Show the archives', run: () => deps.panels.showArchives() } : undefined),
    row('sessions', '$(history) Sessions', `${countOf(s.session_count, 'Claude Code session')} counted by this store`),
    row('lastEviction', '$(fold-down) Last eviction', s.last_eviction ? new Date(s.last_eviction).toLocaleString() : 'never'),
    row('storage', '$(file-directory) Storage', `${formatBytes(s.storage_size_bytes)} in ${s.store_path}`, {
      title: 'Reveal in the Explorer',
      run: () => vscode.commands.executeCommand('revealInExplorer', vscode.Uri.file(s.store_path)),
    }),
  ];
  if (s.invalid_files > 0) {
    rows.push(row('invalid', '$(error) Unreadable files', `${countOf(s.invalid_files, 'file')} in memories/ LTM cannot read`, { title: 'Check integrity', run: () => deps.panels.showIntegrity(folder) }));
  }
  rows.push(
    row('integrity', '$(shield) Check integrity', 'Check the store and repair it', { title: 'Check integrity', run: () => deps.panels.showIntegrity(folder) }),
    row(
      'config',
      '$(settings-gear) Config',
      `max ${c.max_memories} memories · load ${c.memories_to_load} per session · evict ${c.eviction_batch_size} per cycle · review ${c.review_new_memories ? 'on' : 'off'} · stale ${c.stale_memories}`,
      { title: 'Open settings', run: () => vscode.commands.executeCommand('workbench.action.openSettings', `@ext:${deps.extensionId}`) },
    ),
    row(
      'server',
      server ? '$(plug) Server' : '$(debug-disconnect) Server',
      server ? `127.0.0.1:${server.port}${server.own ? '' : ` (another window's, pid ${server.pid})`}` : `not running${folder.serverProblem ? ` (${folder.serverProblem})` : ''}`,
      { title: 'Show the log', run: () => deps.log.show() },
    ),
  );
  return rows;
}

function noStoreRows(folder: FolderMemory): StatusRow[] {
  return [
    {
      key: 'initialize',
      folder: folder.folder.uri.fsPath,
      label: '$(database) No memory store',
      description: 'Initialize memory to give this folder one',
      action: 'Initialize memory',
      run: () => vscode.commands.executeCommand(CommandId.Initialize),
    },
  ];
}

/** Every folder's rows, in workspace order. */
function statusRows(deps: StatusViewDeps): { folder: FolderMemory; rows: StatusRow[] }[] {
  return deps.memories.all().map((folder) => ({ folder, rows: hasOpenStore(folder) ? folderRows(folder, folder.store.status(), deps) : noStoreRows(folder) }));
}

const entryOf = ({ key, folder, label, description, action }: StatusRow): StatusEntry => ({ key, folder, label, description, action });

/** `{ run, folder }` given to ltm.showStatus: the row to act on (folder: a path; the first folder when absent). */
function runArg(arg: unknown): { run: string; folder?: string } | undefined {
  if (!arg || typeof arg !== 'object') return undefined;
  const a = arg as { run?: unknown; folder?: unknown };
  return typeof a.run === 'string' ? { run: a.run, folder: typeof a.folder === 'string' ? a.folder : undefined } : undefined;
}

/**
 * Shows the status quick pick and returns its rows (without waiting for a
 * pick); with `{ run, folder }`, runs that row's action and returns what it returned.
 */
export async function showStatus(deps: StatusViewDeps, arg?: unknown): Promise<unknown> {
  const sections = statusRows(deps);
  if (sections.length === 0) {
    void vscode.window.showInformationMessage('LTM: open a folder to give it a memory.');
    return [];
  }
  const given = runArg(arg);
  if (given) {
    const section = given.folder ? sections.find((s) => s.folder.folder.uri.fsPath === given.folder) : sections[0];
    const row = section?.rows.find((r) => r.key === given.run);
    if (!row) throw new LtmError('invalid_input', `no status row "${given.run}"${given.folder ? ` for ${given.folder}` : ''}`);
    return row.run ? await row.run() : undefined;
  }
  for (const { folder, rows } of sections) deps.log.info(`${folder.name}: ${rows.map((r) => `${r.label.replace(/^\$\([\w-]+\) /, '')}: ${r.description}`).join('; ')}`);

  type Item = vscode.QuickPickItem & { row?: StatusRow };
  const items: Item[] = sections.flatMap(({ folder, rows }) => [
    { label: folder.name, kind: vscode.QuickPickItemKind.Separator },
    ...rows.map((row) => ({ label: row.label, description: row.description, detail: row.action ? `$(arrow-right) ${row.action}` : undefined, row })),
  ]);
  const quickPick = vscode.window.createQuickPick<Item>();
  quickPick.title = 'LTM status';
  quickPick.placeholder = 'Pick a row with an action (→) to run it';
  quickPick.matchOnDescription = true;
  quickPick.items = items;
  const disposables = [
    quickPick.onDidAccept(() => {
      const row = quickPick.selectedItems[0]?.row;
      // A plain fact keeps the list open: only rows with an action close it.
      if (!row?.run) return;
      quickPick.hide();
      Promise.resolve(row.run()).catch((error: unknown) => {
        deps.log.error(`status: ${row.action}: ${describeError(error)}`);
        void vscode.window.showErrorMessage(`LTM: ${describeError(error)}`);
      });
    }),
    quickPick.onDidHide(() => {
      for (const d of disposables) d.dispose();
      quickPick.dispose();
    }),
  ];
  quickPick.show();
  return sections.flatMap((s) => s.rows.map(entryOf));
}
