/**
 * The list and search requests (src/core/readRequests.ts) on a store's parts
 * built on a real directory: each bad filter, limit or query refused with
 * invalid_input naming it, good ones answered from the queries, and several
 * phrasings of one search fused.
 */
import { strict as assert } from 'node:assert';
import { LtmError } from '../../src/core/errors';
import { DEFAULT_LIST_LIMIT } from '../../src/core/model';
import { listMemories, searchAnyPhrasing, searchMemories } from '../../src/core/readRequests';
import type { StoreParts } from '../../src/core/storeParts';
import type { ListFilter } from '../../src/core/storeTypes';
import { makeParts, makeTempProject, removeDir, testId, writeMemory } from '../support/storeKit';

const [BOTH, SIGNATURE, JOBS] = [testId(0xb), testId(0x5), testId(0x7)];
const invalid = (pattern: RegExp) => (error: unknown) => error instanceof LtmError && error.code === 'invalid_input' && pattern.test(error.message);
const ids = (items: readonly { id: string }[]) => items.map((i) => i.id);

describe('readRequests: list and search, checked', () => {
  let project: string;
  let parts: StoreParts;

  beforeEach(() => {
    project = makeTempProject('ltm-read-requests-');
    parts = makeParts(project);
    writeMemory(parts.paths.root, BOTH, { topic: 'Webhook retries', content: 'Stripe resends a webhook until it gets a 2xx; the handler is idempotent.', tags: ['payments'] });
    writeMemory(parts.paths.root, SIGNATURE, { topic: 'Webhook signature', content: 'Verify the webhook signature with the raw body.' });
    writeMemory(parts.paths.root, JOBS, { topic: 'Idempotent jobs', content: 'Jobs are idempotent: a retry must not charge twice.' });
    parts.mirror.refresh();
  });
  afterEach(() => {
    parts.mirror.dispose();
    removeDir(project);
  });

  it('listMemories refuses each bad filter, naming it', () => {
    const bad: [ListFilter, RegExp][] = [
      [{ offset: -1 }, /offset/],
      [{ offset: 1.5 }, /offset/],
      [{ limit: 0 }, /limit/],
      [{ limit: 2.5 }, /limit/],
      [{ phase: 4 }, /phase/],
      [{ status: 'archived' as never }, /status/],
      [{ status: 'proposed', phase: 3 }, /awaiting review/],
      [{ sort: 'name' as never }, /sort must be priority, used, created/],
    ];
    for (const [filter, pattern] of bad) assert.throws(() => listMemories(parts, filter), invalid(pattern), JSON.stringify(filter));
  });

  it('listMemories pages with the defaults, and filters by tag', () => {
    const all = listMemories(parts, {});
    assert.equal(all.total, 3);
    assert.equal(all.memories.length, Math.min(3, DEFAULT_LIST_LIMIT));
    const page = listMemories(parts, { offset: 1, limit: 1 });
    assert.deepEqual(ids(page.memories), [all.memories[1]!.id]);
    assert.equal(page.has_more, true);
    assert.deepEqual(ids(listMemories(parts, { tag: 'payments' }).memories), [BOTH]);
  });

  it('searchMemories refuses an empty query and a bad limit; the tag is matched trimmed and in lower case', () => {
    assert.throws(() => searchMemories(parts, '   ', {}), invalid(/empty/));
    for (const limit of [0, -1, 1.5]) assert.throws(() => searchMemories(parts, 'webhook', { limit }), invalid(/limit/), String(limit));
    assert.deepEqual(new Set(ids(searchMemories(parts, 'webhook', {}))), new Set([BOTH, SIGNATURE]));
    assert.equal(searchMemories(parts, 'webhook', { limit: 1 }).length, 1);
    assert.deepEqual(ids(searchMemories(parts, 'webhook', { tag: '  PAYMENTS ' })), [BOTH]);
    assert.deepEqual(searchMemories(parts, 'webhook', { scope: 'archives' }), []);
  });

  it('searchAnyPhrasing fuses the phrasings: what two of them find comes first; one phrasing is a plain search; blank ones are left out', () => {
    const fused = ids(searchAnyPhrasing(parts, ['webhook', 'idempotent retry'], { limit: 3 }));
    assert.equal(fused[0], BOTH);
    assert.deepEqual(new Set(fused), new Set([BOTH, SIGNATURE, JOBS]));
    assert.equal(searchAnyPhrasing(parts, ['webhook', 'idempotent retry'], { limit: 1 }).length, 1);
    assert.deepEqual(ids(searchAnyPhrasing(parts, ['webhook', '  '], {})), ids(searchMemories(parts, 'webhook', {})));
    assert.throws(() => searchAnyPhrasing(parts, ['  ', ''], {}), invalid(/empty/));
    assert.throws(() => searchAnyPhrasing(parts, [], {}), invalid(/empty/));
    // Each phrasing is searched deeper than the limit: a bad limit is refused all the same.
    for (const limit of [0, -1, 1.5]) assert.throws(() => searchAnyPhrasing(parts, ['webhook', 'idempotent retry'], { limit }), invalid(/limit/), String(limit));
  });
});
