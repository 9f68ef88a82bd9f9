import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { USAGE, commandHelp, runCli, type CliOutput } from '../../src/cli';
import { COMMANDS, COMMON_OPTIONS } from '../../src/cliCommands';
import { DEVELOPER_TERM_GROUPS } from '../../src/core/developerTerms';
import { MemoryStore } from '../../src/core/store';
import { INDEX_ASIDE_MIN_MEMORIES } from '../../src/core/searchIndexAside';
import { SWEEP_ASIDE_MIN_RECORD_CACHE_BYTES } from '../../src/core/storeOpening';
import CLI_FILES from '../../src/shared/cliFiles.json';
import { DEMOTION_MIN_INJECTED_SESSIONS } from '../../src/core/usage';
import { REPO_ROOT, ensureCliBuilt, ltmRoot, makeTempProject, memoryFileIds, readJson, removeDir, snapshotDiff, snapshotFiles, statsOnDisk, testId, writeConfig, writeMemory } from '../support/storeKit';

const CLI = path.join(REPO_ROOT, 'dist', 'cli.js');
const ID_RE = /^mem_[0-9a-f]{8}$/;

type Json = Record<string, unknown>;

/** Asserts that `value` has each key, of the given typeof ('array' and 'null' too). */
function assertShape(value: unknown, shape: Record<string, string | string[]>, where: string): asserts value is Json {
  assert.ok(value && typeof value === 'object' && !Array.isArray(value), `${where} is not an object`);
  for (const [key, types] of Object.entries(shape)) {
    assert.ok(key in value, `${where} has no "${key}": ${JSON.stringify(value)}`);
    const v = (value as Json)[key];
    const actual = v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v;
    assert.ok((Array.isArray(types) ? types : [types]).includes(actual), `${where}.${key} is ${actual}, expected ${String(types)}`);
  }
}

function assertOneLineError(out: CliOutput, what: string): void {
  assert.equal(out.stdout, '', `${what}: nothing on stdout`);
  assert.notEqual(out.exitCode, 0, `${what}: non-zero exit`);
  assert.match(out.stderr, /^ltm: [^\n]+\n$/, `${what}: exactly one line on stderr, got ${JSON.stringify(out.stderr)}`);
}

describe('cli', function () {
  this.timeout(30_000);
  let project: string;
  let root: string;

  beforeEach(() => {
    project = makeTempProject('ltm-cli-');
    root = ltmRoot(project);
  });
  afterEach(() => removeDir(project));

  const cli = (...args: string[]) => runCli([...args, '--project', project]);
  async function json<T = Json>(...args: string[]): Promise<T> {
    const out = await cli(...args, '--json');
    assert.equal(out.exitCode, 0, `ltm ${args.join(' ')}: ${out.stderr}`);
    assert.equal(out.stderr, '');
    return JSON.parse(out.stdout) as T;
  }
  async function text(...args: string[]): Promise<string> {
    const out = await cli(...args);
    assert.equal(out.exitCode, 0, `ltm ${args.join(' ')}: ${out.stderr}`);
    assert.equal(out.stderr, '');
    return out.stdout;
  }
  async function storeOne(topic: string, content: string, ...extra: string[]): Promise<string> {
    const out = await json<{ id: string }>('store', '--topic', topic, '--content', content, ...extra);
    return out.id;
  }

  describe('every command’s output', () => {
    it('store: {success, id, message} and a readable line', async () => {
      const out = await json('store', '--topic', 'Use 127.0.0.1', '--content', 'localhost resolved to ::1.', '--tags', 'networking,Hooks', '--difficulty', '0.8', '--summary', 'IPv4 only');
      assertShape(out, { success: 'boolean', id: 'string', message: 'string' }, 'store');
      assert.equal(out.success, true);
      assert.match(out.id as string, ID_RE);
      assert.ok((out.message as string).includes(out.id as string));
      const raw = fs.readFileSync(path.join(root, 'memories', `${out.id as string}.md`), 'utf8');
      assert.match(raw, /^difficulty: 0\.8$/m);
      assert.match(raw, /## Summary\nIPv4 only\n/);
      assert.deepEqual((await json('get', out.id as string)).tags, ['networking', 'hooks']);

      const t = await text('store', '--topic', 'Second', '--content', 'Another one about docker builds.', '--auto-tag');
      assert.match(t, /^Stored memory Second \(ID: mem_[0-9a-f]{8}\)\n/);
      assert.match(t, /Tags: docker/);
    });

    it('status: {total_memories, by_phase{full,hint,abstract}, total_archived, session_count, last_eviction, storage_size_bytes}', async () => {
      writeConfig(project, { max_memories: 2, eviction_batch_size: 1 }, 4);
      const empty = await json('status');
      assertShape(empty, { total_memories: 'number', by_phase: 'object', total_archived: 'number', session_count: 'number', last_eviction: ['string', 'null'], storage_size_bytes: 'number' }, 'status');
      assert.equal(empty.total_memories, 0);
      assert.equal(empty.last_eviction, null);

      const ids = [await storeOne('one', 'first', '--difficulty', '0'), await storeOne('two', 'second', '--difficulty', '1'), await storeOne('three', 'third', '--difficulty', '1')];
      await json('evict');
      await storeOne('four', 'fourth', '--difficulty', '1');
      await json('forget', ids[2]!);
      const s = await json('status');
      assertShape(s, { total_memories: 'number', by_phase: 'object', total_archived: 'number', session_count: 'number', last_eviction: 'string', storage_size_bytes: 'number' }, 'status');
      assert.equal(s.total_memories, 3);
      assert.deepEqual(s.by_phase, { full: 2, hint: 1, abstract: 0 });
      assert.equal(s.total_archived, 1);
      assert.equal(s.session_count, 4);
      assert.ok(!Number.isNaN(Date.parse(s.last_eviction as string)));
      const sizes = [...snapshotFiles(root)].filter(([n]) => /^(memories|archives)\//.test(n)).reduce((sum, [, b]) => sum + b.length, 0);
      const everything = [...snapshotFiles(root).values()].reduce((sum, b) => sum + b.length, 0);
      assert.ok((s.storage_size_bytes as number) >= sizes && (s.storage_size_bytes as number) <= everything, `storage_size_bytes ${String(s.storage_size_bytes)} not in [${sizes}, ${everything}]`);

      const t = await text('status');
      assert.match(t, /^LTM Status\n=+\n\n/);
      assert.match(t, /\nMemories: +3 \(Full 2, Hint 1, Abstract 0\)\n/);
      assert.match(t, /\nArchived: +1\n/);
      assert.match(t, /\nSessions: +4\n/);
      // Plain text on a terminal: no Markdown, and the values start in one column.
      assert.doesNotMatch(t, /\*\*|`/);
      const fieldColumns = new Set(t.split('\n').filter((l) => /^[A-Z][a-z ]+: +\S/.test(l)).map((l) => /^[^:]+: +/.exec(l)![0].length));
      assert.equal(fieldColumns.size, 1, t);
      const bare = path.join(project, 'no-store-yet');
      fs.mkdirSync(bare);
      const noStore = await runCli(['status', '--project', bare]);
      assert.equal(noStore.exitCode, 0);
      assert.match(noStore.stdout, /^No memory store yet at /);
      assert.deepEqual(fs.readdirSync(bare), [], 'status creates nothing');
    });

    it('list: {memories[{id,topic,phase,priority,tags,created_at,accessed_at,usage,demotion_candidate}], total, has_more}', async () => {
      const a = await storeOne('Docker cache', 'a', '--tags', 'docker', '--difficulty', '0.9');
      const b = await storeOne('Python venv', 'b', '--tags', 'python', '--difficulty', '0.1');
      const c = await storeOne('Docker compose', 'c', '--tags', 'docker', '--difficulty', '0.5');
      const all = await json<{ memories: Json[]; total: number; has_more: boolean }>('list');
      assertShape(all, { memories: 'array', total: 'number', has_more: 'boolean' }, 'list');
      assert.equal(all.total, 3);
      assert.equal(all.has_more, false);
      for (const m of all.memories) {
        assert.deepEqual(Object.keys(m).sort(), ['accessed_at', 'created_at', 'demotion_candidate', 'id', 'phase', 'priority', 'tags', 'topic', 'usage']);
        assertShape(m, { id: 'string', topic: 'string', phase: 'number', priority: 'number', tags: 'array', created_at: 'string', accessed_at: 'string' }, 'list item');
      }
      assert.deepEqual(all.memories.map((m) => m.id), [a, c, b], 'by priority');
      const page = await json<{ memories: Json[]; total: number; has_more: boolean }>('list', '--limit', '2');
      assert.deepEqual([page.memories.length, page.total, page.has_more], [2, 3, true]);
      const rest = await json<{ memories: Json[]; has_more: boolean }>('list', '--limit', '2', '--offset', '2');
      assert.deepEqual([rest.memories.map((m) => m.id), rest.has_more], [[b], false]);
      assert.deepEqual((await json<{ memories: Json[] }>('list', '--tag', 'docker')).memories.map((m) => m.id), [a, c]);
      assert.deepEqual((await json<{ memories: Json[] }>('list', '--keyword', 'venv')).memories.map((m) => m.id), [b]);
      assert.equal((await json<{ total: number }>('list', '--phase', '1')).total, 0);

      const t = await text('list', '--limit', '1');
      assert.match(t, /^Showing 1 of 3 memories:/);
      assert.match(await text('list', '--keyword', 'venv'), /^Showing 1 of 1 memory:/, 'one memory, in the singular');
      assert.ok(t.includes(`- Docker cache (ID: ${a})`));
      assert.match(t, /Tags: docker \| Phase: Full \| Priority: \d\.\d\d/);
      assert.match(t, /More: use offset 1\./);
      assert.match(await text('list', '--keyword', 'zzz'), /^No memories found\./);
    });

    it('recall: {memories[{id,topic,summary,priority,phase,tags}], total}', async () => {
      const pg = await storeOne('Postgres pool exhaustion', 'Raise the pool to 50.', '--tags', 'db');
      const other = await storeOne('Batch tuning', 'The batch hammered postgres.', '--tags', 'jobs');
      const out = await json<{ memories: Json[]; total: number }>('recall', 'postgres');
      assertShape(out, { memories: 'array', total: 'number' }, 'recall');
      assert.equal(out.total, 2);
      for (const m of out.memories) assertShape(m, { id: 'string', topic: 'string', summary: 'string', priority: 'number', phase: 'number', tags: 'array' }, 'recall item');
      assert.deepEqual(out.memories.map((m) => m.id), [pg, other]);
      assert.equal(out.memories[0]!.summary, 'Raise the pool to 50.');
      assert.deepEqual((await json<{ memories: Json[] }>('recall', 'postgres', '--tag', 'jobs')).memories.map((m) => m.id), [other]);
      assert.deepEqual((await json<{ memories: Json[] }>('recall', 'pool', 'exhaustion', '--limit', '1')).memories.map((m) => m.id), [pg]);
      await json('forget', pg);
      assert.deepEqual((await json<{ memories: Json[] }>('recall', 'postgres')).memories.map((m) => m.id), [other]);
      const archived = await json<{ memories: Json[] }>('recall', 'postgres', '--archives');
      assert.deepEqual(archived.memories.map((m) => [m.id, m.phase]), [[pg, 3]]);
      assert.equal((await json<{ total: number }>('recall', 'postgres', '--all')).total, 2);

      const t = await text('recall', 'postgres');
      assert.match(t, /^Found 1 memory matching "postgres":/);
      assert.ok(t.includes(`Batch tuning (ID: ${other})`));
      assert.match(t, /Summary: The batch hammered postgres\./);
      assert.match(await text('recall', 'nothingmatcheshere'), /^No memories match "nothingmatcheshere"\./);
    });

    it('get: {id, topic, content, tags, phase, priority, difficulty, access_count, created_at, accessed_at, created_session, last_session}', async () => {
      const id = await storeOne('Get me', 'Full content.\n\nSecond paragraph.', '--tags', 'x', '--difficulty', '0.3');
      const out = await json('get', id);
      assertShape(
        out,
        {
          id: 'string', topic: 'string', content: 'string', tags: 'array', phase: 'number', priority: 'number', difficulty: 'number',
          access_count: 'number', created_at: 'string', accessed_at: 'string', created_session: 'number', last_session: 'number',
        },
        'get',
      );
      assert.deepEqual([out.id, out.topic, out.content, out.tags, out.phase, out.difficulty, out.access_count], [id, 'Get me', 'Full content.\n\nSecond paragraph.', ['x'], 0, 0.3, 1]);
      assert.equal((await json('get', id)).access_count, 2, 'each get counts');
      const t = await text('get', id);
      assert.match(t, /^Get me\n======\n\n/);
      assert.match(t, new RegExp(`\nID: +${id}\n`));
      assert.match(t, /\nAccesses: +3\n/);
      assert.match(t, /\nContent\n-------\nFull content\.\n\nSecond paragraph\./);
    });

    it('forget: {success, message, archived}; --purge deletes for good', async () => {
      const a = await storeOne('Forget me', 'a');
      const b = await storeOne('Purge me', 'b');
      const out = await json('forget', a);
      assertShape(out, { success: 'boolean', message: 'string', archived: 'boolean' }, 'forget');
      assert.deepEqual([out.success, out.archived], [true, true]);
      assert.ok((out.message as string).includes(a));
      assert.ok(fs.existsSync(path.join(root, 'archives', `${a}.md`)));
      const purged = await json('forget', b, '--purge');
      assert.deepEqual([purged.success, purged.archived], [true, false]);
      assert.ok(!fs.existsSync(path.join(root, 'archives', `${b}.md`)));
      assert.deepEqual(memoryFileIds(path.join(root, 'memories')), []);
      const c = await storeOne('Text forget', 'c');
      assert.match(await text('forget', c), new RegExp(`^Memory ${c} was forgotten; .*can be restored\\.\\n$`));
    });

    it('restore: success, id and phase 0; --importance', async () => {
      const a = await storeOne('Restore me', 'Whole text.\n\nKept.', '--tags', 'keep');
      await json('forget', a);
      const out = await json('restore', a, '--importance', 'critical');
      assertShape(out, { success: 'boolean', id: 'string', message: 'string', phase: 'number', tags: 'array' }, 'restore');
      assert.deepEqual([out.success, out.id, out.phase, out.tags], [true, a, 0, ['keep', 'importance:critical']]);
      assert.equal((await json('get', a)).content, 'Whole text.\n\nKept.');
      await json('forget', a);
      assert.equal(await text('restore', a), `Restored Restore me (ID: ${a}) with its full text, at phase 0.\n`);
    });

    it('check and fix: {healthy, problems, counts} and {success, actions, healthy, problems}', async () => {
      const a = await storeOne('Healthy', 'x');
      const healthy = await json('check');
      assertShape(healthy, { healthy: 'boolean', problems: 'array', counts: 'object' }, 'check');
      assert.equal(healthy.healthy, true);
      assert.deepEqual(healthy.counts, { indexed_memories: 1, memory_files: 1, stats_entries: 1, archive_files: 0, archived_memories: 0 });
      assert.match(await text('check'), /\nStatus: Healthy: no integrity issues found\.\n/);

      fs.writeFileSync(path.join(root, 'memories', 'mem_0000abcd.md'), '---\nid: mem_0000abcd\ntopic: "unlisted"\n---\nbody\n');
      // A store with problems: the same report, and exit code 1 (so that `ltm check` can gate CI).
      const brokenJsonOut = await cli('check', '--json');
      assert.equal(brokenJsonOut.exitCode, 1, brokenJsonOut.stderr);
      assert.equal(brokenJsonOut.stderr, '');
      const broken = JSON.parse(brokenJsonOut.stdout) as { healthy: boolean; problems: { kind: string; id?: string }[] };
      assert.equal(broken.healthy, false);
      assert.deepEqual(broken.problems.map((p) => [p.kind, p.id]), [['not_indexed', 'mem_0000abcd']]);
      const brokenTextOut = await cli('check');
      assert.equal(brokenTextOut.exitCode, 1, brokenTextOut.stderr);
      assert.equal(brokenTextOut.stderr, '');
      const brokenText = brokenTextOut.stdout;
      assert.match(brokenText, /\nStatus: 1 issue found\n/);
      assert.match(brokenText, /\nMemories index\.json does not list yet\n-+\n- memories\/mem_0000abcd\.md is a valid memory that index\.json does not list yet/);

      const fixed = await json('fix');
      assertShape(fixed, { success: 'boolean', actions: 'array', healthy: 'boolean', problems: 'array' }, 'fix');
      assert.deepEqual([fixed.success, fixed.healthy, fixed.problems], [true, true, []]);
      assert.equal((fixed.actions as string[]).length, 1);
      assert.match((fixed.actions as string[])[0]!, /mem_0000abcd/);
      assert.ok(!fs.existsSync(path.join(root, 'archives', 'mem_0000abcd.md')), 'nothing was archived');
      assert.equal((await json('get', 'mem_0000abcd')).topic, 'unlisted');
      assert.match(await text('fix'), /^LTM Integrity Fix\n=+\n\nNothing to repair\.\n\nThe store is healthy\.\n$/);
      assert.equal((await json('check')).healthy, true);
      assert.equal((await json('get', a)).topic, 'Healthy');
      fs.writeFileSync(path.join(root, 'archives', 'mem_0000dcba.md'), '---\nid: mem_0000dcba\ntopic: "stray"\n---\nx\n');
      const cleaned = await json<{ actions: string[] }>('fix', '--clean-archives');
      assert.ok(cleaned.actions.some((x) => x.includes('mem_0000dcba')), cleaned.actions.join('\n'));
      assert.ok(!fs.existsSync(path.join(root, 'archives', 'mem_0000dcba.md')));
      assert.ok(fs.existsSync(path.join(root, 'memories', 'mem_0000abcd.md')), 'cleaning archives touches no memory');
    });

    it('evict: {ran, before, after, max_memories, steps}', async () => {
      writeConfig(project, { max_memories: 2, eviction_batch_size: 1 });
      const low = await storeOne('Low', 'First.\n\nSecond.', '--difficulty', '0');
      await storeOne('High', 'h', '--difficulty', '1');
      const noop = await json('evict');
      assert.deepEqual(noop, { ran: false, before: 2, after: 2, max_memories: 2, steps: [] });
      assert.match(await text('evict'), /^No eviction needed: 2 memories, limit 2\.\n$/);
      await storeOne('Higher', 'h2', '--difficulty', '1');
      const ran = await json('evict');
      assertShape(ran, { ran: 'boolean', before: 'number', after: 'number', max_memories: 'number', steps: 'array' }, 'evict');
      assert.deepEqual(ran, { ran: true, before: 3, after: 3, max_memories: 2, steps: [{ id: low, topic: 'Low', from: 0, to: 1 }] });
      const t = await text('evict');
      assert.match(t, /^Eviction cycle: 1 memory advanced \(3 → 3 in memories\/, limit 2\)\./);
      assert.ok(t.includes(`- ${low} Hint → Abstract: Low`));
      assert.match(await text('get', low), /Reduced by eviction/);
    });
  });

  describe('anchors: store --files, get, stale, anchor', () => {
    const numbered = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1}`).join('\n') + '\n';
    const writeCode = (file: string, body: string) => {
      fs.mkdirSync(path.dirname(path.join(project, file)), { recursive: true });
      fs.writeFileSync(path.join(project, file), body);
    };

    it('anchors a memory to files and lines, says when the code changed, and re-anchors it', async () => {
      writeCode('src/pool.ts', numbered(30));
      writeCode('src/retry.ts', numbered(5));
      const id = await storeOne('Pool size is 50', 'The pool ran dry.', '--files', 'src/pool.ts#L10-12, src/retry.ts');
      const fresh = await json<Json>('get', id);
      assert.deepEqual([fresh.anchors, fresh.stale, fresh.stale_reasons], [['src/pool.ts#L10-12', 'src/retry.ts'], false, []]);
      assert.match(await text('get', id), /\nAnchored to: +src\/pool\.ts#L10-12, src\/retry\.ts\n/);
      assert.deepEqual(await json('stale'), { stale: [], followed: [], stale_memories: 'label' });

      writeCode('src/pool.ts', numbered(30).replace('line 11\n', 'line eleven\n'));
      const stale = await json<Json>('get', id);
      assert.deepEqual([stale.stale, stale.stale_reasons], [true, ['src/pool.ts#L10-12: the lines changed']]);
      assert.match(await text('get', id), /\nPossibly outdated: +the code it is anchored to changed since it was written \(src\/pool\.ts#L10-12: the lines changed\)/);
      assert.deepEqual(await json('stale'), { stale: [{ id, topic: 'Pool size is 50', reasons: ['src/pool.ts#L10-12: the lines changed'] }], followed: [], stale_memories: 'label' });
      assert.match(await text('status'), /\nPossibly outdated: +1 memory whose anchored code changed/);

      const reanchored = await json<Json>('anchor', id, '--reanchor');
      assert.equal(reanchored.stale, false);
      assert.deepEqual((await json<{ stale: unknown[] }>('stale')).stale, []);
      const removed = await json<Json>('anchor', id, '--none');
      assert.deepEqual(removed.anchors, []);
    });

    it('stale --skip / --label: kept in state.json (creating the store), shown by status, and what `context` gives', async () => {
      assert.match(USAGE, /\n  stale \[--label \| --skip\] +memories whose anchored code changed/);
      const skip = await text('stale', '--skip');
      assert.match(skip, /Session start and offers leave stale memories out; recall and get still return them, marked/);
      assert.equal(readJson<{ config: { stale_memories: string } }>(path.join(root, 'state.json')).config.stale_memories, 'skip');
      assert.match(await text('status'), /\nConfig: +.*, stale memories skipped\n/);
      assert.equal((await json<{ config: { stale_memories: string } }>('status')).config.stale_memories, 'skip');
      assert.equal((await json<{ stale_memories: string }>('stale')).stale_memories, 'skip', 'without a flag: listed, the setting kept');

      writeCode('src/pool.ts', numbered(30));
      const stale = await storeOne('Connection pool ran dry under load', 'The connection pool ran dry under load; it is 50 now.', '--difficulty', '0.9', '--files', 'src/pool.ts#L10-12');
      const fresh = await storeOne('Pool under load: leaked connections', 'When the connection pool runs dry under load, look for leaked connections.', '--difficulty', '0.2');
      const store = MemoryStore.open(project);
      await store.updateState((state) => {
        state.config.memories_to_load = 1;
      });
      store.dispose();
      writeCode('src/pool.ts', numbered(30).replace('line 11\n', 'line eleven\n'));
      type Preview = { session_start: { memories: string[]; text: string }; prompt: { memories: { id: string }[]; text: string } };
      const prompt = ['--prompt', 'the connection pool ran dry under load again'];
      const skipped = await json<Preview>('context', ...prompt);
      assert.deepEqual(skipped.session_start.memories, [fresh]);
      assert.deepEqual(skipped.prompt.memories.map((m) => m.id), []);
      assert.doesNotMatch(skipped.session_start.text + skipped.prompt.text, /possibly outdated/);
      // Asked for explicitly, it is there, marked.
      assert.ok((await json<{ memories: { id: string }[] }>('recall', 'connection pool dry')).memories.some((m) => m.id === stale));
      assert.equal((await json<Json>('get', stale)).stale, true);

      assert.match(await text('stale', '--label'), /Session start and offers give stale memories marked "possibly outdated" \(ltm stale --skip leaves them out\)/);
      const labelled = await json<Preview>('context', ...prompt);
      assert.deepEqual(labelled.session_start.memories, [stale]);
      assert.match(labelled.session_start.text, /possibly outdated, its code changed: src\/pool\.ts#L10-12: the lines changed/);

      const before = snapshotFiles(root);
      const both = await cli('stale', '--label', '--skip');
      assertOneLineError(both, 'ltm stale --label --skip');
      assert.equal(both.stderr, 'ltm: use either --label or --skip, not both\n');
      assert.equal(both.exitCode, 2);
      assert.deepEqual(snapshotDiff(before, snapshotFiles(root)), [], 'nothing changed');
    });

    it('follows lines that moved when listing stale memories, and refuses files it cannot anchor', async () => {
      writeCode('src/pool.ts', numbered(30));
      const id = await storeOne('Pool size is 50', 'The pool ran dry.', '--files', 'src/pool.ts#L10-12');
      writeCode('src/pool.ts', `// added\n${numbered(30)}`);
      assert.deepEqual(await json('stale'), { stale: [], followed: [id], stale_memories: 'label' });
      assert.deepEqual((await json<Json>('get', id)).anchors, ['src/pool.ts#L11-13']);
      const before = snapshotFiles(root);
      const out = await cli('store', '--topic', 'T', '--content', 'C', '--files', 'src/none.ts');
      assertOneLineError(out, 'a missing file');
      assert.match(out.stderr, /cannot anchor "src\/none\.ts": src\/none\.ts does not exist in the project/);
      assert.deepEqual(snapshotDiff(before, snapshotFiles(root)), []);
      assertOneLineError(await cli('anchor', id, '--reanchor', '--none'), 'two choices');
    });
  });

  it('a JSON file of the store replaced by a directory: check, fix and store fail with one line naming it, and change nothing', async () => {
    await storeOne('Existing', 'Existing content.');
    for (const name of ['index.json', 'state.json', 'stats.json']) {
      const file = path.join(root, name);
      const saved = fs.existsSync(file) ? fs.readFileSync(file) : null;
      fs.rmSync(file, { force: true });
      fs.mkdirSync(file);
      fs.writeFileSync(path.join(file, 'keep.txt'), 'a person put this here');
      const before = snapshotFiles(root);
      for (const args of [['check'], ['fix'], ['store', '--topic', 'New', '--content', 'New content.']]) {
        const out = await cli(...args);
        assertOneLineError(out, `ltm ${args[0]} with ${name} a directory`);
        assert.equal(out.stderr, `ltm: cannot read ${file}: it is a directory, not a file. Move it away or correct its permissions; \`ltm fix\` then writes it anew.\n`);
        assert.deepEqual(snapshotDiff(before, snapshotFiles(root)), [], `ltm ${args[0]} changed nothing`);
      }
      fs.rmSync(file, { recursive: true });
      if (saved) fs.writeFileSync(file, saved);
    }
    assert.equal((await cli('check')).exitCode, 0);
  });

  describe('bad arguments: one line on stderr, non-zero exit, nothing changed', () => {
    async function setup(): Promise<{ id: string; archived: string }> {
      const id = await storeOne('Existing', 'Existing content.');
      const archived = await storeOne('Archived', 'Archived content.');
      await cli('forget', archived);
      await cli('status'); // opening caches what it parsed (parse-cache.json); warm it before the snapshot
      return { id, archived };
    }

    const cases: [string, (ids: { id: string; archived: string }) => string[], number][] = [
      ['an unknown command', () => ['remember', '--topic', 'x'], 2],
      ['an unknown flag', () => ['list', '--bogus'], 2],
      ['a flag of another command', () => ['get', '--purge', 'mem_00000000'], 2],
      ['store without --topic', () => ['store', '--content', 'c'], 2],
      ['store without --content', () => ['store', '--topic', 't'], 2],
      ['store with an empty --topic', () => ['store', '--topic', '', '--content', 'c'], 2],
      ['--difficulty abc', () => ['store', '--topic', 't', '--content', 'c', '--difficulty', 'abc'], 2],
      ['--difficulty 2', () => ['store', '--topic', 't', '--content', 'c', '--difficulty', '2'], 2],
      ['--difficulty with no value', () => ['store', '--topic', 't', '--content', 'c', '--difficulty'], 2],
      ['--limit 0', () => ['list', '--limit', '0'], 2],
      ['--limit 1.5', () => ['recall', 'x', '--limit', '1.5'], 2],
      ['--limit -5', () => ['list', '--limit', '-5'], 2],
      ['--limit=-5', () => ['list', '--limit=-5'], 2],
      ['--offset -1', () => ['list', '--offset', '-1'], 2],
      ['--phase -1', () => ['list', '--phase', '-1'], 2],
      ['--limit -0x10', () => ['recall', 'x', '--limit', '-0x10'], 2],
      ['--limit 1e3', () => ['list', '--limit', '1e3'], 2],
      ['--difficulty -0.5', () => ['store', '--topic', 't', '--content', 'c', '--difficulty', '-0.5'], 2],
      ['--topic with its value forgotten before --content', () => ['store', '--topic', '--content', 'c'], 2],
      ['--content and --content-file both', () => ['store', '--topic', 't', '--content', 'c', '--content-file', 'x.md'], 2],
      ['a --content-file that does not exist', () => ['store', '--topic', 't', '--content-file', 'no-such-file.md'], 2],
      ['--content - and --summary - both', () => ['store', '--topic', 't', '--content', '-', '--summary', '-'], 2],
      ['help for an unknown command', () => ['help', 'frobnicate'], 2],
      ['--offset x', () => ['list', '--offset', 'x'], 2],
      ['--phase 4', () => ['list', '--phase', '4'], 2],
      ['--sort usage', () => ['list', '--sort', 'usage'], 2],
      ['--archives with --all', () => ['recall', 'x', '--archives', '--all'], 2],
      ['recall without a query', () => ['recall'], 2],
      ['an extra positional', () => ['status', 'extra'], 2],
      ['two IDs to get', ({ id }) => ['get', id, id], 2],
      ['get without an ID', () => ['get'], 2],
      ['an unknown ID to get', () => ['get', 'mem_00000000'], 1],
      ['an unknown ID to forget', () => ['forget', 'mem_00000000'], 1],
      ['an unknown ID to restore', () => ['restore', 'mem_00000000'], 1],
      ['an archived ID to get', ({ archived }) => ['get', archived], 1],
      ['a full memory to restore', ({ id }) => ['restore', id], 1],
      ['a malformed ID to get', () => ['get', 'mem_xyz'], 2],
      ['a malformed ID to forget', () => ['forget', '../../etc/passwd', '--purge'], 2],
      ['a malformed ID to restore', () => ['restore', 'MEM_00000000'], 2],
      ['--importance bogus', ({ archived }) => ['restore', archived, '--importance', 'bogus'], 2],
    ];
    for (const [name, args, code] of cases) {
      it(name, async () => {
        const ids = await setup();
        const before = snapshotFiles(root);
        const argv = args(ids);
        const out = await cli(...argv);
        assertOneLineError(out, `ltm ${argv.join(' ')}`);
        assert.equal(out.exitCode, code, out.stderr);
        const jsonOut = await cli(...argv, '--json');
        assertOneLineError(jsonOut, `ltm ${argv.join(' ')} --json`);
        assert.deepEqual(snapshotDiff(before, snapshotFiles(root)), [], 'files changed');
      });
    }

    it('a negative number gets the message of the option, not parseArgs\' "ambiguous"', async () => {
      for (const argv of [['list', '--limit', '-5'], ['list', '--limit=-5'], ['list', '--offset', '-1']]) {
        const out = await cli(...argv);
        assert.match(out.stderr, /^ltm: --(limit|offset) must be a whole number ≥ [01] \(got "-[0-9]+"\)\n$/, `ltm ${argv.join(' ')}`);
      }
    });

    it('a project folder that does not exist is refused with exit 2, and nothing is created', async () => {
      const missing = path.join(project, 'no-such-folder');
      for (const command of ['status', 'list', 'recall x', 'init', 'check']) {
        const out = await runCli([...command.split(' '), '--project', missing]);
        assert.deepEqual(out, { stdout: '', stderr: `ltm: no such folder: ${missing}\n`, exitCode: 2 }, command);
      }
      const aFile = path.join(project, 'a-file.txt');
      fs.writeFileSync(aFile, 'not a folder');
      assert.equal((await runCli(['status', '--project', aFile])).exitCode, 2);
      assert.equal(fs.existsSync(missing), false);
    });

    it('a bad value with a newline in it still gives one line on stderr', async () => {
      await setup();
      const before = snapshotFiles(root);
      const bad: string[] = [];
      for (const argv of [
        ['get', 'mem_0000\nbeef'],
        ['frob\nnicate'],
        ['store', '--topic', 't', '--content', 'c', '--tags', 'one,two\nlines'],
        ['store', '--topic', 't', '--content', 'c', '--difficulty', 'x\ny'],
      ]) {
        const out = await cli(...argv);
        assert.notEqual(out.exitCode, 0);
        if (!/^ltm: [^\n]+\n$/.test(out.stderr)) bad.push(`ltm ${JSON.stringify(argv)} → ${JSON.stringify(out.stderr)}`);
      }
      assert.deepEqual(bad, [], 'stderr has more than one line');
      assert.deepEqual(snapshotDiff(before, snapshotFiles(root)), []);
    });

    it('no command prints the usage and exits non-zero; --help and --version exit 0', async () => {
      const none = await runCli([]);
      assert.notEqual(none.exitCode, 0);
      assert.match(none.stdout, /^ltm \d+\.\d+\.\d+: /);
      assert.equal((await runCli(['--help'])).exitCode, 0);
      assert.match((await runCli(['--version'])).stdout, /^\d+\.\d+\.\d+\n$/);
      assert.equal((await runCli(['list', '--help'])).exitCode, 0);
    });
  });

  describe('text from a file or standard input', () => {
    const noStdin = { readStdin: () => assert.fail('standard input was read') };

    it('store --content-file stores text too large for a command line, byte for byte', async () => {
      // ~300 KB, over Linux's 128 KB limit for one argument; with characters a shell would mangle.
      const content = `# Notes \`$HOME\` "quoted" 'single' ü 日本\n\n${'A line of a long memory, with \\ and $(not run).\n'.repeat(6_000)}`;
      const file = path.join(project, 'notes.md');
      fs.writeFileSync(file, content);
      const out = await runCli(['store', '--topic', 'From a file', '--content-file', 'notes.md', '--project', project, '--json'], project, noStdin);
      assert.equal(out.exitCode, 0, out.stderr);
      const id = (JSON.parse(out.stdout) as { id: string }).id;
      const got = await json<{ content: string }>('get', id);
      // As typed on a command line: the file's last line ending is not part of the memory.
      assert.equal(got.content, content.replace(/\n$/, ''));
    });

    it('store --content - and update --summary - read standard input once', async () => {
      let reads = 0;
      const stdin = (text: string) => ({ readStdin: () => (reads++, text) });
      const out = await runCli(['store', '--topic', 'Piped', '--content', '-', '--project', project, '--json'], project, stdin('Piped content.\nSecond line.'));
      assert.equal(out.exitCode, 0, out.stderr);
      const id = (JSON.parse(out.stdout) as { id: string }).id;
      const updated = await runCli(['update', id, '--summary', '-', '--project', project], project, stdin('A summary from a pipe.'));
      assert.equal(updated.exitCode, 0, updated.stderr);
      assert.equal(reads, 2);
      const got = await json<{ content: string; summary: string }>('get', id);
      assert.equal(got.content, 'Piped content.\nSecond line.');
      assert.equal(got.summary, 'A summary from a pipe.');
    });

    it('the real binary reads --content - from a pipe', function () {
      this.timeout(60_000);
      ensureCliBuilt();
      const r = spawnSync(process.execPath, [CLI, 'store', '--topic', 'Through a pipe', '--content', '-', '--json'], { cwd: project, input: 'Text that came through a pipe.\n', encoding: 'utf8' });
      assert.equal(r.status, 0, r.stderr);
      const id = (JSON.parse(r.stdout) as { id: string }).id;
      const got = spawnSync(process.execPath, [CLI, 'get', id, '--json'], { cwd: project, encoding: 'utf8' });
      assert.equal((JSON.parse(got.stdout) as { content: string }).content, 'Text that came through a pipe.');
    });
  });

  describe('help', () => {
    it('`ltm help store` and `ltm store --help` print the command\'s own help', async () => {
      const store = COMMANDS.find((c) => c.name === 'store')!;
      const viaHelp = await runCli(['help', 'store']);
      assert.equal(viaHelp.exitCode, 0);
      assert.equal(viaHelp.stdout, commandHelp(store));
      assert.deepEqual(await runCli(['store', '--help']), viaHelp);
      assert.match(viaHelp.stdout, /^Usage: ltm store --topic T /);
      assert.match(viaHelp.stdout, /--content-file F, --summary-file F\) or from standard input \(--content -\)/);
      assert.match((await runCli(['help', 'list'])).stdout, /\n\nMemories by priority, last use or creation/);
    });
  });

  describe('the real binary (dist/cli.js)', () => {
    before(function () {
      this.timeout(60_000);
      ensureCliBuilt();
    });

    const bin = (...args: string[]) => spawnSync(process.execPath, [CLI, ...args], { cwd: project, encoding: 'utf8' });

    it('stores, reads and reports through a real process with exit code 0', () => {
      const stored = bin('store', '--topic', 'From the binary', '--content', 'It works.', '--json');
      assert.equal(stored.status, 0, stored.stderr);
      assert.equal(stored.stderr, '');
      const id = (JSON.parse(stored.stdout) as { id: string }).id;
      assert.match(id, ID_RE);
      const status = bin('status', '--json');
      assert.equal(status.status, 0);
      assert.equal((JSON.parse(status.stdout) as { total_memories: number }).total_memories, 1);
      const got = bin('get', id, '--project', project);
      assert.equal(got.status, 0);
      assert.match(got.stdout, /^From the binary\n=+\n/);
      assert.equal(statsOnDisk(root)[id]!.access_count, 1);
    });

    it('recalls a memory written in other words with the developer vocabulary the build embedded as tables', () => {
      const bundle = fs.readFileSync(path.join(REPO_ROOT, CLI_FILES.bundle), 'utf8');
      // What a fresh process would otherwise stem word by word before its first search.
      assert.ok(!bundle.includes(DEVELOPER_TERM_GROUPS[0]!), 'the vocabulary is in the bundle as its tables, not as text');
      const stored = bin('store', '--topic', 'API pods OOMKilled at the memory limit', '--content', 'The heap outgrew the container.', '--json');
      assert.equal(stored.status, 0, stored.stderr);
      const id = (JSON.parse(stored.stdout) as { id: string }).id;
      const recalled = bin('recall', 'hogging RAM', '--json');
      assert.equal(recalled.status, 0, recalled.stderr);
      assert.deepEqual((JSON.parse(recalled.stdout) as { memories: { id: string }[] }).memories.map((m) => m.id), [id], '"RAM" reaches memory, heap, OOM');
    });

    it('a store large by its record cache (its memory files statted on a worker thread) answers as before, a hand edit in place included', () => {
      const ids: string[] = [];
      for (const topic of ['Flaky payment webhook test', 'Webhook retries need idempotency keys', 'Lint runs before the build']) {
        const stored = bin('store', '--topic', topic, '--content', `${topic}.`, '--json');
        assert.equal(stored.status, 0, stored.stderr);
        ids.push((JSON.parse(stored.stdout) as { id: string }).id);
      }
      const answers = () => ['list', 'recall webhook', 'status'].map((command) => bin(...command.split(' '), '--json').stdout);
      const before = answers();
      const parseCache = path.join(root, 'parse-cache.json');
      assert.ok(fs.existsSync(parseCache), 'the CLI saved its record cache');
      // Trailing spaces keep the JSON as it was and make the file as large as a store of thousands.
      fs.appendFileSync(parseCache, ' '.repeat(SWEEP_ASIDE_MIN_RECORD_CACHE_BYTES));
      assert.deepEqual(answers(), before);
      const file = path.join(root, 'memories', `${ids[2]}.md`);
      const ino = fs.statSync(file).ino;
      fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('Lint runs before the build', 'Lint runs before the webhook build'));
      assert.equal(fs.statSync(file).ino, ino, 'edited in place');
      fs.appendFileSync(parseCache, ' '.repeat(SWEEP_ASIDE_MIN_RECORD_CACHE_BYTES));
      const recalled = JSON.parse(bin('recall', 'webhook', '--json').stdout) as { memories: { id: string; topic: string }[] };
      assert.deepEqual(recalled.memories.map((m) => m.id).sort(), [...ids].sort());
      assert.equal(recalled.memories.find((m) => m.id === ids[2])!.topic, 'Lint runs before the webhook build');
    });

    it('a large store without search-index.bin (a fresh clone) is searched with the index its worker built, which is then saved', function () {
      this.timeout(60_000);
      const count = INDEX_ASIDE_MIN_MEMORIES + 50;
      const init = MemoryStore.open(project);
      init.init();
      init.dispose();
      for (let n = 1; n <= count; n++) {
        const topic = n === 700 ? 'Rotate the zeppelin credentials' : `Build step ${n}`;
        writeMemory(root, testId(n), { topic, content: `Run the build step number ${n} with the cache warmed.` });
      }
      const searchIndex = path.join(root, 'search-index.bin');
      assert.ok(!fs.existsSync(searchIndex));
      const recall = () => bin('recall', 'zeppelin credentials', '--json');
      const first = recall();
      assert.equal(first.status, 0, first.stderr);
      assert.deepEqual((JSON.parse(first.stdout) as { memories: { id: string }[] }).memories.map((m) => m.id), [testId(700)]);
      assert.ok(fs.existsSync(searchIndex), 'the index was not saved');
      // Loaded from the saved index now: the same answer.
      assert.equal(recall().stdout, first.stdout);
      const context = bin('context', '--prompt', 'how do we rotate the zeppelin credentials again?', '--json');
      assert.equal(context.status, 0, context.stderr);
      assert.match(context.stdout, new RegExp(testId(700)));
    });

    it('`check` exits 1 on a store with problems and 0 on a healthy one, text and --json alike', () => {
      const stored = bin('store', '--topic', 'Healthy at first', '--content', 'x', '--json');
      assert.equal(stored.status, 0, stored.stderr);
      for (const args of [['check'], ['check', '--json']]) {
        const r = bin(...args);
        assert.equal(r.status, 0, `ltm ${args.join(' ')} on a healthy store: ${r.stdout}${r.stderr}`);
        assert.equal(r.stderr, '');
      }
      assert.equal((JSON.parse(bin('check', '--json').stdout) as { healthy: boolean }).healthy, true);

      fs.writeFileSync(path.join(root, 'memories', 'mem_0000abcd.md'), '---\nid: mem_0000abcd\ntopic: "orphan"\n---\nbody\n');
      const text = bin('check');
      assert.equal(text.status, 1, `ltm check on a broken store: ${text.stdout}${text.stderr}`);
      assert.equal(text.stderr, '');
      assert.match(text.stdout, /\nStatus: 1 issue found\n/);
      const json = bin('check', '--json');
      assert.equal(json.status, 1, `ltm check --json on a broken store: ${json.stdout}${json.stderr}`);
      assert.equal(json.stderr, '');
      const report = JSON.parse(json.stdout) as { healthy: boolean; problems: { kind: string }[] };
      assert.equal(report.healthy, false);
      assert.ok(report.problems.length > 0, 'problems are listed');

      assert.equal(bin('fix').status, 0);
      assert.equal(bin('check').status, 0, 'healthy again after fix');
    });

    it('`stale --skip` through the binary: `context` leaves the stale memory out, `stale --label` gives it back marked', () => {
      fs.mkdirSync(path.join(project, 'src'));
      fs.writeFileSync(path.join(project, 'src', 'pool.ts'), 'export const size = 10;\n');
      const stored = bin('store', '--topic', 'Pool size', '--content', 'The pool size is 10.', '--files', 'src/pool.ts', '--json');
      assert.equal(stored.status, 0, stored.stderr);
      const id = (JSON.parse(stored.stdout) as { id: string }).id;
      fs.writeFileSync(path.join(project, 'src', 'pool.ts'), 'export const size = 50;\n');
      const context = () => JSON.parse(bin('context', '--json').stdout) as { session_start: { memories: string[]; text: string } };
      assert.deepEqual(context().session_start.memories, [id]);
      assert.match(context().session_start.text, /possibly outdated/);
      const skip = bin('stale', '--skip');
      assert.equal(skip.status, 0, skip.stderr);
      assert.match(skip.stdout, new RegExp(`^${id}  Pool size\n  src/pool\.ts: the file changed\n`));
      assert.deepEqual(context().session_start.memories, []);
      assert.equal(bin('stale', '--label').status, 0);
      assert.deepEqual(context().session_start.memories, [id]);
    });

    it('`check` names a hand-edited anchors entry it cannot read as a warning and exits 0; `fix` leaves the text as it is', () => {
      const stored = bin('store', '--topic', 'Pool size', '--content', 'The pool size is 50.', '--json');
      assert.equal(stored.status, 0, stored.stderr);
      const id = (JSON.parse(stored.stdout) as { id: string }).id;
      const file = path.join(root, 'memories', `${id}.md`);
      const edited = fs.readFileSync(file, 'utf8').replace(/\n---\n/, '\nanchors:\n  - path: "src/pool.ts"\n    hash: "sha1:abc"\n---\n');
      fs.writeFileSync(file, edited);
      const text = bin('check');
      assert.equal(text.status, 0, `a warning alone leaves the store healthy: ${text.stdout}${text.stderr}`);
      assert.match(text.stdout, /\nStatus: Healthy, with 1 warning\n/);
      assert.ok(text.stdout.includes(`\nWarning: Anchors entries that could not be read (left out; the text is kept for you to correct)\n${'-'.repeat(72)}\n- ${id}: anchors[0] (src/pool.ts) is left out: anchors[0].hash must be poly64: and 16 hex digits\n`), text.stdout);
      const json = bin('check', '--json');
      assert.equal(json.status, 0);
      const report = JSON.parse(json.stdout) as { healthy: boolean; problems: { kind: string; level: string; id: string }[] };
      assert.equal(report.healthy, true);
      assert.deepEqual(report.problems.map((p) => [p.kind, p.level, p.id]), [['unreadable_anchor', 'warning', id]]);
      const fix = bin('fix');
      assert.equal(fix.status, 0, fix.stderr);
      assert.match(fix.stdout, /Nothing to repair\.\n\nThe store is healthy\. 1 warning is left for you to correct/);
      assert.equal(fs.readFileSync(file, 'utf8'), edited, 'the entry is neither deleted nor rewritten');
    });

    it('list --sort used|priority|created, the demotion flag in list and the count in status; get --json carries the counters', async () => {
      const store = (topic: string, difficulty: string) => {
        const r = bin('store', '--topic', topic, '--content', `About ${topic}.`, '--difficulty', difficulty, '--json');
        assert.equal(r.status, 0, r.stderr);
        return (JSON.parse(r.stdout) as { id: string }).id;
      };
      const old = store('Oldest, most important', '0.9');
      const unused = store('Injected everywhere, never asked for', '0.5');
      const recalled = store('Recalled in session 6', '0.1');
      const newest = store('Newest, read once', '0.2');
      // What a server records as sessions start and Claude recalls (the hook and MCP paths are tested in test/servers/usage.test.ts).
      const engine = MemoryStore.open(project);
      try {
        for (let session = 1; session <= DEMOTION_MIN_INJECTED_SESSIONS; session++) await engine.recordUsageBySession(new Map([[session, { injected: [old, unused, recalled, newest] }]]));
        await engine.recordRecalls([recalled], 6);
      } finally {
        engine.dispose();
      }
      const read = bin('get', newest, '--json');
      assert.equal(read.status, 0, read.stderr);
      const got = JSON.parse(read.stdout) as { usage: Record<string, unknown>; demotion_candidate: boolean };
      assert.equal(got.demotion_candidate, false);
      assert.deepEqual(
        { ...got.usage, last_used_at: typeof got.usage.last_used_at },
        { injected_sessions: DEMOTION_MIN_INJECTED_SESSIONS, offer_count: 0, recall_count: 0, read_count: 1, last_used_session: 0, last_used_at: 'string' },
      );

      const order = (...args: string[]) => {
        const r = bin('list', ...args, '--json');
        assert.equal(r.status, 0, r.stderr);
        return (JSON.parse(r.stdout) as { memories: { id: string }[] }).memories.map((m) => m.id);
      };
      assert.deepEqual(order('--sort', 'used'), [recalled, newest, old, unused], 'session 6, then session 0 (this store counted no session), then never by priority');
      assert.deepEqual(order('--sort', 'created'), [newest, recalled, unused, old]);
      assert.deepEqual(order('--sort', 'priority'), order());
      assert.equal(order()[0], old);

      const listed = bin('list', '--sort', 'used');
      assert.equal(listed.status, 0, listed.stderr);
      const lines = listed.stdout.split('\n');
      const flagged = lines.filter((l) => l.includes('⚠ demotion candidate'));
      assert.equal(flagged.length, 2, listed.stdout);
      assert.ok(flagged.every((l) => l.includes(unused) || l.includes(old)), listed.stdout);
      assert.ok(lines.some((l) => l.includes(`| Used: injected ${DEMOTION_MIN_INJECTED_SESSIONS} sessions, read 0, recalled 1, last used session 6`)), listed.stdout);
      assert.match(listed.stdout, /\n⚠ 2 shown are candidates for demotion: injected at many session starts, never read nor recalled\. Nothing is done automatically\.\n$/);

      const status = bin('status');
      assert.match(status.stdout, /\nDemotion candidates: +2 /);
      assert.equal((JSON.parse(bin('status', '--json').stdout) as { demotion_candidates: number }).demotion_candidates, 2);
      // The answer of get counts its own read: the memory is no longer a candidate.
      assert.match(bin('get', unused).stdout, /\nUsage: +injected in 5 sessions, read once, never recalled, last used in session 0 \(just now\)\n/);
      assert.equal((JSON.parse(bin('status', '--json').stdout) as { demotion_candidates: number }).demotion_candidates, 1);
    });

    it('bad arguments exit non-zero with exactly one line on stderr and change nothing', () => {
      const stored = bin('store', '--topic', 'Existing', '--content', 'x', '--json');
      assert.equal(stored.status, 0, stored.stderr);
      assert.equal(bin('status').status, 0);
      const before = snapshotFiles(root);
      const cases: [string[], number][] = [
        [['frobnicate'], 2],
        [['list', '--bogus'], 2],
        [['store', '--content', 'no topic'], 2],
        [['store', '--topic', 't', '--content', 'c', '--difficulty', 'abc'], 2],
        [['list', '--limit', '0'], 2],
        [['list', '--sort', 'recent'], 2],
        [['status', 'extra'], 2],
        [['get', 'mem_00000000'], 1],
        [['forget', 'not-an-id'], 2],
      ];
      for (const [args, code] of cases) {
        const r = bin(...args);
        const what = `ltm ${JSON.stringify(args)}`;
        assert.equal(r.status, code, `${what}: exit ${String(r.status)}, stderr ${r.stderr}`);
        assert.equal(r.stdout, '', what);
        assert.match(r.stderr, /^ltm: [^\n]+\n$/, `${what}: stderr ${JSON.stringify(r.stderr)}`);
      }
      assert.deepEqual(snapshotDiff(before, snapshotFiles(root)), []);
    });
  });
});

describe('cli: the command table', () => {
  /** What parseArgs says of an option it does not know, as `ltm` prints it. */
  const unknownOption = (option: string) =>
    `ltm: Unknown option '${option}'. To specify a positional argument starting with a '-', place it at the end of the command after '--', as in '-- "${option}"\n`;
  /** Stand-ins for a command's positional arguments (--help comes before they would be checked). */
  const positionals = (command: (typeof COMMANDS)[number]) => command.positionals.map((p) => `some-${p}`);
  const allOptions = new Set(COMMANDS.flatMap((c) => Object.keys(c.options)));

  it('`ltm --help` lists every command of the table, with its usage and description, and no other', async () => {
    const help = (await runCli(['--help'])).stdout;
    assert.equal(help, USAGE);
    for (const command of COMMANDS) {
      const line = `  ${[command.name, command.usage].filter(Boolean).join(' ')}`;
      const at = help.indexOf(`\n${line}`);
      assert.ok(at >= 0, `ltm --help shows "${line}"`);
      // The description follows on the same line, or on the next when the usage is long.
      assert.ok(help.slice(at + 1 + line.length).trimStart().startsWith(`${command.description}\n`), `${command.name}: its description follows its usage`);
    }
    const listed = help.split('\nCommands:\n')[1]!.split('\n\nOptions:')[0]!.split('\n').filter((l) => /^  \S/.test(l)).map((l) => l.trim().split(' ')[0]);
    assert.deepEqual(listed, COMMANDS.map((c) => c.name));
  });

  it('every command accepts its own options and the common ones', async () => {
    const refused: string[] = [];
    for (const command of COMMANDS) {
      for (const [name, option] of Object.entries({ ...COMMON_OPTIONS, ...command.options })) {
        if (name === 'help') continue;
        const argv = [command.name, ...positionals(command), `--${name}`, ...(option.type === 'string' ? ['value'] : []), '--help'];
        const out = await runCli(argv);
        if (out.exitCode !== 0 || out.stdout !== commandHelp(command)) refused.push(`ltm ${argv.join(' ')} → ${out.exitCode} ${out.stderr}`);
      }
    }
    assert.deepEqual(refused, []);
  });

  it('every command refuses options it does not take, with parseArgs\' message and exit 2', async () => {
    const wrong: string[] = [];
    for (const command of COMMANDS) {
      const foreign = [...allOptions].filter((o) => !(o in command.options)).map((o) => `--${o}`);
      for (const option of ['--no-such-option', '-x', ...foreign]) {
        const argv = [command.name, ...positionals(command), option];
        const out = await runCli(argv);
        if (out.exitCode !== 2 || out.stdout !== '' || out.stderr !== unknownOption(option)) wrong.push(`ltm ${argv.join(' ')} → ${out.exitCode} ${JSON.stringify(out.stderr)}`);
      }
    }
    assert.deepEqual(wrong, []);
  });

  it('names of Object.prototype are unknown commands, not a crash', async () => {
    for (const name of ['constructor', '__proto__', 'hasOwnProperty', 'toString']) {
      assert.deepEqual(await runCli([name]), { stdout: '', stderr: `ltm: unknown command "${name}" (see ltm --help)\n`, exitCode: 2 });
    }
  });

  it('every command refuses arguments it does not take, naming the ones it does', async () => {
    for (const command of COMMANDS.filter((c) => !c.joinPositionals)) {
      const out = await runCli([command.name, ...positionals(command), 'extra']);
      const takes = command.positionals.length === 0 ? 'no arguments' : command.positionals.map((p) => `<${p}>`).join(' ');
      assert.deepEqual(out, { stdout: '', stderr: `ltm: ${command.name} takes ${takes}, not "extra"\n`, exitCode: 2 });
    }
  });
});
