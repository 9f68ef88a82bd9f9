/**
 * Runs inside the extension host of a real VS Code (code-server), on a
 * workspace holding the claude-ltm 0.2.5 interop store, set up for Claude Code.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { LtmApi } from '../../../src/extension';
import { MemoryStore } from '../../../src/core/store';
import { FakeAnthropic, textOf } from '../../support/fakeAnthropic';
import { runClaude } from '../../support/claudeCode';

const EXTENSION_ID = 'ltm-tools.ltm';

async function waitFor<T>(probe: () => T | undefined | null | false, what: string, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

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
    const out = path.join(folder, 'terminal-env.txt');
    const terminal = vscode.window.createTerminal({ name: 'env probe', cwd: vscode.Uri.file(folder) });
    terminal.sendText(`env | grep '^LTM_' > ${JSON.stringify(out)}.tmp && mv ${JSON.stringify(out)}.tmp ${JSON.stringify(out)}`);
    await waitFor(() => fs.existsSync(out), 'the terminal to write its environment', 20_000);
    terminal.dispose();
    terminalEnv = Object.fromEntries(
      fs
        .readFileSync(out, 'utf8')
        .trim()
        .split('\n')
        .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
    );
    fs.rmSync(out);
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

  it('"LTM: Fix integrity" repairs a damaged store in one pass', async () => {
    fs.writeFileSync(path.join(ltmDir(), 'memories', 'mem_0badc0de.md'), '---\nid: "mem_0badc0de"\ntopic: "orphan"\n---\norphan body\n');
    const index = JSON.parse(fs.readFileSync(path.join(ltmDir(), 'index.json'), 'utf8')) as { memories: Record<string, unknown> };
    index.memories.mem_1ee7c0de = { topic: 'gone', tags: [], phase: 0, difficulty: 0.5, created_at: '2026-01-01T00:00:00Z' };
    fs.writeFileSync(path.join(ltmDir(), 'index.json'), JSON.stringify(index, null, 2));
    const before = MemoryStore.open(folder).check();
    assert.deepEqual(before.problems.map((p) => p.kind).sort(), ['missing_file', 'orphaned_file']);
    await vscode.commands.executeCommand('ltm.fixIntegrity');
    const after = MemoryStore.open(folder).check();
    assert.equal(after.healthy, true, JSON.stringify(after.problems));
    assert.ok(fs.existsSync(path.join(ltmDir(), 'archives', 'mem_0badc0de.md')), 'the orphan was archived before removal');
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
});
