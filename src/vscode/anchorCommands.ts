/**
 * The commands about anchored code: "Remember selection" anchored to the
 * selected lines, "Still true — re-anchor", and what a CodeLens opens.
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import { fencedCode, selectionAnchorSpec, selectionLines, topicFrom } from '../core/anchoredCode';
import { describeAnchor, InvalidAnchor, MAX_ANCHOR_LINES } from '../core/anchors';
import { invalidInput } from '../core/errors';
import { importanceTag } from '../core/priority';
import type { MemoryStore, MemoryView } from '../core/store';
import { anchorTarget } from './anchorDetails';
import type { AnchoredMemoriesArgs } from './anchorLenses';
import { CommandId } from './commandIds';
import { hasOpenStore, type FolderWithStore } from './folderMemory';
import type { Panels } from './webviewPanels';
import type { WorkspaceMemories } from './workspaceMemories';

/** Registers a command whose errors become one clear message and a log line (commands.ts). */
export type CommandRegistrar = (id: CommandId, body: (...args: unknown[]) => unknown) => vscode.Disposable;

export interface AnchorCommandDeps {
  log: vscode.LogOutputChannel;
  memories: WorkspaceMemories;
  panels: Panels;
}

/**
 * "LTM: Remember selection" in a file: the memory is anchored to the selected
 * lines (the whole file when nothing is selected), in the store of the folder
 * holding the file, and its content keeps the selected code in a fence below
 * what the person writes about it. Returns the stored memory.
 */
export async function rememberSelection(deps: AnchorCommandDeps, editor: vscode.TextEditor): Promise<MemoryView | undefined> {
  const { document } = editor;
  const name = path.basename(document.uri.fsPath);
  const workspaceFolder = vscode.workspace.getWorkspaceFolder(document.uri);
  const folder = workspaceFolder && deps.memories.byUri(workspaceFolder.uri.toString());
  if (!workspaceFolder || !folder) {
    void vscode.window.showWarningMessage(`LTM: ${name} is not in a folder of this workspace. A memory can be anchored only to a file of its own project: open the file from its project's folder.`);
    return undefined;
  }
  if (!hasOpenStore(folder)) {
    void vscode.window
      .showWarningMessage(`LTM: ${workspaceFolder.name} has no memory store yet, so nothing can be remembered about ${name}.`, 'Initialize Memory')
      .then((choice) => choice && vscode.commands.executeCommand(CommandId.Initialize));
    return undefined;
  }
  if (document.isDirty) {
    // The anchor hashes the file as saved; the lines in the editor must be those lines.
    const save = await vscode.window.showWarningMessage(`Save ${name} first? The anchor is taken from the file as saved.`, { modal: true }, 'Save');
    if (save !== 'Save' || !(await document.save())) return undefined;
  }

  const lines = selectionLines(editor.selection.start, editor.selection.end);
  // Said before any question is asked, not after.
  if (lines && lines[1] - lines[0] + 1 > MAX_ANCHOR_LINES) {
    throw invalidInput(`a memory can be anchored to at most ${MAX_ANCHOR_LINES} lines; select fewer, or nothing to anchor it to the whole file`);
  }
  let spec: string;
  try {
    spec = selectionAnchorSpec(folder.folder.uri.fsPath, document.uri.fsPath, lines);
  } catch (error) {
    if (error instanceof InvalidAnchor) throw invalidInput(error.message);
    throw error;
  }
  // Whole lines: the anchor is about lines, so the code kept with it is too.
  const code = lines ? document.getText(new vscode.Range(lines[0] - 1, 0, lines[1] - 1, document.lineAt(lines[1] - 1).text.length)) : '';
  const title = (step: number, what: string) => `Remember ${spec} (${step}/3): ${what}`;

  const note = await vscode.window.showInputBox({
    title: title(1, 'what is true about it'),
    prompt: lines
      ? 'What should Claude Code remember about these lines? The selected code is kept below it. (Empty: the code alone.)'
      : `What should Claude Code remember about ${name}?`,
    ignoreFocusOut: true,
    validateInput: (v) => (lines || v.trim() ? null : 'Write what is true about this file'),
  });
  if (note === undefined) return undefined;
  const topic = await vscode.window.showInputBox({
    title: title(2, 'topic'),
    prompt: 'A short topic',
    value: topicFrom(note) || topicFrom(code) || name,
    ignoreFocusOut: true,
    validateInput: (v) => (v.trim() ? null : 'Topic must not be empty'),
  });
  if (!topic) return undefined;
  const tags = await vscode.window.showInputBox({
    title: title(3, 'tags'),
    prompt: `Tags, comma-separated (empty: suggested from the text; ${importanceTag('critical')} keeps it forever)`,
    ignoreFocusOut: true,
  });
  if (tags === undefined) return undefined;

  const fenced = code.trim() ? fencedCode(code, document.languageId, `From ${spec}`) : '';
  const content = [note.trim(), fenced].filter(Boolean).join('\n\n') || `About ${spec}.`;
  const tagList = tags.split(',').map((t) => t.trim()).filter(Boolean);
  const result = await folder.store.store({ topic, content, tags: tagList, autoTag: tagList.length === 0, anchors: [spec] });
  folder.refresh();
  const anchored = result.memory.anchors.map(describeAnchor).join(', ');
  deps.log.info(`${folder.name}: stored ${result.memory.id} "${result.memory.topic}" anchored to ${anchored}`);
  const redacted = result.redactions.length > 0 ? ` Secrets were removed: ${result.redactions.map((r) => r.kind).join(', ')}.` : '';
  void vscode.window.showInformationMessage(`LTM: remembered "${result.memory.topic}" (${result.memory.id}), anchored to ${anchored}.${redacted}`, 'Open', 'Edit').then((choice) => {
    if (choice === 'Open') deps.panels.showMemory(folder, result.memory.id);
    if (choice === 'Edit') void folder.openFile(result.memory.id);
  });
  return result.memory;
}

/** Opens the code of a memory's anchor at its lines (where its text is now, when it moved). */
export async function openAnchor(store: MemoryStore, id: string, index: number): Promise<void> {
  const target = anchorTarget(store, id, index);
  if (!target) throw invalidInput(`${id} has no anchor ${index + 1}`);
  if (target.state === 'missing') throw invalidInput(`${path.relative(store.paths.project, target.file)} is gone`);
  const selection = target.lines ? new vscode.Range(target.lines[0] - 1, 0, target.lines[1] - 1, 0) : undefined;
  await vscode.window.showTextDocument(vscode.Uri.file(target.file), { selection, preview: true });
}

interface MemoryRef {
  folder: FolderWithStore;
  id: string;
  topic: string;
}

/** A tree item, `{ id, folder? }` (a keybinding, another extension, a test), or undefined. */
function memoryRef(memories: WorkspaceMemories, arg: unknown): MemoryRef | undefined {
  if (!arg || typeof arg !== 'object') return undefined;
  const a = arg as Record<string, unknown>;
  if (a.kind === 'memory' && a.folder && a.memory) {
    const node = arg as { folder: FolderWithStore; memory: MemoryView };
    return { folder: node.folder, id: node.memory.id, topic: node.memory.topic };
  }
  if (typeof a.id !== 'string') return undefined;
  const folderArg = typeof a.folder === 'string' ? a.folder : undefined;
  const folder = folderArg
    ? memories.withStores().find((f) => f.folder.uri.toString() === folderArg || f.folder.uri.fsPath === folderArg)
    : memories.holding(a.id);
  if (!folder) throw invalidInput(`no folder of this workspace holds ${a.id}`);
  return { folder, id: a.id, topic: folder.store.peek(a.id).topic };
}

export function anchorCommands(command: CommandRegistrar, deps: AnchorCommandDeps): vscode.Disposable[] {
  const { memories, panels, log } = deps;

  /** The possibly outdated memories of every folder, to choose one. */
  const pickStale = async (): Promise<MemoryRef | undefined> => {
    const several = memories.withStores().length > 1;
    const items = memories.withStores().flatMap((folder) =>
      folder.store.staleMemories().map((m) => ({
        label: `$(warning) ${m.topic.replace(/\s+/g, ' ')}`,
        description: `${m.id}${several ? ` · ${folder.name}` : ''}`,
        detail: m.reasons.join('; '),
        ref: { folder, id: m.id, topic: m.topic },
      })),
    );
    if (items.length === 0) {
      void vscode.window.showInformationMessage('LTM: no memory is possibly outdated: the code they are anchored to has not changed.');
      return undefined;
    }
    const picked = await vscode.window.showQuickPick(items, { placeHolder: 'Memory that is still true of the code as it is now', matchOnDescription: true, matchOnDetail: true });
    return picked?.ref;
  };

  return [
    command(CommandId.Reanchor, async (arg) => {
      const ref = memoryRef(memories, arg) ?? (await pickStale());
      if (!ref) return undefined;
      const view = await ref.folder.store.reanchor(ref.id);
      ref.folder.refresh();
      const anchors = view.anchors.map(describeAnchor).join(', ');
      log.info(`${ref.folder.name}: re-anchored ${ref.id} to ${anchors}`);
      void vscode.window.showInformationMessage(`LTM: "${view.topic}" is anchored to the code as it is now (${anchors}).`);
      return view;
    }),
    command(CommandId.OpenAnchoredMemories, async (arg) => {
      const args = arg as Partial<AnchoredMemoriesArgs> | undefined;
      const folder = memories.withStores().find((f) => f.folder.uri.toString() === args?.folder);
      const ids = Array.isArray(args?.ids) ? args.ids.filter((id): id is string => typeof id === 'string') : [];
      if (!folder || ids.length === 0) return;
      if (ids.length === 1) {
        panels.showMemory(folder, ids[0]!);
        return;
      }
      const items = ids.flatMap((id) => {
        try {
          const memory = folder.store.peek(id);
          const outdated = folder.store.outdated(memory);
          return [
            {
              label: `${outdated.length > 0 ? '$(warning)' : '$(note)'} ${memory.topic.replace(/\s+/g, ' ')}`,
              description: outdated.length > 0 ? 'possibly outdated' : memory.id,
              detail: outdated.length > 0 ? outdated.join('; ') : memory.summary.replace(/\s+/g, ' '),
              id,
            },
          ];
        } catch {
          return [];
        }
      });
      const picked = await vscode.window.showQuickPick(items, { placeHolder: 'Memory anchored here to open', matchOnDetail: true });
      if (picked) panels.showMemory(folder, picked.id);
    }),
  ];
}
