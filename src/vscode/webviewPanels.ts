/**
 * The webview panels: one per open memory, one integrity panel, one archives
 * panel. They share one browser bundle (dist/webview.js) and the typed
 * protocol in src/shared/protocol.ts. Every piece of memory text reaches the
 * page as data and is rendered as text there.
 */
import { countOf } from '../shared/wording';
import * as vscode from 'vscode';
import { describeError, LtmError } from '../core/errors';
import { isSafeLinkUrl } from '../shared/links';
import { DEFAULT_IMPORTANCE, IMPORTANCE_LEVELS } from '../core/priority';
import type { StoreResult } from '../core/storeTypes';
import { parseFromWebview, type EditableField, type FromWebview, type MemoryEdit, type MemoryFields, type NewMemoryInput, type PanelIdentity, type ToWebview, type WebviewView } from '../shared/protocol';
import { CommandId } from './commandIds';
import { openAnchor } from './anchorCommands';
import type { FolderMemory, FolderWithStore } from './folderMemory';
import { fieldOfMessage, storeInputOf } from './newMemoryInput';
import { DisposableOwner } from './lifecycle';
import { archivedItemView, fixView, integrityView, MEMORY_PANEL_CONSTANTS, memoryDetails } from './memoryDetails';
import { conflictingFields, differingFields, fieldsOf, updateFor } from './memoryEdit';
import { PANEL_VIEW_TYPES, panelWebviewOptions, webviewHtml } from './webviewHtml';
import type { WorkspaceMemories } from './workspaceMemories';

const PANEL_ICONS: Record<WebviewView, string> = { memory: 'note', integrity: 'shield', archives: 'archive', newMemory: 'add' };

/**
 * A webview panel speaking the typed protocol. `restored`: the panel VS Code
 * brought back after a window reload (panelRestore.ts), which this one
 * takes over instead of opening a new tab.
 */
abstract class LtmPanel extends DisposableOwner {
  protected readonly panel: vscode.WebviewPanel;
  private readonly posted = this.own(new vscode.EventEmitter<ToWebview>());

  constructor(
    extensionUri: vscode.Uri,
    title: string,
    private readonly view: WebviewView,
    protected readonly log: vscode.LogOutputChannel,
    restored?: vscode.WebviewPanel,
  ) {
    super();
    const options = panelWebviewOptions(extensionUri);
    if (restored) restored.webview.options = options;
    this.panel = restored ?? vscode.window.createWebviewPanel(PANEL_VIEW_TYPES[view], title, vscode.ViewColumn.Active, { ...options, retainContextWhenHidden: false });
    this.panel.iconPath = new vscode.ThemeIcon(PANEL_ICONS[view]);
    this.panel.webview.html = webviewHtml(this.panel.webview, extensionUri, view, title);
    this.own(this.panel.onDidDispose(() => this.dispose()));
    this.own(this.panel.webview.onDidReceiveMessage((raw: unknown) => this.receive(raw)));
  }

  /**
   * A message from the page: checked, then handled; an error goes back to
   * the page as a notice and a log line. Public so that tests drive a panel as its page would.
   */
  async receive(raw: unknown): Promise<void> {
    const message = parseFromWebview(raw);
    if (!message) {
      this.log.warn(`ignored a malformed message from the ${this.view} webview`);
      return;
    }
    try {
      // First of all, the page learns which panel it is: what it keeps for a window reload.
      if (message.type === 'ready') this.postIdentity();
      await this.onMessage(message);
    } catch (error) {
      const text = describeError(error);
      this.log.error(`${this.view} webview: ${text}`);
      this.post({ type: 'notice', level: 'error', message: text });
    }
  }

  /** Fires with every message sent to the page (what tests read of it). */
  get onDidPost(): vscode.Event<ToWebview> {
    return this.posted.event;
  }

  protected post(message: ToWebview): void {
    this.posted.fire(message);
    void this.panel.webview.postMessage(message);
  }

  /** Which panel this is, as its page keeps it with VS Code (PersistedPanelState). */
  protected abstract identity(): PanelIdentity;

  protected postIdentity(): void {
    this.post({ type: 'identity', panel: this.identity() });
  }

  reveal(): void {
    this.panel.reveal();
  }

  get active(): boolean {
    return this.panel.active;
  }

  onDidDispose(listener: () => void): vscode.Disposable {
    return this.panel.onDidDispose(listener);
  }

  override dispose(): void {
    if (this.isDisposed) return;
    super.dispose();
    this.panel.dispose();
  }

  protected abstract onMessage(message: FromWebview): Promise<void>;
}

/** What tests use of a panel: speak to it as its page does, and read what it tells the page. */
export interface PanelHandle {
  receive(raw: unknown): Promise<void>;
  readonly onDidPost: vscode.Event<ToWebview>;
  readonly isDisposed: boolean;
}

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

function memoryKey(folder: FolderMemory, id: string): string {
  return `${folder.folder.uri.toString()}#${id}`;
}

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

/**
 * Opens the memory panels (one preview, which the next memory opened
 * replaces, and the pinned ones: at most one panel per memory), one integrity
 * panel, one archives panel and one New memory form per folder. It keeps the edits of memory panels closed
 * with unsaved changes, to restore them when the memory is opened again.
 */
export class Panels extends DisposableOwner {
  private readonly memoryPanels = new Set<MemoryPanel>();
  private readonly drafts = new Map<string, MemoryEdit>();
  private readonly newMemoryForms = new Map<string, NewMemoryPanel>();
  private integrity: IntegrityPanel | null = null;
  private archives: ArchivesPanel | null = null;

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly log: vscode.LogOutputChannel,
    private readonly memories: WorkspaceMemories,
  ) {
    super();
    this.own({
      dispose: () => {
        for (const p of this.memoryPanels) p.dispose();
        for (const f of this.newMemoryForms.values()) f.dispose();
        this.integrity?.dispose();
        this.archives?.dispose();
      },
    });
  }

  /**
   * Shows a memory: in its own panel if one is open, else in the preview
   * (unless `pin`), else in a new panel. An edit kept from a panel closed
   * with unsaved changes comes back with it.
   */
  showMemory(folder: FolderMemory, id: string, options: { pin?: boolean } = {}): MemoryPanel {
    const key = memoryKey(folder, id);
    const open = [...this.memoryPanels].find((p) => p.key === key);
    if (open) {
      open.reveal();
      if (options.pin) open.pin();
      else open.update();
      return open;
    }
    const draft = this.drafts.get(key) ?? null;
    this.drafts.delete(key);
    const preview = [...this.memoryPanels].find((p) => !p.pinned);
    if (preview && !options.pin && !draft) {
      preview.showMemory(folder, id);
      preview.reveal();
      return preview;
    }
    const panel = this.track(new MemoryPanel(this.extensionUri, this.log, folder, id, options.pin ?? false, draft));
    if (draft) void vscode.window.showInformationMessage(`LTM: restored your unsaved changes to "${panel.displayTopic}".`);
    return panel;
  }

  private track(panel: MemoryPanel): MemoryPanel {
    this.memoryPanels.add(panel);
    panel.onDidDispose(() => this.closed(panel));
    return panel;
  }

  /**
   * Takes over a memory panel VS Code brought back after a window reload
   * (panelRestore.ts), with the edit it held. Should the memory be open
   * already (opened while the window was starting), the restored tab goes.
   */
  restoreMemory(restored: vscode.WebviewPanel, folder: FolderMemory, id: string, pinned: boolean, edit: MemoryEdit | null): MemoryPanel {
    const open = [...this.memoryPanels].find((p) => p.key === memoryKey(folder, id));
    if (open) {
      restored.dispose();
      return open;
    }
    return this.track(new MemoryPanel(this.extensionUri, this.log, folder, id, pinned, edit, restored));
  }

  /** Takes over a restored integrity panel: it checks the store again (the one integrity panel stays one). */
  restoreIntegrity(restored: vscode.WebviewPanel, folder: FolderMemory): IntegrityPanel {
    if (this.integrity && !this.integrity.isDisposed) {
      restored.dispose();
      return this.integrity;
    }
    this.integrity = new IntegrityPanel(this.extensionUri, this.log, folder, restored);
    return this.integrity;
  }

  /** Takes over a restored archives panel: it lists the archives as they are now. */
  restoreArchives(restored: vscode.WebviewPanel): ArchivesPanel {
    if (this.archives && !this.archives.isDisposed) {
      restored.dispose();
      return this.archives;
    }
    this.archives = this.newArchivesPanel(restored);
    return this.archives;
  }

  /** Takes over a restored New memory form, filled with the fields as typed. */
  restoreNewMemory(restored: vscode.WebviewPanel, folder: FolderWithStore, draft: NewMemoryInput | null): NewMemoryPanel {
    const existing = this.newMemoryForms.get(folder.folder.uri.toString());
    if (existing && !existing.isDisposed) {
      restored.dispose();
      return existing;
    }
    return this.newMemoryForm(folder, draft, restored);
  }

  /** The memory panels, as tests see them. */
  probes(): MemoryPanelProbe[] {
    return [...this.memoryPanels].filter((p) => !p.isDisposed).map((p) => p.probe());
  }

  /** Saves the edit of the active memory panel (Ctrl+S / Cmd+S while it has focus). */
  async saveActive(): Promise<SaveOutcome> {
    const active = [...this.memoryPanels].find((p) => p.active);
    return active ? active.save() : 'nothing';
  }

  private closed(panel: MemoryPanel): void {
    this.memoryPanels.delete(panel);
    const edit = panel.unsaved;
    if (!edit || this.isDisposed) return;
    const key = panel.key;
    this.drafts.set(key, edit);
    const { folder, memoryId } = panel;
    void vscode.window
      .showWarningMessage(`LTM: "${panel.displayTopic}" was closed with unsaved changes. They are kept and come back when you open it again.`, 'Reopen', 'Discard')
      .then((choice) => {
        if (choice === 'Reopen' && this.drafts.has(key)) this.showMemory(folder, memoryId);
        else if (choice === 'Discard') this.drafts.delete(key);
      });
  }

  /** Shows open memory panels again (the code their anchors point to may have changed). */
  updateMemories(): void {
    for (const panel of this.memoryPanels) if (!panel.isDisposed) panel.update();
  }

  showIntegrity(folder: FolderMemory): IntegrityPanel {
    if (this.integrity && !this.integrity.isDisposed) {
      this.integrity.reveal();
      this.integrity.setFolder(folder);
      return this.integrity;
    }
    this.integrity = new IntegrityPanel(this.extensionUri, this.log, folder);
    return this.integrity;
  }

  /** The New memory form for a folder (one per folder: run again, it comes to the front). */
  showNewMemory(folder: FolderWithStore): NewMemoryPanel {
    const key = folder.folder.uri.toString();
    const existing = this.newMemoryForms.get(key);
    if (existing && !existing.isDisposed) {
      existing.reveal();
      return existing;
    }
    return this.newMemoryForm(folder, null);
  }

  private newMemoryForm(folder: FolderWithStore, draft: NewMemoryInput | null, restored?: vscode.WebviewPanel): NewMemoryPanel {
    const key = folder.folder.uri.toString();
    const form = new NewMemoryPanel(this.extensionUri, this.log, folder, (f, id) => this.showMemory(f, id), draft, restored);
    this.newMemoryForms.set(key, form);
    form.onDidDispose(() => this.newMemoryForms.delete(key));
    return form;
  }

  showArchives(): void {
    if (this.archives && !this.archives.isDisposed) {
      this.archives.reveal();
      return;
    }
    this.archives = this.newArchivesPanel();
  }

  private newArchivesPanel(restored?: vscode.WebviewPanel): ArchivesPanel {
    return new ArchivesPanel(this.extensionUri, this.log, this.memories, (folder, id) => this.showMemory(folder, id), restored);
  }
}
