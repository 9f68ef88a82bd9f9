/**
 * One memory's webview panel: the memory, its edit and save (with the
 * conflicts of a file changed on disk meanwhile), and its actions (restore,
 * merge, anchors, links).
 */
import * as vscode from 'vscode';
import { isSafeLinkUrl } from '../shared/links';
import type { EditableField, FromWebview, MemoryEdit, MemoryFields, PanelIdentity } from '../shared/protocol';
import { openAnchor } from './anchorCommands';
import { CommandId } from './commandIds';
import type { FolderMemory } from './folderMemory';
import { LtmPanel } from './ltmPanel';
import { MEMORY_PANEL_CONSTANTS, memoryDetails } from './memoryDetails';
import { conflictingFields, differingFields, fieldsOf, updateFor } from './memoryEdit';

/** What a test (or another extension) can see of a memory panel, and a way to speak to it as its page does. */
export interface MemoryPanelProbe {
  folder: string;
  id: string;
  title: string;
  pinned: boolean;
  dirty: boolean;
  /** The fields of the last conflict the page was told of, or null. */
  conflict: EditableField[] | null;
  /** The unsaved edit, or null. */
  edit: MemoryEdit | null;
  /** Handles a message as if the page sent it (it is checked as the page's are). */
  receive(raw: unknown): Promise<void>;
}

/** What saving the panel's edit did. */
export type SaveOutcome = 'saved' | 'unchanged' | 'conflict' | 'nothing';

/** The longest topic the tab's title shows whole. */
const TITLE_TOPIC_CHARS = 40;

/**
 * One memory's panel. Unpinned, it is the preview: opening another memory
 * shows it here instead of in a new tab (Panels). It is pinned by "Keep
 * open", by opening it pinned (a double-click in the tree), and by starting
 * to edit, as an editor's preview tab is.
 *
 * Closing a panel with unsaved changes cannot be refused (a webview panel has
 * no veto on close), so the edit is kept (Panels.drafts) and restored when the
 * memory is opened again; a notification at close says so and offers to
 * reopen or discard it. That keeps the person's text without a modal dialog
 * over a tab that is already gone. A window reload keeps it too: the page
 * keeps it with VS Code, and panelRestore.ts brings the panel back with it.
 */
export class MemoryPanel extends LtmPanel {
  private folderListener: vscode.Disposable | null = null;
  private edit: MemoryEdit | null;
  /** The memory on disk as the person saw it in a conflict; an overwrite checks against it, not the edit's base. */
  private conflictSeen: MemoryFields | null = null;
  private conflictFields: EditableField[] | null = null;
  private saving: Promise<SaveOutcome> | null = null;
  private topic = '';

  constructor(
    extensionUri: vscode.Uri,
    log: vscode.LogOutputChannel,
    public folder: FolderMemory,
    public memoryId: string,
    private pinnedFlag: boolean,
    edit: MemoryEdit | null,
    restored?: vscode.WebviewPanel,
  ) {
    super(extensionUri, 'Memory', 'memory', log, restored);
    this.edit = edit;
    if (edit) this.pinnedFlag = true;
    this.watch(folder);
    this.own({ dispose: () => this.folderListener?.dispose() });
    // The title at once; the page gets the memory when it says it is ready.
    this.update();
  }

  get key(): string {
    return memoryKey(this.folder, this.memoryId);
  }

  get pinned(): boolean {
    return this.pinnedFlag;
  }

  /** The unsaved edit, or null (Panels keeps it when the panel is closed). */
  get unsaved(): MemoryEdit | null {
    return this.edit;
  }

  get displayTopic(): string {
    return this.topic || this.memoryId;
  }

  probe(): MemoryPanelProbe {
    return {
      folder: this.folder.name,
      id: this.memoryId,
      title: this.panel.title,
      pinned: this.pinnedFlag,
      dirty: this.edit !== null,
      conflict: this.conflictFields,
      edit: this.edit,
      receive: (raw) => this.receive(raw),
    };
  }

  /** Shows another memory in this (preview) panel. */
  showMemory(folder: FolderMemory, id: string): void {
    if (folder !== this.folder) this.watch(folder);
    this.folder = folder;
    this.memoryId = id;
    this.edit = null;
    this.conflictSeen = null;
    this.conflictFields = null;
    this.postIdentity();
    this.update();
  }

  pin(): void {
    if (this.pinnedFlag) return;
    this.pinnedFlag = true;
    this.postIdentity();
    this.update();
  }

  protected identity(): PanelIdentity {
    return { view: 'memory', folder: this.folder.folder.uri.toString(), id: this.memoryId, pinned: this.pinnedFlag };
  }

  private watch(folder: FolderMemory): void {
    this.folderListener?.dispose();
    this.folderListener = folder.onDidChange(() => this.update());
  }

  private setTitle(): void {
    const short = this.topic.length > TITLE_TOPIC_CHARS ? `${this.topic.slice(0, TITLE_TOPIC_CHARS - 1)}…` : this.topic;
    // Webview tabs cannot be shown in italics as a preview editor's are: the title says it.
    this.panel.title = `${this.edit ? '● ' : ''}${short}${this.pinnedFlag ? '' : ' (Preview)'}`;
  }

  update(): void {
    const store = this.folder.store;
    const details = store ? memoryDetails(store, this.memoryId, this.folder.name) : null;
    if (!details) {
      this.panel.title = `${this.edit ? '● ' : ''}${this.memoryId} (gone)`;
      this.post({ type: 'memoryGone', id: this.memoryId, message: `${this.memoryId} no longer exists in ${this.folder.name}.`, draft: this.edit?.draft ?? null });
      return;
    }
    this.topic = details.topic;
    this.setTitle();
    this.post({ type: 'memory', memory: details, constants: MEMORY_PANEL_CONSTANTS, panel: { pinned: this.pinnedFlag, edit: this.edit } });
  }

  /**
   * Saves the edit: the fields it changed, in one store.update (which archives
   * the previous text first). A field it changes that changed on disk since
   * the edit started is not overwritten: the page is told and asks.
   */
  save(overwrite = false): Promise<SaveOutcome> {
    // Ctrl+S reaches both the page and the keybinding: one save at a time, the second finds nothing left to save.
    this.saving ??= this.saveNow(overwrite).finally(() => (this.saving = null));
    return this.saving;
  }

  private async saveNow(overwrite: boolean): Promise<SaveOutcome> {
    const store = this.folder.store;
    const edit = this.edit;
    if (!store || !edit) return 'nothing';
    const update = updateFor(edit);
    if (Object.keys(update).length === 0) {
      this.setEdit(null);
      this.post({ type: 'saved', id: this.memoryId });
      return 'unchanged';
    }
    const onDisk = fieldsOf(store.peek(this.memoryId));
    if (this.showConflict(edit, onDisk, overwrite && this.conflictSeen ? this.conflictSeen : edit.base)) {
      this.log.info(`${this.folder.name}: not saving ${this.memoryId}: ${this.conflictFields?.join(', ')} changed on disk since the edit started`);
      return 'conflict';
    }
    const result = await store.update(this.memoryId, update);
    this.log.info(`${this.folder.name}: saved ${this.memoryId} (${result.changed.join(', ') || 'nothing changed'})`);
    this.setEdit(null);
    this.post({ type: 'saved', id: this.memoryId });
    this.post({ type: 'notice', level: 'info', message: result.changed.length > 0 ? `Saved (${result.changed.join(', ')}); the previous text is in the archive.` : 'Nothing changed.' });
    this.folder.refresh();
    this.update();
    return result.changed.length > 0 ? 'saved' : 'unchanged';
  }

  /** Tells the page of the fields the edit would overwrite (changed on disk since `base`); false when there are none. */
  private showConflict(edit: MemoryEdit, onDisk: MemoryFields, base: MemoryFields): boolean {
    const conflict = conflictingFields(edit, onDisk, base);
    if (conflict.length === 0) return false;
    this.conflictSeen = onDisk;
    this.conflictFields = conflict;
    this.post({ type: 'conflict', id: this.memoryId, fields: conflict, theirs: onDisk });
    return true;
  }

  /**
   * An edit kept from before (a window reload, a closed tab) may meet a memory
   * changed on disk since: the page says so when it shows the edit, not only at Save.
   */
  private showKeptEditConflict(): void {
    const store = this.folder.store;
    if (!store || !this.edit) return;
    let onDisk: MemoryFields;
    try {
      onDisk = fieldsOf(store.peek(this.memoryId));
    } catch {
      return; // Archived or gone: the page says so itself.
    }
    this.showConflict(this.edit, onDisk, this.edit.base);
  }

  private setEdit(edit: MemoryEdit | null): void {
    this.edit = edit;
    if (!edit) {
      this.conflictSeen = null;
      this.conflictFields = null;
    }
    // Editing a preview keeps it, as typing in an editor's preview tab does.
    if (edit) this.pinnedFlag = true;
    this.setTitle();
  }

  protected async onMessage(message: FromWebview): Promise<void> {
    const store = this.folder.store;
    if (!store) return;
    // A message about another memory is from before the preview showed this one.
    if ('id' in message && message.type !== 'openMemory' && message.id !== this.memoryId) return;
    switch (message.type) {
      case 'ready':
        this.update();
        this.showKeptEditConflict();
        return;
      case 'edit':
        this.setEdit(message.edit && differingFields(message.edit.base, message.edit.draft).length > 0 ? message.edit : null);
        return;
      case 'save':
        await this.save(message.overwrite);
        return;
      case 'pin':
        this.pin();
        return;
      case 'openLink':
        await openLink(message.url, this.log);
        return;
      case 'restore':
        await store.restore(message.id);
        this.log.info(`${this.folder.name}: restored ${message.id}`);
        this.post({ type: 'notice', level: 'info', message: 'Restored with its full text at phase 0.' });
        this.folder.refresh();
        return;
      case 'openFile':
        await this.folder.openFile(message.id);
        return;
      case 'mergeInto':
        // The command asks for the target and confirms, as from the tree; this panel then shows the memory gone.
        await vscode.commands.executeCommand(CommandId.MergeInto, { kind: 'memory', folder: this.folder, memory: store.peek(message.id) });
        return;
      case 'openAnchor':
        await openAnchor(store, message.id, message.index);
        return;
      case 'reanchor': {
        const view = await store.reanchor(message.id);
        this.log.info(`${this.folder.name}: re-anchored ${message.id}`);
        this.post({ type: 'notice', level: 'info', message: `Re-anchored: the memory holds for the code as it is now (${view.anchors.length} anchor${view.anchors.length === 1 ? '' : 's'}).` });
        this.folder.refresh();
        return;
      }
      case 'editMemory':
        await this.folder.openFile(message.id);
        this.post({ type: 'notice', level: 'info', message: 'Edit the memory to say what the code does now, save it, then re-anchor it.' });
        return;
      default:
        return;
    }
  }
}

/** Opens a link from memory text outside VS Code, if it is one the renderer would have made (links.ts). */
async function openLink(url: string, log: vscode.LogOutputChannel): Promise<void> {
  if (!isSafeLinkUrl(url)) {
    log.warn(`memory webview: refused to open a link that is not http(s) or mailto`);
    return;
  }
  await vscode.env.openExternal(vscode.Uri.parse(url.trim(), true));
}

/** What identifies a memory's panel: its folder and its ID. */
export function memoryKey(folder: FolderMemory, id: string): string {
  return `${folder.folder.uri.toString()}#${id}`;
}
