import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { LtmError } from '../../src/core/errors';
import { JsonMapChunks } from '../../src/core/jsonMapChunks';
import { MemoryStore, type MemoryView, type StoreInput } from '../../src/core/store';
import { afterRenameOnto } from '../support/renameFaults';
import {
  memoryFileIds,
  memoryKeys,
  readJson,
  sleep,
  snapshotDiff,
  snapshotFiles,
  statsOnDisk,
  splitFile,
  writeConfig,
  type ProjectContext,
  useProject,
} from '../support/storeKit';

const ID_RE = /^mem_[0-9a-f]{8}$/;

type Ctx = ProjectContext;

function memFile(ctx: Ctx, id: string): string {
  return path.join(ctx.root, 'memories', `${id}.md`);
}
function archiveFile(ctx: Ctx, id: string): string {
  return path.join(ctx.root, 'archives', `${id}.md`);
}
function statsOf(ctx: Ctx): Record<string, { access_count: number; last_session: number; accessed_at: string; priority: number }> {
  return statsOnDisk(ctx.root);
}
function archiveIndexOf(ctx: Ctx): { memories: Record<string, { reason: string; topic: string }>; purged?: Record<string, unknown> } {
  const file = path.join(ctx.root, 'archive_index.json');
  return fs.existsSync(file) ? readJson(file) : { memories: {} };
}

/** Every text file under .claude/ltm that contains `needle`. */
function filesContaining(ctx: Ctx, needle: string, options: { ignoreCase?: boolean } = {}): string[] {
  const hits: string[] = [];
  const fold = (text: string) => (options.ignoreCase ? text.toLowerCase() : text);
  for (const [name, bytes] of snapshotFiles(ctx.root)) if (fold(bytes.toString('utf8')).includes(fold(needle))) hits.push(name);
  return hits;
}

/** Parses the body our store writes: `\n## Summary\nS\n\n## Content\nC\n`. */
function sections(raw: string): { summary: string; content: string } {
  const { body } = splitFile(raw);
  const m = /^\n## Summary\n([\s\S]*?)\n\n## Content\n([\s\S]*)\n$/.exec(body);
  if (!m) throw new Error(`unexpected body:\n${body}`);
  return { summary: m[1]!, content: m[2]! };
}

function phaseOfFile(raw: string): number {
  const m = /^phase: (\d+)$/m.exec(splitFile(raw).frontmatter);
  if (!m) throw new Error(`no phase in\n${raw}`);
  return Number(m[1]);
}

/** The frontmatter without what eviction may change: the phase and its history. */
function withoutPhase(frontmatter: string): string {
  const history = /^phase_history:\n(?: {2}.*\n?)*/m;
  return frontmatter
    .replace(history, '')
    .split('\n')
    .filter((l) => !l.startsWith('phase: '))
    .join('\n')
    .replace(/\n+$/, '');
}

describe('MemoryStore: basics', () => {
  const ctx = useProject('ltm-store-');

  it('stores a memory as mem_ + 8 hex with its file, index entry and stats entry', async () => {
    const store = ctx.open();
    const { memory } = await store.store({
      topic: 'Fix postgres pool exhaustion',
      content: 'Pool of 10 was too small.\n\nRaised it to 50.',
      tags: ['Postgres', ' db ', 'postgres'],
      difficulty: 0.7,
    });
    assert.match(memory.id, ID_RE);
    assert.equal(memory.phase, 0);
    assert.equal(memory.topic, 'Fix postgres pool exhaustion');
    assert.equal(memory.content, 'Pool of 10 was too small.\n\nRaised it to 50.');
    assert.equal(memory.summary, 'Pool of 10 was too small.');
    assert.deepEqual(memory.tags, ['postgres', 'db']);
    assert.equal(memory.difficulty, 0.7);
    const raw = fs.readFileSync(memFile(ctx, memory.id), 'utf8');
    assert.match(raw, new RegExp(`^---\\nid: "?${memory.id}"?\\n`));
    assert.deepEqual(sections(raw), { summary: 'Pool of 10 was too small.', content: 'Pool of 10 was too small.\n\nRaised it to 50.' });
    assert.deepEqual(memoryKeys(path.join(ctx.root, 'index.json')), [memory.id]);
    const idx = readJson<{ memories: Record<string, { topic: string; tags: string[]; phase: number; difficulty: number }> }>(
      path.join(ctx.root, 'index.json'),
    );
    assert.equal(idx.memories[memory.id]!.topic, memory.topic);
    assert.deepEqual(idx.memories[memory.id]!.tags, ['postgres', 'db']);
    assert.equal(statsOf(ctx)[memory.id]!.access_count, 0);
  });

  it('never reuses an ID: not of an active, archived, forgotten, evicted or purged memory', async () => {
    writeConfig(ctx.project, { max_memories: 3, eviction_batch_size: 1 });
    let store = ctx.open();
    const old: string[] = [];
    for (let i = 0; i < 8; i++) old.push((await store.store({ topic: `old ${i}`, content: `old content ${i}` })).memory.id);
    assert.equal(new Set(old).size, old.length);
    // forgotten (archived), purged while active, purged after being archived
    await store.forget(old[0]!);
    await store.forget(old[1]!, { purge: true });
    await store.forget(old[2]!);
    await store.forget(old[2]!, { purge: true });
    // evicted: a few cycles move the lowest memory through the phases to the archive
    for (let i = 0; i < 6; i++) await store.evict();
    const purged = Object.keys(archiveIndexOf(ctx).purged ?? {}).sort();
    assert.deepEqual(purged, [old[1]!, old[2]!].sort(), 'purged IDs are remembered in archive_index.json');
    assert.ok(memoryFileIds(path.join(ctx.root, 'archives')).length >= 2, 'some memories are archived');

    const seen = new Set(old);
    for (let i = 0; i < 150; i++) {
      const id = (await store.store({ topic: `new ${i}`, content: `new content ${i}` })).memory.id;
      assert.match(id, ID_RE);
      assert.ok(!seen.has(id), `ID ${id} was reused`);
      seen.add(id);
    }
    // A new instance (a new process) knows the purged IDs from disk.
    store.dispose();
    store = ctx.open();
    for (let i = 0; i < 50; i++) {
      const id = (await store.store({ topic: `later ${i}`, content: `later content ${i}` })).memory.id;
      assert.ok(!seen.has(id), `ID ${id} was reused`);
      seen.add(id);
    }
    // A purged ID is gone for good.
    await assert.rejects(store.get(old[1]!), (e: LtmError) => e.code === 'not_found');
    await assert.rejects(store.restore(old[1]!), (e: LtmError) => e.code === 'not_found');
  });

  it('get counts an access in stats.json; get with countAccess:false and peek do not', async () => {
    const store = ctx.open();
    const { memory } = await store.store({ topic: 'Counted', content: 'body' });
    assert.equal(statsOf(ctx)[memory.id]!.access_count, 0);
    const first = await store.get(memory.id);
    assert.equal(first.access_count, 1);
    assert.equal(statsOf(ctx)[memory.id]!.access_count, 1);
    await store.get(memory.id);
    assert.equal(statsOf(ctx)[memory.id]!.access_count, 2);
    const quiet = await store.get(memory.id, { countAccess: false });
    assert.equal(quiet.access_count, 2);
    store.peek(memory.id);
    assert.equal(statsOf(ctx)[memory.id]!.access_count, 2);
    // A fresh instance reads the count from disk.
    assert.equal(ctx.open().peek(memory.id).access_count, 2);
  });

  it('list filters by phase, tag and keyword, and pages with total and has_more', async () => {
    writeConfig(ctx.project, { max_memories: 4, eviction_batch_size: 1 });
    const store = ctx.open();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push(
        (
          await store.store({
            topic: i % 2 === 0 ? `Docker build step ${i}` : `Python packaging ${i}`,
            content: `content ${i}.\n\nmore ${i}.`,
            tags: i % 2 === 0 ? ['docker'] : ['python'],
            difficulty: i === 0 ? 0 : 0.9,
          })
        ).memory.id,
      );
    }
    await store.evict(); // the lowest (ids[0]) goes to phase 1
    assert.equal(store.peek(ids[0]!).phase, 1);

    const all = store.list();
    assert.equal(all.total, 5);
    assert.equal(all.has_more, false);
    assert.deepEqual(all.memories.map((m) => m.id).sort(), [...ids].sort());

    assert.deepEqual(store.list({ phase: 1 }).memories.map((m) => m.id), [ids[0]]);
    assert.equal(store.list({ phase: 0 }).total, 4);
    assert.deepEqual(store.list({ tag: 'DOCKER' }).memories.map((m) => m.id).sort(), [ids[0], ids[2], ids[4]].sort());
    assert.deepEqual(store.list({ keyword: 'packaging' }).memories.map((m) => m.id).sort(), [ids[1], ids[3]].sort());
    assert.equal(store.list({ keyword: 'nothing like this' }).total, 0);
    assert.equal(store.list({ tag: 'python', keyword: 'docker' }).total, 0);

    const page1 = store.list({ limit: 2 });
    assert.equal(page1.memories.length, 2);
    assert.equal(page1.total, 5);
    assert.equal(page1.has_more, true);
    const page2 = store.list({ limit: 2, offset: 2 });
    assert.equal(page2.has_more, true);
    const page3 = store.list({ limit: 2, offset: 4 });
    assert.equal(page3.memories.length, 1);
    assert.equal(page3.has_more, false);
    assert.deepEqual(
      [...page1.memories, ...page2.memories, ...page3.memories].map((m) => m.id),
      all.memories.map((m) => m.id),
      'pages follow the same order',
    );
    assert.equal(store.list({ offset: 10 }).memories.length, 0);
    assert.equal(store.list({ offset: 10 }).has_more, false);
  });

  it('list is sorted by priority, highest first', async () => {
    const store = ctx.open();
    const ids: string[] = [];
    for (const d of [0.3, 0.9, 0.5, 0.1, 0.7]) ids.push((await store.store({ topic: `difficulty ${d}`, content: 'x', difficulty: d })).memory.id);
    // accesses raise the priority of the 0.3 memory above the others
    for (let i = 0; i < 10; i++) await store.get(ids[0]!);
    const list = store.list().memories;
    assert.equal(list[0]!.id, ids[0], 'the most accessed memory comes first');
    for (let i = 1; i < list.length; i++) assert.ok(list[i - 1]!.priority >= list[i]!.priority, 'priorities do not increase');
    assert.deepEqual(
      list.slice(1).map((m) => m.difficulty),
      [0.9, 0.7, 0.5, 0.1],
    );
    for (const m of list) assert.ok(Math.abs(m.priority - store.priorityOf(m.id).priority) < 1e-6);
  });

  it('search ranks a topic match above a content-only match, tolerates typos and prefixes, honours tags and scope', async () => {
    const store = ctx.open();
    const topic = (
      await store.store({ topic: 'Postgres connection pool', content: 'Raise the limit and add a timeout.', tags: ['db'] })
    ).memory.id;
    const contentOnly = (
      await store.store({ topic: 'Batch job tuning', content: 'The nightly batch hammered postgres with open cursors.', tags: ['jobs'] })
    ).memory.id;
    const unrelated = (await store.store({ topic: 'Prefer ruff over flake8', content: 'Line length 100.', tags: ['python'] })).memory.id;

    const hits = store.search('postgres');
    assert.deepEqual(hits.map((h) => h.id), [topic, contentOnly]);
    assert.ok(hits[0]!.score > hits[1]!.score);
    assert.equal(hits[0]!.archived, false);

    assert.equal(store.search('postgress')[0]?.id, topic, 'a typo still finds the memory');
    assert.equal(store.search('postg')[0]?.id, topic, 'a prefix finds the memory');
    assert.ok(!store.search('postgres').some((h) => h.id === unrelated));

    assert.deepEqual(store.search('postgres', { tag: 'jobs' }).map((h) => h.id), [contentOnly]);
    assert.deepEqual(store.search('postgres', { tag: 'python' }), []);
    assert.deepEqual(store.search('postgres', { limit: 1 }).map((h) => h.id), [topic]);

    await store.forget(topic);
    assert.deepEqual(store.search('postgres').map((h) => h.id), [contentOnly], 'active scope leaves archives out');
    const archived = store.search('postgres', { scope: 'archives' });
    assert.deepEqual(archived.map((h) => h.id), [topic]);
    assert.equal(archived[0]!.archived, true);
    assert.equal(archived[0]!.phase, 3);
    assert.equal(archived[0]!.topic, 'Postgres connection pool');
    assert.deepEqual(store.search('postgres', { scope: 'all' }).map((h) => h.id).sort(), [topic, contentOnly].sort());
    assert.deepEqual(store.search('postgres', { scope: 'archives', tag: 'jobs' }), []);
    assert.deepEqual(store.search('postgres', { scope: 'all', tag: 'db' }).map((h) => h.id), [topic]);
  });

  it('updateSummary rewrites only the Summary section and keeps every other byte', async () => {
    const store = ctx.open();
    const { memory } = await store.store({ topic: 'Summary edit', content: 'Line one.\n\nLine two.', summary: 'Old summary.' });
    const before = fs.readFileSync(memFile(ctx, memory.id), 'utf8');
    const view = await store.updateSummary(memory.id, 'New summary,\nover two lines.');
    assert.equal(view.summary, 'New summary,\nover two lines.');
    const after = fs.readFileSync(memFile(ctx, memory.id), 'utf8');
    assert.equal(after, before.replace('Old summary.', 'New summary,\nover two lines.'));
    assert.equal((await store.get(memory.id, { countAccess: false })).content, 'Line one.\n\nLine two.');
  });
});

describe('MemoryStore: keywords and one need asked several ways', () => {
  const ctx = useProject('ltm-store-');

  it('keeps keywords beside the tags (only when given), and a search finds a memory by a keyword alone', async () => {
    const store = ctx.open();
    const { memory } = await store.store({ topic: 'Pool exhausted under load', content: 'The pool of 10 ran dry; raised to 50.', tags: ['db'], keywords: [' too many clients ', 'connection slots', 'TOO MANY CLIENTS'] });
    assert.deepEqual(memory.keywords, ['too many clients', 'connection slots'], 'trimmed, duplicates by case dropped');
    assert.match(fs.readFileSync(memFile(ctx, memory.id), 'utf8'), /\ntags:\n {2}- "db"\nkeywords:\n {2}- "too many clients"\n {2}- "connection slots"\nphase: 0\n/);
    const plain = (await store.store({ topic: 'A plain memory', content: 'Plain.' })).memory;
    assert.doesNotMatch(fs.readFileSync(memFile(ctx, plain.id), 'utf8'), /keywords/);
    assert.deepEqual(store.search('connection slots', { limit: 3 }).map((i) => i.id), [memory.id]);
    store.flushCaches();
    store.dispose();
    const reopened = ctx.open();
    assert.deepEqual(reopened.peek(memory.id).keywords, ['too many clients', 'connection slots'], 'through the records cache');
    assert.deepEqual(reopened.search('slots', { limit: 3 }).map((i) => i.id), [memory.id], 'through the saved search index');
  });

  it('searchAny fuses the rankings of several phrasings: what two phrasings find comes first', async () => {
    const store = ctx.open();
    const both = (await store.store({ topic: 'Webhook retries', content: 'Stripe resends a webhook until it gets a 2xx; the handler is idempotent.' })).memory.id;
    const first = (await store.store({ topic: 'Webhook signature', content: 'Verify the webhook signature with the raw body.' })).memory.id;
    const second = (await store.store({ topic: 'Idempotent jobs', content: 'Jobs are idempotent: a retry must not charge twice.' })).memory.id;
    const fused = store.searchAny(['webhook', 'idempotent retry'], { limit: 3 }).map((i) => i.id);
    assert.equal(fused[0], both);
    assert.deepEqual(new Set(fused), new Set([both, first, second]));
    assert.deepEqual(store.searchAny(['webhook']).map((i) => i.id), store.search('webhook').map((i) => i.id), 'one phrasing is a plain search');
    assert.throws(() => store.searchAny(['  ', '']), /empty/);
  });
});

describe('MemoryStore: bad input changes nothing on disk', () => {
  const ctx = useProject('ltm-store-');

  async function setup(): Promise<{ store: MemoryStore; id: string; archivedId: string }> {
    const store = ctx.open();
    const id = (await store.store({ topic: 'Existing', content: 'Existing content.', tags: ['keep'] })).memory.id;
    const archivedId = (await store.store({ topic: 'Archived', content: 'Archived content.' })).memory.id;
    await store.forget(archivedId);
    await store.get(id);
    return { store, id, archivedId };
  }

  async function expectUnchanged(code: string, action: (s: { store: MemoryStore; id: string; archivedId: string }) => Promise<unknown>) {
    const s = await setup();
    const listed = s.store.list().memories.map((m) => m.id);
    const before = snapshotFiles(ctx.root);
    await assert.rejects(
      action(s),
      (e: unknown) => {
        assert.ok(e instanceof LtmError, `expected an LtmError, got ${String(e)}`);
        assert.equal(e.code, code, e.message);
        return true;
      },
    );
    assert.deepEqual(snapshotDiff(before, snapshotFiles(ctx.root)), []);
    // and the store still works and holds the same memories
    assert.deepEqual(s.store.list().memories.map((m) => m.id), listed);
    assert.ok(listed.includes(s.id));
  }

  const ok: StoreInput = { topic: 'A topic', content: 'Some content.' };
  const badStores: [string, StoreInput][] = [
    ['an empty topic', { ...ok, topic: '' }],
    ['a blank topic', { ...ok, topic: ' \n\t ' }],
    ['an empty content', { ...ok, content: '' }],
    ['a blank content', { ...ok, content: '\n\n  ' }],
    ['a missing topic', { content: 'x' } as unknown as StoreInput],
    ['a non-string content', { ...ok, content: 42 as unknown as string }],
    ['difficulty 1.5', { ...ok, difficulty: 1.5 }],
    ['difficulty -0.1', { ...ok, difficulty: -0.1 }],
    ['difficulty NaN', { ...ok, difficulty: NaN }],
    ['difficulty Infinity', { ...ok, difficulty: Infinity }],
    ["difficulty '0.5' (a string)", { ...ok, difficulty: '0.5' as unknown as number }],
    ['tags that are not strings', { ...ok, tags: ['ok', 3] as unknown as string[] }],
    ['tags that are not a list', { ...ok, tags: 'a,b' as unknown as string[] }],
    ['a tag with a newline', { ...ok, tags: ['two\nlines'] }],
    ['a lone high surrogate in the topic', { ...ok, topic: 'bad \uD800 topic' }],
    ['a lone low surrogate in the content', { ...ok, content: 'bad \uDC00 content' }],
    ['a lone surrogate in the summary', { ...ok, summary: 'bad \uD83D summary' }],
    ['a summary with a "## Content" line', { ...ok, summary: 'first line\n## Content\nsneaky' }],
    ['keywords that are not a list', { ...ok, keywords: 'pool, timeout' as unknown as string[] }],
    ['a keyword with a newline', { ...ok, keywords: ['two\nlines'] }],
    ['a keyword over 100 characters', { ...ok, keywords: ['x'.repeat(101)] }],
    ['21 keywords', { ...ok, keywords: Array.from({ length: 21 }, (_, i) => `word${i}`) }],
  ];
  for (const [name, input] of badStores) {
    it(`store rejects ${name}`, () => expectUnchanged('invalid_input', ({ store }) => store.store(input)));
  }

  it('bad input on a project without a store creates nothing', async () => {
    const store = ctx.open();
    await assert.rejects(store.store({ topic: '', content: 'x' }), (e: LtmError) => e.code === 'invalid_input');
    await assert.rejects(store.store({ topic: 't', content: 'x', difficulty: 2 }), (e: LtmError) => e.code === 'invalid_input');
    await assert.rejects(store.get('mem_0000beef'), (e: LtmError) => e.code === 'not_found');
    await assert.rejects(store.forget('mem_0000beef'), LtmError);
    await assert.rejects(store.restore('mem_0000beef'), LtmError);
    assert.deepEqual(store.list().total, 0);
    assert.deepEqual(fs.readdirSync(ctx.project), [], 'something was created');
  });

  it('updateSummary rejects a summary with a "## Content" line', () =>
    expectUnchanged('invalid_input', ({ store, id }) => store.updateSummary(id, 'ok\n## Content\nnot ok')));
  it('updateSummary rejects an empty summary', () => expectUnchanged('invalid_input', ({ store, id }) => store.updateSummary(id, '  ')));
  it('updateSummary rejects a lone surrogate (it cannot be written as UTF-8)', () =>
    expectUnchanged('invalid_input', ({ store, id }) => store.updateSummary(id, 'broken \uD800 summary')));

  const unknown = 'mem_0000beef';
  it('get, forget, restore and updateSummary reject an unknown ID', async () => {
    await expectUnchanged('not_found', ({ store }) => store.get(unknown));
    await expectUnchanged('not_found', ({ store }) => store.get(unknown, { countAccess: false }));
    await expectUnchanged('not_found', ({ store }) => store.forget(unknown));
    await expectUnchanged('not_found', ({ store }) => store.forget(unknown, { purge: true }));
    await expectUnchanged('not_found', ({ store }) => store.restore(unknown));
    await expectUnchanged('not_found', ({ store }) => store.updateSummary(unknown, 'x'));
  });

  it('get of an archived memory, forget of an archived memory and restore of a full memory are refused', async () => {
    await expectUnchanged('not_found', ({ store, archivedId }) => store.get(archivedId));
    await expectUnchanged('not_found', ({ store, archivedId }) => store.forget(archivedId));
    await expectUnchanged('not_found', ({ store, id }) => store.restore(id));
  });

  for (const bad of ['mem_123', 'MEM_0000BEEF', 'mem_0000beeg', 'mem_0000beef0', '../mem_0000beef', '', 'mem_0000beef.md', 'mem_0000beef\n']) {
    it(`rejects the malformed ID ${JSON.stringify(bad)} everywhere`, async () => {
      await expectUnchanged('invalid_input', ({ store }) => store.get(bad));
      await expectUnchanged('invalid_input', ({ store }) => store.forget(bad, { purge: true }));
      await expectUnchanged('invalid_input', ({ store }) => store.restore(bad));
      await expectUnchanged('invalid_input', ({ store }) => store.updateSummary(bad, 'x'));
    });
  }
});

describe('MemoryStore: secrets', () => {
  const ctx = useProject('ltm-store-');
  const secrets = {
    anthropic: 'sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_abc',
    github: 'ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8',
    password: 'Tr0ub4dor&3horse',
    aws: 'AKIAIOSFODNN7EXAMPLE',
  };

  it('redacts secrets before writing and reports them', async () => {
    const store = ctx.open();
    const result = await store.store({
      topic: `Deploy with ${secrets.github}`,
      content: `Set ANTHROPIC_API_KEY=${secrets.anthropic} in the env.\n\nThe db password=${secrets.password} and the AWS key ${secrets.aws}.`,
      summary: `Uses ${secrets.anthropic}.`,
    });
    const kinds = new Map(result.redactions.map((r) => [r.kind, r.count]));
    assert.equal(kinds.get('Anthropic API key'), 2, JSON.stringify(result.redactions));
    assert.equal(kinds.get('GitHub token'), 1);
    assert.equal(kinds.get('assigned secret'), 1);
    assert.equal(kinds.get('AWS access key'), 1);
    for (const secret of Object.values(secrets)) {
      assert.deepEqual(filesContaining(ctx, secret), [], `${secret} is on disk`);
      assert.ok(!JSON.stringify(result.memory).includes(secret));
    }
    const raw = fs.readFileSync(memFile(ctx, result.memory.id), 'utf8');
    assert.match(raw, /\[REDACTED Anthropic API key\]/);
    assert.match(raw, /password=\[REDACTED assigned secret\]/);
    assert.match(result.memory.topic, /^Deploy with \[REDACTED GitHub token\]$/);
  });

  it('redacts secrets given as tags: neither the memory file nor index.json holds them, in any letter case', async () => {
    const store = ctx.open();
    const result = await store.store({
      topic: 'Tagged deploy notes',
      content: 'Nothing secret in the text.',
      tags: ['deploy', secrets.aws, `password=${secrets.password}`, `token ${secrets.github}`],
    });
    assert.ok(result.redactions.length >= 3, JSON.stringify(result.redactions));
    for (const secret of Object.values(secrets).filter((s) => s !== secrets.anthropic)) {
      assert.deepEqual(filesContaining(ctx, secret.toLowerCase(), { ignoreCase: true }), [], `${secret} is on disk`);
      assert.ok(!JSON.stringify(result.memory.tags).toLowerCase().includes(secret.toLowerCase()), result.memory.tags.join());
    }
    assert.ok(result.memory.tags.includes('deploy'));
    assert.ok(result.memory.tags.some((t) => t.includes('redacted aws access key')), result.memory.tags.join());
  });

  it('redacts a secret given to updateSummary', async () => {
    const store = ctx.open();
    const { memory } = await store.store({ topic: 'Token note', content: 'Nothing secret here.' });
    await store.updateSummary(memory.id, `Token is ${secrets.github}`);
    assert.deepEqual(filesContaining(ctx, secrets.github), []);
  });

  it('redacts an AWS secret access key written as in ~/.aws/credentials or the environment', async () => {
    const store = ctx.open();
    const awsSecret = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';
    const result = await store.store({
      topic: 'AWS credentials for the deploy user',
      content: `[default]\naws_access_key_id = ${secrets.aws}\naws_secret_access_key = ${awsSecret}\n\nexport AWS_SECRET_ACCESS_KEY=${awsSecret}`,
    });
    assert.deepEqual(filesContaining(ctx, awsSecret), [], 'the AWS secret access key is written to disk');
    assert.ok(result.redactions.length > 0);
  });
});

describe('MemoryStore: importance tags and eviction', () => {
  const ctx = useProject('ltm-store-');

  it('never evicts importance:critical memories', async () => {
    writeConfig(ctx.project, { max_memories: 2, eviction_batch_size: 3 });
    const store = ctx.open();
    const critical: string[] = [];
    for (let i = 0; i < 3; i++) {
      critical.push((await store.store({ topic: `critical ${i}`, content: `c ${i}`, tags: ['importance:critical'], difficulty: 0 })).memory.id);
      await store.store({ topic: `normal ${i}`, content: `n ${i}`, difficulty: 1 });
    }
    const originals = new Map(critical.map((id) => [id, fs.readFileSync(memFile(ctx, id))]));
    for (let cycle = 0; cycle < 12; cycle++) {
      const result = await store.evict();
      for (const step of result.steps) assert.ok(!critical.includes(step.id), `critical ${step.id} was evicted`);
      for (const [id, bytes] of originals) assert.ok(fs.readFileSync(memFile(ctx, id)).equals(bytes));
      await store.updateState((s) => {
        s.session_count += 1;
      });
    }
    assert.deepEqual(store.list().memories.map((m) => m.id).sort(), [...critical].sort(), 'only the critical memories are left');
    const last = await store.evict();
    assert.equal(last.ran, false, 'nothing left to evict, though 3 > max_memories');
    for (const id of critical) assert.ok(!fs.existsSync(archiveFile(ctx, id)));
  });

  it('evicts importance:important memories only after all normal and low ones', async () => {
    writeConfig(ctx.project, { max_memories: 1, eviction_batch_size: 1 });
    const store = ctx.open();
    const important = new Set<string>();
    // important ones have the lowest base priority: without the rule they would go first
    for (let i = 0; i < 2; i++) {
      important.add((await store.store({ topic: `important ${i}`, content: `i ${i}`, tags: ['importance:important'], difficulty: 0 })).memory.id);
    }
    await store.store({ topic: 'normal', content: 'n', difficulty: 1 });
    await store.store({ topic: 'low', content: 'l', tags: ['importance:low'], difficulty: 1 });
    for (const id of important) assert.ok(store.priorityOf(id).priority < 0.6);
    let importantSteps = 0;
    for (let cycle = 0; cycle < 30; cycle++) {
      const others = store.list().memories.filter((m) => !important.has(m.id));
      const result = await store.evict();
      for (const step of result.steps) {
        if (!important.has(step.id)) continue;
        importantSteps++;
        assert.deepEqual(others.map((m) => m.topic), [], `important ${step.id} evicted while others were active`);
      }
      if (!result.ran) break;
    }
    assert.ok(importantSteps > 0, 'important memories are evicted once the others are gone');
    const left = store.list().memories;
    assert.equal(left.length, 1);
    assert.ok(important.has(left[0]!.id));
  });

  it('evicts importance:low memories first', async () => {
    writeConfig(ctx.project, { max_memories: 2, eviction_batch_size: 2 });
    const store = ctx.open();
    const low = new Set<string>();
    await store.store({ topic: 'normal a', content: 'a', difficulty: 0.3 });
    low.add((await store.store({ topic: 'low a', content: 'b', tags: ['importance:low'], difficulty: 0.6 })).memory.id);
    await store.store({ topic: 'normal b', content: 'c', difficulty: 0.3 });
    low.add((await store.store({ topic: 'low b', content: 'd', tags: ['importance:low'], difficulty: 0.6 })).memory.id);
    const result = await store.evict();
    assert.deepEqual(new Set(result.steps.map((s) => s.id)), low);
  });
});

describe('MemoryStore: eviction over many sessions', () => {
  const ctx = useProject('ltm-store-');

  const words = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel', 'india', 'juliet', 'kilo', 'lima', 'mike', 'november', 'oscar'];

  function contentFor(i: number, w: string): string {
    const first =
      i % 3 === 0
        ? `The ${w} service timed out after ${i + 10} seconds. Retrying fixed it once.\nA second line of the ${w} paragraph keeps the detail.`
        : `The ${w} cache grew to ${i * 100} MB before the fix; the cause was a leak in the ${w} worker.`;
    return `${first}\n\nSecond paragraph about ${w}: how it was found, step by step, with logs.\n\nThird paragraph about ${w}: follow-ups and links (#${i}).`;
  }

  it('archives before reducing, keeps Summary, hint and abstract as specified, removes at phase 3, and loses no text', async () => {
    writeConfig(ctx.project, { max_memories: 5, eviction_batch_size: 2 });
    const store = ctx.open();
    interface Original {
      raw: Buffer;
      text: string;
      summary: string;
      content: string;
      firstParagraph: string;
    }
    const originals = new Map<string, Original>();
    for (const [i, w] of words.entries()) {
      const content = contentFor(i, w);
      const input: StoreInput = { topic: `Lesson ${i}: ${w}`, content, tags: [w], difficulty: (i % 5) / 5 };
      if (i % 2 === 0) input.summary = `Summary of ${w}, written by hand.`;
      const { memory } = await store.store(input);
      const raw = fs.readFileSync(memFile(ctx, memory.id));
      const text = raw.toString('utf8');
      originals.set(memory.id, { raw, text, ...sections(text), firstParagraph: content.split('\n\n')[0]! });
    }
    const phase = new Map<string, number>([...originals.keys()].map((id) => [id, 0]));

    let cycles = 0;
    let steps = 0;
    for (; cycles < 60; cycles++) {
      const active = [...phase].filter(([, p]) => p < 3).map(([id]) => id);
      const priorities = new Map(active.map((id) => [id, store.priorityOf(id).priority]));
      const before = snapshotFiles(ctx.root);
      const result = await store.evict();
      if (active.length <= 5) {
        assert.equal(result.ran, false, 'evict is a no-op at or under the threshold');
        assert.deepEqual(result.steps, []);
        assert.deepEqual(snapshotDiff(before, snapshotFiles(ctx.root)), [], 'a no-op eviction writes nothing');
        break;
      }
      assert.equal(result.ran, true);
      assert.equal(result.before, active.length);
      assert.equal(result.steps.length, 2);
      // the two lowest priorities advance
      const lowest = [...priorities.values()].sort((a, b) => a - b).slice(0, 2);
      for (const step of result.steps) {
        assert.ok(lowest.includes(priorities.get(step.id)!), `${step.id} is not among the lowest priorities`);
        assert.equal(step.from, phase.get(step.id));
        assert.equal(step.to, step.from + 1);
        phase.set(step.id, step.to);
      }
      steps += result.steps.length;
      const moved = new Set(result.steps.map((s) => s.id));
      const after = snapshotFiles(ctx.root);

      const indexIds = memoryKeys(path.join(ctx.root, 'index.json'));
      const statsIds = Object.keys(statsOnDisk(ctx.root)).sort();
      const archiveIndex = archiveIndexOf(ctx);
      for (const [id, o] of originals) {
        const p = phase.get(id)!;
        const memName = path.join('memories', `${id}.md`);
        const archName = path.join('archives', `${id}.md`);
        if (!moved.has(id)) {
          assert.deepEqual(after.get(memName), before.get(memName), `${id} did not move but its file changed`);
        }
        if (p === 0) {
          assert.ok(after.get(memName)!.equals(o.raw), `${id} at phase 0 is unchanged`);
          continue;
        }
        assert.ok(after.get(archName)?.equals(o.raw), `archives/${id}.md holds the original bytes (phase ${p})`);
        if (p === 3) {
          assert.ok(!after.has(memName), `${id} left memories/`);
          assert.ok(!indexIds.includes(id), `${id} left index.json`);
          assert.ok(!statsIds.includes(id), `${id} left stats.json`);
          assert.equal(archiveIndex.memories[id]?.reason, 'eviction', `${id} is listed in archive_index.json`);
          continue;
        }
        const raw = after.get(memName)!.toString('utf8');
        assert.equal(phaseOfFile(raw), p);
        assert.match(raw, new RegExp(`\\n  - phase: ${p}\\n    at: "[^"]+"\\n    event: "evicted"`), `phase_history records ${id} reaching phase ${p}`);
        assert.equal(withoutPhase(splitFile(raw).frontmatter), withoutPhase(splitFile(o.text).frontmatter), 'only the phase changes');
        const s = sections(raw);
        assert.equal(s.summary, o.summary, `the Summary of ${id} never changes`);
        assert.ok(indexIds.includes(id));
        if (p === 1) {
          assert.equal(s.content, o.firstParagraph, `phase 1 keeps the first paragraph of ${id}`);
        } else {
          assert.ok(s.content.length > 0 && s.content.length <= 200, `abstract of ${id}: ${JSON.stringify(s.content)}`);
          assert.ok(!s.content.includes('\n'), `phase 2 keeps one line: ${JSON.stringify(s.content)}`);
          assert.ok(o.firstParagraph.replace(/\s+/g, ' ').startsWith(s.content.replace(/…$/, '')), `abstract of ${id} comes from its text`);
        }
      }
      assert.equal(store.check().healthy, true, JSON.stringify(store.check().problems));

      // a new session; some memories are used in it
      await store.updateState((s) => {
        s.session_count += 1;
      });
      const stillActive = [...phase].filter(([, p]) => p < 3).map(([id]) => id);
      for (const id of [stillActive[cycles % stillActive.length]!, stillActive[(cycles * 7 + 3) % stillActive.length]!]) await store.get(id);
    }
    assert.ok(cycles > 10 && cycles < 60, `${cycles} cycles`);
    assert.ok(steps >= 30);
    assert.equal([...phase.values()].filter((p) => p < 3).length, 5);
    assert.equal(store.list().total, 5);
    assert.equal(readJson<{ last_eviction: string | null }>(path.join(ctx.root, 'state.json')).last_eviction !== null, true);

    // Every original text is recoverable byte for byte.
    for (const [id, o] of originals) {
      const p = phase.get(id)!;
      if (p === 0) {
        assert.ok(fs.readFileSync(memFile(ctx, id)).equals(o.raw));
        continue;
      }
      assert.ok(fs.readFileSync(archiveFile(ctx, id)).equals(o.raw));
      const restored = await store.restore(id);
      assert.equal(restored.phase, 0);
      assert.equal(restored.content, o.content);
      assert.equal(restored.summary, o.summary);
      assert.equal(splitFile(fs.readFileSync(memFile(ctx, id), 'utf8')).body, splitFile(o.text).body);
    }
    assert.equal(store.list().total, 15);
    assert.equal(store.check().healthy, true, JSON.stringify(store.check().problems));
  });

  it('evict is a no-op at or under the threshold (config set through updateState)', async () => {
    const store = ctx.open();
    await store.updateState((s) => {
      s.config.max_memories = 3;
      s.config.eviction_batch_size = 2;
    });
    assert.deepEqual(ctx.open().config, { max_memories: 3, memories_to_load: 10, eviction_batch_size: 2, review_new_memories: false, stale_memories: 'label' });
    for (let i = 0; i < 3; i++) await store.store({ topic: `m ${i}`, content: `c ${i}` });
    const before = snapshotFiles(ctx.root);
    const result = await store.evict();
    assert.deepEqual(result, { ran: false, before: 3, after: 3, max_memories: 3, steps: [] });
    assert.deepEqual(snapshotDiff(before, snapshotFiles(ctx.root)), []);
    await store.store({ topic: 'm 3', content: 'c 3' });
    const ran = await store.evict();
    assert.equal(ran.ran, true);
    assert.equal(ran.steps.length, 2);
  });
});

describe('MemoryStore: forget, purge and restore', () => {
  const ctx = useProject('ltm-store-');

  it('restore brings an evicted memory back at phase 0 with its full text, restored_from_archive and fresh stats', async () => {
    writeConfig(ctx.project, { max_memories: 1, eviction_batch_size: 1 }, 4);
    const store = ctx.open();
    const content = 'Full first paragraph. With two sentences.\n\nSecond paragraph.\n\nThird paragraph.';
    const { memory } = await store.store({ topic: 'Evict me', content, difficulty: 0, tags: ['x', 'importance:low'] });
    await store.store({ topic: 'Keep me', content: 'kept', difficulty: 1 });
    const original = fs.readFileSync(memFile(ctx, memory.id), 'utf8');
    for (let i = 0; i < 3; i++) await store.get(memory.id, { countAccess: false }).then(() => store.evict());
    assert.ok(!fs.existsSync(memFile(ctx, memory.id)));
    assert.equal(store.list({ phase: 3 }).memories[0]?.id, memory.id);
    await store.updateState((s) => {
      s.session_count = 9;
    });

    const restored = await store.restore(memory.id, { importance: 'critical' });
    assert.equal(restored.phase, 0);
    assert.equal(restored.content, content);
    assert.equal(restored.access_count, 0);
    assert.equal(restored.last_session, 9);
    assert.deepEqual(restored.tags, ['x', 'importance:critical']);
    const raw = fs.readFileSync(memFile(ctx, memory.id), 'utf8');
    assert.match(splitFile(raw).frontmatter, /^restored_from_archive: true$/m);
    assert.match(splitFile(raw).frontmatter, /^phase: 0$/m);
    assert.equal(splitFile(raw).body, splitFile(original).body);
    const stats = statsOf(ctx)[memory.id]!;
    assert.equal(stats.access_count, 0);
    assert.equal(stats.last_session, 9);
    assert.ok(memoryKeys(path.join(ctx.root, 'index.json')).includes(memory.id));
    assert.ok(!(memory.id in archiveIndexOf(ctx).memories));
    assert.equal(store.list({ phase: 3 }).total, 0);
    assert.equal(store.check().healthy, true, JSON.stringify(store.check().problems));
  });

  it('restore refuses a memory already at phase 0 (restored before, then edited) and changes nothing', async () => {
    writeConfig(ctx.project, { max_memories: 1, eviction_batch_size: 1 });
    const store = ctx.open();
    const { memory } = await store.store({ topic: 'Reduce me', content: 'Hint paragraph.\n\nDetail paragraph.', difficulty: 0 });
    await store.store({ topic: 'Other', content: 'other', difficulty: 1 });
    await store.evict();
    await store.restore(memory.id);
    // Edited after the restore: its archive (the text before the first reduction) is older than this.
    await store.update(memory.id, { content: 'Hint paragraph.\n\nDetail paragraph, corrected since.' });
    const before = snapshotFiles(ctx.root);
    await assert.rejects(store.restore(memory.id), (e: LtmError) => e.code === 'invalid_input' && /phase 0 with its full text/.test(e.message));
    assert.deepEqual(snapshotDiff(before, snapshotFiles(ctx.root)), []);
    assert.equal(store.peek(memory.id).content, 'Hint paragraph.\n\nDetail paragraph, corrected since.');
  });

  it('restore brings a reduced active memory back to its full text', async () => {
    writeConfig(ctx.project, { max_memories: 1, eviction_batch_size: 1 });
    const store = ctx.open();
    const content = 'Hint paragraph.\n\nDetail paragraph.';
    const { memory } = await store.store({ topic: 'Reduce me', content, difficulty: 0 });
    await store.store({ topic: 'Other', content: 'other', difficulty: 1 });
    await store.evict();
    assert.equal(store.peek(memory.id).content, 'Hint paragraph.');
    const restored = await store.restore(memory.id, { importance: 'important' });
    assert.equal(restored.content, content);
    assert.equal(restored.phase, 0);
    assert.deepEqual(restored.tags, ['importance:important']);
    assert.equal(store.check().healthy, true, JSON.stringify(store.check().problems));
  });

  it('forget keeps the text in archives/ and it can be restored', async () => {
    const store = ctx.open();
    const { memory } = await store.store({ topic: 'Forget me', content: 'Forgettable.\n\nBut kept.' });
    const other = (await store.store({ topic: 'Stay', content: 'stay' })).memory.id;
    await store.get(memory.id);
    const original = fs.readFileSync(memFile(ctx, memory.id));
    const result = await store.forget(memory.id);
    assert.deepEqual(result, { id: memory.id, topic: 'Forget me', archived: true, purged: false });
    assert.ok(!fs.existsSync(memFile(ctx, memory.id)));
    assert.ok(fs.readFileSync(archiveFile(ctx, memory.id)).equals(original));
    assert.deepEqual(memoryKeys(path.join(ctx.root, 'index.json')), [other]);
    assert.deepEqual(Object.keys(statsOf(ctx)), [other]);
    assert.equal(archiveIndexOf(ctx).memories[memory.id]?.reason, 'forgotten');
    assert.deepEqual(store.list().memories.map((m) => m.id), [other]);
    assert.deepEqual(store.list({ phase: 3 }).memories.map((m) => m.id), [memory.id]);
    assert.equal(store.getArchived(memory.id).content, 'Forgettable.\n\nBut kept.');
    const restored = await store.restore(memory.id);
    assert.equal(restored.content, 'Forgettable.\n\nBut kept.');
    assert.equal(store.list().total, 2);
    assert.equal(store.check().healthy, true, JSON.stringify(store.check().problems));
  });

  it('forget of a reduced memory keeps its full original text in the archive', async () => {
    writeConfig(ctx.project, { max_memories: 1, eviction_batch_size: 1 });
    const store = ctx.open();
    const { memory } = await store.store({ topic: 'Reduced then forgotten', content: 'Hint part.\n\nDetail part.', difficulty: 0 });
    await store.store({ topic: 'Other', content: 'other', difficulty: 1 });
    const original = fs.readFileSync(memFile(ctx, memory.id));
    await store.evict();
    await store.evict();
    assert.equal(store.peek(memory.id).phase, 2);
    await store.forget(memory.id);
    assert.ok(fs.readFileSync(archiveFile(ctx, memory.id)).equals(original), 'the archive lost the full text');
    assert.equal((await store.restore(memory.id)).content, 'Hint part.\n\nDetail part.');
  });

  it('purge deletes the text of an active or archived memory for good', async () => {
    const store = ctx.open();
    const a = (await store.store({ topic: 'Purge active', content: 'unique-purge-text-alpha' })).memory.id;
    const b = (await store.store({ topic: 'Purge archived', content: 'unique-purge-text-bravo' })).memory.id;
    await store.forget(b);
    assert.ok(fs.existsSync(archiveFile(ctx, b)));
    const ra = await store.forget(a, { purge: true });
    assert.equal(ra.purged, true);
    assert.equal(ra.archived, false);
    const rb = await store.forget(b, { purge: true });
    assert.equal(rb.purged, true);
    for (const id of [a, b]) {
      assert.ok(!fs.existsSync(memFile(ctx, id)));
      assert.ok(!fs.existsSync(archiveFile(ctx, id)));
      assert.ok(!(id in archiveIndexOf(ctx).memories));
      assert.ok(id in (archiveIndexOf(ctx).purged ?? {}));
    }
    assert.deepEqual(filesContaining(ctx, 'unique-purge-text'), []);
    assert.equal(store.search('unique', { scope: 'all' }).length, 0);
    await assert.rejects(store.restore(a), (e: LtmError) => e.code === 'not_found');
    await assert.rejects(store.forget(b, { purge: true }), (e: LtmError) => e.code === 'not_found');
    assert.equal(store.check().healthy, true, JSON.stringify(store.check().problems));
  });

  it('purge leaves nothing of the memory on disk, not even its topic in a cache', async () => {
    let store = ctx.open();
    const { memory } = await store.store({ topic: 'Zanzibar credentials rotation', content: 'unique-purge-text-charlie' });
    store.dispose();
    store = ctx.open(); // a second process opens the store (and caches what it parsed)
    await store.forget(memory.id, { purge: true });
    assert.deepEqual(filesContaining(ctx, 'Zanzibar'), [], 'the topic of a purged memory is still on disk');
    assert.deepEqual(filesContaining(ctx, 'unique-purge-text'), []);
  });
});

describe('MemoryStore: changes made outside the store', () => {
  const ctx = useProject('ltm-store-');

  it('settleIndex writes the deferred index.json before a check, and a write that fails does not stop the check', async () => {
    const store = ctx.open();
    await store.store({ topic: 'Listed', content: 'a' });
    store.deferIndexWrites(() => undefined);
    const { memory } = await store.store({ topic: 'Deferred', content: 'b' });
    await store.settleIndex();
    assert.equal(store.check().healthy, true);
    assert.ok(memoryKeys(path.join(ctx.root, 'index.json')).includes(memory.id));
    const next = await store.store({ topic: 'Deferred again', content: 'c' });
    // index.json cannot be replaced while a directory holds its name.
    fs.rmSync(path.join(ctx.root, 'index.json'));
    fs.mkdirSync(path.join(ctx.root, 'index.json'));
    // The failed write does not stop the check that follows (it then reports index.json as it is).
    await store.settleIndex();
    fs.rmdirSync(path.join(ctx.root, 'index.json'));
    assert.ok(!store.check().healthy, 'index.json is missing now');
    await store.flushIndex();
    assert.ok(memoryKeys(path.join(ctx.root, 'index.json')).includes(next.memory.id));
    store.deferIndexWrites(null);
  });

  it('a store made while index.json is being flushed does not wait for the flush, and the next flush lists it', async () => {
    const store = ctx.open();
    await store.store({ topic: 'Listed', content: 'a' });
    store.deferIndexWrites(() => undefined);
    const deferred = await store.store({ topic: 'Deferred', content: 'b' });
    const order: string[] = [];
    // The flush's writing of the members is held until the store below is done, as a long render in slices
    // (50,000 memories) would hold it: a flush that kept the lock meanwhile would never let that store finish.
    const { writeInSlices } = JsonMapChunks.prototype;
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let held = 0;
    JsonMapChunks.prototype.writeInSlices = async function (this: JsonMapChunks<unknown>, ...args: Parameters<typeof writeInSlices>) {
      held++;
      await released;
      return writeInSlices.apply(this, args);
    };
    let during: Awaited<ReturnType<typeof store.store>>;
    try {
      const flushing = store.flushIndex().then(() => order.push('flushed'));
      // The flush has decided (under the lock) by the next turn of the event loop, and is writing the file.
      await new Promise<void>((resolve) => setImmediate(resolve));
      assert.equal(held, 1, 'the flush is writing index.json');
      // It holds the lock to decide and to put the file in place, not while it renders and writes it.
      during = await store.store({ topic: 'Stored during the flush', content: 'c' });
      order.push('stored');
      release();
      await flushing;
    } finally {
      JsonMapChunks.prototype.writeInSlices = writeInSlices;
      release();
    }
    assert.deepEqual(order, ['stored', 'flushed']);
    const listed = () => memoryKeys(path.join(ctx.root, 'index.json'));
    assert.ok(listed().includes(deferred.memory.id));
    assert.ok(!listed().includes(during.memory.id), 'not decided when the flush began');
    await store.flushIndex();
    assert.ok(listed().includes(during.memory.id));
    await store.settleIndex();
    assert.equal(store.check().healthy, true);
    store.deferIndexWrites(null);
  });

  it('changeCount moves with every change seen or made, and stays put when nothing changed (the views refresh on it)', async () => {
    const store = ctx.open();
    const other = ctx.open(); // another process, as far as the files are concerned
    const { memory } = await store.store({ topic: 'Counted', content: 'c' });
    store.refresh({ full: true });
    const afterOwnWrite = store.changeCount;
    store.refresh({ full: true });
    assert.equal(store.changeCount, afterOwnWrite, 'a refresh that finds nothing new');
    // index.json written by the store itself is not news either.
    store.deferIndexWrites(() => undefined);
    await store.store({ topic: 'Counted too', content: 'd' });
    const beforeFlush = store.changeCount;
    await store.flushIndex();
    store.refresh({ full: true });
    assert.equal(store.changeCount, beforeFlush);
    store.deferIndexWrites(null);
    // Another process's write, a hand edit and a file that is not a valid memory each count.
    await other.store({ topic: 'From elsewhere', content: 'e' });
    store.refresh({ full: true });
    const afterOther = store.changeCount;
    assert.ok(afterOther > beforeFlush);
    fs.writeFileSync(memFile(ctx, memory.id), fs.readFileSync(memFile(ctx, memory.id), 'utf8').replace('Counted', 'Recounted'));
    store.refresh({ full: true });
    const afterEdit = store.changeCount;
    assert.ok(afterEdit > afterOther);
    fs.writeFileSync(path.join(ctx.root, 'memories', 'mem_0badf00d.md'), '---\nid: mem_0badf00d\ntopic: [unclosed\n---\n');
    store.refresh({ full: true });
    assert.ok(store.changeCount > afterEdit);
    other.dispose();
  });

  it('a hand edit in place is seen at once by get(id, {countAccess: false})', async () => {
    const store = ctx.open();
    const { memory } = await store.store({ topic: 'Original topic', content: 'Original content.' });
    assert.equal(store.list().memories[0]!.topic, 'Original topic');
    const file = memFile(ctx, memory.id);
    const ino = fs.statSync(file).ino;
    // same length edit first (only the content of the bytes differs), then a longer one
    fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('Original topic', 'Edited!! topic'));
    assert.equal(fs.statSync(file).ino, ino, 'edited in place');
    assert.equal((await store.get(memory.id, { countAccess: false })).topic, 'Edited!! topic');
    fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replaceAll('Original content.', 'A much longer edited content.'));
    const seen = await store.get(memory.id, { countAccess: false });
    assert.equal(seen.content, 'A much longer edited content.');
    assert.equal(statsOf(ctx)[memory.id]!.access_count, 0);
  });

  it('session bookkeeping written off the event loop: readers see it at once, the files hold it on return, another writer is still seen', async () => {
    const store = ctx.open();
    const other = ctx.open(); // another process, as far as the files are concerned
    const { memory } = await store.store({ topic: 'Bookkeeping', content: 'c' });
    const counted = store.updateState((state) => void (state.session_count = 7), { durable: false });
    const accessed = store.recordAccesses([memory.id], 7);
    // Readers keep running while the writes are under way; none may see the change undone.
    const seen: number[] = [];
    let writing = true;
    const reader = (async () => {
      while (writing) {
        seen.push(store.currentState.session_count);
        store.list();
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    await Promise.all([counted, accessed]);
    writing = false;
    await reader;
    assert.ok(seen.length > 1, 'readers ran meanwhile');
    const firstNew = seen.indexOf(7);
    assert.ok(seen.every((n) => n === 0 || n === 7), `seen: ${seen.join(',')}`);
    assert.ok(firstNew === -1 || seen.slice(firstNew).every((n) => n === 7), `the new count was undone: ${seen.join(',')}`);
    assert.equal(readJson<{ session_count: number }>(path.join(ctx.root, 'state.json')).session_count, 7);
    assert.equal(statsOf(ctx)[memory.id]!.access_count, 1);
    assert.equal(store.list().memories[0]!.access_count, 1);
    // The other writer's changes reach this store's next read.
    await other.updateState((state) => void (state.session_count += 1));
    await other.recordAccesses([memory.id]);
    assert.equal(store.currentState.session_count, 8);
    assert.equal(store.list().memories[0]!.access_count, 2);
  });

  it('a state.json update keeps the settings a person saved while it was being written, and applies its change to them', async () => {
    const store = ctx.open();
    await store.updateState((state) => void (state.session_count = 3));
    const stateFile = path.join(ctx.root, 'state.json');
    let runs = 0;
    await store.updateState((state) => {
      runs++;
      state.session_count += 1;
      // A person saves the file in their editor (in place, no lock) after the update read it.
      if (runs === 1) {
        const saved = JSON.parse(fs.readFileSync(stateFile, 'utf8')) as { config: Record<string, unknown> };
        saved.config.memories_to_load = 42;
        fs.writeFileSync(stateFile, JSON.stringify(saved, null, 2));
      }
    });
    const state = readJson<{ session_count: number; config: { memories_to_load: number } }>(stateFile);
    assert.equal(state.config.memories_to_load, 42, 'the person\'s setting was written over');
    assert.equal(state.session_count, 4, 'the update was applied once, to the file as saved');
    assert.equal(runs, 2);
    assert.equal(store.config.memories_to_load, 42);
  });

  it('never writes over a state.json it cannot read: session counts and eviction stop with an error naming it, the file stays as it is', async () => {
    const store = ctx.open();
    await store.store({ topic: 'Kept as it is', content: 'c' });
    const stateFile = path.join(ctx.root, 'state.json');
    const conflicted = '<<<<<<< HEAD\n{"config": {"max_memories": 500}}\n=======\n{"config": {"max_memories": 0}}\n>>>>>>> theirs\n';
    fs.writeFileSync(stateFile, conflicted);
    const before = fs.readdirSync(path.join(ctx.root, 'memories')).map((n) => fs.readFileSync(path.join(ctx.root, 'memories', n), 'utf8'));
    await assert.rejects(store.updateState((state) => void (state.session_count += 1)), (error: LtmError) => error.code === 'unreadable' && /state\.json cannot be read \(it holds merge conflict markers\)/.test(error.message));
    // Its limits are unknown: eviction by the defaults would be a guess.
    await assert.rejects(store.evict(), (error: LtmError) => error.code === 'unreadable');
    assert.equal(fs.readFileSync(stateFile, 'utf8'), conflicted);
    const after = fs.readdirSync(path.join(ctx.root, 'memories')).map((n) => fs.readFileSync(path.join(ctx.root, 'memories', n), 'utf8'));
    assert.deepEqual(after, before);
  });

  it('an update never writes over a save that lands after it read the memory: it fails with "busy", the saved text stays, and a retry applies to it', async () => {
    const store = ctx.open();
    const { memory } = await store.store({ topic: 'Saved meanwhile', content: 'Original content.', summary: 'Old summary.' });
    const file = memFile(ctx, memory.id);
    const saved = fs.readFileSync(file, 'utf8').replace('\nOriginal content.\n', '\nContent saved in an editor.\n');
    // The save lands once the previous text is archived, before the memory is written.
    const update = () => store.update(memory.id, { summary: 'A new summary.' });
    await assert.rejects(
      afterRenameOnto(path.join(ctx.root, 'archive_index.json'), () => fs.writeFileSync(file, saved), update),
      (error: LtmError) => error.code === 'busy' && /was changed on disk while LTM was changing it/.test(error.message),
    );
    assert.equal(fs.readFileSync(file, 'utf8'), saved);
    await update();
    assert.deepEqual(sections(fs.readFileSync(file, 'utf8')), { summary: 'A new summary.', content: 'Content saved in an editor.' });
    assert.equal(store.check().healthy, true);
  });

  it('forget never removes a memory saved after it read it: "busy", the memory stays active as saved, not listed as archived; a retry archives the saved text', async () => {
    const store = ctx.open();
    const { memory } = await store.store({ topic: 'Saved before forget', content: 'Original content.', summary: 'Old summary.' });
    const file = memFile(ctx, memory.id);
    const saved = fs.readFileSync(file, 'utf8').replace('Original content.', 'Content saved in an editor.');
    const archiveIndex = path.join(ctx.root, 'archive_index.json');
    await assert.rejects(
      afterRenameOnto(archiveIndex, () => fs.writeFileSync(file, saved), () => store.forget(memory.id)),
      (error: LtmError) => error.code === 'busy',
    );
    assert.equal(fs.readFileSync(file, 'utf8'), saved);
    assert.deepEqual(Object.keys(readJson<{ memories: object }>(archiveIndex).memories), []);
    assert.equal(store.check().healthy, true, JSON.stringify(store.check().problems));
    await store.forget(memory.id);
    assert.equal(fs.existsSync(file), false);
    assert.match(fs.readFileSync(path.join(ctx.root, 'archives', `${memory.id}.md`), 'utf8'), /Content saved in an editor\./);
  });

  /** A store with a merge target and a merge source, as the two merge-meanwhile tests start. */
  const twoToMerge = async () => {
    const store = ctx.open();
    const target = (await store.store({ topic: 'Merge target', content: 'Target text.', summary: 'Target.' })).memory;
    const source = (await store.store({ topic: 'Merge source', content: 'Source text.', summary: 'Source.' })).memory;
    return { store, target, source };
  };

  it('a merge whose target is saved after both were archived writes nothing over it: "busy", the source stays active and is not listed as merged', async () => {
    const { store, target, source } = await twoToMerge();
    const targetFile = memFile(ctx, target.id);
    const saved = fs.readFileSync(targetFile, 'utf8').replace('Target text.', 'Target text, saved in an editor.');
    await assert.rejects(
      afterRenameOnto(path.join(ctx.root, 'archive_index.json'), () => fs.writeFileSync(targetFile, saved), () => store.merge(source.id, target.id)),
      (error: LtmError) => error.code === 'busy' && /was changed on disk/.test(error.message),
    );
    assert.equal(fs.readFileSync(targetFile, 'utf8'), saved);
    assert.ok(fs.existsSync(memFile(ctx, source.id)), 'the source stays');
    assert.equal(archiveIndexOf(ctx).memories[source.id], undefined, 'the source is not listed as merged');
    assert.equal(store.check().healthy, true, JSON.stringify(store.check().problems));
  });

  it('a merge whose source is saved after the target is written keeps the saved source, says so, and leaves the store healthy', async () => {
    const { store, target, source } = await twoToMerge();
    const sourceFile = memFile(ctx, source.id);
    const saved = fs.readFileSync(sourceFile, 'utf8').replace('Source text.', 'Source text, saved in an editor.');
    await assert.rejects(
      afterRenameOnto(memFile(ctx, target.id), () => fs.writeFileSync(sourceFile, saved), () => store.merge(source.id, target.id)),
      (error: LtmError) => error.code === 'busy' && error.message.includes(`${source.id} was saved in an editor while it was merged into ${target.id}`),
    );
    assert.equal(fs.readFileSync(sourceFile, 'utf8'), saved);
    assert.match(fs.readFileSync(memFile(ctx, target.id), 'utf8'), /Source text\./, 'the target holds the merged text');
    assert.equal(archiveIndexOf(ctx).memories[source.id], undefined, 'the source is not listed as merged');
    assert.equal(store.check().healthy, true, JSON.stringify(store.check().problems));
  });

  it('a writer never overwrites a hand edit made in place: updateSummary keeps the edited content', async () => {
    const store = ctx.open();
    const { memory } = await store.store({ topic: 'Edit then summarise', content: 'Original content.', summary: 'Old summary.' });
    const file = memFile(ctx, memory.id);
    fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('\nOriginal content.\n', '\nContent fixed by hand.\n'));
    await store.updateSummary(memory.id, 'New summary.');
    const raw = fs.readFileSync(file, 'utf8');
    assert.deepEqual(sections(raw), { summary: 'New summary.', content: 'Content fixed by hand.' }, 'the hand edit was overwritten');
  });

  it('a writer never loses a hand edit made in place: forget archives the edited text', async () => {
    const store = ctx.open();
    const { memory } = await store.store({ topic: 'Edit then forget', content: 'Original content.', summary: 'Summary.' });
    const file = memFile(ctx, memory.id);
    const edited = fs.readFileSync(file, 'utf8').replace('\nOriginal content.\n', '\nContent fixed by hand.\n');
    fs.writeFileSync(file, edited);
    await store.forget(memory.id);
    assert.equal(fs.readFileSync(archiveFile(ctx, memory.id), 'utf8'), edited, 'the archive holds the text from before the hand edit');
  });

  it('with watch: true, list() sees an in-place topic edit within a second', async () => {
    const store = ctx.open();
    const { memory } = await store.store({ topic: 'Watched topic', content: 'c' });
    await store.store({ topic: 'Other topic', content: 'd' });
    store.dispose();
    const watching = ctx.open({ watch: true });
    assert.ok(watching.list().memories.some((m) => m.topic === 'Watched topic'));
    const file = memFile(ctx, memory.id);
    fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('Watched topic', 'Watched and edited topic'));
    const deadline = Date.now() + 1000;
    let topics: string[] = [];
    while (Date.now() < deadline) {
      topics = watching.list().memories.map((m) => m.topic);
      if (topics.includes('Watched and edited topic')) break;
      await sleep(25);
    }
    assert.ok(topics.includes('Watched and edited topic'), `list() still shows ${JSON.stringify(topics)}`);
    assert.ok(!topics.includes('Watched topic'));
    assert.equal(watching.search('edited')[0]?.id, memory.id, 'search sees the edit too');
  });

  it('a disposed store starts no watcher again, whatever is called on it late (a process must be able to exit)', async () => {
    const watchers = () => process.getActiveResourcesInfo().filter((r) => r === 'FSEventWrap').length;
    await ctx.open().store({ topic: 'Watched topic', content: 'c' });
    await sleep(10);
    const before = watchers();
    const store = ctx.open({ watch: true });
    store.list();
    assert.equal(watchers(), before + 1, 'watching while open');
    store.dispose();
    // What a server's deferred work may still do after stopping: refresh, warm the index, save caches.
    store.list();
    await store.warmUp();
    store.flushCaches();
    await sleep(10);
    assert.equal(watchers(), before, 'no watcher left');
  });

  it('with watch: true on a project whose store does not exist yet, list() sees in-place edits once it does', async () => {
    const watching = ctx.open({ watch: true });
    const { memory } = await watching.store({ topic: 'First ever memory', content: 'c' });
    assert.equal(watching.list().memories[0]!.topic, 'First ever memory');
    const file = memFile(ctx, memory.id);
    fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('First ever memory', 'First ever memory, edited'));
    const deadline = Date.now() + 1000;
    let topic = '';
    while (Date.now() < deadline) {
      topic = watching.list().memories[0]!.topic;
      if (topic === 'First ever memory, edited') break;
      await sleep(25);
    }
    assert.equal(topic, 'First ever memory, edited', 'the in-place edit was not seen within a second');
  });

  it('an edit saved by rename (as most editors and git do) is seen by list() without a watcher', async () => {
    const store = ctx.open();
    const { memory } = await store.store({ topic: 'Renamed edit', content: 'c' });
    assert.equal(store.list().memories[0]!.topic, 'Renamed edit');
    const file = memFile(ctx, memory.id);
    const temp = `${file}.editor-tmp`;
    fs.writeFileSync(temp, fs.readFileSync(file, 'utf8').replace('Renamed edit', 'Renamed edit, saved'));
    fs.renameSync(temp, file);
    assert.equal(store.list().memories[0]!.topic, 'Renamed edit, saved');
  });

  it('a second instance sees the first one’s writes on its next read', async () => {
    const a = ctx.open();
    const first = (await a.store({ topic: 'From A', content: 'a' })).memory.id;
    const b = ctx.open();
    assert.deepEqual(b.list().memories.map((m) => m.id), [first]);
    const second = (await a.store({ topic: 'Second from A', content: 'a2' })).memory.id;
    assert.deepEqual(b.list().memories.map((m) => m.id).sort(), [first, second].sort());
    assert.equal(b.search('second')[0]?.id, second);
    await a.updateSummary(first, 'Summary by A');
    assert.equal(b.peek(first).summary, 'Summary by A');
    await a.get(first);
    assert.equal(b.peek(first).access_count, 1);
    await b.forget(second);
    assert.deepEqual(a.list().memories.map((m) => m.id), [first]);
    await assert.rejects(a.get(second), (e: LtmError) => e.code === 'not_found');
    const third = (await b.store({ topic: 'From B', content: 'b' })).memory.id;
    await a.store({ topic: 'Fourth from A', content: 'a4' });
    assert.equal(a.list().total, 3);
    assert.ok(memoryKeys(path.join(ctx.root, 'index.json')).includes(third), 'A did not drop B’s memory from the index');
    assert.equal(a.check().healthy, true, JSON.stringify(a.check().problems));
  });
});

describe('MemoryStore: the ranking table agrees with ranking every memory', () => {
  const ctx = useProject('ltm-store-');

  /**
   * The first page three ways: from the ranking table by insertion (a short page),
   * from the table by sorting (a page of over 500), and by scoring every memory
   * one by one (a filter that every memory passes: they are all at phase 0).
   */
  function rankings(store: MemoryStore, size: number): string[][] {
    const page = (memories: MemoryView[]) => memories.slice(0, size).map((m) => `${m.id} ${m.priority}`);
    return [page(store.list({ limit: size }).memories), page(store.list({ limit: 501 }).memories), page(store.list({ limit: size, phase: 0 }).memories)];
  }

  it('serves the same first page through sessions, accesses, edits, forgets and restores', async () => {
    const store = ctx.open();
    const ids: string[] = [];
    const importance = ['', 'importance:critical', 'importance:important', 'importance:low'];
    for (let i = 0; i < 60; i++) {
      const tags = [`t${i % 5}`, ...(i % 7 === 0 ? [importance[(i / 7) % 4]!].filter(Boolean) : [])];
      ids.push((await store.store({ topic: `Memory ${i}`, content: `Content ${i}.`, tags, difficulty: ((i * 37) % 100) / 100 })).memory.id);
    }
    const check = (what: string) => {
      const [inserted, sorted, scored] = rankings(store, 15);
      assert.deepEqual(inserted, scored, what);
      assert.deepEqual(sorted, scored, what);
    };
    check('after storing');
    for (let session = 1; session <= 6; session++) {
      await store.updateState((state) => {
        state.session_count += 1;
      });
      await store.recordAccesses(ids.filter((_, i) => i % (session + 2) === 0));
      check(`after session ${session}`);
    }
    await store.forget(ids[3]!);
    await store.forget(ids[10]!);
    check('after forgetting');
    await store.restore(ids[3]!, { importance: 'critical' });
    check('after restoring with importance');
    // A hand edit in place of one memory's difficulty, seen by a full refresh.
    const file = path.join(ctx.root, 'memories', `${ids[20]}.md`);
    fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace(/^difficulty: .*$/m, 'difficulty: 1'));
    store.refresh({ full: true });
    check('after a hand edit');
    // Another process (a second store) writes stats.json.
    const other = ctx.open();
    await other.recordAccesses(ids.slice(40, 50));
    check('after another process counted accesses');
    assert.equal(store.list({ limit: 5 }).total, 59);
  });
});
