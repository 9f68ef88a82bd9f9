/**
 * The webview panels: one per open memory, one integrity panel, one archives
 * panel. They share one browser bundle (dist/webview.js) and the typed
 * protocol in src/shared/protocol.ts. Every piece of memory text reaches the
 * page as data and is rendered as text there.
 */
import { countOf } from '../shared/wording';
import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import { describeError, LtmError } from '../core/errors';
import { DEFAULT_IMPORTANCE, IMPORTANCE_LEVELS } from '../core/priority';
import type { StoreResult } from '../core/storeTypes';
import { parseFromWebview, type FromWebview, type NewMemoryInput, type ToWebview, type WebviewView } from '../shared/protocol';
import { CommandId } from './commandIds';
import { openAnchor } from './anchorCommands';
import type { FolderMemory, FolderWithStore } from './folderMemory';
import { fieldOfMessage, storeInputOf } from './newMemoryInput';
import { DisposableOwner } from './lifecycle';
import { archivedItemView, fixView, integrityView, MEMORY_PANEL_CONSTANTS, memoryDetails } from './memoryDetails';
import type { WorkspaceMemories } from './workspaceMemories';

export function webviewHtml(webview: vscode.Webview, extensionUri: vscode.Uri, view: WebviewView, title: string): string {
  const nonce = randomBytes(16).toString('base64');
  const asset = (name: string) => webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, 'dist', name)).toString();
  const csp = [
    "default-src 'none'",
    `style-src ${webview.cspSource} 'nonce-${nonce}'`,
    `font-src ${webview.cspSource}`,
    `img-src ${webview.cspSource} data:`,
    `script-src 'nonce-${nonce}'`,
  ].join('; ');
  const escapedTitle = title.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${asset('codicon.css')}" id="vscode-codicon-stylesheet" nonce="${nonce}">
<link rel="stylesheet" href="${asset('webview.css')}" nonce="${nonce}">
<title>${escapedTitle}</title>
</head>
<body data-view="${view}">
<main id="app" aria-live="polite"></main>
<script nonce="${nonce}" src="${asset('webview.js')}"></script>
</body>
</html>`;
}

const PANEL_ICONS: Record<WebviewView, string> = { memory: 'note', integrity: 'shield', archives: 'archive', newMemory: 'add' };

/** A webview panel speaking the typed protocol. */
abstract class LtmPanel extends DisposableOwner {
  protected readonly panel: vscode.WebviewPanel;
  private readonly posted = this.own(new vscode.EventEmitter<ToWebview>());

  constructor(
    extensionUri: vscode.Uri,
    viewType: string,
    title: string,
    private readonly view: WebviewView,
    protected readonly log: vscode.LogOutputChannel,
  ) {
    super();
    this.panel = vscode.window.createWebviewPanel(viewType, title, vscode.ViewColumn.Active, {
      enableScripts: true,
      retainContextWhenHidden: false,
      localResourceRoots: [vscode.Uri.joinPath(extensionUri, 'dist')],
    });
    this.panel.iconPath = new vscode.ThemeIcon(PANEL_ICONS[view]);
    this.panel.webview.html = webviewHtml(this.panel.webview, extensionUri, view, title);
    this.own(this.panel.onDidDispose(() => this.dispose()));
    this.own(this.panel.webview.onDidReceiveMessage((raw: unknown) => this.receive(raw)));
  }

  /**
   * A message from the page: checked, then handled; an error goes back to
   * the page as a notice. Public so that tests drive a panel as its page would.
   */
  async receive(raw: unknown): Promise<void> {
    const message = parseFromWebview(raw);
    if (!message) {
      this.log.warn(`ignored a malformed message from the ${this.view} webview`);
      return;
    }
    try {
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

  reveal(): void {
    this.panel.reveal();
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

export class MemoryPanel extends LtmPanel {
  constructor(
    extensionUri: vscode.Uri,
    log: vscode.LogOutputChannel,
    readonly folder: FolderMemory,
    readonly memoryId: string,
  ) {
    super(extensionUri, 'ltm.memory', 'Memory', 'memory', log);
    this.own(folder.onDidChange(() => this.update()));
  }

  update(): void {
    const store = this.folder.store;
    const details = store ? memoryDetails(store, this.memoryId, this.folder.name) : null;
    if (!details) {
      this.panel.title = `${this.memoryId} (gone)`;
      this.post({ type: 'memoryGone', id: this.memoryId, message: `${this.memoryId} no longer exists in ${this.folder.name}.` });
      return;
    }
    this.panel.title = details.topic.length > 40 ? `${details.topic.slice(0, 39)}…` : details.topic;
    this.post({ type: 'memory', memory: details, constants: MEMORY_PANEL_CONSTANTS });
  }

  protected async onMessage(message: FromWebview): Promise<void> {
    const store = this.folder.store;
    if (!store) return;
    switch (message.type) {
      case 'ready':
        this.update();
        return;
      case 'saveSummary':
        await store.updateSummary(message.id, message.summary);
        this.log.info(`${this.folder.name}: summary of ${message.id} saved`);
        this.post({ type: 'notice', level: 'info', message: 'Summary saved.' });
        this.folder.refresh();
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

export class IntegrityPanel extends LtmPanel {
  private folder: FolderMemory;

  constructor(extensionUri: vscode.Uri, log: vscode.LogOutputChannel, folder: FolderMemory) {
    super(extensionUri, 'ltm.integrity', `Integrity: ${folder.name}`, 'integrity', log);
    this.folder = folder;
  }

  setFolder(folder: FolderMemory): void {
    this.folder = folder;
    this.panel.title = `Integrity: ${folder.name}`;
    this.runCheck();
  }

  runCheck(): void {
    const store = this.folder.store;
    if (!store) return;
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
    if (message.type === 'ready' || message.type === 'runCheck') this.runCheck();
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
  ) {
    super(extensionUri, 'ltm.archives', 'Memory archives', 'archives', log);
    this.own(memories.onDidChange(() => this.search(this.query)));
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
  ) {
    super(extensionUri, 'ltm.newMemory', 'New memory', 'newMemory', log);
  }

  protected async onMessage(message: FromWebview): Promise<void> {
    switch (message.type) {
      case 'ready':
        this.post({ type: 'newMemoryForm', form: { folder: this.folder.name, importanceLevels: IMPORTANCE_LEVELS, defaultImportance: DEFAULT_IMPORTANCE } });
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

/** Opens at most one panel per memory, one integrity panel and one archives panel. */
export class Panels extends DisposableOwner {
  private readonly memoryPanels = new Map<string, MemoryPanel>();
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
        for (const p of this.memoryPanels.values()) p.dispose();
        for (const f of this.newMemoryForms.values()) f.dispose();
        this.integrity?.dispose();
        this.archives?.dispose();
      },
    });
  }

  showMemory(folder: FolderMemory, id: string): void {
    const key = `${folder.folder.uri.toString()}#${id}`;
    const existing = this.memoryPanels.get(key);
    if (existing && !existing.isDisposed) {
      existing.reveal();
      existing.update();
      return;
    }
    const panel = new MemoryPanel(this.extensionUri, this.log, folder, id);
    this.memoryPanels.set(key, panel);
    panel.onDidDispose(() => this.memoryPanels.delete(key));
  }

  /** Shows open memory panels again (the code their anchors point to may have changed). */
  updateMemories(): void {
    for (const panel of this.memoryPanels.values()) if (!panel.isDisposed) panel.update();
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
    const form = new NewMemoryPanel(this.extensionUri, this.log, folder, (f, id) => this.showMemory(f, id));
    this.newMemoryForms.set(key, form);
    form.onDidDispose(() => this.newMemoryForms.delete(key));
    return form;
  }

  showArchives(): void {
    if (this.archives && !this.archives.isDisposed) {
      this.archives.reveal();
      return;
    }
    this.archives = new ArchivesPanel(this.extensionUri, this.log, this.memories, (folder, id) => this.showMemory(folder, id));
  }
}
