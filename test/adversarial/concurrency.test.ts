/**
 * Guards against: memories lost, duplicated or corrupted when several writers
 * store at once — real MCP SDK clients talking to `ltm serve` (a process) while
 * several `ltm store` CLI processes and a stream of hooks write the same store.
 * Every acknowledged memory must be found afterwards by ID and by content (with
 * exactly the text stored), `ltm check` must be healthy and no ID may repeat.
 */
import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { mcpClient, postHook } from '../support/serverKit';
import { ensureCliBuilt, ltmRoot, memoryFileIds, memoryKeys } from '../support/storeKit';
import { Processes, TempDirs, ltmJsonAsync, nonceWord, pool, prng, runLtm, startServe } from './kit';

interface Acked {
  id: string;
  topic: string;
  content: string;
  word: string;
  via: string;
}

describe('adversarial: concurrent stores from MCP clients and CLI processes on one store', function () {
  this.timeout(120_000);
  const procs = new Processes();
  const dirs = new TempDirs();

  before(() => ensureCliBuilt());
  after(async () => {
    await procs.killAll();
    dirs.removeAll();
  });

  it('3 MCP clients (12 stores each) + 4 CLI loops (4 stores each) + hooks at once: every acknowledged memory is found, healthy, no duplicate IDs', async () => {
    const project = dirs.make('ltm-adv-conc-');
    const { proc, info } = await startServe(procs, project);
    const rand = prng('concurrency');
    const acked: Acked[] = [];
    const refused: string[] = [];
    const clients: Client[] = [];
    try {
      for (let i = 0; i < 3; i++) clients.push(await mcpClient(info.port, info.token, `adv-conc-${i}`));
      const plan = (via: string, n: number) =>
        Array.from({ length: n }, (_, j) => {
          const word = nonceWord(rand, 12);
          return {
            via,
            word,
            topic: `${via} memory ${j} ${word}`,
            content: `Stored by ${via}, number ${j}: the marker is ${word}.\n\nSecond paragraph, "quoted" and \\ backslashed, ${word}.`,
          };
        });

      const mcpTasks = clients.map((client, i) => async () => {
        const items = plan(`mcp${i}`, 12);
        // Three requests in flight per client.
        await pool(
          3,
          items.map((m) => async () => {
            const res = await client.callTool({ name: 'store_memory', arguments: { topic: m.topic, content: m.content, tags: ['concurrency', m.via] } });
            if (res.isError) refused.push(`${m.via}: ${JSON.stringify(res.content)}`);
            else acked.push({ ...m, id: (res.structuredContent as { id: string }).id });
          }),
        );
      });
      const cliTasks = Array.from({ length: 4 }, (_, i) => async () => {
        for (const m of plan(`cli${i}`, 4)) {
          const r = await runLtm(procs, ['store', '--project', project, '--topic', m.topic, '--content', m.content, '--tags', `concurrency,${m.via}`, '--json'], { timeoutMs: 30_000 });
          if (r.status !== 0) refused.push(`${m.via}: exit ${r.status} ${r.stderr}`);
          else acked.push({ ...m, id: (JSON.parse(r.stdout) as { id: string }).id });
        }
      });
      const hookTask = async () => {
        for (let i = 0; i < 40; i++) {
          const session = `conc-session-${i % 4}`;
          const event = i % 10 === 0 ? 'session_start' : 'post_tool_use';
          const answer = await postHook(info.port, info.token, event, { session_id: session, tool_response: { stdout: 'ok' } }, { 'X-LTM-Wait': undefined });
          assert.equal(answer.status, 200, `hook ${event}: ${answer.status} ${answer.text}`);
        }
      };
      await Promise.all([...mcpTasks, ...cliTasks, hookTask].map((task) => task()));

      console.log(`      concurrency: ${acked.length} memories acknowledged (${acked.filter((a) => a.via.startsWith('mcp')).length} MCP, ${acked.filter((a) => a.via.startsWith('cli')).length} CLI), ${refused.length} refused`);
      assert.deepEqual(refused, [], 'stores were refused under moderate concurrency');
      const ids = acked.map((a) => a.id);
      assert.equal(new Set(ids).size, ids.length, `duplicate IDs were acknowledged: ${ids.filter((id, i) => ids.indexOf(id) !== i).join(', ')}`);

      // By ID and by content, through the server that saw the CLI's writes happen.
      const reader = clients[0]!;
      for (const a of acked) {
        const got = await reader.callTool({ name: 'get_memory', arguments: { id: a.id } });
        assert.notEqual(got.isError, true, `${a.via}: acknowledged ${a.id} is not found: ${JSON.stringify(got.content)}`);
        const m = got.structuredContent as { topic: string; content: string };
        assert.equal(m.topic, a.topic, `${a.id}: topic`);
        assert.equal(m.content, a.content, `${a.id}: content`);
        const found = await reader.callTool({ name: 'recall', arguments: { query: a.word, limit: 5 } });
        const hits = (found.structuredContent as { memories: { id: string }[] }).memories.map((x) => x.id);
        assert.ok(hits.includes(a.id), `${a.via}: recall "${a.word}" does not find ${a.id} (got ${hits.join(', ')})`);
      }

      // The CLI (another process) sees exactly the acknowledged memories, on disk and in the index.
      const listed = await ltmJsonAsync<{ total: number; memories: { id: string }[] }>(procs, ['list', '--project', project, '--limit', '500']);
      assert.equal(listed.total, acked.length, `ltm list total ${listed.total}, acknowledged ${acked.length}`);
      assert.deepEqual(listed.memories.map((m) => m.id).sort(), [...ids].sort());
      const root = ltmRoot(project);
      assert.deepEqual(memoryFileIds(path.join(root, 'memories')), [...ids].sort(), 'memories/ holds exactly the acknowledged memories');
      assert.deepEqual(memoryKeys(path.join(root, 'index.json')), [...ids].sort(), 'index.json lists exactly the acknowledged memories');
      const check = await runLtm(procs, ['check', '--project', project]);
      assert.equal(check.status, 0, `ltm check while serving exited ${check.status}:\n${check.stdout}${check.stderr}`);
    } finally {
      for (const c of clients) await c.close().catch(() => undefined);
    }
    proc.child.kill('SIGTERM');
    assert.equal(await proc.exited, 0, `ltm serve did not stop cleanly: ${proc.output()}`);
    const after = await runLtm(procs, ['check', '--project', project]);
    assert.equal(after.status, 0, `ltm check after the server stopped exited ${after.status}:\n${after.stdout}${after.stderr}`);
    assert.doesNotMatch(proc.stderr(), /failed|error/i, 'ltm serve logged a failure');
  });
});
