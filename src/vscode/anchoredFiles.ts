/**
 * Which files of the workspace memories are anchored to, kept in step with
 * the stores and with saves: the CodeLens, the tree's "possibly outdated"
 * marks and the memory panels ask it, and refresh when it fires.
 *
 * The index is built from the memories' anchors alone (no file is read) and
 * dropped when a folder's memories change. A save of an anchored file fires a
 * change (staleness is stat-based: asking again is enough) and, a moment
 * later, writes where moved lines went into the memories (followAnchors): once
 * per burst of saves, never per keystroke.
 *
 * Anchored files changed outside VS Code (Claude Code editing them, a git
 * checkout) fire a change too, once per burst, but are not followed: writing
 * memory files right after a checkout would leave the working tree modified.
 * Until a save or `ltm stale` follows them, lenses still show moved lines
 * where they are (they check the editor's text).
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import { anchorIndex, type AnchoredMemory } from '../core/anchoredCode';
import { errorMessage } from '../core/errors';
import { hasOpenStore, type FolderWithStore } from './folderMemory';
import { DisposableOwner } from './lifecycle';
import type { WorkspaceMemories } from './workspaceMemories';

/** Saves come in bursts (Save All, format on save): anchors are followed once the burst is over. */
export const FOLLOW_DEBOUNCE_MS = 1_000;
/** File events from outside arrive in bursts (a checkout): one refresh per burst. */
const EXTERNAL_DEBOUNCE_MS = 300;

/** A file of a folder with a store, by its project-relative path (`/` separators). */
export interface AnchoredLocation {
  folder: FolderWithStore;
  relative: string;
}

export class AnchoredFiles extends DisposableOwner {
  /** By folder URI: anchored path → memories anchored in it. */
  private readonly indexes = new Map<string, Map<string, AnchoredMemory[]>>();
  private readonly followTimers = new Map<string, NodeJS.Timeout>();
  private readonly externalTimers = new Map<string, NodeJS.Timeout>();
  private readonly changed = this.own(new vscode.EventEmitter<FolderWithStore | undefined>());
  /**
   * Fires when what anchored code shows may have changed: a folder's memories
   * changed, or an anchored file was saved (undefined: any folder).
   */
  readonly onDidChange = this.changed.event;
  private readonly savedAnchored = this.own(new vscode.EventEmitter<FolderWithStore>());
  /** Fires when a file memories are anchored to was saved or changed on disk: their staleness may have changed. */
  readonly onDidChangeAnchoredFile = this.savedAnchored.event;

  constructor(
    private readonly memories: WorkspaceMemories,
    private readonly log: vscode.LogOutputChannel,
  ) {
    super();
    this.own(
      memories.onDidChange((folder) => {
        if (folder) this.indexes.delete(folder.folder.uri.toString());
        else this.indexes.clear();
        this.changed.fire(folder && hasOpenStore(folder) ? folder : undefined);
      }),
    );
    this.own(vscode.workspace.onDidSaveTextDocument((document) => this.saved(document)));
    // Served by the workbench's own recursive watcher of the folders (and its files.watcherExclude).
    const watcher = this.own(vscode.workspace.createFileSystemWatcher('**/*', true, false, false));
    this.own(watcher.onDidChange((uri) => this.changedOutside(uri)));
    this.own(watcher.onDidDelete((uri) => this.changedOutside(uri)));
    this.own({
      dispose: () => {
        for (const timer of [...this.followTimers.values(), ...this.externalTimers.values()]) clearTimeout(timer);
        this.followTimers.clear();
        this.externalTimers.clear();
      },
    });
  }

  /** The folder with a store that holds `uri`, and the path in it; undefined for other files. */
  locate(uri: vscode.Uri): AnchoredLocation | undefined {
    if (uri.scheme !== 'file') return undefined;
    const workspaceFolder = vscode.workspace.getWorkspaceFolder(uri);
    const folder = workspaceFolder && this.memories.byUri(workspaceFolder.uri.toString());
    if (!folder || !hasOpenStore(folder)) return undefined;
    const relative = path.relative(folder.folder.uri.fsPath, uri.fsPath);
    if (!relative || relative.startsWith('..') || path.isAbsolute(relative)) return undefined;
    return { folder, relative: relative.split(path.sep).join('/') };
  }

  /** The active memories anchored in a file of a folder, most important first. */
  memoriesIn(folder: FolderWithStore, relative: string): AnchoredMemory[] {
    return this.indexOf(folder).get(relative) ?? [];
  }

  private indexOf(folder: FolderWithStore): Map<string, AnchoredMemory[]> {
    const key = folder.folder.uri.toString();
    let index = this.indexes.get(key);
    if (!index) {
      const active = folder.store.list({ limit: Number.MAX_SAFE_INTEGER }).memories.filter((m) => m.anchors.length > 0);
      index = anchorIndex(active.map((m) => ({ id: m.id, topic: m.topic, anchors: m.anchors })));
      this.indexes.set(key, index);
    }
    return index;
  }

  private saved(document: vscode.TextDocument): void {
    const where = this.locate(document.uri);
    if (!where || this.memoriesIn(where.folder, where.relative).length === 0) return;
    this.changed.fire(where.folder);
    this.savedAnchored.fire(where.folder);
    const key = where.folder.folder.uri.toString();
    clearTimeout(this.followTimers.get(key));
    this.followTimers.set(
      key,
      setTimeout(() => {
        this.followTimers.delete(key);
        void this.follow(where.folder);
      }, FOLLOW_DEBOUNCE_MS),
    );
  }

  /** An anchored file changed on disk (a save shows up here too; refreshing twice is harmless). */
  private changedOutside(uri: vscode.Uri): void {
    const where = this.locate(uri);
    if (!where || this.memoriesIn(where.folder, where.relative).length === 0) return;
    const key = where.folder.folder.uri.toString();
    clearTimeout(this.externalTimers.get(key));
    this.externalTimers.set(
      key,
      setTimeout(() => {
        this.externalTimers.delete(key);
        if (this.isDisposed || where.folder.isDisposed) return;
        this.changed.fire(where.folder);
        this.savedAnchored.fire(where.folder);
      }, EXTERNAL_DEBOUNCE_MS),
    );
  }

  /** Writes where moved lines and renamed files are now into the memories anchored to them. */
  private async follow(folder: FolderWithStore): Promise<void> {
    if (this.isDisposed || folder.isDisposed) return;
    try {
      const written = await folder.store.followAnchors();
      if (written.length === 0) return;
      this.log.info(`${folder.name}: anchors followed moved code in ${written.join(', ')}`);
      folder.refresh();
    } catch (error) {
      this.log.warn(`${folder.name}: following moved anchors failed: ${errorMessage(error)}`);
    }
  }
}
