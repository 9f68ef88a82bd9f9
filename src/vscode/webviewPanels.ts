/**
 * Opens the webview panels (ltmPanel.ts): one per open memory, one integrity
 * panel, one archives panel and one New memory form per folder.
 */
import * as vscode from 'vscode';
import type { MemoryEdit, NewMemoryInput } from '../shared/protocol';
import { ArchivesPanel } from './archivesPanel';
import type { FolderMemory, FolderWithStore } from './folderMemory';
import { IntegrityPanel } from './integrityPanel';
import { DisposableOwner } from './lifecycle';
import { MemoryPanel, memoryKey, type MemoryPanelProbe, type SaveOutcome } from './memoryPanel';
import { NewMemoryPanel } from './newMemoryPanel';
import type { WorkspaceMemories } from './workspaceMemories';

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
