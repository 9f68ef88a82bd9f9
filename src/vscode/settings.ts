/**
 * The extension's settings (package.json `contributes.configuration`), read
 * in one place. Store limits live in state.json so that the CLI and hooks use
 * the same values; a setting the person has set explicitly is copied there.
 */
import * as vscode from 'vscode';
import { DEFAULT_INJECTION_BUDGET_TOKENS } from '../core/injection';
import { DEFAULT_PROMPT_BUDGET_TOKENS } from '../core/promptContext';
import { isStaleMemoriesMode, type StoreConfig } from '../core/model';
import type { GroupBy } from './memoryGroups';

export type { GroupBy };

/** How the Memories view orders memories within a group (`ltm.sortBy`). */
export type TreeSort = 'priority' | 'lastUsed' | 'created';

export function isTreeSort(value: unknown): value is TreeSort {
  return value === 'priority' || value === 'lastUsed' || value === 'created';
}

const SECTION = 'ltm';

export class LtmSettings {
  private get config(): vscode.WorkspaceConfiguration {
    return vscode.workspace.getConfiguration(SECTION);
  }

  get groupBy(): GroupBy {
    return this.config.get<string>('groupBy') === 'tag' ? 'tag' : 'phase';
  }

  get sortBy(): TreeSort {
    const value = this.config.get<string>('sortBy');
    return isTreeSort(value) ? value : 'priority';
  }

  /** `ltm.codeLens`: "LTM: N memories" above anchored code. */
  get codeLens(): boolean {
    return this.config.get<boolean>('codeLens') ?? true;
  }

  injectionTokenBudget(folder: vscode.WorkspaceFolder): number {
    return vscode.workspace.getConfiguration(SECTION, folder).get<number>('injectionTokenBudget') ?? DEFAULT_INJECTION_BUDGET_TOKENS;
  }

  promptTokenBudget(folder: vscode.WorkspaceFolder): number {
    return vscode.workspace.getConfiguration(SECTION, folder).get<number>('promptTokenBudget') ?? DEFAULT_PROMPT_BUDGET_TOKENS;
  }

  preferredPort(folder: vscode.WorkspaceFolder): number | undefined {
    const port = vscode.workspace.getConfiguration(SECTION, folder).get<number>('preferredPort') ?? 0;
    return port > 0 ? port : undefined;
  }

  /**
   * Only the limits (review of new memories, what to do with stale ones) a person set (user, workspace
   * or folder): defaults never override state.json, so `ltm review --on` holds until a setting says otherwise.
   */
  explicitStoreConfig(folder: vscode.WorkspaceFolder): Partial<StoreConfig> {
    const config = vscode.workspace.getConfiguration(SECTION, folder);
    const explicit = (key: string): number | undefined => {
      const i = config.inspect<number>(key);
      return i?.workspaceFolderValue ?? i?.workspaceValue ?? i?.globalValue;
    };
    const result: Partial<StoreConfig> = {};
    const review = config.inspect<boolean>('reviewNewMemories');
    const reviewValue = review?.workspaceFolderValue ?? review?.workspaceValue ?? review?.globalValue;
    if (typeof reviewValue === 'boolean') result.review_new_memories = reviewValue;
    const stale = config.inspect<string>('staleMemories');
    const staleValue = stale?.workspaceFolderValue ?? stale?.workspaceValue ?? stale?.globalValue;
    if (isStaleMemoriesMode(staleValue)) result.stale_memories = staleValue;
    const max = explicit('maxMemories');
    const load = explicit('memoriesToLoad');
    const batch = explicit('evictionBatchSize');
    if (max !== undefined) result.max_memories = max;
    if (load !== undefined) result.memories_to_load = load;
    if (batch !== undefined) result.eviction_batch_size = batch;
    return result;
  }

  onDidChange(listener: (e: vscode.ConfigurationChangeEvent) => void): vscode.Disposable {
    return vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration(SECTION)) listener(e);
    });
  }
}
