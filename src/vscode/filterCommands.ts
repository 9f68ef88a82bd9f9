/**
 * "Filter memories" and "Clear filter" in the Memories view's toolbar. The
 * filter is a text (topic, Summary, tags or ID contain it) and a tag; the
 * quick input offers what was typed and the tags of every folder. `{ text,
 * tag }` (a keybinding, a test) sets the filter without asking.
 */
import * as vscode from 'vscode';
import { countOf } from '../shared/wording';
import type { CommandRegistrar } from './anchorCommands';
import { CommandId } from './commandIds';
import { filterText, type MemoryFilter } from './memoryGroups';
import type { MemoryTreeProvider } from './memoryTree';
import type { WorkspaceMemories } from './workspaceMemories';

export interface FilterCommandDeps {
  memories: WorkspaceMemories;
  tree: MemoryTreeProvider;
}

function filterArg(arg: unknown): MemoryFilter | undefined {
  if (!arg || typeof arg !== 'object') return undefined;
  const a = arg as { text?: unknown; tag?: unknown };
  if (typeof a.text !== 'string' && typeof a.tag !== 'string') return undefined;
  return { text: typeof a.text === 'string' ? a.text : undefined, tag: typeof a.tag === 'string' ? a.tag : undefined };
}

/** Every tag of every folder's memories (active and archived), with how many memories have it, most used first. */
function tagCounts(memories: WorkspaceMemories): [string, number][] {
  const counts = new Map<string, number>();
  for (const folder of memories.withStores()) {
    const all = [...folder.store.list({ limit: Number.MAX_SAFE_INTEGER }).memories, ...folder.store.awaitingReview(), ...folder.store.list({ phase: 3, limit: Number.MAX_SAFE_INTEGER }).memories];
    for (const m of all) for (const tag of new Set(m.tags)) counts.set(tag, (counts.get(tag) ?? 0) + 1);
  }
  return [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
}

type FilterItem = vscode.QuickPickItem & { filter?: MemoryFilter; clear?: true };

/** What is typed becomes the text, a tag picked joins it; undefined when dismissed. */
async function askFilter(memories: WorkspaceMemories, current: MemoryFilter | undefined): Promise<{ filter: MemoryFilter | undefined } | undefined> {
  const quickPick = vscode.window.createQuickPick<FilterItem>();
  quickPick.title = 'Filter memories';
  quickPick.placeholder = 'Text in the topic, Summary, tags or ID; or pick a tag';
  quickPick.value = current?.text ?? '';
  const tags = tagCounts(memories);
  const update = () => {
    const text = quickPick.value.trim();
    const items: FilterItem[] = [];
    if (text) {
      items.push({
        label: `$(search) Containing "${text}"`,
        description: current?.tag !== undefined ? `with tag ${current.tag}` : undefined,
        // Shown whatever is typed: the quick pick must not filter out the text itself.
        alwaysShow: true,
        filter: { text, tag: current?.tag },
      });
    }
    if (current) items.push({ label: '$(clear-all) Clear filter', description: filterText(current), alwaysShow: true, clear: true });
    if (tags.length > 0) items.push({ label: 'Tags', kind: vscode.QuickPickItemKind.Separator });
    for (const [tag, n] of tags) {
      items.push({ label: `$(tag) ${tag}`, description: text ? `and containing "${text}"` : countOf(n, 'memory', 'memories'), filter: { tag, text: text || undefined } });
    }
    quickPick.items = items;
  };
  update();
  return new Promise((resolve) => {
    let result: { filter: MemoryFilter | undefined } | undefined;
    const disposables = [
      quickPick.onDidChangeValue(update),
      quickPick.onDidAccept(() => {
        const picked = quickPick.selectedItems[0];
        if (picked?.clear) result = { filter: undefined };
        else if (picked?.filter) result = { filter: picked.filter };
        quickPick.hide();
      }),
      quickPick.onDidHide(() => {
        for (const d of disposables) d.dispose();
        quickPick.dispose();
        resolve(result);
      }),
    ];
    quickPick.show();
  });
}

export function filterCommands(command: CommandRegistrar, deps: FilterCommandDeps): vscode.Disposable[] {
  const { memories, tree } = deps;
  return [
    command(CommandId.Filter, async (arg) => {
      const given = filterArg(arg);
      const chosen = given ? { filter: given } : await askFilter(memories, tree.filter);
      if (chosen) tree.setFilter(chosen.filter);
      return tree.filter;
    }),
    command(CommandId.ClearFilter, () => {
      tree.setFilter(undefined);
    }),
  ];
}
