/**
 * Brings LTM's panels back after the window reloads (Reload Window, an
 * update, a renderer crash), as VS Code does for editors: each page keeps
 * which panel it is and its unsaved draft with VS Code (PersistedPanelState),
 * and VS Code hands that to the serializer registered here for its view type.
 *
 * The state is the page's word: it is checked (panelState.ts) before
 * anything is looked up with it, and a state that does not check out closes
 * its tab. A memory panel comes back showing its memory (or saying it no
 * longer exists) with its draft still unsaved; integrity and archives panels
 * come back showing the store as it is now; a panel whose folder is no longer
 * open says so, with its draft as text to copy.
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { PersistedPanelState, WebviewView } from '../shared/protocol';
import { hasOpenStore } from './folderMemory';
import { differingFields } from './memoryEdit';
import { draftText, parsePanelState } from './panelState';
import { PANEL_VIEW_TYPES, unavailableHtml } from './webviewHtml';
import type { PanelHandle } from './ltmPanel';
import type { Panels } from './webviewPanels';
import type { WorkspaceMemories } from './workspaceMemories';

export interface PanelRestoreDeps {
  extensionUri: vscode.Uri;
  log: vscode.LogOutputChannel;
  memories: WorkspaceMemories;
  panels: Panels;
  /** Settles once the workspace's stores are open: a panel is restored against them, not before. */
  ready: () => Promise<void>;
}

const VIEWS = Object.keys(PANEL_VIEW_TYPES) as WebviewView[];

/** What a restored panel of each view is called while it cannot show its content. */
const UNAVAILABLE_TITLES: Record<Exclude<WebviewView, 'archives'>, string> = { memory: 'Memory', newMemory: 'New memory', integrity: 'Integrity' };

export class PanelRestorer {
  constructor(private readonly deps: PanelRestoreDeps) {}

  /** One serializer per view type; disposing the result unregisters them. */
  register(): vscode.Disposable {
    return vscode.Disposable.from(
      ...VIEWS.map((view) =>
        vscode.window.registerWebviewPanelSerializer(PANEL_VIEW_TYPES[view], {
          deserializeWebviewPanel: async (panel, state) => {
            await this.restore(panel, state);
          },
        }),
      ),
    );
  }

  /**
   * Takes over `panel` (restored by VS Code, or made by a test) with the state
   * its page kept; returns the LTM panel now showing in it, or undefined when
   * it was closed or shows why it cannot be restored.
   */
  async restore(panel: vscode.WebviewPanel, raw: unknown): Promise<PanelHandle | undefined> {
    const view = VIEWS.find((v) => PANEL_VIEW_TYPES[v] === panel.viewType);
    const state = view ? parsePanelState(raw, view) : null;
    if (!state) {
      // Nothing trustworthy to show: the tab goes rather than show something made up.
      this.deps.log.warn(`did not restore a ${panel.viewType} panel: its saved state is not one LTM keeps`);
      panel.dispose();
      return undefined;
    }
    let closed = false;
    const closing = panel.onDidDispose(() => (closed = true));
    try {
      await this.deps.ready();
      return closed ? undefined : this.takeOver(panel, state);
    } finally {
      closing.dispose();
    }
  }

  private takeOver(panel: vscode.WebviewPanel, state: PersistedPanelState): PanelHandle | undefined {
    const { panels, memories } = this.deps;
    const identity = state.panel;
    if (identity.view === 'archives') return panels.restoreArchives(panel);
    const folder = memories.byUri(identity.folder);
    if (!folder || !hasOpenStore(folder)) {
      this.showUnavailable(panel, identity.view, identity.folder, state);
      return undefined;
    }
    switch (identity.view) {
      case 'memory': {
        // An edit that changes nothing is no draft (as an `edit` message from the page).
        const edit = state.edit && differingFields(state.edit.base, state.edit.draft).length > 0 ? state.edit : null;
        return panels.restoreMemory(panel, folder, identity.id, identity.pinned || edit !== null, edit);
      }
      case 'integrity':
        return panels.restoreIntegrity(panel, folder);
      case 'newMemory':
        return panels.restoreNewMemory(panel, folder, state.form);
    }
  }

  /** The panel's folder is not open here (removed from the workspace, or its store is gone): it says so, and keeps the draft in view. */
  private showUnavailable(panel: vscode.WebviewPanel, view: Exclude<WebviewView, 'archives'>, folderUri: string, state: PersistedPanelState): void {
    const name = folderName(folderUri);
    const draft = draftText(state);
    const title = UNAVAILABLE_TITLES[view];
    panel.title = `${draft ? '● ' : ''}${title} (folder not open)`;
    const message =
      `The folder “${name}” is not open in this window, or has no memory store now, so this ${title.toLowerCase()} panel cannot be shown. ` +
      (draft
        ? 'Your unsaved changes are below: copy them, or add the folder back and reload the window to get them back in the panel.'
        : 'Close this tab, or add the folder back and reload the window.');
    panel.webview.options = { enableScripts: false, localResourceRoots: [vscode.Uri.joinPath(this.deps.extensionUri, 'dist')] };
    panel.webview.html = unavailableHtml(panel.webview, this.deps.extensionUri, `Folder “${name}” not open`, message, draft);
    this.deps.log.info(`restored a ${view} panel of ${name} without its content: the folder is not open`);
  }
}

function folderName(uri: string): string {
  try {
    return path.basename(vscode.Uri.parse(uri, true).fsPath) || uri;
  } catch {
    return uri;
  }
}
