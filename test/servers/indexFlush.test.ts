/**
 * index.json in a server: a store marks it as behind instead of rewriting
 * every entry, and the server writes it in a pause between requests, by a
 * deadline under steady traffic, and when it stops. `ltm check` in another
 * process waits for that write rather than reporting the server's latest
 * memories as not indexed. Real server, real MCP SDK client, real CLI.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { storePaths } from '../../src/core/storeFiles';
import { ensureCliBuilt } from '../support/storeKit';
import { mcpClient, rawRequest, spawnLtm, startTestServer, waitFor, type Json, type TestServer } from '../support/serverKit';

/** The IDs index.json lists (none before it is first written). */
function indexedIds(project: string): string[] {
  const file = storePaths(project).index;
  if (!fs.existsSync(file)) return [];
  return Object.keys((JSON.parse(fs.readFileSync(file, 'utf8')) as { memories: Json }).memories).sort();
}

async function storeMemory(client: Client, topic: string): Promise<string> {
  const result = await client.callTool({ name: 'store_memory', arguments: { topic, content: `What we learned about ${topic}.` } });
  assert.notEqual(result.isError, true, JSON.stringify(result.content));
  return (result.structuredContent as { id: string }).id;
}

describe('index.json written in pauses by a server', function () {
  this.timeout(30_000);
  let t: TestServer | undefined;
  let client: Client | undefined;

  async function start(indexFlush: { pauseMs?: number; maxDeferMs?: number }): Promise<{ t: TestServer; client: Client }> {
    t = await startTestServer({ indexFlush });
    client = await mcpClient(t.port, t.token);
    return { t, client };
  }

  afterEach(async () => {
    await client?.close();
    await t?.stop();
    client = undefined;
    t = undefined;
  });

  it('a burst of stores leaves index.json untouched, then one write after the pause lists them all', async () => {
    const { t, client } = await start({ pauseMs: 1_000, maxDeferMs: 20_000 });
    const first = await storeMemory(client, 'the first memory');
    await t.idle();
    const paths = storePaths(t.project);
    const before = fs.statSync(paths.index);
    const ids = [first];
    for (let i = 0; i < 12; i++) ids.push(await storeMemory(client, `burst memory number ${i}`));
    const during = fs.statSync(paths.index);
    assert.equal(during.ino, before.ino, 'index.json was replaced during the burst');
    assert.equal(during.mtimeMs, before.mtimeMs);
    assert.deepEqual(indexedIds(t.project), [first]);
    assert.equal(fs.existsSync(paths.indexPending), true, 'the mark says index.json is behind');

    await waitFor(() => (indexedIds(t.project).length === ids.length ? true : null), 5_000, 'index.json to list the burst');
    assert.deepEqual(indexedIds(t.project), ids.sort());
    await waitFor(() => (fs.existsSync(paths.indexPending) ? null : true), 2_000, 'the mark to go');
    assert.equal(t.store.check().healthy, true);
  });

  it('under steady requests, index.json is written by its deadline', async () => {
    const { t, client } = await start({ pauseMs: 60_000, maxDeferMs: 400 });
    const id = await storeMemory(client, 'written by the deadline');
    const started = Date.now();
    let listed = false;
    while (!listed && Date.now() - started < 5_000) {
      // A request every 20 ms: never a pause.
      await rawRequest(t.port, { method: 'GET', path: '/health', headers: t.auth });
      await new Promise((resolve) => setTimeout(resolve, 20));
      listed = indexedIds(t.project).includes(id);
    }
    assert.ok(listed, 'index.json never listed the memory');
    assert.ok(Date.now() - started < 3_000, `written after ${Date.now() - started} ms`);
  });

  it('stopping the server writes index.json at once', async () => {
    const running = await start({ pauseMs: 60_000, maxDeferMs: 60_000 });
    const id = await storeMemory(running.client, 'written when the server stops');
    assert.equal(indexedIds(running.t.project).includes(id), false);
    await running.t.server.stop();
    assert.equal(indexedIds(running.t.project).includes(id), true);
    assert.equal(fs.existsSync(storePaths(running.t.project).indexPending), false);
  });

  it('`ltm check` in another process waits for the server to write index.json, and finds the store healthy', async () => {
    ensureCliBuilt();
    const { t, client } = await start({ pauseMs: 1_500, maxDeferMs: 20_000 });
    const id = await storeMemory(client, 'checked from another process');
    assert.equal(indexedIds(t.project).includes(id), false, 'index.json should still be behind');
    // Spawned, not spawnSync: this process serves the store and must go on running to write index.json.
    const check = spawnLtm(['check', '--project', t.project]);
    const code = await check.exited;
    assert.equal(code, 0, check.output());
    assert.match(check.stdout(), /healthy/i);
    assert.equal(indexedIds(t.project).includes(id), true);
  });

  it('ltm_check in the server writes index.json first and reports nothing', async () => {
    const { client } = await start({ pauseMs: 60_000, maxDeferMs: 60_000 });
    await storeMemory(client, 'checked by the server itself');
    const result = await client.callTool({ name: 'ltm_check', arguments: {} });
    assert.equal((result.structuredContent as { healthy: boolean }).healthy, true, JSON.stringify(result.content));
  });
});
