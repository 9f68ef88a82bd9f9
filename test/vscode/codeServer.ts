/**
 * A real VS Code for tests: code-server (VS Code 1.139 with its extension host
 * in Node) installed by scripts/setup-test-deps.sh, with a throw-away user data
 * dir, and Debian's Chromium driven by Playwright as its window.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';

export const CODE_SERVER_VERSION = '4.139.1';
export const NODE24_VERSION = '24.21.0';
const CACHE = process.env.LTM_TEST_CACHE ?? path.join(os.homedir(), '.cache', 'ltm-test');
export const CODE_SERVER = path.join(CACHE, `code-server-${CODE_SERVER_VERSION}`, 'node_modules', '.bin', 'code-server');
export const NODE24_BIN = path.join(CACHE, `node-${NODE24_VERSION}`, 'bin');
export const CHROMIUM = process.env.LTM_TEST_CHROMIUM ?? '/usr/bin/chromium';

export function requireVsCodeTools(): void {
  for (const [what, file] of [
    ['code-server', CODE_SERVER],
    ['Node 24', path.join(NODE24_BIN, 'node')],
    ['Chromium', CHROMIUM],
  ] as const) {
    if (!fs.existsSync(file)) throw new Error(`${what} is missing at ${file}: run scripts/setup-test-deps.sh`);
  }
}

/** A quiet workbench: no welcome page, no AI features, no telemetry, no update checks. */
const USER_SETTINGS = {
  'workbench.startupEditor': 'none',
  'workbench.tips.enabled': false,
  'workbench.enableExperiments': false,
  'chat.disableAIFeatures': true,
  'extensions.autoUpdate': false,
  'extensions.autoCheckUpdates': false,
  'remote.autoForwardPorts': false,
  'telemetry.telemetryLevel': 'off',
  'git.enabled': false,
  'update.mode': 'none',
  'security.workspace.trust.enabled': false,
  'window.commandCenter': false,
  'workbench.colorTheme': 'Default Dark Modern',
  // VS Code in a browser saves a second after each edit by default; the desktop does not. The tests save
  // themselves (Ctrl+S, TextDocument.save()): on a busy machine the automatic save came first, and
  // TextDocument.save() of a document no longer dirty answered false.
  'files.autoSave': 'off',
};

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export interface CodeServerOptions {
  /** Extra `--vscode-option` flags, e.g. enable-smoke-test-driver for extension tests. */
  smokeTestDriver?: boolean;
  /** A .vsix to install before starting. */
  vsix?: string;
  userSettings?: Record<string, unknown>;
  env?: Record<string, string>;
  /** Default: a free port. */
  port?: number;
  /** code-server is killed after this long whatever happens (default 20 minutes). */
  lifetimeSeconds?: number;
}

export class CodeServer {
  private process: ChildProcess | null = null;
  private output = '';

  private constructor(
    readonly root: string,
    readonly port: number,
  ) {}

  get userDataDir(): string {
    return path.join(this.root, 'user-data');
  }

  get extensionsDir(): string {
    return path.join(this.root, 'extensions');
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get log(): string {
    return this.output;
  }

  private env(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
    return {
      ...process.env,
      PATH: `${NODE24_BIN}:${process.env.PATH ?? ''}`,
      XDG_CONFIG_HOME: path.join(this.root, 'xdg-config'),
      XDG_DATA_HOME: path.join(this.root, 'xdg-data'),
      // Keeps gallery queries off the network.
      EXTENSIONS_GALLERY: JSON.stringify({ serviceUrl: 'http://127.0.0.1:9/gallery', itemUrl: 'http://127.0.0.1:9/item' }),
      // Terminals and Claude Code started by tests must not inherit an outer LTM server.
      LTM_PORT: '',
      LTM_TOKEN: '',
      ...extra,
    };
  }

  static async start(options: CodeServerOptions = {}): Promise<CodeServer> {
    requireVsCodeTools();
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ltm-code-server-'));
    const server = new CodeServer(root, options.port ?? (await freePort()));
    fs.mkdirSync(path.join(server.userDataDir, 'User'), { recursive: true });
    fs.writeFileSync(path.join(server.userDataDir, 'User', 'settings.json'), JSON.stringify({ ...USER_SETTINGS, ...options.userSettings }, null, 2));
    if (options.vsix) server.installExtension(options.vsix);
    const args = [
      '--bind-addr',
      `127.0.0.1:${server.port}`,
      '--auth',
      'none',
      '--user-data-dir',
      server.userDataDir,
      '--extensions-dir',
      server.extensionsDir,
      '--disable-telemetry',
      '--disable-update-check',
      '--disable-workspace-trust',
      '--disable-getting-started-override',
      '--disable-proxy',
      // Old extension hosts would otherwise live on for hours after a page reload.
      '--reconnection-grace-time',
      '5',
      '--idle-timeout-seconds',
      '900',
      ...(options.smokeTestDriver ? ['--vscode-option', 'enable-smoke-test-driver'] : []),
    ];
    // `timeout` makes sure code-server never outlives the test run, whatever happens to this process.
    const child = spawn('timeout', ['-k', '10', String(options.lifetimeSeconds ?? 1200), CODE_SERVER, ...args], { env: server.env(options.env), stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    server.process = child;
    child.stdout!.on('data', (d: Buffer) => (server.output += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (server.output += d.toString()));
    await server.waitUntilListening();
    return server;
  }

  installExtension(vsix: string): void {
    const r = spawnSync(
      CODE_SERVER,
      ['--user-data-dir', this.userDataDir, '--extensions-dir', this.extensionsDir, '--install-extension', vsix, '--force'],
      { env: this.env(), encoding: 'utf8', timeout: 120_000 },
    );
    if (r.status !== 0) throw new Error(`installing ${vsix} failed: ${r.stdout}${r.stderr}`);
  }

  private async waitUntilListening(): Promise<void> {
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      if (this.process?.exitCode !== null) throw new Error(`code-server exited: ${this.output}`);
      try {
        const response = await fetch(`${this.url}/healthz`);
        if (response.ok) return;
      } catch {
        // not listening yet
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error(`code-server did not start within 60 s: ${this.output}`);
  }

  async stop(): Promise<void> {
    const child = this.process;
    this.process = null;
    if (child && child.exitCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      try {
        process.kill(-child.pid!, 'SIGTERM');
      } catch {
        child.kill('SIGTERM');
      }
      await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    fs.rmSync(this.root, { recursive: true, force: true });
  }
}

/** Headless Chromium as the VS Code window. */
export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    env: { ...process.env, XDG_CONFIG_HOME: fs.mkdtempSync(path.join(os.tmpdir(), 'ltm-chromium-')) },
  });
}

export async function openWorkbench(browser: Browser, server: CodeServer, folder: string, payload?: [string, string][]): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  const query = new URLSearchParams({ folder });
  if (payload) query.set('payload', JSON.stringify(payload));
  await page.goto(`${server.url}/?${query.toString()}`);
  await page.waitForSelector('.monaco-workbench', { timeout: 60_000 });
  return page;
}
