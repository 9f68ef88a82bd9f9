/**
 * The MCP tools through the real MCP SDK client over Streamable HTTP: the tool
 * list, every tool's Markdown text and structuredContent (src/core/responses.ts),
 * refusals as isError results, and the link from a tool call to its Claude
 * Code session through `_meta["claudecode/toolUseId"]`.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { MemoryStore } from '../../src/core/store';
import { ltmRoot, snapshotDiff, snapshotFiles } from '../support/storeKit';
import { TOOL_NAMES, assertShape, mcpClient, postHook, postToolUsePayload, readState, sessionStartPayload, startTestServer, type Json, type TestServer } from '../support/serverKit';

const ID_RE = /^mem_[0-9a-f]{8}$/;

interface ToolAnswer {
  text: string;
  structured: Json;
  isError: boolean;
}

async function call(client: Client, name: string, args: Json = {}, meta?: Json): Promise<ToolAnswer> {
  const result = await client.callTool({ name, arguments: args, ...(meta ? { _meta: meta } : {}) });
  const content = result.content as { type: string; text?: string }[];
  assert.ok(Array.isArray(content) && content.length > 0, `${name}: no content`);
  assert.equal(content[0]!.type, 'text');
  return { text: content.map((c) => c.text ?? '').join('\n'), structured: (result.structuredContent ?? {}) as Json, isError: result.isError === true };
}

async function ok(client: Client, name: string, args: Json = {}, meta?: Json): Promise<ToolAnswer> {
  const answer = await call(client, name, args, meta);
  assert.equal(answer.isError, false, `${name} failed: ${answer.text}`);
  return answer;
}

describe('MCP tools (MCP SDK client)', function () {
  this.timeout(20_000);

  describe('one client, every tool', () => {
    let t: TestServer;
    let client: Client;

    before(async () => {
      t = await startTestServer();
      client = await mcpClient(t.port, t.token);
    });
    after(async () => {
      await client?.close();
      await t?.stop();
    });

    it('lists the 11 tools, each with an object input schema and a description', async () => {
      const { tools } = await client.listTools();
      assert.deepEqual(tools.map((tool) => tool.name).sort(), TOOL_NAMES);
      for (const tool of tools) {
        assert.equal(tool.inputSchema.type, 'object', `${tool.name} input schema`);
        assert.ok(tool.description && tool.description.length > 10, `${tool.name} has no description`);
      }
      const store = tools.find((tool) => tool.name === 'store_memory')!;
      assert.deepEqual([...(store.inputSchema.required ?? [])].sort(), ['content', 'topic']);
      const getMemory = tools.find((tool) => tool.name === 'get_memory')!;
      assert.deepEqual(getMemory.inputSchema.required, ['id']);
    });

    it('calls every tool with valid arguments: Markdown text and structuredContent shapes', async () => {
      // store_memory with a summary
      const a = await ok(client, 'store_memory', {
        topic: 'Flaky auth test',
        content: 'The auth test failed because the token cache was shared between tests. Clearing it in beforeEach fixed it.\n\nSee test/auth.test.ts.',
        summary: 'Clear the token cache in beforeEach.',
        tags: ['testing', 'Auth'],
        difficulty: 0.7,
      });
      assertShape(a.structured, { success: 'boolean', id: 'string', message: 'string' }, 'store_memory');
      assert.equal(a.structured.success, true);
      const idA = a.structured.id as string;
      assert.match(idA, ID_RE);
      assert.ok((a.structured.message as string).includes(idA));
      assert.match(a.text, new RegExp(`^Stored memory \\*\\*Flaky auth test\\*\\* \\(ID: \`${idA}\`\\)\\nTags: testing, auth \\| Difficulty: 0\\.70$`));

      // store_memory without a summary: derived from the content's first sentence
      const b = await ok(client, 'store_memory', { topic: 'Docker BuildKit', content: 'Docker builds need BuildKit enabled. Otherwise the cache mounts fail.', tags: ['docker'] });
      const idB = b.structured.id as string;
      assert.match(idB, ID_RE);
      assert.notEqual(idA, idB);

      // recall
      const recall = await ok(client, 'recall', { query: 'token cache', limit: 5 });
      assertShape(recall.structured, { memories: 'array', total: 'number' }, 'recall');
      const found = recall.structured.memories as Json[];
      assert.equal(recall.structured.total, found.length);
      assert.equal(found[0]?.id, idA, `recall should find ${idA} first: ${recall.text}`);
      for (const m of found) assertShape(m, { id: 'string', topic: 'string', summary: 'string', priority: 'number', phase: 'number', tags: 'array' }, 'recall.memories[]');
      assert.equal(found[0]!.summary, 'Clear the token cache in beforeEach.');
      assert.match(recall.text, /^Found \d+ memor(y|ies) matching "token cache":/);
      assert.ok(recall.text.includes(`**Flaky auth test** (ID: \`${idA}\`)`));

      // list_memories
      const list = await ok(client, 'list_memories', {});
      assertShape(list.structured, { memories: 'array', total: 'number', has_more: 'boolean' }, 'list_memories');
      assert.equal(list.structured.total, 2);
      assert.equal(list.structured.has_more, false);
      for (const m of list.structured.memories as Json[]) {
        assertShape(m, { id: 'string', topic: 'string', phase: 'number', priority: 'number', tags: 'array', created_at: 'string', accessed_at: 'string' }, 'list_memories.memories[]');
      }
      assert.deepEqual((list.structured.memories as Json[]).map((m) => m.id).sort(), [idA, idB].sort());
      assert.match(list.text, /^Showing 2 of 2 memories:/);
      const page = await ok(client, 'list_memories', { limit: 1 });
      assert.equal((page.structured.memories as Json[]).length, 1);
      assert.equal(page.structured.total, 2);
      assert.equal(page.structured.has_more, true);
      assert.match(page.text, /More: use offset 1\./);

      // get_memory
      const get = await ok(client, 'get_memory', { id: idA });
      assertShape(
        get.structured,
        {
          id: 'string',
          topic: 'string',
          content: 'string',
          tags: 'array',
          phase: 'number',
          priority: 'number',
          difficulty: 'number',
          access_count: 'number',
          created_at: 'string',
          accessed_at: 'string',
          created_session: 'number',
          last_session: 'number',
        },
        'get_memory',
      );
      assert.equal(get.structured.id, idA);
      assert.equal(get.structured.content, 'The auth test failed because the token cache was shared between tests. Clearing it in beforeEach fixed it.\n\nSee test/auth.test.ts.');
      assert.deepEqual(get.structured.tags, ['testing', 'auth']);
      assert.equal(get.structured.difficulty, 0.7);
      assert.equal(get.structured.phase, 0);
      assert.equal(get.structured.access_count, 1, 'get_memory counts as an access');
      assert.equal(get.structured.summary, 'Clear the token cache in beforeEach.', 'the given summary is used');
      assert.match(get.text, /^# Flaky auth test\n/);
      assert.ok(get.text.includes(`**ID:** ${idA}`));
      assert.ok(get.text.includes('## Summary\nClear the token cache in beforeEach.\n'));
      assert.ok(get.text.includes('## Content\nThe auth test failed'));
      const getB = await ok(client, 'get_memory', { id: idB });
      assert.equal(getB.structured.summary, 'Docker builds need BuildKit enabled.', 'a summary is derived when none is given');

      // forget
      const forget = await ok(client, 'forget', { id: idB });
      assertShape(forget.structured, { success: 'boolean', message: 'string', archived: 'boolean' }, 'forget');
      assert.equal(forget.structured.success, true);
      assert.equal(forget.structured.archived, true);
      assert.ok((forget.structured.message as string).includes(idB));
      assert.ok(forget.text.includes(idB) && /forgotten/.test(forget.text));
      assert.equal(fs.existsSync(path.join(ltmRoot(t.project), 'memories', `${idB}.md`)), false);
      assert.equal(fs.existsSync(path.join(ltmRoot(t.project), 'archives', `${idB}.md`)), true);

      // ltm_status
      const status = await ok(client, 'ltm_status');
      assertShape(
        status.structured,
        { total_memories: 'number', by_phase: 'object', total_archived: 'number', session_count: 'number', last_eviction: ['string', 'null'], storage_size_bytes: 'number' },
        'ltm_status',
      );
      assertShape(status.structured.by_phase, { full: 'number', hint: 'number', abstract: 'number' }, 'ltm_status.by_phase');
      assert.equal(status.structured.total_memories, 1);
      assert.deepEqual(status.structured.by_phase, { full: 1, hint: 0, abstract: 0 });
      assert.equal(status.structured.total_archived, 1);
      assert.equal(status.structured.last_eviction, null);
      assert.ok((status.structured.storage_size_bytes as number) > 0);
      assert.match(status.text, /^# LTM Status\n/);
      assert.ok(status.text.includes('**Memories:** 1 (Full 1, Hint 0, Abstract 0)'));
      assert.ok(status.text.includes('**Archived:** 1'));
      // What session start and offers do with stale memories (state.json stale_memories): labelled by default.
      assert.equal((status.structured.config as Json).stale_memories, 'label');
      assert.match(status.text, /\*\*Config:\*\* .*, stale memories labelled\n/);

      // ltm_check
      const check = await ok(client, 'ltm_check');
      assertShape(check.structured, { healthy: 'boolean', problems: 'array', counts: 'object' }, 'ltm_check');
      assert.equal(check.structured.healthy, true, check.text);
      assert.match(check.text, /^# LTM Integrity Check\n/);
      assert.ok(check.text.includes('**Status: Healthy**'));

      // ltm_fix
      const fix = await ok(client, 'ltm_fix', { archive_orphans: true, clean_orphaned_archives: false });
      assertShape(fix.structured, { success: 'boolean', actions: 'array', healthy: 'boolean' }, 'ltm_fix');
      assert.equal(fix.structured.healthy, true);
      assert.deepEqual(fix.structured.actions, []);
      assert.match(fix.text, /^# LTM Integrity Fix\n\nNothing to repair\./);

      // search_archives
      const archives = await ok(client, 'search_archives', { query: 'docker buildkit' });
      assertShape(archives.structured, { memories: 'array', total: 'number' }, 'search_archives');
      const archived = archives.structured.memories as Json[];
      assert.deepEqual(archived.map((m) => m.id), [idB]);
      assert.equal(archived[0]!.archived, true);
      assert.ok(archives.text.includes(`**Docker BuildKit** (ID: \`${idB}\`) — archived`));
      const noneActive = await ok(client, 'search_archives', { query: 'flaky auth' });
      assert.equal(noneActive.structured.total, 0, 'search_archives does not return active memories');
      assert.equal(noneActive.text, 'No memories match "flaky auth".');

      // restore_memory
      const restore = await ok(client, 'restore_memory', { memory_id: idB, importance: 'important' });
      assertShape(restore.structured, { success: 'boolean', id: 'string', message: 'string', phase: 'number', tags: 'array' }, 'restore_memory');
      assert.equal(restore.structured.id, idB);
      assert.equal(restore.structured.phase, 0);
      assert.ok((restore.structured.tags as string[]).includes('importance:important'));
      assert.equal(restore.text, `Restored **Docker BuildKit** (ID: \`${idB}\`) with its full text, at phase 0.`);
      const after = await ok(client, 'ltm_status');
      assert.equal(after.structured.total_memories, 2);
      assert.equal(after.structured.total_archived, 0);
      const back = await ok(client, 'get_memory', { id: idB });
      assert.equal(back.structured.content, 'Docker builds need BuildKit enabled. Otherwise the cache mounts fail.');
    });

    it('store_memory keeps keywords a later recall finds it by; recall fuses alternative phrasings', async () => {
      const stored = await ok(client, 'store_memory', { topic: 'Emulator reaches the host at 10.0.2.2', content: 'Inside the Android emulator, localhost is the emulator itself.', keywords: ['virtual device cannot reach laptop'] });
      const id = stored.structured.id as string;
      const byKeyword = await ok(client, 'recall', { query: 'laptop' });
      assert.equal((byKeyword.structured.memories as { id: string }[])[0]?.id, id);
      const got = await ok(client, 'get_memory', { id });
      assert.deepEqual(got.structured.keywords, ['virtual device cannot reach laptop']);
      assert.match(got.text, /\*\*Keywords:\*\* virtual device cannot reach laptop/);
      const fused = await ok(client, 'recall', { query: 'zzzz-nothing', also: ['emulator localhost'] });
      assert.equal((fused.structured.memories as { id: string }[])[0]?.id, id, 'found by the alternative phrasing');
      const tooMany = await call(client, 'recall', { query: 'a', also: ['b', 'c', 'd', 'e', 'f'] });
      assert.equal(tooMany.isError, true);
    });

    it('store_memory anchors a memory to code; get_memory says when that code changed', async () => {
      const code = Array.from({ length: 20 }, (_, i) => `export const step${i + 1} = ${i + 1};`).join('\n') + '\n';
      fs.mkdirSync(path.join(t.project, 'src'), { recursive: true });
      fs.writeFileSync(path.join(t.project, 'src', 'steps.ts'), code);
      const stored = await ok(client, 'store_memory', { topic: 'Steps five to seven are ordered', content: 'Step six must run after five.', anchors: ['src/steps.ts#L5-7'] });
      const id = stored.structured.id as string;
      const fresh = await ok(client, 'get_memory', { id });
      assert.deepEqual([fresh.structured.anchors, fresh.structured.stale, fresh.structured.stale_reasons], [['src/steps.ts#L5-7'], false, []]);
      fs.writeFileSync(path.join(t.project, 'src', 'steps.ts'), code.replace('step6 = 6', 'step6 = 60'));
      const stale = await ok(client, 'get_memory', { id });
      assert.deepEqual([stale.structured.stale, stale.structured.stale_reasons], [true, ['src/steps.ts#L5-7: the lines changed']]);
      assert.match(stale.text, /\*\*Possibly outdated:\*\*/);
      const status = await ok(client, 'ltm_status');
      assert.equal(status.structured.stale_memories, 1);
      // update_memory re-anchors to the code as it is now: no longer stale.
      const updated = await ok(client, 'update_memory', { id, content: 'Step six must run after five (now 60).', anchors: ['src/steps.ts#L5-7'] });
      assert.deepEqual(updated.structured.changed, ['content', 'anchors']);
      assert.equal((await ok(client, 'get_memory', { id })).structured.stale, false);
      const bad = await call(client, 'update_memory', { id, content: 'Changed again.', anchors: ['src/gone.ts'] });
      assert.equal(bad.isError, true);
      assert.equal((await ok(client, 'get_memory', { id })).structured.content, 'Step six must run after five (now 60).', 'a bad anchor changes nothing');
      const refused = await call(client, 'store_memory', { topic: 'T', content: 'C', anchors: ['src/nothing.ts'] });
      assert.equal(refused.isError, true);
      assert.match(refused.text, /cannot anchor "src\/nothing\.ts"/);
    });

    it('a memory stored through MCP is visible to a separately opened MemoryStore', async () => {
      const stored = await ok(client, 'store_memory', { topic: 'Seen from outside', content: 'Written through MCP, read by another store.', tags: ['interop'] });
      const id = stored.structured.id as string;
      const other = MemoryStore.open(t.project);
      try {
        const listed = other.list({ limit: 100 });
        assert.ok(listed.memories.some((m) => m.id === id && m.topic === 'Seen from outside'), `not listed: ${listed.memories.map((m) => m.id).join(', ')}`);
        const view = other.peek(id);
        assert.equal(view.content, 'Written through MCP, read by another store.');
        assert.deepEqual(view.tags, ['interop']);
        assert.deepEqual(other.search('another store', { limit: 5 }).map((i) => i.id)[0], id);
      } finally {
        other.dispose();
      }
    });

    const refusals: { what: string; tool: string; args: Json; message: RegExp }[] = [
      { what: 'store_memory without topic', tool: 'store_memory', args: { content: 'no topic' }, message: /topic/ },
      { what: 'store_memory with an empty topic', tool: 'store_memory', args: { topic: '   ', content: 'blank topic' }, message: /topic/ },
      { what: 'store_memory with difficulty 2', tool: 'store_memory', args: { topic: 't', content: 'c', difficulty: 2 }, message: /difficulty/ },
      { what: 'store_memory with tags that are not a list', tool: 'store_memory', args: { topic: 't', content: 'c', tags: 'a,b' }, message: /tags/ },
      { what: 'get_memory with a bad ID format', tool: 'get_memory', args: { id: 'mem_XYZ' }, message: /mem_ followed by 8 hex characters/ },
      { what: 'forget with a bad ID format', tool: 'forget', args: { id: '../state' }, message: /mem_ followed by 8 hex characters/ },
      { what: 'restore_memory with a bad ID format', tool: 'restore_memory', args: { memory_id: 'mem_1234' }, message: /mem_ followed by 8 hex characters/ },
      { what: 'restore_memory with an unknown importance', tool: 'restore_memory', args: { memory_id: 'mem_00000000', importance: 'urgent' }, message: /importance/ },
      { what: 'recall with limit 0', tool: 'recall', args: { query: 'x', limit: 0 }, message: /limit/ },
      { what: 'recall without a query', tool: 'recall', args: {}, message: /query/ },
      { what: 'list_memories with limit 0', tool: 'list_memories', args: { limit: 0 }, message: /limit/ },
      { what: 'list_memories with phase 4', tool: 'list_memories', args: { phase: 4 }, message: /phase/ },
      { what: 'get_memory of an unknown ID', tool: 'get_memory', args: { id: 'mem_00000000' }, message: /mem_00000000/ },
      { what: 'forget of an unknown ID', tool: 'forget', args: { id: 'mem_00000000' }, message: /mem_00000000/ },
      { what: 'restore_memory of an unknown ID', tool: 'restore_memory', args: { memory_id: 'mem_00000000' }, message: /mem_00000000/ },
    ];
    for (const r of refusals) {
      it(`refuses ${r.what} with an isError result naming the problem, changing nothing`, async () => {
        // index.json and the counts of earlier calls are written just after they answered: not this call's changes.
        await t.idle();
        const before = snapshotFiles(ltmRoot(t.project));
        const answer = await call(client, r.tool, r.args);
        assert.equal(answer.isError, true, `not refused: ${answer.text}`);
        assert.match(answer.text, r.message);
        assert.ok(answer.text.length < 1000, `message too long: ${answer.text}`);
        assert.deepEqual(snapshotDiff(before, snapshotFiles(ltmRoot(t.project))), []);
      });
    }

    it('refuses an unknown tool without changing anything', async () => {
      // index.json and the counts of earlier calls are written just after they answered: not this call's changes.
      await t.idle();
      const before = snapshotFiles(ltmRoot(t.project));
      const answer = await call(client, 'drop_everything', {});
      assert.equal(answer.isError, true);
      assert.match(answer.text, /drop_everything/);
      assert.deepEqual(snapshotDiff(before, snapshotFiles(ltmRoot(t.project))), []);
    });
  });

  describe('session difficulty through claudecode/toolUseId', () => {
    let t: TestServer;
    let client: Client;

    before(async () => {
      t = await startTestServer();
      client = await mcpClient(t.port, t.token);
    });
    after(async () => {
      await client?.close();
      await t?.stop();
    });

    /** The README's difficulty: failure_rate·0.5 + min(1, calls/50)·0.3 (+0.2 if compacted). */
    const difficulty = (successes: number, failures: number) => Math.round(((failures / (successes + failures)) * 0.5 + Math.min(1, (successes + failures) / 50) * 0.3) * 1e6) / 1e6;

    it("store_memory gets the difficulty of the session that made the call, and concurrent sessions' counters stay apart", async () => {
      const hook = (event: string, payload: Json) => postHook(t.port, t.token, event, payload).then((a) => assert.equal(a.status, 200, a.text));
      await hook('session_start', sessionStartPayload('A'));
      await hook('session_start', sessionStartPayload('B'));
      await hook('pre_tool_use', { session_id: 'A', hook_event_name: 'PreToolUse', tool_name: 'mcp__ltm__store_memory', tool_input: {}, tool_use_id: 'toolu_X' });
      await hook('pre_tool_use', { session_id: 'B', hook_event_name: 'PreToolUse', tool_name: 'mcp__ltm__store_memory', tool_input: {}, tool_use_id: 'toolu_Y' });
      // A: three failures and one success; B: three successes, all at once and interleaved.
      await Promise.all([
        hook('post_tool_use', postToolUsePayload('A', { error: 'Command failed with exit code 1' })),
        hook('post_tool_use', postToolUsePayload('B', { stdout: 'ok', stderr: '' })),
        hook('post_tool_use', postToolUsePayload('A', 'Error: ENOENT: no such file')),
        hook('post_tool_use', postToolUsePayload('B', { stdout: 'ok', stderr: '' })),
        hook('post_tool_use', postToolUsePayload('A', [{ type: 'text', text: 'Error: tool failed' }])),
        hook('post_tool_use', postToolUsePayload('A', { stdout: 'fine', stderr: '' })),
      ]);
      // B is the most recently active session: a call not linked to A would get B's difficulty.
      await hook('post_tool_use', postToolUsePayload('B', { stdout: 'ok', stderr: '' }));

      const sessions = readState(t.project).sessions;
      assert.equal(sessions.A?.tool_failures, 3);
      assert.equal(sessions.A?.tool_successes, 1);
      assert.equal(sessions.B?.tool_failures, 0);
      assert.equal(sessions.B?.tool_successes, 3);

      const fromA = await ok(client, 'store_memory', { topic: 'Hard one', content: 'Stored from session A.' }, { 'claudecode/toolUseId': 'toolu_X' });
      const fromB = await ok(client, 'store_memory', { topic: 'Easy one', content: 'Stored from session B.' }, { 'claudecode/toolUseId': 'toolu_Y' });
      const a = (await ok(client, 'get_memory', { id: fromA.structured.id as string })).structured;
      const b = (await ok(client, 'get_memory', { id: fromB.structured.id as string })).structured;
      assert.equal(a.difficulty, difficulty(1, 3), "session A's difficulty");
      assert.equal(b.difficulty, difficulty(3, 0), "session B's difficulty");
      assert.equal(a.created_session, sessions.A?.number);
      assert.equal(b.created_session, sessions.B?.number);
      assert.notEqual(a.created_session, b.created_session);
      // An explicit difficulty wins over the session's.
      const explicit = await ok(client, 'store_memory', { topic: 'Explicit', content: 'Given difficulty.', difficulty: 0.05 }, { 'claudecode/toolUseId': 'toolu_X' });
      assert.equal((await ok(client, 'get_memory', { id: explicit.structured.id as string })).structured.difficulty, 0.05);
      // Storing memories did not touch the counters.
      const after = readState(t.project).sessions;
      assert.deepEqual([after.A?.tool_failures, after.A?.tool_successes, after.B?.tool_failures, after.B?.tool_successes], [3, 1, 0, 3]);
    });
  });
});
