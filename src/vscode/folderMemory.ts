/**
 * One workspace folder's memory: its store, its server on 127.0.0.1, the
 * environment its terminals get, and a watcher that notices changes made by
 * Claude Code, the CLI, a hand edit or a git checkout.
 *
 * A project has one server. When another window (or `ltm serve`) already
 * serves the folder, this window uses that server (same token: the project's
 * identity) and starts its own as soon as that one is gone.
 */
import { gitRenameLookup } from '../servers/gitRenames';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { errorMessage } from '../core/errors';
import { MemoryStore, initStoreFiles } from '../core/store';
import { storePaths, type StorePaths } from '../core/storeFiles';
import { LtmServer } from '../servers/ltmServer';
import { searchIndexWorkerOptions } from '../servers/searchIndexWorkerScript';
import { ServerRunningError, readServerInfo, sameServer, serverHolderState, type ServerInfo } from '../servers/serverInfo';
import { DisposableOwner } from './lifecycle';
import type { LtmSettings } from './settings';

export interface FolderMemoryDeps {
  log: vscode.LogOutputChannel;
  settings: LtmSettings;
  environment: vscode.GlobalEnvironmentVariableCollection;
  version: string;
}

/** File events arrive in bursts (a git checkout, an eviction): the UI refreshes once per burst. */
const CHANGE_DEBOUNCE_MS = 150;
/** While another process serves the folder, this often it is checked on (besides server.json events). */
const FOREIGN_CHECK_MS = 2_000;
/** server.json events are checked on after this short pause (the writer renames, then the port is free). */
const SERVER_EVENT_DEBOUNCE_MS = 50;

/** A folder whose store is open (a store, once open, stays open until the folder is disposed). */
export type FolderWithStore = FolderMemory & { readonly store: MemoryStore };

export function hasOpenStore(folder: FolderMemory): folder is FolderWithStore {
  return folder.store !== null;
}

/** The server a folder's clients use: this window's own, or another process's. */
export interface ServerEndpoint {
  port: number;
  token: string;
  url: string;
  mcpUrl: string;
  pid: number;
  /** False when another window or `ltm serve` serves the folder and this window uses its server. */
  own: boolean;
}

export class FolderMemory extends DisposableOwner {
  readonly paths: StorePaths;
  private storeInstance: MemoryStore | null = null;
  private serverInstance: LtmServer | null = null;
  /** The server.json of the process that serves the folder when this window does not. */
  private foreignServer: ServerInfo | null = null;
  private foreignTimer: NodeJS.Timeout | undefined;
  private serverEventTimer: NodeJS.Timeout | undefined;
  private checkingForeign: Promise<void> | null = null;
  private serverStarting: Promise<void> | null = null;
  private serverError: string | null = null;
  private readonly changed = this.own(new vscode.EventEmitter<void>());
  /** Fires after the memories changed, whoever changed them. */
  readonly onDidChange = this.changed.event;
  private readonly serverChanged = this.own(new vscode.EventEmitter<void>());
  /** Fires when the server the folder's clients use started, stopped or changed. */
  readonly onDidChangeServer = this.serverChanged.event;
  private debounce: NodeJS.Timeout | undefined;
  /** Whether the refresh the debounce waits for must stat every memory file (refreshSoon). */
  private fullRefreshPending = false;
  /** The store's changeCount when the views were last told of a change (-1: never). */
  private firedAtChange = -1;
  private starting: Promise<void> | null = null;

  constructor(
    readonly folder: vscode.WorkspaceFolder,
    private readonly deps: FolderMemoryDeps,
  ) {
    super();
    this.paths = storePaths(folder.uri.fsPath);
    const watcher = this.own(vscode.workspace.createFileSystemWatcher(new vscode.RelativePattern(folder, '.claude/ltm/**')));
    for (const event of [watcher.onDidCreate, watcher.onDidChange, watcher.onDidDelete]) {
      this.own(event((uri) => this.onFileEvent(uri)));
    }
    this.own({
      dispose: () => {
        clearTimeout(this.debounce);
        clearTimeout(this.serverEventTimer);
        clearInterval(this.foreignTimer);
      },
    });
  }

  get name(): string {
    return this.folder.name;
  }

  /** The open store, or null while the folder has none. */
  get store(): MemoryStore | null {
    return this.storeInstance;
  }

  /** The server the folder's terminals and MCP clients use (this window's or another's), or null. */
  get server(): ServerEndpoint | null {
    const own = this.serverInstance;
    if (own) return { port: own.port, token: own.token, url: own.url, mcpUrl: own.mcpUrl, pid: process.pid, own: true };
    const other = this.foreignServer;
    if (other) return { port: other.port, token: other.token, url: other.url, mcpUrl: `${other.url}/mcp`, pid: other.pid, own: false };
    return null;
  }

  get serverProblem(): string | null {
    return this.serverError;
  }

  get hasStore(): boolean {
    return fs.existsSync(this.paths.root);
  }

  /** Opens the store and starts the server when the folder has a store; otherwise waits for one. */
  start(): Promise<void> {
    this.starting ??= this.doStart().finally(() => (this.starting = null));
    return this.starting;
  }

  private async doStart(): Promise<void> {
    if (this.storeInstance || !this.hasStore || this.isDisposed) return;
    const started = Date.now();
    // In steps, giving way to the extension host between them and while the memory files are read (10,000 of
    // them without caches would hold it ~0.8 s in one go); a large store's files are statted on a worker thread,
    // and one without its search index (a fresh clone) has it built on another (storeOpening.ts), which the
    // server's searching requests wait for: serving need not.
    const store = await MemoryStore.openAsync(
      this.folder.uri.fsPath,
      {
        renames: gitRenameLookup(this.folder.uri.fsPath),
        ...searchIndexWorkerOptions(),
        // The store watches memories/ itself too: VS Code's file events can come late or not at all (a remote
        // or busy watcher: a memory Claude Code stored stayed out of the view), this one comes at once. Both
        // lead to the same refresh, made once for events that come together.
        watch: true,
        // It names the memory files that changed: no need to stat every other one.
        onExternalChange: () => this.refreshSoon({ full: false }),
      },
      { untilSearchIndex: false, inSlices: true },
    );
    if (this.isDisposed) {
      store.dispose();
      return;
    }
    this.storeInstance = store;
    this.own({ dispose: () => store.dispose() });
    await this.applyExplicitSettings();
    await this.startServer();
    // In slices: the extension host runs every other extension too (~360 ms in one go at 50,000 memories when both caches are behind).
    void store.flushCachesInSlices().catch((error: unknown) => this.deps.log.error(`${this.name}: the caches were not saved: ${errorMessage(error)}`));
    // The first recall should not wait for the search index: load it (or build and save it) once serving,
    // and once the worker building it, if any, answered.
    const warm = setTimeout(() => {
      void store
        .untilSearchIndexReady()
        .then(() => {
          if (this.isDisposed) return;
          return store.warmUp();
        })
        .then(async () => {
          if (this.isDisposed) return;
          await store.flushCachesInSlices();
          if (this.isDisposed) return;
          return store.prepareForStores();
        })
        .catch((error: unknown) => this.deps.log.error(`${this.name}: the search index was not loaded: ${errorMessage(error)}`));
    }, 0);
    this.own({ dispose: () => clearTimeout(warm) });
    this.deps.log.info(`${this.name}: opened ${store.memoryCount()} memories in ${Date.now() - started} ms`);
    this.fireChanged();
  }

  /** Creates `.claude/ltm/` and starts serving it. */
  async initialize(): Promise<void> {
    initStoreFiles(this.paths);
    await this.start();
  }

  /** Limits set in VS Code settings are written to state.json, where hooks and the CLI read them. */
  async applyExplicitSettings(): Promise<void> {
    const store = this.storeInstance;
    if (!store) return;
    const explicit = this.deps.settings.explicitStoreConfig(this.folder);
    const current = store.config;
    const differs = Object.entries(explicit).some(([k, v]) => current[k as keyof typeof current] !== v);
    if (!differs) return;
    await store.updateState((state) => {
      state.config = { ...state.config, ...explicit };
    });
    this.deps.log.info(`${this.name}: store limits set from settings: ${JSON.stringify(explicit)}`);
  }

  /**
   * Starts this window's server, or, when another process serves the folder,
   * uses that one and watches for it to go.
   */
  startServer(): Promise<void> {
    this.serverStarting ??= this.doStartServer().finally(() => (this.serverStarting = null));
    return this.serverStarting;
  }

  private async doStartServer(): Promise<void> {
    const store = this.storeInstance;
    if (!store || this.serverInstance || this.isDisposed) return;
    try {
      const server = await LtmServer.start({
        store,
        version: this.deps.version,
        preferredPort: this.deps.settings.preferredPort(this.folder),
        injectionBudgetTokens: () => this.deps.settings.injectionTokenBudget(this.folder),
        promptBudgetTokens: () => this.deps.settings.promptTokenBudget(this.folder),
        log: (message) => this.deps.log.info(`${this.name}: ${message}`),
      });
      if (this.isDisposed) {
        await server.stop();
        return;
      }
      this.serverInstance = server;
      this.serverError = null;
      // The MCP modules and Node's web Request classes, loaded in a pause rather than in Claude Code's first MCP call.
      server.inPause('MCP prepared', () => server.prepareMcp());
      this.stopWatchingForeign();
      this.setTerminalEnvironment(server.port, server.token, server.mcpUrl);
      this.deps.log.info(`${this.name}: serving ${store.paths.project} at ${server.url}`);
    } catch (error) {
      if (error instanceof ServerRunningError) {
        this.useForeign(error.running);
      } else {
        const message = errorMessage(error);
        if (message !== this.serverError) this.deps.log.error(`${this.name}: the memory server did not start: ${message}`);
        this.serverError = message;
        // A takeover that failed is tried again by the foreign-server check (while its timer runs).
        if (this.foreignServer) {
          this.foreignServer = null;
          this.deps.environment.getScoped({ workspaceFolder: this.folder }).clear();
        }
      }
    }
    this.serverChanged.fire();
  }

  async stopServer(): Promise<void> {
    this.stopWatchingForeign();
    // A start under way (a takeover) finishes first, so that its server is stopped too.
    await this.serverStarting;
    const server = this.serverInstance;
    this.serverInstance = null;
    this.stopWatchingForeign();
    this.deps.environment.getScoped({ workspaceFolder: this.folder }).clear();
    await server?.stop();
    this.serverChanged.fire();
  }

  async restartServer(): Promise<void> {
    await this.stopServer();
    await this.startServer();
    this.fireChanged();
  }

  private setTerminalEnvironment(port: number, token: string, mcpUrl: string): void {
    const env = this.deps.environment.getScoped({ workspaceFolder: this.folder });
    env.description = `LTM memory server for ${this.name}: Claude Code started here uses its hooks and MCP tools.`;
    env.replace('LTM_PORT', String(port));
    env.replace('LTM_TOKEN', token);
    env.replace('LTM_MCP_URL', mcpUrl);
  }

  /** Another process serves the folder: its terminals use that server until it goes. */
  private useForeign(info: ServerInfo): void {
    const changed = !sameServer(this.foreignServer, info);
    this.foreignServer = info;
    this.serverError = null;
    this.setTerminalEnvironment(info.port, info.token, `${info.url}/mcp`);
    if (changed) this.deps.log.info(`${this.name}: using the server of another window, pid ${info.pid} (${info.url})`);
    this.foreignTimer ??= setInterval(() => void this.checkForeign(), FOREIGN_CHECK_MS);
  }

  private stopWatchingForeign(): void {
    clearInterval(this.foreignTimer);
    this.foreignTimer = undefined;
    this.foreignServer = null;
  }

  /** Takes over when the server this window uses is gone; follows server.json when another took over. */
  private checkForeign(): Promise<void> {
    this.checkingForeign ??= this.doCheckForeign().finally(() => (this.checkingForeign = null));
    return this.checkingForeign;
  }

  private async doCheckForeign(): Promise<void> {
    if (!this.foreignTimer || this.serverInstance || this.isDisposed) return;
    const used = this.foreignServer;
    const info = readServerInfo(this.paths);
    // Older versions record no process identity: a live pid counts as running (LtmServer.start asks its port).
    if (info && serverHolderState(info) !== 'dead') {
      if (sameServer(used, info)) return;
      this.useForeign(info);
      this.serverChanged.fire();
      return;
    }
    if (used) this.deps.log.info(`${this.name}: the server of pid ${used.pid} is gone; starting this window's own`);
    await this.startServer();
  }
  /** Opens a memory's file, or its archive when it has left memories/. */
  async openFile(id: string): Promise<void> {
    const store = this.storeInstance;
    if (!store) return;
    let file: string;
    try {
      file = store.fileOf(id);
    } catch {
      file = path.join(store.paths.archives, `${id}.md`);
    }
    await vscode.window.showTextDocument(vscode.Uri.file(file), { preview: true });
  }

  /** Re-reads the store now and tells the views (the Refresh command, and every change made from the UI). */
  refresh(): void {
    this.storeInstance?.refresh({ full: true });
    this.fireChanged();
  }

  private fireChanged(): void {
    this.firedAtChange = this.storeInstance?.changeCount ?? -1;
    this.changed.fire();
  }

  private onFileEvent(uri: vscode.Uri): void {
    if (/[\\/]server\.json$/.test(uri.fsPath) && this.foreignTimer) {
      clearTimeout(this.serverEventTimer);
      this.serverEventTimer = setTimeout(() => void this.checkForeign(), SERVER_EVENT_DEBOUNCE_MS);
    }
    // The server's own files change on every start; they say nothing about memories.
    if (/[\\/](?:server|server-identity|parse-cache|index-pending)\.json$|\.ltm-tmp$|[\\/]\.lock(?:[\\/]|$)/.test(uri.fsPath)) return;
    this.refreshSoon({ full: true });
  }

  /**
   * Reads what changed on disk a moment from now (once for the events that come together), and tells the
   * views. `full`: every memory file is statted (VS Code's events, which do not reach the store's list of
   * changed names); one such event in a burst makes the refresh full.
   */
  private refreshSoon({ full }: { full: boolean }): void {
    this.fullRefreshPending ||= full;
    clearTimeout(this.debounce);
    this.debounce = setTimeout(() => {
      if (this.isDisposed) return;
      const fullRefresh = this.fullRefreshPending;
      this.fullRefreshPending = false;
      if (!this.storeInstance) {
        void this.start();
        return;
      }
      this.storeInstance.refresh({ full: fullRefresh });
      // The file events of a change the UI made (and refreshed for at once), or of index.json written a moment
      // after the memory files, bring nothing new: a second refresh would only redraw the views under the pointer.
      if (this.storeInstance.changeCount !== this.firedAtChange) this.fireChanged();
    }, CHANGE_DEBOUNCE_MS);
  }

  async shutdown(): Promise<void> {
    await this.stopServer();
    this.storeInstance?.flushCaches();
    this.dispose();
  }
}
