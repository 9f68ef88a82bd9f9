/**
 * Near-duplicates through MCP, with the real SDK client against the real
 * server: store_memory names the similar memories (text and
 * structuredContent), update_memory changes only the fields given and
 * archives the previous text, and refuses bad input and unknown IDs as
 * isError results that change nothing.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ltmRoot, snapshotDiff, snapshotFiles } from '../support/storeKit';
import { DUPLICATE_PAIRS, RELATED_PAIRS } from '../unit/similarityPairs';
import { assertShape, mcpClient, startTestServer, type Json, type TestServer } from '../support/serverKit';

interface ToolAnswer {
  text: string;
  structured: Json;
  isError: boolean;
}

async function call(client: Client, name: string, args: Json): Promise<ToolAnswer> {
  const result = await client.callTool({ name, arguments: args });
  const content = result.content as { type: string; text?: string }[];
  return { text: content.map((c) => c.text ?? '').join('\n'), structured: (result.structuredContent ?? {}) as Json, isError: result.isError === true };
}

describe('MCP: similar memories and update_memory (MCP SDK client)', function () {
  this.timeout(20_000);
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

  let existingId = '';

  it('store_memory names a near-duplicate in its text and structuredContent, and stores it all the same', async () => {
    const first = await call(client, 'store_memory', { ...DUPLICATE_PAIRS[1]!.existing });
    assert.equal(first.isError, false, first.text);
    assert.deepEqual(first.structured.similar, []);
    assert.doesNotMatch(first.text, /Similar/);
    existingId = first.structured.id as string;

    const second = await call(client, 'store_memory', { ...DUPLICATE_PAIRS[1]!.incoming });
    assert.equal(second.isError, false, second.text);
    const similar = second.structured.similar as Json[];
    assert.equal(similar.length, 1);
    assertShape(similar[0], { id: 'string', topic: 'string', score: 'number' }, 'similar[0]');
    assert.equal(similar[0]!.id, existingId);
    assert.equal(similar[0]!.topic, DUPLICATE_PAIRS[1]!.existing.topic);
    assert.match(second.text, new RegExp(`Similar memory already stored[\\s\\S]*${existingId}[\\s\\S]*update_memory`));
    // Stored regardless.
    const got = await call(client, 'get_memory', { id: second.structured.id as string });
    assert.equal(got.isError, false);

    const related = await call(client, 'store_memory', { ...RELATED_PAIRS[1]!.incoming });
    assert.deepEqual(related.structured.similar, []);
  });

  it('update_memory changes only the given fields and archives the previous text', async () => {
    const before = fs.readFileSync(path.join(ltmRoot(t.project), 'memories', `${existingId}.md`), 'utf8');
    const answer = await call(client, 'update_memory', { id: existingId, summary: 'Quit the Redis client in afterAll.', tags: ['jest', 'redis'] });
    assert.equal(answer.isError, false, answer.text);
    assertShape(answer.structured, { success: 'boolean', id: 'string', message: 'string', changed: 'array', archived_versions: 'array', tags: 'array' }, 'update_memory');
    assert.deepEqual(answer.structured.changed, ['tags', 'summary']);
    const [version] = answer.structured.archived_versions as string[];
    assert.match(answer.text, new RegExp(`Updated .* summary[\\s\\S]*${version}`));
    const memory = t.store.peek(existingId);
    assert.equal(memory.summary, 'Quit the Redis client in afterAll.');
    assert.deepEqual(memory.tags, ['jest', 'redis']);
    assert.equal(memory.topic, DUPLICATE_PAIRS[1]!.existing.topic);
    assert.equal(memory.content, DUPLICATE_PAIRS[1]!.existing.content);
    assert.equal(fs.readFileSync(path.join(ltmRoot(t.project), 'archives', `${version}.md`), 'utf8'), before.replace(existingId, version!));
  });

  const refusals: { what: string; args: () => Json; message: RegExp }[] = [
    { what: 'no field to change', args: () => ({ id: existingId }), message: /at least one field/ },
    { what: 'an empty topic', args: () => ({ id: existingId, topic: '  ' }), message: /topic/ },
    { what: 'a summary with a Content heading', args: () => ({ id: existingId, summary: 'a\n## Content\nb' }), message: /## Content/ },
    { what: 'tags that are not a list', args: () => ({ id: existingId, tags: 'a,b' }), message: /tags/ },
    { what: 'a bad ID', args: () => ({ id: 'mem_XYZ', topic: 'x' }), message: /mem_ followed by 8 hex characters/ },
    { what: 'an unknown ID', args: () => ({ id: 'mem_00000000', topic: 'x' }), message: /no memory with ID mem_00000000/ },
  ];
  for (const r of refusals) {
    it(`update_memory refuses ${r.what} with an isError result, changing nothing`, async () => {
      // index.json and the counts of earlier calls are written just after they answered: not this call's changes.
      await t.idle();
      const before = snapshotFiles(ltmRoot(t.project));
      const answer = await call(client, 'update_memory', r.args());
      assert.equal(answer.isError, true, `not refused: ${answer.text}`);
      assert.match(answer.text, r.message);
      assert.deepEqual(snapshotDiff(before, snapshotFiles(ltmRoot(t.project))), []);
    });
  }
});
