/**
 * Forget and Restore on one memory or on every memory selected in the tree
 * (the view allows several rows: VS Code passes the row the command was run
 * on and the selection), with one confirmation for all, and an Undo in the
 * notification after Forget. `{ ids }` (a keybinding, a test) acts on those
 * memories without asking.
 */
import * as vscode from 'vscode';
import { LtmError } from '../core/errors';
import { Phase } from '../core/model';
import { importanceOf, type Importance } from '../core/priority';
import type { MemoryView } from '../core/store';
import { countOf } from '../shared/wording';
import type { CommandRegistrar } from './anchorCommands';
import { CommandId } from './commandIds';
import { hasOpenStore, type FolderWithStore } from './folderMemory';
import { isMemoryNode } from './memoryTree';
import type { WorkspaceMemories } from './workspaceMemories';

interface Target {
  folder: FolderWithStore;
  memory: Pick<MemoryView, 'id' | 'topic' | 'tags' | 'phase' | 'status'>;
}

/**
 * A forgotten memory as Undo restores it: with the importance it had when it
 * was forgotten (a reduced memory's archive holds its text from before the
 * reduction, and may hold an older importance).
 */
interface Forgotten {
  folder: FolderWithStore;
  id: string;
  topic: string;
  importance: Importance;
}

export interface ForgetRestoreDeps {
  log: vscode.LogOutputChannel;
  memories: WorkspaceMemories;
  /** Asks for one memory of every folder (phase 3: archived ones). */
  pickMemory: (placeHolder: string, phase?: number) => Promise<Target | undefined>;
}

/** The rows a command run from the tree acts on: the selection when the row run on is in it, else that row. */
function selectedTargets(arg: unknown, selection: unknown): Target[] | undefined {
  if (!isMemoryNode(arg)) return undefined;
  const key = (t: Target) => `${t.folder.folder.uri.toString()}\n${t.memory.id}`;
  const rows = Array.isArray(selection) ? selection.filter(isMemoryNode) : [];
  if (!rows.some((r) => key(r) === key(arg))) return [arg];
  // Grouped by tag, one memory can be selected in two groups: it is acted on once.
  return [...new Map(rows.map((r) => [key(r), r])).values()];
}

/** `{ ids: [...] }`: memory IDs, in whichever folder holds each. */
function idsArg(arg: unknown): string[] | undefined {
  if (!arg || typeof arg !== 'object' || isMemoryNode(arg)) return undefined;
  const ids = (arg as { ids?: unknown }).ids;
  return Array.isArray(ids) && ids.every((id) => typeof id === 'string') ? ids : undefined;
}

function quoted(topic: string): string {
  return `"${topic.replace(/\s+/g, ' ')}"`;
}

/** One question for all: "Forget "A"?" or "Forget 3 memories ("A", "B", "C")?". */
export function forgetQuestion(topics: readonly string[]): string {
  if (topics.length === 1) return `Forget ${quoted(topics[0]!)}? Its text stays in the archive and can be restored.`;
  const shown = topics.slice(0, 5).map(quoted).join(', ');
  const more = topics.length > 5 ? ` and ${topics.length - 5} more` : '';
  return `Forget ${countOf(topics.length, 'memory', 'memories')} (${shown}${more})? Their text stays in the archive and can be restored.`;
}

export function forgetRestoreCommands(command: CommandRegistrar, deps: ForgetRestoreDeps): vscode.Disposable[] {
  const { log, memories } = deps;
  /** What the last Forget forgot: Undo restores it. */
  let lastForgotten: Forgotten[] = [];

  const byIds = (ids: string[]): Target[] =>
    ids.map((id) => {
      const folder = memories.holding(id);
      if (!folder) throw new LtmError('not_found', `no memory with ID ${id}`);
      try {
        return { folder, memory: folder.store.peek(id) };
      } catch (error) {
        if (!(error instanceof LtmError)) throw error;
      }
      const archived = folder.store.getArchived(id);
      return { folder, memory: { id, topic: archived.topic, tags: archived.tags, phase: Phase.Archived, status: undefined } };
    });

  const refreshAll = (targets: readonly { folder: FolderWithStore }[]) => {
    for (const folder of new Set(targets.map((t) => t.folder))) folder.refresh();
  };

  const forget = async (arg: unknown, selection: unknown): Promise<{ id: string; topic: string }[]> => {
    const ids = idsArg(arg);
    const chosen = ids ? byIds(ids) : (selectedTargets(arg, selection) ?? [await deps.pickMemory('Memory to forget')].filter((t) => t !== undefined));
    // Archived rows are forgotten already; one awaiting review is rejected, not forgotten.
    const targets = chosen.filter((t) => t.memory.phase !== Phase.Archived && t.memory.status !== 'proposed');
    if (targets.length === 0) return [];
    if (!ids) {
      const choice = await vscode.window.showWarningMessage(forgetQuestion(targets.map((t) => t.memory.topic)), { modal: true }, 'Forget');
      if (choice !== 'Forget') return [];
    }
    const forgotten: Forgotten[] = [];
    try {
      for (const { folder, memory } of targets) {
        await folder.store.forget(memory.id);
        forgotten.push({ folder, id: memory.id, topic: memory.topic, importance: importanceOf(memory.tags) });
        log.info(`${folder.name}: forgot ${memory.id}`);
      }
    } finally {
      // What was forgotten before a failure can be undone too.
      refreshAll(forgotten);
      if (forgotten.length > 0) {
        lastForgotten = forgotten;
        const what = forgotten.length === 1 ? `${quoted(forgotten[0]!.topic)}; its text is` : `${countOf(forgotten.length, 'memory', 'memories')}; their text is`;
        void vscode.window.showInformationMessage(`LTM: forgot ${what} in the archive.`, 'Undo').then((undo) => {
          if (undo) void vscode.commands.executeCommand(CommandId.UndoForget);
        });
      }
    }
    return forgotten.map(({ id, topic }) => ({ id, topic }));
  };

  const undoForget = async (): Promise<MemoryView[]> => {
    const batch = lastForgotten;
    lastForgotten = [];
    // Only what is still in the archive: restored, purged or closed since, it is left as it is.
    const restorable = batch.filter((f) => hasOpenStore(f.folder) && f.folder.store.archivedIds().includes(f.id));
    const restored: MemoryView[] = [];
    try {
      for (const f of restorable) {
        restored.push(await f.folder.store.restore(f.id, { importance: f.importance }));
        log.info(`${f.folder.name}: restored ${f.id} (undo forget)`);
      }
    } finally {
      refreshAll(restorable);
    }
    void vscode.window.showInformationMessage(
      restored.length === 0 ? 'LTM: there is nothing to undo.' : `LTM: restored ${restored.length === 1 ? quoted(restored[0]!.topic) : countOf(restored.length, 'memory', 'memories')}.`,
    );
    return restored;
  };

  const restore = async (arg: unknown, selection: unknown): Promise<MemoryView[]> => {
    const ids = idsArg(arg);
    const chosen = ids ? byIds(ids) : (selectedTargets(arg, selection) ?? [await deps.pickMemory('Archived memory to restore', Phase.Archived)].filter((t) => t !== undefined));
    // Archived or reduced: a memory at phase 0 has its full text already.
    const targets = chosen.filter((t) => t.memory.phase !== Phase.Full);
    const restored: MemoryView[] = [];
    try {
      for (const { folder, memory } of targets) {
        restored.push(await folder.store.restore(memory.id));
        log.info(`${folder.name}: restored ${memory.id}`);
      }
    } finally {
      refreshAll(targets);
    }
    if (restored.length > 0) {
      void vscode.window.showInformationMessage(
        restored.length === 1 ? `LTM: restored ${quoted(restored[0]!.topic)} with its full text.` : `LTM: restored ${countOf(restored.length, 'memory', 'memories')} with their full text.`,
      );
    }
    return restored;
  };

  return [
    command(CommandId.Forget, (arg, selection) => forget(arg, selection)),
    command(CommandId.UndoForget, () => undoForget()),
    command(CommandId.Restore, (arg, selection) => restore(arg, selection)),
  ];
}
