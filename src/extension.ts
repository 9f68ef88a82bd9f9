/**
 * The composition root: builds the services once and hands them down.
 * Activation is cheap; stores are opened and servers started right after it,
 * without holding up VS Code.
 */
import * as vscode from 'vscode';
import { countOf } from './shared/wording';
import { AnchoredFiles } from './vscode/anchoredFiles';
import { AnchorLensProvider } from './vscode/anchorLenses';
import { ContextKey } from './vscode/commandIds';
import { registerCommands } from './vscode/commands';
import { registerCliInstall } from './vscode/cliInstall';
import { ContextPreviewDocuments } from './vscode/contextPreviewDocuments';
import { LtmMcpProvider, MCP_PROVIDER_ID } from './vscode/mcpProvider';
import { InvalidFileDiagnostics } from './vscode/invalidFileDiagnostics';
import { filterText } from './vscode/memoryGroups';
import { MemoryTreeProvider, type MemoryTreeNode } from './vscode/memoryTree';
import { LtmSettings, isTreeSort, type GroupBy } from './vscode/settings';
import { PanelRestorer } from './vscode/panelRestore';
import { MemoryStatusBar } from './vscode/statusBar';
import type { PanelHandle } from './vscode/ltmPanel';
import type { MemoryPanelProbe } from './vscode/memoryPanel';
import { Panels } from './vscode/webviewPanels';
import { WorkspaceMemories } from './vscode/workspaceMemories';

/** What the extension exports: used by its integration tests and open to other extensions. */
export interface LtmApi {
  /** Resolves once every folder's store is open and its server started. */
  ready: Promise<void>;
  folders(): { name: string; path: string; memories: number; port: number | null; token: string | null; mcpUrl: string | null }[];
  /** Fires when a folder's memories changed on disk, whoever changed them (the UI refreshes on it). */
  onDidChangeMemories: vscode.Event<string | undefined>;
  /** The Memories view's memory rows in the order it shows them, with their description and tooltip text (what tests read of the view). */
  memoryRows(): MemoryRow[];
  /** The Memories view's rows, as the view draws them (its tests walk it). */
  memoryTree: Pick<vscode.TreeDataProvider<MemoryTreeNode>, 'getChildren' | 'getTreeItem'>;
  /** What the Memories view says about itself: its description and message, and whether its empty-store welcome applies. */
  memoryView(): { description: string | undefined; message: string | undefined; emptyStore: boolean; canSelectMany: boolean };
  /** The open memory panels: title, pinned, unsaved; `receive` handles a message as if the panel's page sent it (its tests speak for the page). */
  memoryPanels(): MemoryPanelProbe[];
  /**
   * What VS Code does with a panel of LTM's after a window reload: takes it over with the state its page
   * kept (checked first). Returns the LTM panel, or undefined when the tab was closed or says why it cannot
   * be shown. Its tests restore panels they made, without reloading the window that runs them.
   */
  restorePanel(panel: vscode.WebviewPanel, state: unknown): Promise<PanelHandle | undefined>;
}

let running: WorkspaceMemories | undefined;

export function activate(context: vscode.ExtensionContext): LtmApi {
  const log = vscode.window.createOutputChannel('LTM', { log: true });
  context.subscriptions.push(log);
  const version = String((context.extension.packageJSON as { version?: string }).version ?? '0.0.0');
  const settings = new LtmSettings();

  const memories = new WorkspaceMemories({ log, settings, environment: context.environmentVariableCollection, version });
  running = memories;
  context.subscriptions.push(memories);

  const groupBy = context.workspaceState.get<GroupBy>('ltm.groupBy') ?? settings.groupBy;
  const stored = context.workspaceState.get<unknown>('ltm.sortBy');
  const sortBy = isTreeSort(stored) ? stored : settings.sortBy;
  const tree = new MemoryTreeProvider(memories, groupBy, sortBy);
  // Several rows at once: Forget and Restore act on the whole selection (forgetRestoreCommands.ts).
  const treeViewOptions = { treeDataProvider: tree, showCollapseAll: true, canSelectMany: true };
  const treeView = vscode.window.createTreeView('ltm.memories', treeViewOptions);
  const diagnostics = new InvalidFileDiagnostics(memories);
  const statusBar = new MemoryStatusBar(memories);
  const mcp = new LtmMcpProvider(memories, version);
  const panels = new Panels(context.extensionUri, log, memories);
  const previews = new ContextPreviewDocuments(memories, settings);
  context.subscriptions.push(tree, treeView, diagnostics, statusBar, mcp, panels, previews);
  // Anchored code: lenses over it, and the tree and panels refreshed when it changes.
  const anchored = new AnchoredFiles(memories, log);
  const lenses = new AnchorLensProvider(memories, anchored, settings);
  context.subscriptions.push(anchored, lenses);
  context.subscriptions.push(
    anchored.onDidChangeAnchoredFile(() => {
      tree.refresh();
      panels.updateMemories();
    }),
  );
  if (typeof vscode.lm?.registerMcpServerDefinitionProvider === 'function') {
    context.subscriptions.push(vscode.lm.registerMcpServerDefinitionProvider(MCP_PROVIDER_ID, mcp));
  }

  const serversChanged = () => {
    mcp.serversChanged();
    statusBar.update();
  };
  context.subscriptions.push(...registerCommands({ context, log, memories, tree, panels, previews, serversChanged }));
  context.subscriptions.push(registerCliInstall(context, log));

  let emptyStore = false;
  const updateContext = () => {
    const stores = memories.withStores();
    void vscode.commands.executeCommand('setContext', ContextKey.NoStore, stores.length === 0);
    // Initialized, with nothing in it yet: the welcome says what to do next (package.json viewsWelcome).
    emptyStore = stores.length > 0 && stores.every((f) => f.store.memoryCount() === 0 && f.store.archivedIds().length === 0);
    void vscode.commands.executeCommand('setContext', ContextKey.EmptyStore, emptyStore);
    const filter = tree.filter;
    void vscode.commands.executeCommand('setContext', ContextKey.Filtered, filter !== undefined);
    treeView.description = filter ? `filtered: ${filterText(filter)}` : undefined;
    if (filter) {
      const shown = tree.shownCount();
      treeView.message = `Filtered by ${filterText(filter)}: ${shown === 0 ? 'no memory matches' : countOf(shown, 'memory matches', 'memories match')}.`;
    } else {
      treeView.message = undefined;
    }
    // The Inbox's count on the view and the activity bar: memories Claude is not given until reviewed.
    const awaiting = memories.withStores().reduce((sum, f) => sum + f.store.awaitingReview().length, 0);
    treeView.badge = awaiting > 0 ? { value: awaiting, tooltip: `${awaiting} memor${awaiting === 1 ? 'y awaits' : 'ies await'} review` } : undefined;
  };
  void vscode.commands.executeCommand('setContext', ContextKey.GroupBy, groupBy);
  void vscode.commands.executeCommand('setContext', ContextKey.SortBy, sortBy);
  // The tree changes with the memories, the filter, the grouping and the order: the view's texts follow it.
  context.subscriptions.push(tree.onDidChangeTreeData(updateContext));
  context.subscriptions.push(
    settings.onDidChange(async (e) => {
      for (const folder of memories.withStores()) {
        await folder.applyExplicitSettings();
        if (e.affectsConfiguration('ltm.preferredPort', folder.folder)) await folder.restartServer();
      }
      serversChanged();
    }),
  );

  const ready = memories.start().then(
    () => {
      updateContext();
      diagnostics.update();
      serversChanged();
    },
    (error: unknown) => log.error(`starting failed: ${(error as Error).stack ?? String(error)}`),
  );
  // Panels open before a window reload come back, once the stores they show are open.
  const restorer = new PanelRestorer({ extensionUri: context.extensionUri, log, memories, panels, ready: () => ready });
  context.subscriptions.push(restorer.register());

  return {
    ready,
    memoryRows: () => memoryRows(tree),
    memoryTree: tree,
    memoryView: () => ({ description: treeView.description, message: treeView.message, emptyStore, canSelectMany: treeViewOptions.canSelectMany }),
    memoryPanels: () => panels.probes(),
    restorePanel: (panel, state) => restorer.restore(panel, state),
    onDidChangeMemories: (listener, thisArg, disposables) => memories.onDidChange((f) => listener.call(thisArg, f?.folder.uri.fsPath), undefined, disposables),
    folders: () =>
      memories.all().map((f) => ({
        name: f.name,
        path: f.folder.uri.fsPath,
        memories: f.store?.status().total_memories ?? 0,
        port: f.server?.port ?? null,
        token: f.server?.token ?? null,
        mcpUrl: f.server?.mcpUrl ?? null,
      })),
  };
}

export interface MemoryRow {
  folder: string;
  id: string;
  label: string;
  description: string;
  tooltip: string;
}

function memoryRows(tree: MemoryTreeProvider): MemoryRow[] {
  const rows: MemoryRow[] = [];
  const walk = (nodes: MemoryTreeNode[]) => {
    for (const node of nodes) {
      if (node.kind !== 'memory') {
        walk(tree.getChildren(node));
        continue;
      }
      const item = tree.getTreeItem(node);
      const text = (value: unknown) => (typeof value === 'string' ? value : value instanceof vscode.MarkdownString ? value.value : '');
      rows.push({ folder: node.folder.folder.uri.fsPath, id: node.memory.id, label: text(item.label), description: text(item.description), tooltip: text(item.tooltip) });
    }
  };
  walk(tree.getChildren());
  return rows;
}

/** Stops every server (removing its server.json) before the host goes away. */
export async function deactivate(): Promise<void> {
  await running?.shutdown();
  running = undefined;
}
