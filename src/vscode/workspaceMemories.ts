/**
 * All workspace folders' memories (multi-root: one store and one server per
 * folder), kept in step with the folders that are open.
 */
import * as vscode from 'vscode';
import { FolderMemory, hasOpenStore, type FolderMemoryDeps, type FolderWithStore } from './folderMemory';
import { DisposableOwner } from './lifecycle';

export class WorkspaceMemories extends DisposableOwner {
  private readonly folders = new Map<string, FolderMemory>();
  private readonly changed = this.own(new vscode.EventEmitter<FolderMemory | undefined>());
  /** Fires with the folder whose memories changed, or undefined when folders came or went. */
  readonly onDidChange = this.changed.event;
  private readonly serverChanged = this.own(new vscode.EventEmitter<FolderMemory>());
  /** Fires with the folder whose server (its own, or another window's it uses) started, stopped or changed. */
  readonly onDidChangeServer = this.serverChanged.event;

  constructor(private readonly deps: FolderMemoryDeps) {
    super();
    this.own(
      vscode.workspace.onDidChangeWorkspaceFolders((e) => {
        for (const removed of e.removed) void this.remove(removed);
        for (const added of e.added) void this.add(added);
      }),
    );
  }

  /** Opens every folder that has a store; cheap for folders without one. */
  async start(): Promise<void> {
    await Promise.all((vscode.workspace.workspaceFolders ?? []).map((f) => this.add(f)));
  }

  all(): FolderMemory[] {
    const order = (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.toString());
    return [...this.folders.values()].sort((a, b) => order.indexOf(a.folder.uri.toString()) - order.indexOf(b.folder.uri.toString()));
  }

  /** The folders whose store is open, typed so: `store` is not null. */
  withStores(): FolderWithStore[] {
    return this.all().filter(hasOpenStore);
  }

  byUri(uri: string): FolderMemory | undefined {
    return this.folders.get(uri);
  }

  /** The folder that holds a memory or archive with this ID. */
  holding(id: string): FolderWithStore | undefined {
    return this.withStores().find((f) => hasActive(f, id) || f.store.archivedIds().includes(id));
  }

  /** Asks which folder when there are several; `withStore` limits the choice to folders that have one. */
  pick(placeHolder: string, withStore: true): Promise<FolderWithStore | undefined>;
  pick(placeHolder: string, withStore: false): Promise<FolderMemory | undefined>;
  async pick(placeHolder: string, withStore: boolean): Promise<FolderMemory | undefined> {
    const candidates = withStore ? this.withStores() : this.all();
    if (candidates.length <= 1) return candidates[0];
    const picked = await vscode.window.showQuickPick(
      candidates.map((f) => ({ label: f.name, description: f.folder.uri.fsPath, folder: f })),
      { placeHolder },
    );
    return picked?.folder;
  }

  private async add(folder: vscode.WorkspaceFolder): Promise<void> {
    const key = folder.uri.toString();
    if (this.folders.has(key) || folder.uri.scheme !== 'file') return;
    const memory = new FolderMemory(folder, this.deps);
    this.folders.set(key, memory);
    memory.onDidChange(() => this.changed.fire(memory));
    memory.onDidChangeServer(() => this.serverChanged.fire(memory));
    await memory.start();
    this.changed.fire(undefined);
  }

  private async remove(folder: vscode.WorkspaceFolder): Promise<void> {
    const key = folder.uri.toString();
    const memory = this.folders.get(key);
    this.folders.delete(key);
    await memory?.shutdown();
    this.changed.fire(undefined);
  }

  /** Stops every server and removes their server.json files. */
  async shutdown(): Promise<void> {
    const all = [...this.folders.values()];
    this.folders.clear();
    await Promise.all(all.map((f) => f.shutdown()));
    this.dispose();
  }
}

function hasActive(folder: FolderWithStore, id: string): boolean {
  try {
    folder.store.peek(id);
    return true;
  } catch {
    return false;
  }
}
