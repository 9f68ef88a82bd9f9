/** The integrity panel: a folder's store checked, and fixed on request. */
import type * as vscode from 'vscode';
import { countOf } from '../shared/wording';
import type { FromWebview, PanelIdentity } from '../shared/protocol';
import type { FolderMemory } from './folderMemory';
import { LtmPanel } from './ltmPanel';
import { fixView, integrityView } from './memoryDetails';

export class IntegrityPanel extends LtmPanel {
  private folder: FolderMemory;

  constructor(extensionUri: vscode.Uri, log: vscode.LogOutputChannel, folder: FolderMemory, restored?: vscode.WebviewPanel) {
    super(extensionUri, `Integrity: ${folder.name}`, 'integrity', log, restored);
    this.folder = folder;
    this.panel.title = `Integrity: ${folder.name}`;
  }

  protected identity(): PanelIdentity {
    return { view: 'integrity', folder: this.folder.folder.uri.toString() };
  }

  setFolder(folder: FolderMemory): void {
    this.folder = folder;
    this.panel.title = `Integrity: ${folder.name}`;
    this.postIdentity();
    // As if the page asked: a failing check becomes a notice on it.
    void this.receive({ type: 'runCheck' });
  }

  async runCheck(): Promise<void> {
    const store = this.folder.store;
    if (!store) return;
    // This window's server writes index.json in pauses: written first, so that its latest changes are not problems.
    await store.settleIndex();
    this.post({ type: 'integrity', report: integrityView(store.check(), this.folder.name), fix: null });
  }

  async runFix(cleanArchives: boolean): Promise<void> {
    const store = this.folder.store;
    if (!store) return;
    this.post({ type: 'busy', busy: true });
    try {
      const result = await store.fix({ cleanArchives });
      this.log.info(`${this.folder.name}: fix: ${countOf(result.actions.length, 'action')}${result.actions.map((a) => `\n  ${a}`).join('')}`);
      this.post({ type: 'integrity', report: integrityView(result.report, this.folder.name), fix: fixView(result) });
      this.folder.refresh();
    } finally {
      this.post({ type: 'busy', busy: false });
    }
  }

  protected async onMessage(message: FromWebview): Promise<void> {
    if (message.type === 'ready' || message.type === 'runCheck') await this.runCheck();
    else if (message.type === 'runFix') await this.runFix(message.cleanArchives);
  }
}
