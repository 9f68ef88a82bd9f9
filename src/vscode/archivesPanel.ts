/** The archives panel: every folder's archived memories, searched, and restored on request. */
import type * as vscode from 'vscode';
import { LtmError } from '../core/errors';
import type { FromWebview, PanelIdentity } from '../shared/protocol';
import type { FolderMemory } from './folderMemory';
import { LtmPanel } from './ltmPanel';
import { archivedItemView } from './memoryDetails';
import type { WorkspaceMemories } from './workspaceMemories';

export class ArchivesPanel extends LtmPanel {
  private query = '';

  constructor(
    extensionUri: vscode.Uri,
    log: vscode.LogOutputChannel,
    private readonly memories: WorkspaceMemories,
    private readonly openMemory: (folder: FolderMemory, id: string) => void,
    restored?: vscode.WebviewPanel,
  ) {
    super(extensionUri, 'Memory archives', 'archives', log, restored);
    this.own(memories.onDidChange(() => this.search(this.query)));
  }

  protected identity(): PanelIdentity {
    return { view: 'archives' };
  }

  search(query: string): void {
    this.query = query;
    const items = this.memories.withStores().flatMap((folder) => {
      const store = folder.store;
      const found = query.trim()
        ? store.search(query, { scope: 'archives', limit: 100 })
        : store.list({ phase: 3, limit: 200 }).memories.map((m) => ({ ...m, score: 0, archived: true }));
      return found.map((item) => archivedItemView(store, item, folder.name));
    });
    this.post({ type: 'archives', query, items });
  }

  protected async onMessage(message: FromWebview): Promise<void> {
    switch (message.type) {
      case 'ready':
        this.search(this.query);
        return;
      case 'searchArchives':
        this.search(message.query);
        return;
      case 'restore': {
        const folder = this.memories.holding(message.id);
        if (!folder?.store) throw new LtmError('not_found', `no archive for ${message.id}`);
        await folder.store.restore(message.id);
        this.post({ type: 'notice', level: 'info', message: `Restored ${message.id}.` });
        folder.refresh();
        return;
      }
      case 'openMemory': {
        const folder = this.memories.all().find((f) => f.name === message.folder) ?? this.memories.holding(message.id);
        if (folder) this.openMemory(folder, message.id);
        return;
      }
      default:
        return;
    }
  }
}
