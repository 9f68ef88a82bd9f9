/**
 * The "Memories" tree: folders (multi-root), then groups by phase or by tag,
 * then memories by priority.
 */
import * as vscode from 'vscode';
import { Phase, PHASE_NAMES } from '../core/model';
import { DEFAULT_IMPORTANCE, importanceOf, isImportanceTag, type Importance } from '../core/priority';
import type { MemoryView } from '../core/store';
import { countOf } from '../shared/wording';
import { CommandId } from './commandIds';
import type { FolderWithStore } from './folderMemory';
import { DisposableOwner } from './lifecycle';
import { markStale } from './staleMarks';
import type { TreeSort } from './settings';
import { groupMemories, matchesFilter, normalizeFilter, type GroupBy, type MemoryFilter, type MemoryGroup } from './memoryGroups';
import { demotionText, lastUsedText, usageText, type ListSort } from '../core/usage';
import type { WorkspaceMemories } from './workspaceMemories';

/** Only folders whose store is open are in the tree. */
export type MemoryTreeNode =
  | { kind: 'folder'; folder: FolderWithStore }
  /** Memories Claude stored while the project reviews new ones: not used until approved. */
  | { kind: 'inbox'; folder: FolderWithStore; memories: MemoryView[] }
  | { kind: 'group'; folder: FolderWithStore; group: MemoryGroup }
  /** `groupKey`: the group it is listed in (by tag, a memory is a row of each of its tags' groups). */
  | { kind: 'memory'; folder: FolderWithStore; memory: MemoryView; groupKey?: string };

export function isMemoryNode(value: unknown): value is Extract<MemoryTreeNode, { kind: 'memory' }> {
  return Boolean(value && typeof value === 'object' && (value as MemoryTreeNode).kind === 'memory');
}

const PHASE_ICONS: Record<Phase, string> = {
  [Phase.Full]: 'note',
  [Phase.Hint]: 'lightbulb',
  [Phase.Abstract]: 'symbol-text',
  [Phase.Archived]: 'archive',
};

const PHASES: { phase: number; label: string; icon: string }[] = Object.values(Phase).map((phase) => ({
  phase,
  label: PHASE_NAMES[phase],
  icon: PHASE_ICONS[phase],
}));

const IMPORTANCE_COLOR: Partial<Record<Importance, string>> = {
  critical: 'charts.red',
  important: 'charts.orange',
  low: 'disabledForeground',
};

/** The store's order for each of the view's. */
const LIST_SORT: Record<TreeSort, ListSort> = { priority: 'priority', lastUsed: 'used', created: 'created' };

/** A group's key among its folder's: a tag may be called "Archived" or "(untagged)" too. */
function groupKey(group: MemoryGroup): string {
  return group.phase !== undefined ? `phase:${group.phase}` : group.tag === null ? 'untagged' : `tag:${group.tag}`;
}

/** Memories of a folder, active ones in the view's order and then archived ones, newest first. */
function memoriesOf(folder: FolderWithStore, sortBy: TreeSort): MemoryView[] {
  const { store } = folder;
  const active = store.list({ limit: Number.MAX_SAFE_INTEGER, sort: LIST_SORT[sortBy] }).memories;
  const archived = store.list({ phase: 3, limit: Number.MAX_SAFE_INTEGER }).memories;
  return [...active, ...archived];
}

export class MemoryTreeProvider extends DisposableOwner implements vscode.TreeDataProvider<MemoryTreeNode> {
  private readonly changed = this.own(new vscode.EventEmitter<MemoryTreeNode | undefined>());
  readonly onDidChangeTreeData = this.changed.event;

  constructor(
    private readonly memories: WorkspaceMemories,
    private groupByValue: GroupBy,
    private sortByValue: TreeSort = 'priority',
  ) {
    super();
    this.own(memories.onDidChange(() => this.changed.fire(undefined)));
  }

  get groupBy(): GroupBy {
    return this.groupByValue;
  }

  setGroupBy(groupBy: GroupBy): void {
    this.groupByValue = groupBy;
    this.changed.fire(undefined);
  }

  get sortBy(): TreeSort {
    return this.sortByValue;
  }

  setSortBy(sortBy: TreeSort): void {
    this.sortByValue = sortBy;
    this.changed.fire(undefined);
  }

  private filterValue: MemoryFilter | undefined;

  /** The filter the view applies, if any (ltm.filter, ltm.clearFilter). */
  get filter(): MemoryFilter | undefined {
    return this.filterValue;
  }

  setFilter(filter: MemoryFilter | undefined): void {
    this.filterValue = normalizeFilter(filter);
    this.changed.fire(undefined);
  }

  /** How many memories (active, archived and awaiting review) the view shows now, with the filter. */
  shownCount(): number {
    return this.memories.withStores().reduce((sum, folder) => {
      const groups = this.groups(folder);
      return sum + groups.reduce((n, g) => n + (g.kind === 'group' ? g.group.memories.length : g.kind === 'inbox' ? g.memories.length : 0), 0);
    }, 0);
  }

  refresh(): void {
    this.changed.fire(undefined);
  }

  getChildren(node?: MemoryTreeNode): MemoryTreeNode[] {
    if (!node) {
      const folders = this.memories.withStores();
      // One folder: its groups are the roots; several: each folder is a root.
      if (folders.length === 1) return this.groups(folders[0]!);
      return folders.map((folder) => ({ kind: 'folder', folder }));
    }
    if (node.kind === 'folder') return this.groups(node.folder);
    if (node.kind === 'group') return node.group.memories.map((memory) => ({ kind: 'memory', folder: node.folder, memory, groupKey: groupKey(node.group) }));
    if (node.kind === 'inbox') return node.memories.map((memory) => ({ kind: 'memory', folder: node.folder, memory }));
    return [];
  }

  /** The Inbox first, when anything awaits review; then the groups of memories in use and archived. */
  private groups(folder: FolderWithStore): MemoryTreeNode[] {
    const awaiting = folder.store.awaitingReview().filter((m) => matchesFilter(m, this.filterValue));
    const inbox: MemoryTreeNode[] = awaiting.length > 0 ? [{ kind: 'inbox', folder, memories: awaiting }] : [];
    return [...inbox, ...this.memoryGroups(folder)];
  }

  private memoryGroups(folder: FolderWithStore): MemoryTreeNode[] {
    const shown = memoriesOf(folder, this.sortByValue).filter((m) => matchesFilter(m, this.filterValue));
    return groupMemories(shown, this.groupByValue).map((group) => ({ kind: 'group', folder, group }));
  }

  getTreeItem(node: MemoryTreeNode): vscode.TreeItem {
    if (node.kind === 'folder') {
      const item = new vscode.TreeItem(node.folder.name, vscode.TreeItemCollapsibleState.Expanded);
      item.iconPath = new vscode.ThemeIcon('root-folder');
      item.description = `${node.folder.store.memoryCount()} memories`;
      item.id = `folder:${node.folder.folder.uri.toString()}`;
      item.contextValue = 'folder';
      return item;
    }
    if (node.kind === 'inbox') {
      const item = new vscode.TreeItem('Inbox', vscode.TreeItemCollapsibleState.Expanded);
      const n = node.memories.length;
      item.description = `${n} awaiting review`;
      item.iconPath = new vscode.ThemeIcon('inbox', new vscode.ThemeColor('charts.blue'));
      item.tooltip = `${n} memor${n === 1 ? 'y' : 'ies'} Claude stored, awaiting your review. Until approved, Claude Code is not given ${n === 1 ? 'it' : 'them'} (no injection, no offers, no recall). Approve, edit or reject each.`;
      item.id = `inbox:${node.folder.folder.uri.toString()}`;
      item.contextValue = 'inbox';
      return item;
    }
    if (node.kind === 'group') {
      const { group } = node;
      const phase = PHASES.find((p) => p.phase === group.phase);
      const item = new vscode.TreeItem(group.label, group.collapsed ? vscode.TreeItemCollapsibleState.Collapsed : vscode.TreeItemCollapsibleState.Expanded);
      const n = group.memories.length;
      item.description = String(n);
      item.iconPath = new vscode.ThemeIcon(phase ? phase.icon : 'tag');
      item.id = `group:${node.folder.folder.uri.toString()}:${this.groupByValue}:${groupKey(group)}`;
      item.contextValue = 'group';
      // A bare tag or number read aloud says little: say what the row is.
      const what = group.tag === undefined ? group.label : group.tag === null ? 'memories without a tag' : `tag ${group.tag}`;
      item.accessibilityInformation = { label: `${what}, ${countOf(n, 'memory', 'memories')}` };
      return item;
    }
    return this.memoryItem(node.folder, node.memory, node.groupKey);
  }

  private memoryItem(folder: FolderWithStore, m: MemoryView, inGroup = ''): vscode.TreeItem {
    if (m.status === 'proposed') return this.proposedItem(folder, m);
    const archived = m.phase === 3;
    const importance = importanceOf(m.tags);
    const item = new vscode.TreeItem(m.topic.replace(/\s+/g, ' ').slice(0, 200), vscode.TreeItemCollapsibleState.None);
    // VS Code refuses two rows with one ID: a memory shown in two tag groups is two rows.
    item.id = `memory:${folder.folder.uri.toString()}:${inGroup}:${m.id}`;
    const tags = m.tags.filter((t) => !isImportanceTag(t));
    const parts = [
      ...(importance !== DEFAULT_IMPORTANCE ? [`★ ${importance}`] : []),
      // Injected in many sessions, never asked for: a suggestion to a person, nothing more (usage.ts).
      ...(m.demotion_candidate ? [`▽ unused in ${m.usage.injected_sessions} sessions`] : []),
      archived ? 'archived' : m.priority.toFixed(2),
      // Sorted by last use: when, at a glance.
      ...(this.sortByValue === 'lastUsed' && !archived ? [m.usage.last_used_session > 0 || m.usage.last_used_at ? `used ${lastUsedText(m.usage)}` : 'never used'] : []),
      ...(tags.length > 0 ? [tags.join(', ')] : []),
    ];
    item.description = parts.join(' · ');
    const phase = PHASES[m.phase]!;
    const color = IMPORTANCE_COLOR[importance];
    item.iconPath = new vscode.ThemeIcon(phase.icon, color ? new vscode.ThemeColor(color) : undefined);
    item.tooltip = tooltipFor(m, phase.label, importance);
    item.contextValue = archived ? 'memory.archived' : m.phase > 0 ? 'memory.reduced' : 'memory.full';
    item.command = { command: CommandId.OpenMemory, title: 'Open', arguments: [{ kind: 'memory', folder, memory: m }] };
    item.accessibilityInformation = {
      label: `${m.topic}, ${phase.label}${archived ? '' : `, priority ${m.priority.toFixed(2)}`}${m.demotion_candidate ? ', candidate for demotion' : ''}`,
    };
    if (!archived) markStale(item, folder.store.outdated(m));
    return item;
  }

  /** A memory awaiting review: Approve, Edit and Reject inline (package.json menus); clicking opens it. */
  private proposedItem(folder: FolderWithStore, m: MemoryView): vscode.TreeItem {
    const item = new vscode.TreeItem(m.topic.replace(/\s+/g, ' ').slice(0, 200), vscode.TreeItemCollapsibleState.None);
    item.id = `proposed:${folder.folder.uri.toString()}:${m.id}`;
    const tags = m.tags.filter((t) => !isImportanceTag(t));
    item.description = ['awaiting review', ...(tags.length > 0 ? [tags.join(', ')] : [])].join(' · ');
    item.iconPath = new vscode.ThemeIcon('circle-large-outline');
    item.tooltip = tooltipFor(m, 'Awaiting review', importanceOf(m.tags));
    item.contextValue = 'memory.proposed';
    item.command = { command: CommandId.OpenMemory, title: 'Open', arguments: [{ kind: 'memory', folder, memory: m }] };
    item.accessibilityInformation = { label: `${m.topic}, awaiting review` };
    return item;
  }
}

/** Memory text goes in with appendText, which escapes Markdown: a topic cannot inject links or HTML. */
function tooltipFor(m: MemoryView, phaseLabel: string, importance: Importance): vscode.MarkdownString {
  const md = new vscode.MarkdownString(undefined, false);
  md.isTrusted = false;
  md.supportHtml = false;
  md.appendMarkdown('**');
  md.appendText(m.topic);
  md.appendMarkdown('**\n\n');
  md.appendText(m.summary || '(no summary)');
  md.appendMarkdown('\n\n---\n\n');
  const facts =
    m.phase === 3
      ? `${phaseLabel} · archived ${m.accessed_at.slice(0, 10)}`
      : `${phaseLabel} · priority ${m.priority.toFixed(2)} · difficulty ${m.difficulty.toFixed(2)} · ${m.access_count} access${m.access_count === 1 ? '' : 'es'} · created ${m.created_at.slice(0, 10)}`;
  md.appendText(facts);
  if (importance !== DEFAULT_IMPORTANCE) md.appendText(` · importance: ${importance}`);
  if (m.phase !== 3) {
    md.appendMarkdown('\n\n');
    md.appendText(`Usage: ${usageText(m.usage)}.`);
    if (m.demotion_candidate) {
      md.appendMarkdown('\n\n');
      md.appendText(`⚠ ${demotionText(m.usage)}. Nothing is done automatically.`);
    }
  }
  md.appendMarkdown('\n\n');
  md.appendText(m.id);
  return md;
}
