/**
 * "LTM: 2 memories · 1 possibly outdated" above the first line of each
 * anchored range, in files of the folders that have a store. A click opens
 * the memory, or asks which when several start there.
 *
 * Lenses follow the text as it is in the editor: each anchor is checked
 * against the document's own text (in memory, no file read), so lines that
 * moved are shown where they are now, even before a save, and an edit inside
 * a range says "possibly outdated" at once. Very long documents are checked
 * by the store instead (stat-based and cached, as the tree is).
 */
import * as vscode from 'vscode';
import { anchoredRanges, lensGroups, type AnchoredMemory } from '../core/anchoredCode';
import { checkAnchor, type Anchor, type AnchorCheck } from '../core/anchors';
import type { AnchoredFiles, AnchoredLocation } from './anchoredFiles';
import { CommandId } from './commandIds';
import { DisposableOwner } from './lifecycle';
import type { LtmSettings } from './settings';
import type { WorkspaceMemories } from './workspaceMemories';

/** Documents up to this many lines are checked from their text; longer ones through the store. */
const LIVE_CHECK_MAX_LINES = 20_000;

/** What a lens's command is given: the folder (URI) and the memories whose ranges start on its line. */
export interface AnchoredMemoriesArgs {
  folder: string;
  ids: string[];
}

interface CachedLenses {
  version: number;
  generation: number;
  lenses: vscode.CodeLens[];
}

export class AnchorLensProvider extends DisposableOwner implements vscode.CodeLensProvider {
  private readonly changed = this.own(new vscode.EventEmitter<void>());
  readonly onDidChangeCodeLenses = this.changed.event;
  /** Bumped whenever the memories or anchored files changed: cached lenses of older generations are rebuilt. */
  private generation = 0;
  private readonly cache = new WeakMap<vscode.TextDocument, CachedLenses>();
  private registration: vscode.Disposable | undefined;
  private registeredFor = '';

  constructor(
    private readonly memories: WorkspaceMemories,
    private readonly anchored: AnchoredFiles,
    private readonly settings: LtmSettings,
  ) {
    super();
    this.own({ dispose: () => this.registration?.dispose() });
    this.own(
      anchored.onDidChange(() => {
        this.generation++;
        this.register();
        this.changed.fire();
      }),
    );
    this.own(
      settings.onDidChange((e) => {
        if (e.affectsConfiguration('ltm.codeLens')) this.register();
      }),
    );
    this.register();
  }

  /**
   * Registered for files of the folders that have a store, and only while
   * `ltm.codeLens` is on; registered again when those change.
   */
  private register(): void {
    if (this.isDisposed) return;
    const folders = this.settings.codeLens ? this.memories.withStores().map((f) => f.folder) : [];
    const key = folders.map((f) => f.uri.toString()).join('\n');
    if (key === this.registeredFor) return;
    this.registeredFor = key;
    this.registration?.dispose();
    this.registration = undefined;
    if (folders.length === 0) return;
    const selector = folders.map((folder) => ({ scheme: 'file', pattern: new vscode.RelativePattern(folder, '**/*') }));
    this.registration = vscode.languages.registerCodeLensProvider(selector, this);
  }

  provideCodeLenses(document: vscode.TextDocument): vscode.CodeLens[] {
    const cached = this.cache.get(document);
    if (cached && cached.version === document.version && cached.generation === this.generation) return cached.lenses;
    const lenses = this.lensesFor(document);
    this.cache.set(document, { version: document.version, generation: this.generation, lenses });
    return lenses;
  }

  private lensesFor(document: vscode.TextDocument): vscode.CodeLens[] {
    const where = this.anchored.locate(document.uri);
    if (!where) return [];
    const memories = this.anchored.memoriesIn(where.folder, where.relative);
    if (memories.length === 0) return [];
    let check: (anchor: Anchor, memory: AnchoredMemory) => AnchorCheck;
    if (document.lineCount <= LIVE_CHECK_MAX_LINES) {
      const text = document.getText();
      check = (anchor) => checkAnchor(anchor, text);
    } else {
      check = storeCheck(where);
    }
    const folder = where.folder.folder.uri.toString();
    return lensGroups(anchoredRanges(where.relative, memories, check), document.lineCount).map((group) => {
      const line = group.line - 1;
      const tooltip = group.memories.map((m) => `${m.stale ? '⚠ possibly outdated: ' : ''}${m.topic.replace(/\s+/g, ' ')}`).join('\n');
      const args: AnchoredMemoriesArgs = { folder, ids: group.memories.map((m) => m.id) };
      return new vscode.CodeLens(new vscode.Range(line, 0, line, 0), { title: group.title, tooltip, command: CommandId.OpenAnchoredMemories, arguments: [args] });
    });
  }
}

/** How anchors stand by the store's report (the file on disk; stat-based and cached). */
function storeCheck(where: AnchoredLocation): (anchor: Anchor, memory: AnchoredMemory) => AnchorCheck {
  return (anchor, memory) => {
    let report;
    try {
      report = where.folder.store.staleness(memory.id);
    } catch {
      return { state: 'fresh' };
    }
    const status = report?.anchors.find((s) => s.anchor.path === anchor.path && s.anchor.hash === anchor.hash && String(s.anchor.lines) === String(anchor.lines));
    return status && !status.renamedTo ? status.check : { state: 'fresh' };
  };
}
