/**
 * One workspace folder's memory: its store, its server on 127.0.0.1, the
 * environment its terminals get, and a watcher that notices changes made by
 * Claude Code, the CLI, a hand edit or a git checkout.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { MemoryStore, initStoreFiles } from '../core/store';
import { storePaths, type StorePaths } from '../core/storeFiles';
import { LtmServer } from '../servers/ltmServer';
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

export class FolderMemory extends DisposableOwner {
  readonly paths: StorePaths;
  private storeInstance: MemoryStore | null = null;
  private serverInstance: LtmServer | null = null;
  private serverError: string | null = null;
  private readonly changed = this.own(new vscode.EventEmitter<void>());
  /** Fires after the memories changed, whoever changed them. */
  readonly onDidChange = this.changed.event;
  private debounce: NodeJS.Timeout | undefined;
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
    this.own({ dispose: () => clearTimeout(this.debounce) });
  }

  get name(): string {
    return this.folder.name;
  }

  /** The open store, or null while the folder has none. */
  get store(): MemoryStore | null {
    return this.storeInstance;
  }

  get server(): LtmServer | null {
    return this.serverInstance;
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
    const store = MemoryStore.open(this.folder.uri.fsPath);
    this.storeInstance = store;
    this.own({ dispose: () => store.dispose() });
    await this.applyExplicitSettings();
    await this.startServer();
    store.flushCaches();
    this.deps.log.info(`${this.name}: opened ${store.status().total_memories} memories in ${Date.now() - started} ms`);
    this.changed.fire();
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

  async startServer(): Promise<void> {
    const store = this.storeInstance;
    if (!store || this.serverInstance) return;
    try {
      this.serverInstance = await LtmServer.start({
        store,
        version: this.deps.version,
        preferredPort: this.deps.settings.preferredPort(this.folder),
        injectionBudgetTokens: () => this.deps.settings.injectionTokenBudget(this.folder),
        log: (message) => this.deps.log.info(`${this.name}: ${message}`),
      });
      this.serverError = null;
      const env = this.deps.environment.getScoped({ workspaceFolder: this.folder });
      env.description = `LTM memory server for ${this.name}: Claude Code started here uses its hooks and MCP tools.`;
      env.replace('LTM_PORT', String(this.serverInstance.port));
      env.replace('LTM_TOKEN', this.serverInstance.token);
      env.replace('LTM_MCP_URL', this.serverInstance.mcpUrl);
    } catch (error) {
      this.serverError = (error as Error).message;
      this.deps.log.error(`${this.name}: the memory server did not start: ${this.serverError}`);
    }
  }

  async stopServer(): Promise<void> {
    const server = this.serverInstance;
    this.serverInstance = null;
    this.deps.environment.getScoped({ workspaceFolder: this.folder }).clear();
    await server?.stop();
  }

  async restartServer(): Promise<void> {
    await this.stopServer();
    await this.startServer();
    this.changed.fire();
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

  /** Re-reads the store now (the Refresh command). */
  refresh(): void {
    this.storeInstance?.refresh({ full: true });
    this.changed.fire();
  }

  private onFileEvent(uri: vscode.Uri): void {
    // The server's own files change on every start; they say nothing about memories.
    if (/[\\/](?:server|server-identity|parse-cache)\.json$|\.ltm-tmp$|[\\/]\.lock(?:[\\/]|$)/.test(uri.fsPath)) return;
    clearTimeout(this.debounce);
    this.debounce = setTimeout(() => {
      if (!this.storeInstance) {
        void this.start();
        return;
      }
      this.storeInstance.refresh({ full: true });
      this.changed.fire();
    }, CHANGE_DEBOUNCE_MS);
  }

  async shutdown(): Promise<void> {
    await this.stopServer();
    this.storeInstance?.flushCaches();
    this.dispose();
  }
}
