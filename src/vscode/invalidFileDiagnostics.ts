/**
 * Invalid memory files in the Problems panel: one diagnostic on each file of
 * .claude/ltm/memories/ the store cannot read as a memory (and so ignores),
 * with a quick fix that runs "Fix integrity" on its folder. Kept in step with
 * the folders' memories: a file fixed by hand or by the repair loses its mark.
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { InvalidFile } from '../core/store';
import { CommandId } from './commandIds';
import type { FolderWithStore } from './folderMemory';
import { DisposableOwner } from './lifecycle';
import type { WorkspaceMemories } from './workspaceMemories';

/** The diagnostics' `source` and `code`: how the quick fix recognizes its own. */
export const DIAGNOSTIC_SOURCE = 'LTM';
export const INVALID_MEMORY_FILE_CODE = 'invalid-memory-file';

export class InvalidFileDiagnostics extends DisposableOwner implements vscode.CodeActionProvider {
  static readonly providedCodeActionKinds = [vscode.CodeActionKind.QuickFix];
  private readonly collection = this.own(vscode.languages.createDiagnosticCollection('ltm'));

  constructor(private readonly memories: WorkspaceMemories) {
    super();
    this.own(memories.onDidChange(() => this.update()));
    this.own(
      vscode.languages.registerCodeActionsProvider({ scheme: 'file', pattern: '**/.claude/ltm/memories/**' }, this, {
        providedCodeActionKinds: InvalidFileDiagnostics.providedCodeActionKinds,
      }),
    );
  }

  /** Marks every invalid file of every open store, and only those. */
  update(): void {
    this.collection.clear();
    for (const folder of this.memories.withStores()) {
      for (const invalid of folder.store.invalidFiles()) {
        const uri = vscode.Uri.file(path.join(folder.store.paths.memories, invalid.name));
        this.collection.set(uri, [diagnosticFor(invalid)]);
      }
    }
  }

  provideCodeActions(document: vscode.TextDocument, _range: vscode.Range, context: vscode.CodeActionContext): vscode.CodeAction[] {
    const ours = context.diagnostics.filter((d) => d.source === DIAGNOSTIC_SOURCE && d.code === INVALID_MEMORY_FILE_CODE);
    if (ours.length === 0) return [];
    const folder = this.memories.withStores().find((f) => document.uri.fsPath.startsWith(f.store.paths.memories + path.sep));
    if (!folder) return [];
    const action = new vscode.CodeAction('Fix integrity (LTM)', vscode.CodeActionKind.QuickFix);
    action.diagnostics = ours;
    action.isPreferred = true;
    action.command = { command: CommandId.FixIntegrity, title: 'Fix integrity', arguments: [fixTarget(folder)] };
    return [action];
  }
}

/** What ltm.fixIntegrity is given by the quick fix: the folder, by path. */
export function fixTarget(folder: FolderWithStore): { folder: string } {
  return { folder: folder.folder.uri.fsPath };
}

function diagnosticFor(invalid: InvalidFile): vscode.Diagnostic {
  const repair = invalid.claimedId ? 'gives this copy an ID of its own' : 'moves it to .claude/ltm/quarantine/';
  const diagnostic = new vscode.Diagnostic(
    // The whole first line (clamped to the text by the editor): the file as a whole is what is wrong.
    new vscode.Range(0, 0, 0, Number.MAX_SAFE_INTEGER),
    `LTM cannot read this file as a memory, so Claude Code is not given it: ${invalid.reason}. Fix the file, or run "LTM: Fix integrity", which ${repair}.`,
    vscode.DiagnosticSeverity.Warning,
  );
  diagnostic.source = DIAGNOSTIC_SOURCE;
  diagnostic.code = INVALID_MEMORY_FILE_CODE;
  return diagnostic;
}
