/**
 * "LTM: Preview injected context": what Claude Code would be given at session
 * start, and with a prompt, a failure or a file, as a read-only Markdown
 * document on the `ltm-context:` scheme. The text is built by the engine
 * (core/contextDocument.ts, the same preview as `ltm context`) with the
 * budgets the folder's server injects with; building it counts no access and
 * writes nothing. The question travels in the document's URI, so a document
 * is built again when the memories or the budgets change while it is open.
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import { contextDocument, markdownText, type ContextQuestion } from '../core/contextDocument';
import { readGitSituation } from '../servers/gitSituation';
import { hasOpenStore, type FolderMemory } from './folderMemory';
import { DisposableOwner } from './lifecycle';
import type { LtmSettings } from './settings';
import type { WorkspaceMemories } from './workspaceMemories';

export const CONTEXT_SCHEME = 'ltm-context';

/** What a document's URI carries: the folder, and what to preview besides the session start. */
interface DocumentQuery extends ContextQuestion {
  folder: string;
}

function parseQuery(uri: vscode.Uri): DocumentQuery | undefined {
  try {
    const value = JSON.parse(uri.query) as unknown;
    if (!value || typeof value !== 'object') return undefined;
    const q = value as Record<string, unknown>;
    if (typeof q.folder !== 'string') return undefined;
    const text = (key: string) => (typeof q[key] === 'string' ? q[key] : undefined);
    return { folder: q.folder, prompt: text('prompt'), error: text('error'), file: text('file') };
  } catch {
    return undefined;
  }
}

export class ContextPreviewDocuments extends DisposableOwner implements vscode.TextDocumentContentProvider {
  private readonly changed = this.own(new vscode.EventEmitter<vscode.Uri>());
  readonly onDidChange = this.changed.event;

  constructor(
    private readonly memories: WorkspaceMemories,
    private readonly settings: LtmSettings,
  ) {
    super();
    this.own(vscode.workspace.registerTextDocumentContentProvider(CONTEXT_SCHEME, this));
    this.own(memories.onDidChange((folder) => this.rebuild(folder)));
    this.own(settings.onDidChange(() => this.rebuild(undefined)));
  }

  /** Open previews of `folder` (or of every folder) are built again. */
  private rebuild(folder: FolderMemory | undefined): void {
    for (const document of vscode.workspace.textDocuments) {
      if (document.uri.scheme !== CONTEXT_SCHEME) continue;
      if (folder && parseQuery(document.uri)?.folder !== folder.folder.uri.toString()) continue;
      this.changed.fire(document.uri);
    }
  }

  uriFor(folder: FolderMemory, question: ContextQuestion): vscode.Uri {
    const what = question.prompt !== undefined ? 'prompt' : question.error !== undefined ? 'failure' : question.file !== undefined ? path.basename(question.file) : 'session start';
    const query: DocumentQuery = { folder: folder.folder.uri.toString(), ...question };
    // The title says whose and what; the query says exactly what.
    return vscode.Uri.from({ scheme: CONTEXT_SCHEME, path: `/${folder.name}/LTM context (${what.replace(/[/\\]/g, '_')}).md`, query: JSON.stringify(query) });
  }

  /** Opens the preview beside nothing else: a read-only Markdown document. */
  async show(folder: FolderMemory, question: ContextQuestion): Promise<vscode.Uri> {
    const uri = this.uriFor(folder, question);
    // Already open: built again, as of now.
    this.changed.fire(uri);
    const document = await vscode.workspace.openTextDocument(uri);
    await vscode.window.showTextDocument(document, { preview: true });
    return uri;
  }

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const query = parseQuery(uri);
    if (!query) return '# LTM context preview\n\nThis preview\'s address is not one LTM made. Run "LTM: Preview injected context" again.\n';
    const folder = this.memories.byUri(query.folder);
    if (!folder) return '# LTM context preview\n\nThe folder of this preview is no longer open in this window.\n';
    if (!hasOpenStore(folder)) {
      return `# No memory store in ${markdownText(folder.name)}\n\nClaude Code is given nothing from LTM here: the folder has no \`.claude/ltm/\`. Run "LTM: Initialize memory" to create one.\n`;
    }
    const server = folder.server;
    const note =
      server && !server.own
        ? `Another process (pid ${server.pid}) serves this folder and injects with its own budgets; these are this window's settings.`
        : undefined;
    // Ranked as a session starting now would be: by the folder's branch and changed files.
    const situation = await readGitSituation(folder.folder.uri.fsPath);
    return contextDocument(folder.store, {
      projectName: folder.name,
      situation,
      question: { prompt: query.prompt, error: query.error, file: query.file },
      budgets: { sessionStart: this.settings.injectionTokenBudget(folder.folder), prompt: this.settings.promptTokenBudget(folder.folder) },
      note,
    });
  }
}
