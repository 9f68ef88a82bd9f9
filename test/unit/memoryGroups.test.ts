/**
 * The Memories view's grouping and filter rules (src/vscode/memoryGroups.ts),
 * on memories of a real store listed as the view lists them: active ones,
 * then archived ones.
 */
import { strict as assert } from 'node:assert';
import type { MemoryStore } from '../../src/core/store';
import type { MemoryView } from '../../src/core/storeTypes';
import { EXPANDED_TAG_GROUPS_MAX, filterText, groupMemories, matchesFilter, normalizeFilter, UNTAGGED_LABEL } from '../../src/vscode/memoryGroups';
import { useProject } from '../support/storeKit';

function listed(store: MemoryStore): MemoryView[] {
  return [...store.list({ limit: 1000 }).memories, ...store.list({ phase: 3, limit: 1000 }).memories];
}

describe('Memories view: groups and filter', () => {
  const ctx = useProject('ltm-groups-');

  it('by tag: no group for importance:* tags, archived memories only in Archived (last, collapsed), a few groups expanded', async () => {
    const store = ctx.open();
    store.init();
    const ids: Record<string, string> = {};
    const add = async (key: string, tags: string[]) => (ids[key] = (await store.store({ topic: `Memory ${key}`, content: `Text of ${key}.`, tags })).memory.id);
    await add('a', ['postgres', 'importance:critical']);
    await add('b', ['postgres', 'docker']);
    await add('c', ['importance:low']);
    await add('d', []);
    await add('e', ['hooks', 'importance:important']);
    await add('f', ['old', 'postgres']);
    await store.forget(ids.f!);

    const groups = groupMemories(listed(store), 'tag');
    const summary = groups.map((g) => [g.label, g.memories.map((m) => m.topic).sort(), g.collapsed]);
    assert.deepEqual(summary, [
      ['postgres', ['Memory a', 'Memory b'], false],
      ['docker', ['Memory b'], false],
      ['hooks', ['Memory e'], false],
      [UNTAGGED_LABEL, ['Memory c', 'Memory d'], false],
      ['Archived', ['Memory f'], true],
    ]);
    assert.ok(!groups.some((g) => g.tag?.startsWith('importance:')));
    assert.equal(groups.at(-1)!.phase, 3);
    assert.equal(groups.filter((g) => g.memories.some((m) => m.id === ids.f)).length, 1, 'the archived memory is in Archived only');
  });

  it(`by tag: more than ${EXPANDED_TAG_GROUPS_MAX} groups start collapsed`, async () => {
    const store = ctx.open();
    store.init();
    for (let i = 0; i < EXPANDED_TAG_GROUPS_MAX; i++) await store.store({ topic: `Tagged ${i}`, content: `Body ${i}.`, tags: [`t${i}`] });
    assert.ok(groupMemories(listed(store), 'tag').every((g) => !g.collapsed), `${EXPANDED_TAG_GROUPS_MAX} groups: expanded`);
    await store.store({ topic: 'One more', content: 'Body.', tags: ['extra'] });
    const groups = groupMemories(listed(store), 'tag');
    assert.equal(groups.length, EXPANDED_TAG_GROUPS_MAX + 1);
    assert.ok(groups.every((g) => g.collapsed));
  });

  it('by phase: one group per phase with memories, Archived collapsed', async () => {
    const store = ctx.open();
    store.init();
    const kept = (await store.store({ topic: 'Kept', content: 'Body.', tags: ['x'] })).memory.id;
    const gone = (await store.store({ topic: 'Gone', content: 'Body.', tags: ['x'] })).memory.id;
    await store.forget(gone);
    const groups = groupMemories(listed(store), 'phase');
    assert.deepEqual(
      groups.map((g) => [g.label, g.memories.map((m) => m.id), g.collapsed]),
      [
        ['Full', [kept], false],
        ['Archived', [gone], true],
      ],
    );
  });

  it('filters by text (topic, summary, tag or ID, any case) and by tag', async () => {
    const store = ctx.open();
    store.init();
    const pool = (await store.store({ topic: 'Postgres pool exhausted', content: 'Raise the pool to 50.', tags: ['postgres'] })).memory;
    const hook = (await store.store({ topic: 'Hook curl uses 127.0.0.1', content: 'Not localhost.', tags: ['hooks'] })).memory;
    const memories = listed(store);
    const kept = (filter: Parameters<typeof matchesFilter>[1]) => memories.filter((m) => matchesFilter(m, filter)).map((m) => m.id);
    assert.deepEqual(kept(undefined).sort(), [pool.id, hook.id].sort());
    assert.deepEqual(kept({ text: 'POOL' }), [pool.id]);
    assert.deepEqual(kept({ text: 'hooks' }), [hook.id], 'a tag matches the text');
    assert.deepEqual(kept({ text: hook.id }), [hook.id]);
    assert.deepEqual(kept({ tag: 'postgres' }), [pool.id]);
    assert.deepEqual(kept({ tag: 'post' }), [], 'a tag filter is the whole tag');
    assert.deepEqual(kept({ text: 'pool', tag: 'hooks' }), []);
    assert.equal(normalizeFilter({ text: '  ', tag: '' }), undefined);
    assert.deepEqual(normalizeFilter({ text: ' pool ' }), { text: 'pool' });
    assert.equal(filterText({ text: 'pool', tag: 'postgres' }), '"pool" · tag postgres');
  });
});
