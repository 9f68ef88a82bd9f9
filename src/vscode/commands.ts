/**
 * The commands (category "LTM"). Each resolves its target (a tree item, the
 * selection, or a question to the person), does its work with progress where
 * it can take time, and reports errors as a clear message and in the log.
 */
import { countOf } from '../shared/wording';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { describeError, LtmError } from '../core/errors';
import { problemCounts } from '../core/integrity';
import { PHASE_NAMES, type Phase } from '../core/model';
import { importanceTag } from '../core/priority';
import type { MemoryView, MergeResult } from '../core/store';
import { initProject, uninitProject } from '../servers/claudeSetup';
import type { ContextQuestion } from '../core/contextDocument';
import { anchorCommands, rememberSelection } from './anchorCommands';
import { CommandId, ContextKey } from './commandIds';
import type { ContextPreviewDocuments } from './contextPreviewDocuments';
import { hasOpenStore, type FolderMemory, type FolderWithStore } from './folderMemory';
import { isMemoryNode, type MemoryTreeProvider } from './memoryTree';
import { filterCommands } from './filterCommands';
import { showStatus } from './statusView';
import { forgetRestoreCommands } from './forgetRestoreCommands';
import { RepeatedOpen } from './repeatedOpen';
import type { Panels } from './webviewPanels';
import type { WorkspaceMemories } from './workspaceMemories';
import type { GroupBy, TreeSort } from './settings';

export interface CommandDeps {
  context: vscode.ExtensionContext;
  log: vscode.LogOutputChannel;
  memories: WorkspaceMemories;
  tree: MemoryTreeProvider;
  panels: Panels;
  previews: ContextPreviewDocuments;
  /** Called after servers started or stopped (MCP definitions, status bar). */
  serversChanged: () => void;
}

interface MemoryTarget {
  folder: FolderWithStore;
  memory: MemoryView;
}

export function registerCommands(deps: CommandDeps): vscode.Disposable[] {
  const { log, memories, tree, panels } = deps;
  const repeatedOpen = new RepeatedOpen();

  /** Runs a command body; any error becomes one clear message and a log line. */
  const command = (id: CommandId, body: (...args: unknown[]) => unknown): vscode.Disposable =>
    vscode.commands.registerCommand(id, async (...args: unknown[]) => {
      try {
        return await body(...args);
      } catch (error) {
        const message = describeError(error);
        // An unexpected error is logged with its stack.
        log.error(`${id}: ${error instanceof Error && !(error instanceof LtmError) ? (error.stack ?? message) : message}`);
        void vscode.window.showErrorMessage(`LTM: ${message}`);
        return undefined;
      }
    });

  const folderWithStore = async (action: string): Promise<FolderWithStore | undefined> => {
    const folder = await memories.pick(`Folder whose memories to ${action}`, true);
    if (!folder) void vscode.window.showInformationMessage('LTM: no folder has a memory store yet. Run "LTM: Initialize memory" first.');
    return folder;
  };

  /** All memories of all folders, for quick picks. */
  const pickMemory = async (placeHolder: string, phase?: number): Promise<MemoryTarget | undefined> => {
    const items = memories.withStores().flatMap((folder) =>
      folder.store.list({ phase, limit: Number.MAX_SAFE_INTEGER }).memories.map((memory) => ({
        label: memory.topic.replace(/\s+/g, ' '),
        description: `${memory.id}${memories.withStores().length > 1 ? ` · ${folder.name}` : ''}`,
        detail: memory.summary.replace(/\s+/g, ' '),
        target: { folder, memory },
      })),
    );
    if (items.length === 0) {
      void vscode.window.showInformationMessage(phase === 3 ? 'LTM: there are no archived memories.' : 'LTM: there are no memories yet.');
      return undefined;
    }
    const picked = await vscode.window.showQuickPick(items, { placeHolder, matchOnDescription: true, matchOnDetail: true });
    return picked?.target;
  };

  const targetOf = async (arg: unknown, placeHolder: string, phase?: number): Promise<MemoryTarget | undefined> =>
    isMemoryNode(arg) ? { folder: arg.folder, memory: arg.memory } : pickMemory(placeHolder, phase);

  /** A memory awaiting review: the tree item, or one picked from every folder's Inbox. */
  const proposedTarget = async (arg: unknown, placeHolder: string): Promise<MemoryTarget | undefined> => {
    if (isMemoryNode(arg)) return { folder: arg.folder, memory: arg.memory };
    const several = memories.withStores().length > 1;
    const items = memories.withStores().flatMap((folder) =>
      folder.store.awaitingReview().map((memory) => ({
        label: memory.topic.replace(/\s+/g, ' '),
        description: `${memory.id}${several ? ` · ${folder.name}` : ''}`,
        detail: memory.summary.replace(/\s+/g, ' '),
        target: { folder, memory },
      })),
    );
    if (items.length === 0) {
      void vscode.window.showInformationMessage('LTM: no memories await review.');
      return undefined;
    }
    const picked = await vscode.window.showQuickPick(items, { placeHolder, matchOnDescription: true, matchOnDetail: true });
    return picked?.target;
  };

  const remember = async (fromSelection: boolean) => {
    const editor = vscode.window.activeTextEditor;
    const selected = fromSelection && editor && !editor.selection.isEmpty ? editor.document.getText(editor.selection) : '';
    const folder =
      (editor && memories.withStores().find((f) => editor.document.uri.fsPath.startsWith(f.folder.uri.fsPath + path.sep))) ??
      (await folderWithStore('add to'));
    if (!folder) return;
    const content =
      selected ||
      (await vscode.window.showInputBox({
        title: 'Remember (1/3): content',
        prompt: 'What should Claude Code remember? The problem, the cause, the fix.',
        ignoreFocusOut: true,
        validateInput: (v) => (v.trim() ? null : 'Content must not be empty'),
      }));
    if (!content) return;
    const firstLine = content.split('\n').find((l) => l.trim())?.trim().slice(0, 80) ?? '';
    const topic = await vscode.window.showInputBox({
      title: 'Remember (2/3): topic',
      prompt: 'A short topic',
      value: firstLine,
      ignoreFocusOut: true,
      validateInput: (v) => (v.trim() ? null : 'Topic must not be empty'),
    });
    if (!topic) return;
    const tags = await vscode.window.showInputBox({
      title: 'Remember (3/3): tags',
      prompt: `Tags, comma-separated (empty: suggested from the text; ${importanceTag('critical')} keeps it forever)`,
      ignoreFocusOut: true,
    });
    if (tags === undefined) return;
    const tagList = tags.split(',').map((t) => t.trim()).filter(Boolean);
    const result = await folder.store.store({ topic, content, tags: tagList, autoTag: tagList.length === 0 });
    folder.refresh();
    log.info(`${folder.name}: stored ${result.memory.id} "${result.memory.topic}"`);
    const redacted = result.redactions.length > 0 ? ` Secrets were removed: ${result.redactions.map((r) => r.kind).join(', ')}.` : '';
    // Notifications are not awaited: the command is done when the work is.
    void vscode.window.showInformationMessage(`LTM: remembered "${result.memory.topic}" (${result.memory.id}).${redacted}`, 'Open').then((open) => {
      if (open) panels.showMemory(folder, result.memory.id);
    });
  };

  /** The memory with this ID in whichever folder holds it. */
  const findMemory = (id: string, folderPath?: string): MemoryTarget => {
    for (const folder of memories.withStores()) {
      if (folderPath !== undefined && folder.folder.uri.fsPath !== folderPath && folder.folder.uri.toString() !== folderPath) continue;
      try {
        return { folder, memory: folder.store.peek(id) };
      } catch (error) {
        if (!(error instanceof LtmError)) throw error;
      }
    }
    throw new LtmError('not_found', `no memory with ID ${id}`);
  };

  /**
   * "Merge into…": the memory the command is run on (or picked) goes into
   * another of its folder, picked with the most similar first. The target
   * gets both texts; both originals are archived first (MemoryStore.merge).
   * `{ id, into }` (a test, a keybinding) merges without asking.
   */
  const mergeInto = async (arg: unknown): Promise<MergeResult | undefined> => {
    const given = mergeArgs(arg);
    const source = given ? findMemory(given.id) : await targetOf(arg, 'Memory to merge into another');
    if (!source || source.memory.phase === 3) return undefined;
    const { folder, memory } = source;
    let into = given?.into;
    if (!into) {
      const similar = folder.store.similarTo(memory.id);
      const score = new Map(similar.map((s) => [s.id, s.score]));
      const others = folder.store
        .list({ limit: Number.MAX_SAFE_INTEGER })
        .memories.filter((m) => m.id !== memory.id)
        .sort((a, b) => (score.get(b.id) ?? -1) - (score.get(a.id) ?? -1));
      if (others.length === 0) {
        void vscode.window.showInformationMessage('LTM: there is no other memory to merge into.');
        return undefined;
      }
      const picked = await vscode.window.showQuickPick(
        others.map((m) => ({
          label: m.topic.replace(/\s+/g, ' '),
          description: `${m.id}${score.has(m.id) ? ` · similar (${score.get(m.id)!.toFixed(2)})` : ''}`,
          detail: m.summary.replace(/\s+/g, ' '),
          id: m.id,
        })),
        { title: `Merge "${memory.topic.replace(/\s+/g, ' ')}" into…`, placeHolder: 'The memory that keeps both texts', matchOnDescription: true, matchOnDetail: true },
      );
      if (!picked) return undefined;
      const choice = await vscode.window.showWarningMessage(
        `Merge "${memory.topic}" into "${picked.label}"? "${picked.label}" gets both texts. Both originals are archived first and can be restored.`,
        { modal: true },
        'Merge',
      );
      if (choice !== 'Merge') return undefined;
      into = picked.id;
    }
    const result = await folder.store.merge(memory.id, into);
    folder.refresh();
    log.info(`${folder.name}: merged ${memory.id} into ${into} (previous text archived as ${result.versions.join(', ')})`);
    void vscode.window.showInformationMessage(`LTM: merged "${memory.topic}" into "${result.target.topic}"; both originals are archived.`, 'Open').then((open) => {
      if (open) panels.showMemory(folder, result.target.id);
    });
    return result;
  };

  const setGroupBy = async (groupBy: GroupBy) => {
    tree.setGroupBy(groupBy);
    await vscode.commands.executeCommand('setContext', ContextKey.GroupBy, groupBy);
    await deps.context.workspaceState.update('ltm.groupBy', groupBy);
  };

  const setSortBy = async (sortBy: TreeSort) => {
    tree.setSortBy(sortBy);
    await vscode.commands.executeCommand('setContext', ContextKey.SortBy, sortBy);
    await deps.context.workspaceState.update('ltm.sortBy', sortBy);
  };

  const fix = async (folder: FolderWithStore) => {
    const { store } = folder;
    const result = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `LTM: fixing ${folder.name}…` },
      () => store.fix({}),
    );
    folder.refresh();
    log.info(`${folder.name}: fix: ${countOf(result.actions.length, 'action')}${result.actions.map((a) => `\n  ${a}`).join('')}`);
    const { error: errors, warning: warnings } = problemCounts(result.report.problems);
    // Warnings (hand-edited text LTM cannot read) are the person's to correct: fix leaves them.
    const left = warnings > 0 ? `; ${countOf(warnings, 'warning')} ${warnings === 1 ? 'is' : 'are'} yours to correct` : '';
    const summary =
      result.actions.length === 0
        ? `LTM: ${folder.name} had nothing to repair${left}.`
        : `LTM: repaired ${countOf(result.actions.length, 'problem')} in ${folder.name}; ${result.report.healthy ? 'the store is healthy' : `${errors} remain`}${left}.`;
    void vscode.window.showInformationMessage(summary, 'Show Details').then((more) => {
      if (more) panels.showIntegrity(folder);
    });
    return result;
  };

  return [
    command(CommandId.Initialize, async () => {
      const folder = await memories.pick('Folder to give a memory', false);
      if (!folder) return;
      await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: 'LTM: initializing memory…' }, () =>
        folder.initialize(),
      );
      deps.serversChanged();
      void vscode.window.showInformationMessage(`LTM: memory initialized in ${folder.name}.`, 'Set up Claude Code').then((next) => {
        if (next) void vscode.commands.executeCommand(CommandId.SetUpClaude, folder);
      });
    }),
    command(CommandId.SetUpClaude, async (arg) => {
      const folder = (arg && typeof arg === 'object' && 'folder' in arg ? (arg as FolderMemory) : undefined) ?? (await memories.pick('Folder to set up for Claude Code', false));
      if (!folder) return;
      const changes = initProject(folder.folder.uri.fsPath);
      await folder.initialize();
      deps.serversChanged();
      const changed = changes.filter((c) => c.action !== 'unchanged');
      log.info(`${folder.name}: set up Claude Code${changed.map((c) => `\n  ${c.action} ${path.relative(folder.folder.uri.fsPath, c.file)}${c.note ? `: ${c.note}` : ''}`).join('')}`);
      void vscode.window.showInformationMessage(
        changed.length === 0
          ? `LTM: Claude Code was already set up in ${folder.name}.`
          : `LTM: Claude Code set up in ${folder.name} (${countOf(changed.length, 'file')}). Start claude in a new terminal to use its memory.`,
        'Open Terminal',
      ).then((open) => {
        if (open) vscode.window.createTerminal({ name: 'Claude Code', cwd: folder.folder.uri }).show();
      });
      return changes;
    }),
    command(CommandId.RemoveClaudeSetup, async () => {
      const folder = await memories.pick('Folder to remove the Claude Code setup from', false);
      if (!folder) return;
      const confirmed = await vscode.window.showWarningMessage(
        `Remove LTM's hooks, MCP entry, slash commands and CLAUDE.md block from ${folder.name}? Memories are kept.`,
        { modal: true },
        'Remove',
      );
      if (confirmed !== 'Remove') return;
      const changes = uninitProject(folder.folder.uri.fsPath).filter((c) => c.action !== 'unchanged');
      log.info(`${folder.name}: removed Claude Code setup${changes.map((c) => `\n  ${c.action} ${path.relative(folder.folder.uri.fsPath, c.file)}`).join('')}`);
      void vscode.window.showInformationMessage(`LTM: removed the Claude Code setup from ${folder.name} (${countOf(changes.length, 'file')}); memories were kept.`);
    }),
    // In a file, the memory is anchored to the selected lines (anchorCommands.ts); elsewhere the selection is the content.
    command(CommandId.Remember, () => {
      const editor = vscode.window.activeTextEditor;
      return editor?.document.uri.scheme === 'file' ? rememberSelection(deps, editor) : remember(true);
    }),
    // One form (webviewPanels.ts NewMemoryPanel): the folder of the active editor, `{ folder }` (a path), or the one picked.
    command(CommandId.NewMemory, async (arg) => {
      const given = folderArg(arg);
      const editor = vscode.window.activeTextEditor;
      const folder = given
        ? memories.withStores().find((f) => f.folder.uri.fsPath === given)
        : ((editor && memories.withStores().find((f) => editor.document.uri.fsPath.startsWith(f.folder.uri.fsPath + path.sep))) ?? (await folderWithStore('add to')));
      if (given && !folder) throw new LtmError('invalid_input', `${given} is not a folder of this workspace with a memory store`);
      return folder ? panels.showNewMemory(folder) : undefined;
    }),
    command(CommandId.Search, () => searchMemories(memories, panels)),
    // `ltm.openMemory` takes a tree item, or `{ id, folder? }`; `{ pin: true }` (in the object or as a second argument) keeps the panel open.
    command(CommandId.OpenMemory, async (arg, options) => {
      const given = openArgs(arg);
      const target = given ? findMemory(given.id, given.folder) : await targetOf(arg, 'Memory to open');
      if (!target) return undefined;
      const clickedTwice = isMemoryNode(arg) && repeatedOpen.isRepeat(`${target.folder.folder.uri.toString()}#${target.memory.id}`);
      const pin = clickedTwice || given?.pin === true || (typeof options === 'object' && options !== null && (options as { pin?: unknown }).pin === true);
      panels.showMemory(target.folder, target.memory.id, { pin });
      return undefined;
    }),
    command(CommandId.SaveMemoryPanel, () => panels.saveActive()),
    command(CommandId.EditSummary, async (arg) => {
      const target = await targetOf(arg, 'Memory whose summary to edit');
      if (!target || target.memory.phase === 3) return;
      const summary = await vscode.window.showInputBox({
        title: `Summary of "${target.memory.topic}"`,
        value: target.memory.summary,
        ignoreFocusOut: true,
        validateInput: (v) => (v.trim() ? null : 'The summary must not be empty'),
      });
      if (summary === undefined || summary === target.memory.summary) return;
      await target.folder.store.updateSummary(target.memory.id, summary);
      target.folder.refresh();
    }),
    command(CommandId.MergeInto, (arg) => mergeInto(arg)),
    command(CommandId.CopyId, async (arg) => {
      const target = await targetOf(arg, 'Memory whose ID to copy');
      if (target) await vscode.env.clipboard.writeText(target.memory.id);
    }),
    command(CommandId.OpenFile, async (arg) => {
      const target = await targetOf(arg, 'Memory file to open');
      if (target) await target.folder.openFile(target.memory.id);
    }),
    command(CommandId.CheckIntegrity, async () => {
      const folder = await folderWithStore('check');
      if (folder) panels.showIntegrity(folder);
    }),
    // The Problems panel's quick fix names the folder (invalidFileDiagnostics.ts).
    command(CommandId.FixIntegrity, async (arg) => {
      const given = folderArg(arg);
      const folder = given ? memories.withStores().find((f) => f.folder.uri.fsPath === given) : await folderWithStore('repair');
      return folder ? fix(folder) : undefined;
    }),
    command(CommandId.ShowArchives, () => panels.showArchives()),
    command(CommandId.ShowStatus, (arg) => showStatus({ log, memories, panels, extensionId: deps.context.extension.id }, arg)),
    command(CommandId.PreviewContext, (arg) => previewContext(memories, deps.previews, arg)),
    command(CommandId.Refresh, () => {
      for (const f of memories.all()) f.refresh();
      tree.refresh();
    }),
    command(CommandId.Approve, async (arg) => {
      const target = await proposedTarget(arg, 'Memory to approve');
      if (!target) return undefined;
      const result = await target.folder.store.approve(target.memory.id);
      target.folder.refresh();
      log.info(`${target.folder.name}: approved ${result.id}`);
      void vscode.window.showInformationMessage(`LTM: approved "${result.topic}": Claude Code is given it from now on.`);
      return result;
    }),
    command(CommandId.Reject, async (arg) => {
      const target = await proposedTarget(arg, 'Memory to reject');
      if (!target) return undefined;
      const result = await target.folder.store.reject(target.memory.id);
      target.folder.refresh();
      log.info(`${target.folder.name}: rejected ${result.id}`);
      // Archived, not deleted: the archives view restores it (back into the Inbox).
      void vscode.window.showInformationMessage(`LTM: rejected "${result.topic}"; it is archived and can be restored.`, 'Show Archives').then((show) => {
        if (show) panels.showArchives();
      });
      return result;
    }),
    command(CommandId.EditProposed, async (arg) => {
      const target = await proposedTarget(arg, 'Memory to edit before review');
      if (target) await target.folder.openFile(target.memory.id);
    }),
    command(CommandId.Review, async () => {
      const target = await proposedTarget(undefined, 'Memory to review');
      if (!target) return;
      const choice = await vscode.window.showQuickPick(['Approve', 'Edit', 'Reject', 'Open'], { placeHolder: `Review "${target.memory.topic}"` });
      const next = { Approve: CommandId.Approve, Edit: CommandId.EditProposed, Reject: CommandId.Reject, Open: CommandId.OpenMemory }[choice ?? ''];
      if (next) await vscode.commands.executeCommand(next, { kind: 'memory', folder: target.folder, memory: target.memory });
    }),
    command(CommandId.GroupByPhase, () => setGroupBy('phase')),
    command(CommandId.GroupByTag, () => setGroupBy('tag')),
    command(CommandId.SortByPriority, () => setSortBy('priority')),
    command(CommandId.SortByLastUsed, () => setSortBy('lastUsed')),
    command(CommandId.SortByCreated, () => setSortBy('created')),
    ...anchorCommands(command, deps),
    ...forgetRestoreCommands(command, { log, memories, pickMemory }),
    ...filterCommands(command, { memories, tree }),
  ];
}

/** `{ folder }` given to ltm.fixIntegrity and ltm.newMemory: the folder's path. */
function folderArg(arg: unknown): string | undefined {
  const folder = arg && typeof arg === 'object' ? (arg as { folder?: unknown }).folder : undefined;
  return typeof folder === 'string' ? folder : undefined;
}

/** `{ id, into }` given to ltm.mergeInto: both memory IDs, merged without asking. */
/** What `ltm.openMemory` may be given instead of a tree item (a keybinding, another extension, a test). */
function openArgs(arg: unknown): { id: string; folder?: string; pin: boolean } | undefined {
  if (!arg || typeof arg !== 'object' || isMemoryNode(arg)) return undefined;
  const a = arg as Record<string, unknown>;
  if (typeof a.id !== 'string') return undefined;
  return { id: a.id, folder: typeof a.folder === 'string' ? a.folder : undefined, pin: a.pin === true };
}

function mergeArgs(arg: unknown): { id: string; into: string } | undefined {
  if (!arg || typeof arg !== 'object' || isMemoryNode(arg)) return undefined;
  const a = arg as Record<string, unknown>;
  return typeof a.id === 'string' && typeof a.into === 'string' ? { id: a.id, into: a.into } : undefined;
}

/**
 * What `ltm.previewContext` may be given (by a keybinding, another extension
 * or a test) instead of asking: the folder (path or URI) and what to preview.
 * `sessionStart: true` previews the session start alone.
 */
interface PreviewArgs extends ContextQuestion {
  folder?: string;
  sessionStart?: boolean;
}

function previewArgs(arg: unknown): PreviewArgs {
  if (!arg || typeof arg !== 'object') return {};
  const a = arg as Record<string, unknown>;
  const text = (key: string) => (typeof a[key] === 'string' ? a[key] : undefined);
  return { folder: text('folder'), prompt: text('prompt'), error: text('error'), file: text('file'), sessionStart: a.sessionStart === true ? true : undefined };
}

/** "LTM: Preview injected context": which folder, what to preview, then the document. Returns its URI. */
async function previewContext(memories: WorkspaceMemories, previews: ContextPreviewDocuments, arg: unknown): Promise<vscode.Uri | undefined> {
  const args = previewArgs(arg);
  let folder: FolderMemory | undefined;
  if (args.folder) {
    folder = memories.all().find((f) => f.folder.uri.toString() === args.folder || f.folder.uri.fsPath === args.folder);
    if (!folder) throw new LtmError('invalid_input', `${args.folder} is not a folder of this workspace`);
  } else {
    folder = await memories.pick('Folder whose injected context to preview', true);
    if (!folder) {
      if (memories.withStores().length === 0) noStoreMessage(memories.all()[0]);
      return undefined;
    }
  }
  if (!hasOpenStore(folder)) {
    noStoreMessage(folder);
    return undefined;
  }
  const given = args.prompt !== undefined || args.error !== undefined || args.file !== undefined || args.sessionStart;
  const question = given ? { prompt: args.prompt, error: args.error, file: args.file } : await askWhatToPreview(folder);
  if (!question) return undefined;
  return previews.show(folder, question);
}

function noStoreMessage(folder: FolderMemory | undefined): void {
  const where = folder ? ` in ${folder.name}` : '';
  void vscode.window
    .showInformationMessage(`LTM: there is no memory store${where}, so Claude Code is given nothing from LTM. Initialize memory to create one.`, 'Initialize Memory')
    .then((choice) => choice && vscode.commands.executeCommand(CommandId.Initialize));
}

/** Session start, a typed prompt, a failure's error, or the active editor's file. */
async function askWhatToPreview(folder: FolderMemory): Promise<ContextQuestion | undefined> {
  type Choice = vscode.QuickPickItem & { what: 'session' | 'prompt' | 'error' | 'file' };
  const editor = vscode.window.activeTextEditor;
  const root = folder.folder.uri.fsPath;
  const file = editor?.document.uri.scheme === 'file' && editor.document.uri.fsPath.startsWith(root + path.sep) ? path.relative(root, editor.document.uri.fsPath).split(path.sep).join('/') : undefined;
  const choices: Choice[] = [
    { what: 'session', label: '$(play) Session start', detail: 'What a new Claude Code session is given (SessionStart)' },
    { what: 'prompt', label: '$(comment) A prompt…', detail: 'What a prompt you type would bring (UserPromptSubmit)' },
    { what: 'error', label: '$(error) A failing tool call…', detail: 'What an error message would bring (PostToolUseFailure)' },
  ];
  if (file) choices.push({ what: 'file', label: `$(file) ${file}`, detail: 'What a tool reading or editing this file would bring (PreToolUse)' });
  const picked = await vscode.window.showQuickPick(choices, { title: `Preview injected context: ${folder.name}`, placeHolder: 'What would Claude Code be given?' });
  if (!picked) return undefined;
  if (picked.what === 'session') return {};
  if (picked.what === 'file') return { file };
  const typed = await vscode.window.showInputBox({
    title: `Preview injected context: ${picked.what === 'prompt' ? 'the prompt' : 'the error'}`,
    prompt: picked.what === 'prompt' ? 'A prompt, as you would type it to Claude Code' : 'The error a tool answered with (a command’s output, a stack trace)',
    ignoreFocusOut: true,
    validateInput: (v) => (v.trim() ? null : 'Type some text to preview'),
  });
  if (!typed) return undefined;
  return picked.what === 'prompt' ? { prompt: typed } : { error: typed };
}

/** A quick pick whose items are the live, ranked results of what is typed. */
async function searchMemories(memories: WorkspaceMemories, panels: Panels): Promise<void> {
  const quickPick = vscode.window.createQuickPick<vscode.QuickPickItem & { target?: { folder: FolderMemory; id: string } }>();
  quickPick.placeholder = 'Search memories (typos and prefixes are fine)';
  quickPick.matchOnDescription = false;
  quickPick.matchOnDetail = false;
  const update = (query: string) => {
    if (!query.trim()) {
      quickPick.items = [];
      return;
    }
    const several = memories.withStores().length > 1;
    const results = memories
      .withStores()
      .flatMap((folder) => folder.store.search(query, { scope: 'all', limit: 20 }).map((r) => ({ r, folder })))
      .sort((a, b) => b.r.score - a.r.score)
      .slice(0, 30);
    // alwaysShow: the results are already ranked; the quick pick must not filter them again.
    quickPick.items = results.map(({ r, folder }) => ({
      label: r.topic.replace(/\s+/g, ' '),
      description: `${PHASE_NAMES[r.phase as Phase]}${r.tags.length ? ` · ${r.tags.join(', ')}` : ''}${several ? ` · ${folder.name}` : ''}`,
      detail: r.summary.replace(/\s+/g, ' '),
      alwaysShow: true,
      target: { folder, id: r.id },
    }));
  };
  const disposables = [
    quickPick.onDidChangeValue(update),
    quickPick.onDidAccept(() => {
      const target = quickPick.selectedItems[0]?.target;
      if (target) panels.showMemory(target.folder, target.id);
      quickPick.hide();
    }),
    quickPick.onDidHide(() => {
      for (const d of disposables) d.dispose();
      quickPick.dispose();
    }),
  ];
  quickPick.show();
}
