/**
 * The composition root: builds the services once and hands them down.
 * Activation is cheap; stores are opened and servers started right after it,
 * without holding up VS Code.
 */
import * as vscode from 'vscode';
import { AnchoredFiles } from './vscode/anchoredFiles';
import { AnchorLensProvider } from './vscode/anchorLenses';
import { ContextKey } from './vscode/commandIds';
import { registerCommands } from './vscode/commands';
import { registerCliInstall } from './vscode/cliInstall';
import { ContextPreviewDocuments } from './vscode/contextPreviewDocuments';
import { LtmMcpProvider, MCP_PROVIDER_ID } from './vscode/mcpProvider';
import { MemoryTreeProvider, type MemoryTreeNode } from './vscode/memoryTree';
import { LtmSettings, isTreeSort, type GroupBy } from './vscode/settings';
import { MemoryStatusBar } from './vscode/statusBar';
import { Panels, type MemoryPanelProbe } from './vscode/webviewPanels';
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
  /** The open memory panels: title, pinned, unsaved; `receive` handles a message as if the panel's page sent it (its tests speak for the page). */
  memoryPanels(): MemoryPanelProbe[];
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
  const treeView = vscode.window.createTreeView('ltm.memories', { treeDataProvider: tree, showCollapseAll: true });
  const statusBar = new MemoryStatusBar(memories);
  const mcp = new LtmMcpProvider(memories, version);
  const panels = new Panels(context.extensionUri, log, memories);
  const previews = new ContextPreviewDocuments(memories, settings);
  context.subscriptions.push(tree, treeView, statusBar, mcp, panels, previews);
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

  const updateContext = () => {
    void vscode.commands.executeCommand('setContext', ContextKey.NoStore, memories.withStores().length === 0);
    treeView.message = undefined;
    // The Inbox's count on the view and the activity bar: memories Claude is not given until reviewed.
    const awaiting = memories.withStores().reduce((sum, f) => sum + f.store.awaitingReview().length, 0);
    treeView.badge = awaiting > 0 ? { value: awaiting, tooltip: `${awaiting} memor${awaiting === 1 ? 'y awaits' : 'ies await'} review` } : undefined;
  };
  void vscode.commands.executeCommand('setContext', ContextKey.GroupBy, groupBy);
  void vscode.commands.executeCommand('setContext', ContextKey.SortBy, sortBy);
  context.subscriptions.push(memories.onDidChange(updateContext));
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
      serversChanged();
    },
    (error: unknown) => log.error(`starting failed: ${(error as Error).stack ?? String(error)}`),
  );

  return {
    ready,
    memoryRows: () => memoryRows(tree),
    memoryTree: tree,
    memoryPanels: () => panels.probes(),
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
