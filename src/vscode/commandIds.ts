/** Every command the extension contributes (package.json lists the same IDs). */
export const enum CommandId {
  Initialize = 'ltm.initialize',
  SetUpClaude = 'ltm.setUpClaude',
  RemoveClaudeSetup = 'ltm.removeClaudeSetup',
  Remember = 'ltm.remember',
  NewMemory = 'ltm.newMemory',
  Search = 'ltm.search',
  OpenMemory = 'ltm.openMemory',
  /** Ctrl+S / Cmd+S in a memory panel (a keybinding, not in the palette). */
  SaveMemoryPanel = 'ltm.saveMemoryPanel',
  EditSummary = 'ltm.editSummary',
  Forget = 'ltm.forget',
  MergeInto = 'ltm.mergeInto',
  Restore = 'ltm.restore',
  CopyId = 'ltm.copyId',
  OpenFile = 'ltm.openFile',
  CheckIntegrity = 'ltm.checkIntegrity',
  FixIntegrity = 'ltm.fixIntegrity',
  ShowArchives = 'ltm.showArchives',
  ShowStatus = 'ltm.showStatus',
  PreviewContext = 'ltm.previewContext',
  Refresh = 'ltm.refresh',
  GroupByPhase = 'ltm.groupByPhase',
  GroupByTag = 'ltm.groupByTag',
  Approve = 'ltm.approve',
  Reject = 'ltm.reject',
  EditProposed = 'ltm.editProposed',
  Review = 'ltm.review',
  SortByPriority = 'ltm.sortByPriority',
  SortByLastUsed = 'ltm.sortByLastUsed',
  SortByCreated = 'ltm.sortByCreated',
  Reanchor = 'ltm.reanchor',
  InstallCli = 'ltm.installCli',
  Filter = 'ltm.filter',
  ClearFilter = 'ltm.clearFilter',
  /** The Undo of the notification after Forget (not in the palette): restores what was just forgotten. */
  UndoForget = 'ltm.undoForget',
  /** A CodeLens's command (not in the palette): the memories anchored at its line. */
  OpenAnchoredMemories = 'ltm.openAnchoredMemories',
}

/** Context keys that gate views and menus. */
export const enum ContextKey {
  NoStore = 'ltm.noStore',
  GroupBy = 'ltm.groupBy',
  SortBy = 'ltm.sortBy',
  /** Every open store is empty: the view's welcome says what to do next. */
  EmptyStore = 'ltm.emptyStore',
  /** The Memories view shows only memories matching a filter. */
  Filtered = 'ltm.filtered',
}
