/**
 * How the Memories view marks a memory whose anchored code changed: a warning
 * icon, "possibly outdated" first in its description, and the reasons in its
 * tooltip, and `.outdated` at the end of its contextValue, which offers "Still
 * true — re-anchor" in its context menu (package.json matches `\.outdated$`
 * there). Staleness is stat-based (see core/staleness.ts), so asking for it
 * each time an item is drawn costs a stat per anchored file.
 */
import * as vscode from 'vscode';

/** Ends the contextValue of a possibly outdated memory (`memory.full.outdated`); package.json's menus match it. */
export const OUTDATED_CONTEXT_SUFFIX = '.outdated';

/** Marks `item` when `reasons` (store.outdated) says its code changed; leaves it alone otherwise. */
export function markStale(item: vscode.TreeItem, reasons: readonly string[]): void {
  if (reasons.length === 0) return;
  if (item.contextValue) item.contextValue += OUTDATED_CONTEXT_SUFFIX;
  item.iconPath = new vscode.ThemeIcon('warning', new vscode.ThemeColor('list.warningForeground'));
  item.description = ['possibly outdated', typeof item.description === 'string' ? item.description : ''].filter(Boolean).join(' · ');
  const tooltip = item.tooltip instanceof vscode.MarkdownString ? item.tooltip : new vscode.MarkdownString(typeof item.tooltip === 'string' ? undefined : '');
  if (typeof item.tooltip === 'string') tooltip.appendText(item.tooltip);
  // Reasons name files and lines from the memory's frontmatter: appended as text, never as Markdown.
  // No theme icons: turning them on now would render `$(…)` in the memory text already appended.
  tooltip.appendMarkdown('\n\n---\n\n⚠ **Possibly outdated**: the code it is anchored to changed.');
  for (const reason of reasons) {
    tooltip.appendMarkdown('\n- ');
    tooltip.appendText(reason);
  }
  tooltip.appendMarkdown('\n\n');
  tooltip.appendText('If it still holds: LTM: Still true — re-anchor memory. Otherwise update it.');
  item.tooltip = tooltip;
  if (item.accessibilityInformation) item.accessibilityInformation = { ...item.accessibilityInformation, label: `${item.accessibilityInformation.label}, possibly outdated` };
}
