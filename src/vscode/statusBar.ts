/** The status bar item: how many memories, and whether the server runs. */
import * as vscode from 'vscode';
import { CommandId } from './commandIds';
import { DisposableOwner } from './lifecycle';
import type { WorkspaceMemories } from './workspaceMemories';

export class MemoryStatusBar extends DisposableOwner {
  private readonly item = this.own(vscode.window.createStatusBarItem('ltm.status', vscode.StatusBarAlignment.Left, 10));

  constructor(private readonly memories: WorkspaceMemories) {
    super();
    this.item.name = 'LTM memories';
    this.item.command = CommandId.ShowStatus;
    this.own(memories.onDidChange(() => this.update()));
    this.own(memories.onDidChangeServer(() => this.update()));
    this.update();
  }

  update(): void {
    const folders = this.memories.withStores();
    if (folders.length === 0) {
      this.item.hide();
      return;
    }
    const total = folders.reduce((n, f) => n + f.store.memoryCount(), 0);
    const down = folders.filter((f) => !f.server);
    this.item.text = `$(${down.length > 0 ? 'warning' : 'database'}) ${total} memor${total === 1 ? 'y' : 'ies'}`;
    const lines = folders.map((f) =>
      f.server
        ? `${f.name}: ${f.store.memoryCount()} memories, server on 127.0.0.1:${f.server.port}${f.server.own ? '' : ` (another window's, pid ${f.server.pid})`}`
        : `${f.name}: server not running${f.serverProblem ? ` (${f.serverProblem})` : ''}`,
    );
    this.item.tooltip = `LTM\n${lines.join('\n')}\nClick for status.`;
    this.item.backgroundColor = down.length > 0 ? new vscode.ThemeColor('statusBarItem.warningBackground') : undefined;
    this.item.show();
  }
}
