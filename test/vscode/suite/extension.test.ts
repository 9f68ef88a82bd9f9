/**
 * Runs inside the extension host of a real VS Code (code-server), on a
 * workspace holding the claude-ltm 0.2.5 interop store, set up for Claude Code.
 * The workspace is a saved multi-root one (see runExtensionTests), so that a
 * test can add a folder without reloading the window.
 */
import { strict as assert } from 'node:assert';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { LtmApi } from '../../../src/extension';
import type { StatusEntry } from '../../../src/vscode/statusView';
import { MemoryStore } from '../../../src/core/store';
import { FakeAnthropic, textOf } from '../../support/fakeAnthropic';
import { runClaude } from '../../support/claudeCode';
import { EXTENSION_ID, waitFor } from './hostKit';

function once<T>(event: vscode.Event<T>, timeoutMs: number, what: string): Promise<number> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      sub.dispose();
      reject(new Error(`no ${what} within ${timeoutMs} ms`));
    }, timeoutMs);
    const sub = event(() => {
      clearTimeout(timer);
      sub.dispose();
      resolve(Date.now() - started);
    });
  });
}

interface ServerJson {
  port: number;
  token: string;
  pid: number;
  url: string;
}

function readServerJson(project: string): ServerJson | null {
  try {
    return JSON.parse(fs.readFileSync(path.join(project, '.claude', 'ltm', 'server.json'), 'utf8')) as ServerJson;
  } catch {
    return null;
  }
}

/** The LTM_* variables a new integrated terminal started in `cwd` gets. */
async function terminalEnvironment(cwd: string): Promise<Record<string, string>> {
  const out = path.join(cwd, 'terminal-env.txt');
  fs.rmSync(out, { force: true });
  const terminal = vscode.window.createTerminal({ name: 'env probe', cwd: vscode.Uri.file(cwd) });
  terminal.sendText(`env | grep '^LTM_' > ${JSON.stringify(out)}.tmp; mv ${JSON.stringify(out)}.tmp ${JSON.stringify(out)}`);
  try {
    await waitFor(() => fs.existsSync(out), 'the terminal to write its environment', 20_000);
  } finally {
    terminal.dispose();
  }
  const env = Object.fromEntries(
    fs
      .readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .filter((line) => line.includes('='))
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  );
  fs.rmSync(out);
  return env;
}

async function health(port: number, token: string): Promise<number> {
  try {
    return (await fetch(`http://127.0.0.1:${port}/health`, { headers: { Authorization: `Bearer ${token}` } })).status;
  } catch {
    return 0;
  }
}

describe('LTM in a real VS Code', () => {
  let api: LtmApi;
  let folder: string;
  const ltmDir = () => path.join(folder, '.claude', 'ltm');

  before(async () => {
    const extension = vscode.extensions.getExtension<LtmApi>(EXTENSION_ID);
    assert.ok(extension, `${EXTENSION_ID} is installed`);
    api = await extension.activate();
    await api.ready;
    folder = vscode.workspace.workspaceFolders![0]!.uri.fsPath;
  });

  it('opens the workspace store and serves it on 127.0.0.1 with a server.json for hooks', async () => {
    const [info] = api.folders();
    assert.ok(info);
    assert.equal(info.path, folder);
    assert.equal(info.memories, 2, 'the two active memories of the interop store');
    assert.ok(info.port && info.token && info.mcpUrl);
    const serverJson = JSON.parse(fs.readFileSync(path.join(ltmDir(), 'server.json'), 'utf8')) as { port: number; pid: number };
    assert.equal(serverJson.port, info.port);
    assert.equal(serverJson.pid, process.pid, 'the extension host serves it');
    const health = await fetch(`http://127.0.0.1:${info.port}/health`, { headers: { Authorization: `Bearer ${info.token}` } });
    assert.equal(health.status, 200);
    const refused = await fetch(`http://127.0.0.1:${info.port}/health`);
    assert.equal(refused.status, 401, 'no token, no answer');
  });

  it('registers every command the manifest contributes', async () => {
    const manifest = vscode.extensions.getExtension(EXTENSION_ID)!.packageJSON as { contributes: { commands: { command: string }[] } };
    const registered = new Set(await vscode.commands.getCommands(true));
    const missing = manifest.contributes.commands.map((c) => c.command).filter((c) => !registered.has(c));
    assert.deepEqual(missing, []);
  });

  let terminalEnv: Record<string, string> = {};
  it('gives the folder’s integrated terminals LTM_PORT, LTM_TOKEN and LTM_MCP_URL', async () => {
    terminalEnv = await terminalEnvironment(folder);
    const [info] = api.folders();
    assert.equal(terminalEnv.LTM_PORT, String(info!.port));
    assert.equal(terminalEnv.LTM_TOKEN, info!.token);
    assert.equal(terminalEnv.LTM_MCP_URL, info!.mcpUrl);
  });

  it('notices a memory stored through MCP within a second, without a refresh', async () => {
    const [info] = api.folders();
    const changed = once(api.onDidChangeMemories, 5_000, 'change event');
    const response = await fetch(info!.mcpUrl!, {
      method: 'POST',
      headers: { Authorization: `Bearer ${info!.token}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'store_memory', arguments: { topic: 'Stored through MCP while VS Code watches', content: 'The tree must show this without a manual refresh.' } },
      }),
    });
    assert.equal(response.status, 200);
    const elapsed = await changed;
    assert.ok(elapsed < 1000, `the change was seen after ${elapsed} ms`);
    assert.equal(api.folders()[0]!.memories, 3);
  });

  it('writes store limits set in settings to state.json, where hooks and the CLI read them', async () => {
    await vscode.workspace.getConfiguration('ltm').update('maxMemories', 42, vscode.ConfigurationTarget.Workspace);
    const statePath = path.join(ltmDir(), 'state.json');
    await waitFor(() => (JSON.parse(fs.readFileSync(statePath, 'utf8')) as { config: { max_memories: number } }).config.max_memories === 42, 'state.json to carry the setting');
    await vscode.workspace.getConfiguration('ltm').update('maxMemories', undefined, vscode.ConfigurationTarget.Workspace);
  });

  it('writes ltm.staleMemories to state.json (stale_memories), where hooks and the CLI read it', async () => {
    const statePath = path.join(ltmDir(), 'state.json');
    const mode = () => (JSON.parse(fs.readFileSync(statePath, 'utf8')) as { config: { stale_memories?: string } }).config.stale_memories;
    await vscode.workspace.getConfiguration('ltm').update('staleMemories', 'skip', vscode.ConfigurationTarget.Workspace);
    await waitFor(() => mode() === 'skip', 'state.json to carry stale_memories: skip');
    await vscode.workspace.getConfiguration('ltm').update('staleMemories', 'label', vscode.ConfigurationTarget.Workspace);
    await waitFor(() => mode() === 'label', 'state.json to carry stale_memories: label');
    await vscode.workspace.getConfiguration('ltm').update('staleMemories', undefined, vscode.ConfigurationTarget.Workspace);
  });

  it('"LTM: Fix integrity" repairs a damaged store in one pass', async () => {
    // The extension's server writes index.json in pauses: the hand edit below must not be overwritten by it.
    await waitFor(() => !fs.existsSync(path.join(ltmDir(), 'index-pending.json')), 'the server to write index.json');
    fs.writeFileSync(path.join(ltmDir(), 'memories', 'mem_0badc0de.md'), '---\nid: "mem_0badc0de"\ntopic: "unlisted"\n---\nunlisted body\n');
    const index = JSON.parse(fs.readFileSync(path.join(ltmDir(), 'index.json'), 'utf8')) as { memories: Record<string, unknown> };
    index.memories.mem_1ee7c0de = { topic: 'gone', tags: [], phase: 0, difficulty: 0.5, created_at: '2026-01-01T00:00:00Z' };
    fs.writeFileSync(path.join(ltmDir(), 'index.json'), JSON.stringify(index, null, 2));
    const before = MemoryStore.open(folder).check();
    assert.deepEqual(before.problems.map((p) => p.kind).sort(), ['missing_file', 'not_indexed']);
    await vscode.commands.executeCommand('ltm.fixIntegrity');
    const after = MemoryStore.open(folder).check();
    assert.equal(after.healthy, true, JSON.stringify(after.problems));
    assert.ok(fs.existsSync(path.join(ltmDir(), 'memories', 'mem_0badc0de.md')), 'the unlisted memory is kept');
    assert.ok(Object.hasOwn((JSON.parse(fs.readFileSync(path.join(ltmDir(), 'index.json'), 'utf8')) as { memories: object }).memories, 'mem_0badc0de'), 'and indexed');
  });

  it('Claude Code, run with the environment of an LTM terminal, reaches the extension’s server', async function () {
    const claude = process.env.LTM_TEST_CLAUDE;
    if (!claude) throw new Error('LTM_TEST_CLAUDE is not set by the runner');
    const fake = new FakeAnthropic(() => ({ text: 'hello from the fake model' }));
    await fake.start();
    const home = fs.mkdtempSync(path.join(path.dirname(folder), 'home-'));
    try {
      const sessionsBefore = MemoryStore.open(folder).sessionCount;
      const run = await runClaude('hello', { cwd: folder, home, modelUrl: fake.url, env: terminalEnv });
      assert.equal(run.status, 0, run.stderr);
      assert.equal(run.result?.result, 'hello from the fake model');
      assert.match(textOf(fake.requests[0]!.messages), /Use 127\.0\.0\.1 not localhost for hook curl/, 'the extension injected the stored memories');
      assert.ok(fake.requests[0]!.tools?.some((t) => t.name === 'mcp__ltm__recall'), 'MCP tools came from the extension’s server');
      assert.equal(MemoryStore.open(folder).sessionCount, sessionsBefore + 1, 'the session was counted by the extension’s server');
    } finally {
      await fake.stop();
    }
  });
  describe('a folder whose server another process started first (like a second window on the same folder)', () => {
    let second: string | undefined;
    let serve: ChildProcess | undefined;
    let serveOutput = '';

    const serveRuns = () => serve !== undefined && serve.exitCode === null && serve.signalCode === null;
    const secondIndex = () => (vscode.workspace.workspaceFolders ?? []).findIndex((f) => f.uri.fsPath === second);

    after(async () => {
      // Stopped by its PID whatever happened in the test.
      if (serve?.pid && serveRuns()) {
        const exited = new Promise((r) => serve!.once('exit', r));
        process.kill(serve.pid, 'SIGKILL');
        await exited;
      }
      if (second && secondIndex() >= 0) {
        vscode.workspace.updateWorkspaceFolders(secondIndex(), 1);
        await waitFor(() => !api.folders().some((f) => f.path === second), 'the second folder to be closed').catch(() => undefined);
      }
      if (second) fs.rmSync(second, { recursive: true, force: true });
    });

    it('uses the running `ltm serve` instead of starting its own, and starts its own within seconds once that one stops', async function () {
      this.timeout(120_000);
      // Adding a folder to a single-folder window reloads it (and ends this suite): runExtensionTests opens a multi-root workspace.
      assert.ok(vscode.workspace.workspaceFile, 'the suite runs in a saved multi-root workspace (see test/vscode/runExtensionTests.ts)');
      const extension = vscode.extensions.getExtension(EXTENSION_ID)!;
      const cli = path.join(extension.extensionPath, 'dist', 'cli.js');
      const dir = fs.mkdtempSync(path.join(path.dirname(folder), 'second-'));
      second = dir;
      const stored = spawnSync(process.execPath, [cli, 'store', '--project', dir, '--topic', 'Served by another process', '--content', 'The second folder.'], {
        encoding: 'utf8',
      });
      assert.equal(stored.status, 0, stored.stderr);

      // A real `ltm serve` (the CLI as another process), running before the extension opens the folder.
      const child = spawn(process.execPath, [cli, 'serve', '--project', dir], { stdio: ['ignore', 'pipe', 'pipe'] });
      serve = child;
      child.stdout!.on('data', (d: Buffer) => (serveOutput += d.toString()));
      child.stderr!.on('data', (d: Buffer) => (serveOutput += d.toString()));
      const foreign = await waitFor(() => {
        if (!serveRuns()) throw new Error(`ltm serve exited: ${serveOutput}`);
        const info = readServerJson(dir);
        return info?.pid === child.pid ? info : null;
      }, 'ltm serve to write server.json');

      assert.ok(vscode.workspace.updateWorkspaceFolders(vscode.workspace.workspaceFolders!.length, 0, { uri: vscode.Uri.file(dir) }));
      const opened = await waitFor(() => api.folders().find((f) => f.path === dir && f.port !== null), 'the extension to open the second folder', 30_000);
      assert.equal(opened.memories, 1);
      assert.deepEqual([opened.port, opened.token, opened.mcpUrl], [foreign.port, foreign.token, `http://127.0.0.1:${foreign.port}/mcp`], 'the extension offers the running server');
      // It did not start a server of its own: server.json still names ltm serve, which still serves.
      await new Promise((r) => setTimeout(r, 500));
      assert.equal(readServerJson(dir)?.pid, child.pid, `server.json changed hands while ltm serve runs:\n${serveOutput}`);
      assert.ok(serveRuns(), `ltm serve stopped: ${serveOutput}`);
      assert.equal(await health(foreign.port, foreign.token), 200);
      // Not an error: the status says whose server it is.
      const status = (await vscode.commands.executeCommand<StatusEntry[]>('ltm.showStatus')) ?? [];
      await vscode.commands.executeCommand('workbench.action.closeQuickOpen');
      const serverRow = (rows: StatusEntry[]) => rows.find((r) => r.folder === dir && r.key === 'server')?.description ?? '';
      assert.equal(serverRow(status), `127.0.0.1:${foreign.port} (another window's, pid ${child.pid})`, JSON.stringify(status));

      const env = await terminalEnvironment(dir);
      assert.deepEqual([env.LTM_PORT, env.LTM_TOKEN, env.LTM_MCP_URL], [String(foreign.port), foreign.token, `http://127.0.0.1:${foreign.port}/mcp`], 'terminals of the folder use the running server');

      // The other process stops (SIGTERM: it removes its server.json): the extension starts its own.
      const stoppedAt = Date.now();
      const exited = new Promise((r) => child.once('exit', r));
      process.kill(child.pid!, 'SIGTERM');
      await exited;
      const own = await waitFor(() => {
        const info = readServerJson(dir);
        return info?.pid === process.pid ? info : null;
      }, 'the extension to start its own server', 15_000);
      const tookMs = Date.now() - stoppedAt;
      assert.ok(tookMs < 5_000, `the extension took over after ${tookMs} ms`);
      assert.equal(own.token, foreign.token, 'the same project identity');
      assert.equal(own.port, foreign.port, 'the same port: Claude Code sessions that knew the old server keep working');
      assert.equal(await health(own.port, own.token), 200);
      await waitFor(() => api.folders().find((f) => f.path === dir)?.port === own.port, 'the extension to report its own server');
      const after = (await vscode.commands.executeCommand<StatusEntry[]>('ltm.showStatus')) ?? [];
      await vscode.commands.executeCommand('workbench.action.closeQuickOpen');
      assert.equal(serverRow(after), `127.0.0.1:${own.port}`, JSON.stringify(after));
      const envAfter = await terminalEnvironment(dir);
      assert.deepEqual([envAfter.LTM_PORT, envAfter.LTM_TOKEN], [String(own.port), own.token]);

      // Closing the folder stops the extension's server for it and removes server.json.
      vscode.workspace.updateWorkspaceFolders(secondIndex(), 1);
      await waitFor(() => !api.folders().some((f) => f.path === dir), 'the second folder to be closed');
      await waitFor(() => readServerJson(dir) === null, 'server.json to be removed');
    });
  });
});
