import * as vscode from 'vscode';
import { LtmError } from '../core/errors';
import { DEFAULT_IMPORTANCE, IMPORTANCE_LEVELS } from '../core/priority';
import type { StoreResult } from '../core/storeTypes';
import type { FromWebview, NewMemoryInput, PanelIdentity } from '../shared/protocol';
import type { FolderMemory, FolderWithStore } from './folderMemory';
import { LtmPanel } from './ltmPanel';
import { fieldOfMessage, storeInputOf } from './newMemoryInput';

/**
 * "New memory" as one form: topic, Summary, content, tags, importance and
 * anchored files. Saved through the store as a person's memory (approved at
 * once); the store's validation messages go back under their field, and
 * then nothing was written.
 */
export class NewMemoryPanel extends LtmPanel {
  constructor(
    extensionUri: vscode.Uri,
    log: vscode.LogOutputChannel,
    readonly folder: FolderWithStore,
    private readonly openMemory: (folder: FolderMemory, id: string) => void,
    /** The fields as typed before the window reloaded: the page fills the form with them once. */
    private draft: NewMemoryInput | null = null,
    restored?: vscode.WebviewPanel,
  ) {
    super(extensionUri, 'New memory', 'newMemory', log, restored);
  }

  protected identity(): PanelIdentity {
    return { view: 'newMemory', folder: this.folder.folder.uri.toString() };
  }

  protected async onMessage(message: FromWebview): Promise<void> {
    switch (message.type) {
      case 'ready':
        // The page keeps the fields from here on (and gives them back after another reload).
        this.post({ type: 'newMemoryForm', form: { folder: this.folder.name, importanceLevels: IMPORTANCE_LEVELS, defaultImportance: DEFAULT_IMPORTANCE }, draft: this.draft });
        this.draft = null;
        return;
      case 'createMemory':
        await this.create(message.memory);
        return;
      case 'cancel':
        this.dispose();
        return;
      default:
        return;
    }
  }

  private async create(form: NewMemoryInput): Promise<StoreResult | undefined> {
    this.post({ type: 'busy', busy: true });
    let result: StoreResult;
    try {
      result = await this.folder.store.store(storeInputOf(form));
    } catch (error) {
      if (!(error instanceof LtmError) || error.code !== 'invalid_input') throw error;
      this.post({ type: 'formError', field: fieldOfMessage(error.message), message: error.message });
      return undefined;
    } finally {
      this.post({ type: 'busy', busy: false });
    }
    const { memory, redactions } = result;
    this.folder.refresh();
    this.log.info(`${this.folder.name}: stored ${memory.id} "${memory.topic}"`);
    if (redactions.length > 0) void vscode.window.showInformationMessage(`LTM: secrets were removed from "${memory.topic}" before it was saved: ${redactions.map((r) => r.kind).join(', ')}.`);
    this.openMemory(this.folder, memory.id);
    this.dispose();
    return result;
  }
}
