/**
 * `ltm mcp` beside a running server (mcpForwarding.ts, stdioRelay.ts): the
 * session's messages go to the project's server, with the real MCP SDK
 * client on the stdio side and a real LtmServer on 127.0.0.1; when the server
 * goes away, the session goes on with the store opened in the process.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as http from 'node:http';
import { PassThrough } from 'node:stream';
import { spawn } from 'node:child_process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { MemoryStore } from '../../src/core/store';
import { storePaths } from '../../src/core/storeFiles';
import { pluginMcpLaunch } from '../../src/servers/pluginFiles';
import { readServerInfo, relayTargetOf } from '../../src/servers/serverInfo';
import { serveStdioMcp, type StdioMcpOptions } from '../../src/servers/stdioMcp';
import { CLI, REPO_ROOT, TOOL_NAMES, closedPort, startTestServer, type Json, type TestServer } from '../support/serverKit';
import { ensureCliBuilt, ltmRoot, makeTempProject, removeDir } from '../support/storeKit';

function structured(result: unknown): Json {
  return (result as { structuredContent: Json }).structuredContent;
}

/** serveStdioMcp in this process, with the SDK client on the other end of its stdin and stdout. */
async function relaySession(options: Omit<StdioMcpOptions, 'input' | 'output'>): Promise<{ client: Client; end: () => Promise<void> }> {
  const toServer = new PassThrough();
  const fromServer = new PassThrough();
  const serving = serveStdioMcp({ ...options, input: toServer, output: fromServer });
  const client = new Client({ name: 'ltm-relay-test', version: '1' });
  // A stdio transport is lines of JSON either way: the server's kind serves the client too.
  await client.connect(new StdioServerTransport(fromServer, toServer));
  return {
    client,
    end: async () => {
      await client.close();
      toServer.end();
      await serving;
    },
  };
}

describe('ltm mcp beside a running server', function () {
  this.timeout(60_000);
  let project: string;
  let server: TestServer | null;
  beforeEach(() => {
    project = makeTempProject('ltm-mcp-relay-');
    server = null;
  });
  afterEach(async () => {
    await server?.stop();
    removeDir(project);
  });

  it('relays the session to the server of this version: its tools, its store, one MCP session ended with the session', async () => {
    server = await startTestServer({ project, prepare: (store) => void store.store({ topic: 'Held by the server', content: 'The running server answers the plugin session.', tags: [] }) });
    await server.store.settled();
    assert.deepEqual(relayTargetOf(storePaths(project), 'test'), { port: server.port, token: server.token, project: storePaths(project).project });
    const session = await relaySession({ projectDir: project, version: 'test' });
    try {
      const { tools } = await session.client.listTools();
      assert.deepEqual(tools.map((t) => t.name).sort(), TOOL_NAMES);
      assert.equal(server.server.mcpStats.live, 1, 'the session is an MCP session of the server');
      const recalled = structured(await session.client.callTool({ name: 'recall', arguments: { query: 'running server plugin session' } }));
      assert.equal((recalled.memories as { topic: string }[])[0]?.topic, 'Held by the server');
      const stored = structured(await session.client.callTool({ name: 'store_memory', arguments: { topic: 'Stored through the relay', content: 'The server wrote it.' } }));
      // The server's own copy has it at once: the server stored it.
      assert.equal((await server.store.get(stored.id as string, { countAccess: false })).topic, 'Stored through the relay');
    } finally {
      await session.end();
    }
    assert.equal(server.server.mcpStats.live, 0, 'the relay ends its MCP session when the session ends');
  });

  it('goes on with the store opened here when the server stops during the session: nothing is lost', async () => {
    server = await startTestServer({ project });
    const session = await relaySession({ projectDir: project, version: 'test' });
    let before: string;
    try {
      before = structured(await session.client.callTool({ name: 'store_memory', arguments: { topic: 'Before the server stopped', content: 'Stored by the server.' } })).id as string;
      assert.equal(server.server.mcpStats.live, 1, 'relayed until then');
      await server.stop();
      server = null;
      assert.equal(readServerInfo(storePaths(project)), null);
      const after = structured(await session.client.callTool({ name: 'store_memory', arguments: { topic: 'After the server stopped', content: 'Stored by the session itself.' } }));
      assert.equal(after.success, true, JSON.stringify(after));
      const recalled = structured(await session.client.callTool({ name: 'recall', arguments: { query: 'server stopped' } }));
      assert.deepEqual((recalled.memories as { topic: string }[]).map((m) => m.topic).sort(), ['After the server stopped', 'Before the server stopped']);
    } finally {
      await session.end();
    }
    const store = MemoryStore.open(project);
    try {
      assert.equal((await store.get(before, { countAccess: false })).topic, 'Before the server stopped');
      assert.equal(store.check().healthy, true, JSON.stringify(store.check()));
      assert.ok(fs.readFileSync(store.paths.index, 'utf8').includes('After the server stopped'), 'index.json lists the memory stored here');
    } finally {
      store.dispose();
    }
  });

  it('goes on with the server restarted meanwhile (a VS Code window reloaded): its session resumed, nothing opened here', async () => {
    server = await startTestServer({ project });
    const { port, token } = server;
    const session = await relaySession({ projectDir: project, version: 'test' });
    try {
      await session.client.callTool({ name: 'store_memory', arguments: { topic: 'Before the restart', content: 'Stored by the first server.' } });
      await server.stop();
      // The project keeps its token and port across restarts (server-identity.json): the new server is found where the old one was.
      server = await startTestServer({ project });
      assert.deepEqual([server.port, server.token], [port, token]);
      const after = structured(await session.client.callTool({ name: 'store_memory', arguments: { topic: 'After the restart', content: 'Stored by the restarted server.' } }));
      assert.equal(after.success, true, JSON.stringify(after));
      assert.deepEqual([server.server.mcpStats.resumed, server.server.mcpStats.live], [1, 1], 'the relay\'s MCP session, resumed by the new server');
      assert.equal((await server.store.get(after.id as string, { countAccess: false })).topic, 'After the restart', 'the new server stored it');
    } finally {
      await session.end();
    }
    assert.equal(server.server.mcpStats.live, 0, 'ended with the session');
  });

  it('serves the session itself when the server runs another version, or does not answer', async () => {
    server = await startTestServer({ project });
    assert.equal(relayTargetOf(storePaths(project), 'another version'), null);
    const other = await relaySession({ projectDir: project, version: 'another version' });
    try {
      await other.client.listTools();
      assert.equal(server.server.mcpStats.live, 0, 'a server of another version is not asked');
    } finally {
      await other.end();
    }
    // A server that is gone since it was found: its initialize is answered here, and the tools work.
    const silent = await relaySession({ projectDir: project, version: 'test', relayTo: { port: await closedPort(), token: 'x'.repeat(43), project } });
    try {
      const stored = structured(await silent.client.callTool({ name: 'store_memory', arguments: { topic: 'Served without the server', content: 'Nothing listened on its port.' } }));
      assert.equal(stored.success, true);
    } finally {
      await silent.end();
    }
    server.store.refresh();
    assert.ok(server.store.list({}).memories.some((m) => m.topic === 'Served without the server'), 'the session served itself on the project\'s store');
  });

  it("a copy of a served project, server.json copied with it, is not relayed to the original's server", async () => {
    server = await startTestServer({ project });
    const copy = makeTempProject('ltm-mcp-relay-copy-');
    try {
      fs.mkdirSync(ltmRoot(copy), { recursive: true });
      fs.copyFileSync(storePaths(project).server, storePaths(copy).server);
      assert.equal(relayTargetOf(storePaths(copy), 'test'), null, 'server.json names a server of another project');
      // Told to relay anyway, the server refuses the other project's messages: the session is served on the copy's store.
      const session = await relaySession({ projectDir: copy, version: 'test', relayTo: { port: server.port, token: server.token, project: copy } });
      try {
        const stored = structured(await session.client.callTool({ name: 'store_memory', arguments: { topic: 'Stored in the copy', content: 'Not in the original project.' } }));
        assert.equal(stored.success, true);
        assert.equal(server.server.mcpStats.serversBuilt, 0, 'the server opened an MCP session for another project');
      } finally {
        await session.end();
      }
      server.store.refresh();
      assert.ok(!server.store.list({}).memories.some((m) => m.topic === 'Stored in the copy'), 'the copy\'s memory went to the original project');
      const copied = MemoryStore.open(copy);
      try {
        assert.deepEqual(copied.list({}).memories.map((m) => m.topic), ['Stored in the copy']);
      } finally {
        copied.dispose();
      }
    } finally {
      removeDir(copy);
    }
  });

  it('a call the server took but did not answer gets an error, and is not carried out a second time here', async () => {
    // A server that opens sessions and then drops the connection of every tool call it reads.
    let toolCalls = 0;
    const dropping = http.createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        if (req.method === 'DELETE') return res.writeHead(200).end();
        const message = JSON.parse(body) as { id?: number; method: string };
        if (message.method === 'initialize') {
          res.writeHead(200, { 'Content-Type': 'application/json', 'Mcp-Session-Id': 'dropping-session' });
          return res.end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result: { protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'ltm', version: 'test' } } }));
        }
        if (message.id === undefined) return res.writeHead(202).end();
        toolCalls += 1;
        req.socket.destroy();
      });
    });
    await new Promise<void>((resolve) => dropping.listen(0, '127.0.0.1', resolve));
    const port = (dropping.address() as { port: number }).port;
    const session = await relaySession({ projectDir: project, version: 'test', relayTo: { port, token: 'y'.repeat(43), project } });
    try {
      await assert.rejects(session.client.callTool({ name: 'store_memory', arguments: { topic: 'Taken, never answered', content: 'The server dropped the call.' } }), /the LTM server did not answer/);
      assert.equal(toolCalls, 1);
    } finally {
      await session.end();
      dropping.close();
    }
    assert.ok(!fs.existsSync(ltmRoot(project)), 'the call was not carried out here too');
  });

  it("as the plugin starts it (the built CLI), beside `ltm serve`: no store of its own, and no token in its arguments", async () => {
    ensureCliBuilt();
    const seeded = MemoryStore.open(project);
    try {
      await seeded.store({ topic: 'Seeded before the server', content: 'A store the server opens.' });
    } finally {
      seeded.dispose();
    }
    // A session's `ltm mcp`, and what it holds open after a tool call: a store of its own watches memories/.
    const pluginSession = async (): Promise<{ watches: number; cmdline: string }> => {
      const transport = new StdioClientTransport({ command: process.execPath, args: pluginMcpLaunch(REPO_ROOT).args, cwd: project, env: { ...(process.env as Record<string, string>), CLAUDE_PROJECT_DIR: project }, stderr: 'pipe' });
      const client = new Client({ name: 'ltm-relay-test', version: '1' });
      await client.connect(transport);
      try {
        const stored = structured(await client.callTool({ name: 'store_memory', arguments: { topic: `Stored by a plugin session ${Date.now()}`, content: 'Through ltm mcp.' } }));
        assert.equal(stored.success, true);
        const pid = transport.pid!;
        const links = fs.readdirSync(`/proc/${pid}/fd`).map((fd) => {
          try {
            return fs.readlinkSync(`/proc/${pid}/fd/${fd}`);
          } catch {
            return '';
          }
        });
        return { watches: links.filter((link) => link.includes('inotify')).length, cmdline: fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8') };
      } finally {
        await client.close();
      }
    };
    const serve = spawn(process.execPath, [CLI, 'serve', '--project', project], { stdio: ['ignore', 'pipe', 'pipe'] });
    let token: string;
    try {
      await new Promise<void>((resolve, reject) => {
        serve.stdout.on('data', (chunk: Buffer) => chunk.toString().includes('serving') && resolve());
        serve.on('exit', (code) => reject(new Error(`ltm serve exited (${code})`)));
      });
      token = readServerInfo(storePaths(project))!.token;
      const relayed = await pluginSession();
      assert.equal(relayed.watches, 0, 'ltm mcp opened a store of its own beside the server');
      assert.ok(!relayed.cmdline.includes(token), 'the token is in the arguments of ltm mcp');
    } finally {
      serve.kill('SIGINT');
      await new Promise((resolve) => serve.once('exit', resolve));
    }
    // Without the server, the same session opens the store itself (what the check above tells apart).
    assert.ok((await pluginSession()).watches > 0);
    const store = MemoryStore.open(project);
    try {
      assert.equal(store.list({}).memories.filter((m) => m.topic.startsWith('Stored by a plugin session')).length, 2);
    } finally {
      store.dispose();
    }
  });
});
