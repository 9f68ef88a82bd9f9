/**
 * Which MCP messages wait for the store, with the real MCP SDK client and
 * server talking over a stdio transport (lines of JSON on in-memory streams).
 */
import { strict as assert } from 'node:assert';
import { PassThrough } from 'node:stream';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { holdUntilReady, needsNoMemory } from '../../src/servers/mcpMessages';

describe('mcpMessages', () => {
  describe('needsNoMemory()', () => {
    it('is true for the handshake, pings, the list of tools and notifications, alone or in a batch', () => {
      assert.equal(needsNoMemory({ jsonrpc: '2.0', id: 1, method: 'initialize' }), true);
      assert.equal(needsNoMemory([{ method: 'notifications/initialized' }, { method: 'ping', id: 2 }, { method: 'tools/list', id: 3 }]), true);
    });

    it('is false for a tool call, anything without a method, and a batch holding one', () => {
      assert.equal(needsNoMemory({ jsonrpc: '2.0', id: 1, method: 'tools/call' }), false);
      assert.equal(needsNoMemory([{ method: 'ping', id: 1 }, { method: 'tools/call', id: 2 }]), false);
      for (const odd of [null, 'initialize', { method: 7 }, { id: 1, result: {} }]) assert.equal(needsNoMemory(odd), false, JSON.stringify(odd));
    });
  });

  describe('holdUntilReady()', () => {
    let ready = false;
    let becomeReady: () => void;
    let client: Client;
    let server: McpServer;
    const ran: string[] = [];

    beforeEach(async () => {
      ready = false;
      ran.length = 0;
      const untilReady = new Promise<void>((resolve) => (becomeReady = () => ((ready = true), resolve())));
      server = new McpServer({ name: 'held', version: '1' });
      for (const name of ['first', 'second']) {
        server.registerTool(name, { description: name }, () => {
          ran.push(name);
          return { content: [{ type: 'text', text: name }] };
        });
      }
      const toServer = new PassThrough();
      const fromServer = new PassThrough();
      const transport = new StdioServerTransport(toServer, fromServer);
      await server.connect(transport);
      holdUntilReady(transport, () => ready, () => untilReady);
      client = new Client({ name: 'held-test', version: '1' });
      await client.connect(new StdioServerTransport(fromServer, toServer));
    });
    afterEach(async () => {
      await client.close();
      await server.close();
    });

    it('answers the handshake and the list of tools at once; tool calls wait, and run in the order they came', async () => {
      const { tools } = await client.listTools();
      assert.deepEqual(tools.map((t) => t.name), ['first', 'second']);
      const first = client.callTool({ name: 'first' });
      const second = client.callTool({ name: 'second' });
      // A ping after a held call waits behind it: messages reach the server in their order.
      const ping = client.ping().then(() => ran.push('ping'));
      await new Promise((resolve) => setTimeout(resolve, 100));
      assert.deepEqual(ran, [], 'nothing ran before the store was ready');
      becomeReady();
      await Promise.all([first, second, ping]);
      assert.deepEqual(ran, ['first', 'second', 'ping']);
      // Once ready, nothing is held.
      await client.callTool({ name: 'second' });
      assert.deepEqual(ran.slice(3), ['second']);
    });
  });
});
