/**
 * Which memories earn their place, through the real server: session starts
 * count injections, prompts count offers, the MCP SDK client's recall counts
 * recalls and get_memory reads; and the answers carry the counters.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { DEMOTION_MIN_INJECTED_SESSIONS } from '../../src/core/usage';
import { hookInfo, mcpClient, postHook, readStats, sessionStartPayload, startTestServer, type Json, type TestServer } from '../support/serverKit';

type Stats = Record<string, number | string | undefined>;

describe('usage counters through the server', function () {
  this.timeout(30_000);
  let t: TestServer;
  let client: Client;
  let pool = '';
  let ruff = '';

  beforeEach(async () => {
    t = await startTestServer({
      prepare: async (store) => {
        pool = (
          await store.store({
            topic: 'Postgres pool exhaustion under batch jobs',
            summary: 'The connection pool of 10 ran dry when batch jobs held connections.',
            content: 'Batch jobs held pool connections for minutes. Raised the pool to 50 with a 60 s acquire timeout.',
            tags: ['postgres'],
          })
        ).memory.id;
        ruff = (await store.store({ topic: 'Ruff line length', content: 'Team convention: ruff for linting and formatting, line length 100.', tags: ['python'] })).memory.id;
      },
    });
    client = await mcpClient(t.port, t.token);
  });
  afterEach(async () => {
    await client.close();
    await t.stop();
  });

  const stats = (id: string): Stats => (readStats(t.project) as unknown as Record<string, Stats>)[id] ?? {};
  async function call(name: string, args: Json): Promise<Json> {
    const result = (await client.callTool({ name, arguments: args })) as { structuredContent: Json; isError?: boolean };
    assert.ok(!result.isError, JSON.stringify(result));
    return result.structuredContent;
  }

  it('a session start counts an injection once per session: not again after a compaction or a resume', async () => {
    for (const [session, source] of [
      ['s1', 'startup'],
      ['s1', 'compact'],
      ['s1', 'resume'],
      ['s2', 'startup'],
    ] as const) {
      const answer = await postHook(t.port, t.token, 'session_start', sessionStartPayload(session, source));
      assert.deepEqual((hookInfo(answer).injected as string[]).sort(), [pool, ruff].sort());
    }
    await t.idle();
    for (const id of [pool, ruff]) {
      const s = stats(id);
      assert.equal(s.injected_sessions, 2, `${id}: ${JSON.stringify(s)}`);
      assert.equal(s.last_injected_session, 2);
      assert.equal(s.access_count, 4, 'every injection is still an access, as before');
      assert.equal(s.read_count, undefined);
      assert.equal(s.last_used_session, undefined, 'an injection is not a use');
    }
  });

  it('a prompt’s offer counts as offered, not injected', async () => {
    const answer = await postHook(t.port, t.token, 'user_prompt_submit', {
      session_id: 's1',
      hook_event_name: 'UserPromptSubmit',
      prompt: 'The batch jobs exhausted the postgres connection pool again, why?',
    });
    assert.deepEqual(hookInfo(answer).offered, [pool]);
    await t.idle();
    assert.equal(stats(pool).offer_count, 1);
    assert.equal(stats(pool).injected_sessions, undefined);
    assert.equal(stats(pool).access_count, 1);
  });

  it('recall counts what it returned as recalled, not as an access; get_memory counts a read and answers with the counters', async () => {
    await postHook(t.port, t.token, 'session_start', sessionStartPayload('s1'));
    await t.idle();
    const before = stats(pool);
    const recalled = await call('recall', { query: 'postgres pool' });
    assert.deepEqual((recalled.memories as Json[]).map((m) => m.id), [pool]);
    await t.idle();
    const after = stats(pool);
    assert.equal(after.recall_count, 1);
    assert.equal(after.last_used_session, 1);
    assert.equal(after.access_count, before.access_count);
    assert.equal(after.priority, before.priority);
    assert.equal(stats(ruff).recall_count, undefined, 'only what recall returned');

    const got = await call('get_memory', { id: pool });
    const usage = got.usage as Json;
    assert.deepEqual({ ...usage, last_used_at: typeof usage.last_used_at }, {
      injected_sessions: 1,
      offer_count: 0,
      recall_count: 1,
      read_count: 1,
      last_used_session: 1,
      last_used_at: 'string',
    });
    assert.ok(Date.parse(usage.last_used_at as string) >= Date.parse(after.last_used_at as string));
    assert.equal(got.demotion_candidate, false);
    assert.equal(got.access_count, (before.access_count as number) + 1);
    const text = ((await client.callTool({ name: 'get_memory', arguments: { id: ruff } })) as { content: { text: string }[] }).content[0]!.text;
    assert.match(text, /\*\*Usage:\*\* injected in 1 session, read once, never recalled, last used in session 1 \(just now\)/);
  });

  it('a memory injected in many sessions and never asked for is a demotion candidate in list_memories and ltm_status, and list_memories sorts by last use', async () => {
    for (let i = 1; i <= DEMOTION_MIN_INJECTED_SESSIONS; i++) await postHook(t.port, t.token, 'session_start', sessionStartPayload(`session-${i}`));
    await call('recall', { query: 'postgres pool' });
    await t.idle();
    const status = await call('ltm_status', {});
    assert.equal(status.demotion_candidates, 1);
    const listed = await call('list_memories', { sort: 'used' });
    const memories = listed.memories as Json[];
    assert.deepEqual(memories.map((m) => [m.id, m.demotion_candidate]), [
      [pool, false],
      [ruff, true],
    ]);
    assert.equal((memories[1]!.usage as Json).injected_sessions, DEMOTION_MIN_INJECTED_SESSIONS);
    const text = ((await client.callTool({ name: 'list_memories', arguments: { sort: 'used' } })) as { content: { text: string }[] }).content[0]!.text;
    assert.match(text, new RegExp(`\\(ID: \`${ruff}\`\\) ⚠ demotion candidate\\n`));
    const bad = (await client.callTool({ name: 'list_memories', arguments: { sort: 'usage' } })) as { isError?: boolean };
    assert.equal(bad.isError, true);
  });
});

describe('the stats journal through the server', function () {
  this.timeout(30_000);

  it('is compacted in a pause between requests, not by the write that finds it long', async () => {
    const quietMs = 50;
    let id = '';
    // A journal one line short of its compaction (more than max(256, entries/4) lines), left by an earlier process.
    const t = await startTestServer({
      quietMs,
      prepare: async (store) => {
        id = (await store.store({ topic: 'Postgres pool exhaustion under batch jobs', content: 'Raised the pool to 50 with a 60 s acquire timeout.', tags: ['postgres'] })).memory.id;
        while (journalLines(store.paths.statsJournal) < 257) await store.recordAccesses([id]);
      },
    });
    const client = await mcpClient(t.port, t.token);
    try {
      const journal = t.store.paths.statsJournal;
      const before = journalLines(journal);
      const result = (await client.callTool({ name: 'recall', arguments: { query: 'postgres pool' } })) as { isError?: boolean };
      assert.ok(!result.isError);
      // The recall's use is written quietMs after its answer; a pause for maintenance is ten times that.
      const deadline = Date.now() + 5_000;
      while (fs.existsSync(journal) && journalLines(journal) === before && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
      assert.ok(fs.existsSync(journal), 'not compacted by the write of the recall’s use');
      assert.equal(journalLines(journal), before + 1);
      while (fs.existsSync(journal) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      assert.ok(!fs.existsSync(journal), 'compacted in the pause that followed');
      const stats = readStats(t.project) as unknown as Record<string, { recall_count?: number }>;
      assert.equal(stats[id]?.recall_count, 1, 'stats.json has the recall');
    } finally {
      await client.close();
      await t.stop();
    }
  });
});

/** How many lines the stats journal holds (its header included); 0 when there is none. */
function journalLines(file: string): number {
  return fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter((line) => line !== '').length : 0;
}
