/**
 * The MCP Inspector CLI (@modelcontextprotocol/inspector 0.15.0, the last
 * release that runs on Node 20) as a second, independent MCP client.
 *
 * Inspector 0.15.0 cannot send an Authorization header: its CLI has no header
 * option, its HTTP transport is built without request options, and `--config`
 * only describes stdio servers. So:
 * - run directly against the server, it must be refused (401) and change nothing;
 * - for the tool calls it talks to a transparent loopback proxy of this test
 *   that only adds the bearer token (and the Host the server expects), so what
 *   reaches the server is exactly what the Inspector sent, plus the token.
 */
import { strict as assert } from 'node:assert';
import { execFile } from 'node:child_process';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { MemoryStore } from '../../src/core/store';
import { ltmRoot, snapshotDiff, snapshotFiles } from '../support/storeKit';
import { REPO_ROOT, TOOL_NAMES, startTestServer, type Json, type TestServer } from '../support/serverKit';

const INSPECTOR = path.join(REPO_ROOT, 'node_modules', '.bin', 'mcp-inspector');

interface InspectorRun {
  code: number;
  stdout: string;
  stderr: string;
}

function inspector(url: string, args: string[]): Promise<InspectorRun> {
  return new Promise((resolve) => {
    execFile(INSPECTOR, ['--cli', url, '--transport', 'http', ...args], { timeout: 30_000, env: { ...process.env, NO_COLOR: '1' } }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

/** Runs `--method tools/call` and parses the answer the Inspector prints. */
async function callTool(url: string, tool: string, args: Record<string, string> = {}): Promise<{ text: string; structured: Json; isError: boolean }> {
  const run = await inspector(url, ['--method', 'tools/call', '--tool-name', tool, ...Object.entries(args).flatMap(([k, v]) => ['--tool-arg', `${k}=${v}`])]);
  assert.equal(run.code, 0, `inspector ${tool} failed (${run.code}):\n${run.stdout}\n${run.stderr}`);
  let parsed: { content: { type: string; text: string }[]; structuredContent?: Json; isError?: boolean };
  try {
    parsed = JSON.parse(run.stdout) as typeof parsed;
  } catch {
    assert.fail(`inspector ${tool} printed no JSON:\n${run.stdout}`);
  }
  assert.equal(parsed.content[0]?.type, 'text');
  return { text: parsed.content.map((c) => c.text).join('\n'), structured: parsed.structuredContent ?? {}, isError: parsed.isError === true };
}

/** A loopback proxy that forwards everything as it is, adding only the bearer token and the server's Host. */
async function tokenProxy(target: TestServer): Promise<{ url: string; requests: () => number; close: () => Promise<void> }> {
  let count = 0;
  const proxy = http.createServer((req, res) => {
    count += 1;
    const upstream = http.request(
      {
        host: '127.0.0.1',
        port: target.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: `127.0.0.1:${target.port}`, authorization: `Bearer ${target.token}` },
        agent: false,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', () => r()));
  const { port } = proxy.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    requests: () => count,
    close: () =>
      new Promise<void>((r) => {
        proxy.close(() => r());
        proxy.closeAllConnections();
      }),
  };
}

describe('MCP Inspector CLI 0.15.0 as a second client', function () {
  this.timeout(60_000);
  let t: TestServer;
  let proxy: Awaited<ReturnType<typeof tokenProxy>>;

  before(async () => {
    t = await startTestServer();
    proxy = await tokenProxy(t);
  });
  after(async () => {
    await proxy?.close();
    await t?.stop();
  });

  it('is refused without the bearer token (it cannot send one) and changes nothing', async () => {
    // index.json and the counts of earlier calls are written just after they answered: not this call's changes.
    await t.idle();
    const before = snapshotFiles(ltmRoot(t.project));
    const run = await inspector(`${t.server.url}/mcp`, ['--method', 'tools/call', '--tool-name', 'store_memory', '--tool-arg', 'topic=x', '--tool-arg', 'content=y']);
    assert.notEqual(run.code, 0);
    assert.match(run.stdout + run.stderr, /missing or wrong bearer token/);
    assert.deepEqual(snapshotDiff(before, snapshotFiles(ltmRoot(t.project))), []);
  });

  it('tools/list lists the 10 tools with object input schemas', async () => {
    const run = await inspector(proxy.url, ['--method', 'tools/list']);
    assert.equal(run.code, 0, run.stderr);
    const { tools } = JSON.parse(run.stdout) as { tools: { name: string; inputSchema: { type: string } }[] };
    assert.deepEqual(tools.map((tool) => tool.name).sort(), TOOL_NAMES);
    for (const tool of tools) assert.equal(tool.inputSchema.type, 'object', tool.name);
  });

  it('tools/call calls each of the 10 tools once, with --tool-arg values converted by schema', async () => {
    const seen = proxy.requests();
    const stored = await callTool(proxy.url, 'store_memory', {
      topic: 'Inspector interop',
      content: 'Stored by the MCP Inspector CLI. It converts tool arguments by their JSON schema.',
      summary: 'Stored through the Inspector.',
      tags: '["inspector","Interop"]',
      difficulty: '0.6',
      auto_tag: 'false',
    });
    assert.equal(stored.isError, false, stored.text);
    assert.equal(stored.structured.success, true);
    const id = stored.structured.id as string;
    assert.match(id, /^mem_[0-9a-f]{8}$/);
    assert.match(stored.text, /^Stored memory \*\*Inspector interop\*\* \(ID: `mem_[0-9a-f]{8}`\)\nTags: inspector, interop \| Difficulty: 0\.60$/);
    const other = MemoryStore.open(t.project);
    const onDisk = other.peek(id);
    other.dispose();
    assert.deepEqual(onDisk.tags, ['inspector', 'interop']);
    assert.equal(onDisk.difficulty, 0.6);
    assert.equal(onDisk.summary, 'Stored through the Inspector.');

    // Read-only tools, run side by side.
    const [recall, list, get, status, check, fix] = await Promise.all([
      callTool(proxy.url, 'recall', { query: 'inspector schema', limit: '5' }),
      callTool(proxy.url, 'list_memories', { limit: '10', offset: '0' }),
      callTool(proxy.url, 'get_memory', { id }),
      callTool(proxy.url, 'ltm_status'),
      callTool(proxy.url, 'ltm_check'),
      callTool(proxy.url, 'ltm_fix', { clean_orphaned_archives: 'false' }),
    ]);
    for (const [name, answer] of Object.entries({ recall, list, get, status, check, fix })) assert.equal(answer.isError, false, `${name}: ${answer.text}`);
    assert.deepEqual((recall.structured.memories as Json[]).map((m) => m.id), [id]);
    assert.equal(recall.structured.total, 1);
    assert.match(recall.text, /^Found 1 memory matching "inspector schema":/);
    assert.equal(list.structured.total, 1);
    assert.equal(list.structured.has_more, false);
    assert.match(list.text, /^Showing 1 of 1 memory:/);
    assert.equal(get.structured.id, id);
    assert.equal(get.structured.content, 'Stored by the MCP Inspector CLI. It converts tool arguments by their JSON schema.');
    assert.match(get.text, /^# Inspector interop\n/);
    assert.equal(status.structured.total_memories, 1);
    assert.deepEqual(status.structured.by_phase, { full: 1, hint: 0, abstract: 0 });
    assert.match(status.text, /^# LTM Status\n/);
    assert.equal(check.structured.healthy, true, check.text);
    assert.deepEqual(fix.structured.actions, []);
    assert.match(fix.text, /Nothing to repair\./);

    const forget = await callTool(proxy.url, 'forget', { id });
    assert.equal(forget.isError, false, forget.text);
    assert.equal(forget.structured.archived, true);
    const archives = await callTool(proxy.url, 'search_archives', { query: 'inspector', limit: '5' });
    assert.deepEqual((archives.structured.memories as Json[]).map((m) => [m.id, m.archived]), [[id, true]]);
    const restore = await callTool(proxy.url, 'restore_memory', { memory_id: id, importance: 'critical' });
    assert.equal(restore.isError, false, restore.text);
    assert.equal(restore.structured.phase, 0);
    assert.ok((restore.structured.tags as string[]).includes('importance:critical'));
    const reopened = MemoryStore.open(t.project);
    assert.deepEqual(reopened.list().memories.map((m) => [m.id, m.phase]), [[id, 0]]);
    reopened.dispose();
    assert.ok(proxy.requests() > seen, 'the calls went through the proxy');
  });

  it('an invalid --tool-arg comes back as an isError result, not a crash', async () => {
    // index.json and the counts of earlier calls are written just after they answered: not this call's changes.
    await t.idle();
    const before = snapshotFiles(ltmRoot(t.project));
    const answer = await callTool(proxy.url, 'get_memory', { id: 'not-an-id' });
    assert.equal(answer.isError, true);
    assert.match(answer.text, /mem_ followed by 8 hex characters/);
    assert.deepEqual(snapshotDiff(before, snapshotFiles(ltmRoot(t.project))), []);
  });
});
