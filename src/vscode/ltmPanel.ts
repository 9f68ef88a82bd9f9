/**
 * What every LTM webview panel shares: a panel speaking the typed protocol
 * of src/shared/protocol.ts with its page, which is one browser bundle
 * (dist/webview.js) for every view. Every piece of memory text reaches the
 * page as data and is rendered as text there. The panels themselves:
 * memoryPanel.ts, integrityPanel.ts, archivesPanel.ts, newMemoryPanel.ts;
 * webviewPanels.ts opens them.
 */
import * as vscode from 'vscode';
import { describeError } from '../core/errors';
import { parseFromWebview, type FromWebview, type PanelIdentity, type ToWebview, type WebviewView } from '../shared/protocol';
import { DisposableOwner } from './lifecycle';
import { PANEL_VIEW_TYPES, panelWebviewOptions, webviewHtml } from './webviewHtml';

const PANEL_ICONS: Record<WebviewView, string> = { memory: 'note', integrity: 'shield', archives: 'archive', newMemory: 'add' };

/**
 * A webview panel speaking the typed protocol. `restored`: the panel VS Code
 * brought back after a window reload (panelRestore.ts), which this one
 * takes over instead of opening a new tab.
 */
export abstract class LtmPanel extends DisposableOwner {
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
