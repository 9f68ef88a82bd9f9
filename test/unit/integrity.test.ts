import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { IntegrityProblem, IntegrityReport, ProblemKind } from '../../src/core/integrity';
import { MemoryStore } from '../../src/core/store';
import {
  FIXTURE_DIR,
  copyDir,
  memoryFileIds,
  memoryKeys,
  readJson,
  removeDir,
  snapshotDiff,
  snapshotFiles,
  writeConfig,
  type ProjectContext,
  useProject,
} from '../support/storeKit';

type Ctx = ProjectContext;

const describeProblems = (r: IntegrityReport) => JSON.stringify(r.problems, null, 1);

function find(report: IntegrityReport, kind: ProblemKind, id?: string): IntegrityProblem | undefined {
  return report.problems.find((p) => p.kind === kind && (id === undefined || p.id === id));
}

function kinds(report: IntegrityReport): ProblemKind[] {
  return [...new Set(report.problems.map((p) => p.kind))].sort();
}

/** fix() must leave a store that both this instance and a fresh one find healthy. */
async function fixAndExpectHealthy(ctx: Ctx, store: MemoryStore, options: { cleanArchives?: boolean } = {}) {
  const result = await store.fix(options);
  assert.equal(result.report.healthy, true, `fix left problems: ${describeProblems(result.report)}`);
  const again = store.check();
  assert.equal(again.healthy, true, `second check: ${describeProblems(again)}`);
  const fresh = ctx.open().check();
  assert.equal(fresh.healthy, true, `check by a new instance: ${describeProblems(fresh)}`);
  return result;
}

function memPath(ctx: Ctx, id: string): string {
  return path.join(ctx.root, 'memories', `${id}.md`);
}

/** The IDs and exact bytes of every memory file in memories/. */
function memoryBytes(ctx: Ctx): Map<string, Buffer> {
  return new Map(memoryFileIds(path.join(ctx.root, 'memories')).map((id) => [id, fs.readFileSync(memPath(ctx, id))]));
}

async function seed(ctx: Ctx, n = 3): Promise<{ store: MemoryStore; ids: string[] }> {
  const store = ctx.open();
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    ids.push((await store.store({ topic: `Memory ${i}`, content: `Content ${i}.\n\nMore ${i}.`, tags: [`t${i}`] })).memory.id);
  }
  return { store, ids };
}

describe('integrity: the broken claude-ltm 0.2.5 fixture', () => {
  const ctx = useProject('ltm-integrity-');
  const brokenRoot = path.join(FIXTURE_DIR, 'broken-example', '.claude');

  beforeEach(() => copyDir(brokenRoot, path.join(ctx.project, '.claude')));

  it('check reports the memory the index does not list, the missing file and the orphaned stats, not the evicted memory’s archive, and writes nothing', () => {
    const store = ctx.open();
    const before = snapshotFiles(ctx.root);
    const report = store.check();
    assert.deepEqual(snapshotDiff(before, snapshotFiles(ctx.root)), [], 'check changed files');
    assert.equal(report.healthy, false);
    const unlisted = find(report, 'not_indexed', 'mem_deadbeef');
    assert.ok(unlisted, describeProblems(report));
    assert.equal(unlisted.file, 'mem_deadbeef.md');
    assert.ok(find(report, 'missing_file', 'mem_missing1'), describeProblems(report));
    assert.ok(find(report, 'orphaned_stats', 'mem_statonly'), describeProblems(report));
    assert.ok(!report.problems.some((p) => p.id === 'mem_4a55fb98' || p.detail.includes('mem_4a55fb98')), describeProblems(report));
    assert.deepEqual(kinds(report), ['missing_file', 'not_indexed', 'orphaned_stats']);
    // every valid memory file is a memory, listed or not; the evicted one is archived
    assert.deepEqual(store.list().memories.map((m) => m.id).sort(), ['mem_56b2d1cd', 'mem_db545e7e', 'mem_deadbeef']);
    assert.deepEqual(store.list({ phase: 3 }).memories.map((m) => m.id), ['mem_4a55fb98']);
  });

  it('one fix() repairs everything, indexing the memory the index did not list; a second check is healthy', async () => {
    const store = ctx.open();
    const before = memoryBytes(ctx);
    const evictedArchive = fs.readFileSync(path.join(ctx.root, 'archives', 'mem_4a55fb98.md'));

    const result = await fixAndExpectHealthy(ctx, store);
    assert.ok(result.actions.length >= 3, result.actions.join('\n'));
    assert.ok(result.actions.some((a) => a.includes('mem_deadbeef') && a.includes('index.json')), result.actions.join('\n'));

    // No memory file was moved, archived or changed.
    assert.deepEqual(memoryBytes(ctx), before);
    assert.ok(!fs.existsSync(path.join(ctx.root, 'archives', 'mem_deadbeef.md')));
    assert.ok(fs.readFileSync(path.join(ctx.root, 'archives', 'mem_4a55fb98.md')).equals(evictedArchive));
    assert.deepEqual(memoryKeys(path.join(ctx.root, 'index.json')), ['mem_56b2d1cd', 'mem_db545e7e', 'mem_deadbeef']);
    assert.deepEqual(memoryKeys(path.join(ctx.root, 'stats.json')).filter((id) => id === 'mem_statonly'), []);
    assert.deepEqual(memoryKeys(path.join(ctx.root, 'archive_index.json')), ['mem_4a55fb98']);
    assert.equal((await store.get('mem_deadbeef')).content, 'orphan body');
  });

  it('fix({cleanArchives: true}) never deletes the archive of an evicted memory', async () => {
    const store = ctx.open();
    const evictedArchive = fs.readFileSync(path.join(ctx.root, 'archives', 'mem_4a55fb98.md'));
    await fixAndExpectHealthy(ctx, store, { cleanArchives: true });
    assert.ok(fs.readFileSync(path.join(ctx.root, 'archives', 'mem_4a55fb98.md')).equals(evictedArchive));
    assert.equal(store.peek('mem_deadbeef').topic, 'orphan', 'the memory the index did not list is kept active');
    // and again, now that archive_index.json exists
    await fixAndExpectHealthy(ctx, store, { cleanArchives: true });
    assert.ok(fs.existsSync(path.join(ctx.root, 'archives', 'mem_4a55fb98.md')));
    assert.equal((await store.restore('mem_4a55fb98')).topic, 'Prefer ruff over flake8');
  });

  it('fix({cleanArchives: true}) keeps the archives of memories this store evicted to phase 3', async () => {
    removeDir(path.join(ctx.project, '.claude'));
    writeConfig(ctx.project, { max_memories: 1, eviction_batch_size: 1 });
    const store = ctx.open();
    const low = (await store.store({ topic: 'low', content: 'low text', difficulty: 0 })).memory.id;
    const mid = (await store.store({ topic: 'mid', content: 'mid text', difficulty: 0.5 })).memory.id;
    await store.store({ topic: 'high', content: 'high text', difficulty: 1 });
    for (let i = 0; i < 4; i++) await store.evict();
    assert.ok(!fs.existsSync(memPath(ctx, low)), 'low is at phase 3');
    assert.equal(store.peek(mid).phase, 1);
    const archives = () => new Map([low, mid].map((id) => [id, fs.readFileSync(path.join(ctx.root, 'archives', `${id}.md`))]));
    const before = archives();
    await fixAndExpectHealthy(ctx, store, { cleanArchives: true });
    assert.deepEqual(archives(), before);
    // without archive_index.json (as after a clone of a store written by another tool) too
    fs.rmSync(path.join(ctx.root, 'archive_index.json'));
    await fixAndExpectHealthy(ctx, ctx.open(), { cleanArchives: true });
    assert.deepEqual(archives(), before);
    assert.equal((await ctx.open().restore(low)).content, 'low text');
  });
});

describe('integrity: a damaged index.json', () => {
  const ctx = useProject('ltm-integrity-');

  it('garbage in index.json: every memory is still listed; check reports it; fix rewrites it; nothing is lost', async () => {
    const { store, ids } = await seed(ctx, 4);
    const bytes = memoryBytes(ctx);
    fs.writeFileSync(path.join(ctx.root, 'index.json'), 'this is {not json');
    for (const s of [store, ctx.open()]) {
      assert.deepEqual(s.list().memories.map((m) => m.id).sort(), [...ids].sort());
      assert.equal(s.search('Memory 2')[0]?.id, ids[2]);
      assert.equal((await s.get(ids[1]!, { countAccess: false })).topic, 'Memory 1');
      const report = s.check();
      assert.ok(find(report, 'index_unreadable'), describeProblems(report));
    }
    await fixAndExpectHealthy(ctx, ctx.open());
    assert.deepEqual(memoryKeys(path.join(ctx.root, 'index.json')), [...ids].sort());
    assert.deepEqual(snapshotDiff(bytes, memoryBytes(ctx)), [], 'memory files changed');
    assert.equal(ctx.open().list().total, 4);
  });

  it('a missing index.json is reported and rewritten', async () => {
    const { store, ids } = await seed(ctx);
    fs.rmSync(path.join(ctx.root, 'index.json'));
    assert.equal(store.list().total, 3);
    assert.ok(find(store.check(), 'index_missing'), describeProblems(store.check()));
    await fixAndExpectHealthy(ctx, store);
    assert.deepEqual(memoryKeys(path.join(ctx.root, 'index.json')), [...ids].sort());
  });

  it('index.json with git conflict markers after a real merge: memories listed, reported, fixed, nothing lost', async function () {
    this.timeout(30_000);
    const { git, ok } = gitIn(ctx.project);
    ok('init', '-q');
    let store = ctx.open();
    const base = (await store.store({ topic: 'Base memory', content: 'On both branches.', tags: ['base'] })).memory.id;
    ok('add', '-A');
    ok('commit', '-q', '-m', 'base');
    ok('checkout', '-q', '-b', 'feature');
    const onFeature = (await store.store({ topic: 'Feature memory', content: 'Only on feature.', tags: ['shared'] })).memory.id;
    ok('add', '-A');
    ok('commit', '-q', '-m', 'feature');
    ok('checkout', '-q', 'main');
    store.dispose();
    store = ctx.open();
    const onMain = (await store.store({ topic: 'Main memory', content: 'Only on main.', tags: ['shared'] })).memory.id;
    ok('add', '-A');
    ok('commit', '-q', '-m', 'main');
    const merge = git('merge', 'feature');
    assert.notEqual(merge.status, 0, 'the merge conflicts');
    const indexText = fs.readFileSync(path.join(ctx.root, 'index.json'), 'utf8');
    assert.match(indexText, /^<<<<<<< /m);
    const bytes = memoryBytes(ctx);
    assert.deepEqual([...bytes.keys()], [base, onFeature, onMain].sort());

    for (const s of [store, ctx.open()]) {
      assert.deepEqual(s.list().memories.map((m) => m.id).sort(), [base, onFeature, onMain].sort());
      assert.deepEqual(s.list({ tag: 'shared' }).memories.map((m) => m.id).sort(), [onFeature, onMain].sort());
      assert.ok(find(s.check(), 'index_conflicted'), describeProblems(s.check()));
    }
    await fixAndExpectHealthy(ctx, ctx.open());
    const fixed = fs.readFileSync(path.join(ctx.root, 'index.json'), 'utf8');
    assert.doesNotMatch(fixed, /^(<<<<<<<|=======|>>>>>>>)/m);
    assert.deepEqual(memoryKeys(path.join(ctx.root, 'index.json')), [base, onFeature, onMain].sort());
    assert.deepEqual(readJson<{ tag_index: Record<string, string[]> }>(path.join(ctx.root, 'index.json')).tag_index.shared?.sort(), [onFeature, onMain].sort());
    assert.deepEqual(snapshotDiff(bytes, memoryBytes(ctx)), [], 'memory files changed');
  });

  for (const side of ['ours', 'theirs'] as const) {
    it(`a merge whose index.json conflict is resolved with "${side}" hides no memory: every file is active, check reports the unlisted ones, fix indexes them`, async function () {
      this.timeout(60_000);
      const { git, ok } = gitIn(ctx.project);
      ok('init', '-q');
      let store = ctx.open();
      const storeMany = async (label: string, n: number) => {
        const ids: string[] = [];
        for (let i = 0; i < n; i++) ids.push((await store.store({ topic: `${label} ${i}`, content: `${label} lesson ${i}.`, tags: [label] })).memory.id);
        return ids;
      };
      const base = await storeMany('base', 20);
      ok('add', '-A');
      ok('commit', '-q', '-m', 'base');
      ok('checkout', '-q', '-b', 'feature');
      const onFeature = await storeMany('feature', 50);
      ok('add', '-A');
      ok('commit', '-q', '-m', 'feature');
      ok('checkout', '-q', 'main');
      store.dispose();
      store = ctx.open();
      const onMain = await storeMany('main', 50);
      ok('add', '-A');
      ok('commit', '-q', '-m', 'main');
      assert.notEqual(git('merge', 'feature').status, 0, 'the merge conflicts');
      // The usual reflex: take one side's index.json whole.
      ok('checkout', `--${side}`, '--', '.claude/ltm/index.json');
      ok('add', '-A');
      ok('commit', '-q', '--no-edit');
      const all = [...base, ...onFeature, ...onMain].sort();
      const unlisted = side === 'ours' ? onFeature : onMain;
      const bytes = memoryBytes(ctx);
      assert.deepEqual([...bytes.keys()], all);

      for (const s of [store, ctx.open()]) {
        assert.equal(s.list({ limit: 500 }).total, 120, 'every memory of both branches is active before any fix');
        assert.deepEqual(s.list({ tag: side === 'ours' ? 'feature' : 'main', limit: 500 }).memories.map((m) => m.id).sort(), [...unlisted].sort());
        assert.equal(s.search('lesson', { limit: 200 }).length, 120);
        const report = s.check();
        assert.deepEqual(report.problems.filter((p) => p.kind === 'not_indexed').map((p) => p.id).sort(), [...unlisted].sort(), describeProblems(report));
      }
      const result = await fixAndExpectHealthy(ctx, ctx.open());
      assert.equal(result.actions.filter((a) => a.includes('index.json')).length, 50, result.actions.join('\n'));
      assert.deepEqual(memoryKeys(path.join(ctx.root, 'index.json')), all);
      assert.deepEqual(snapshotDiff(bytes, memoryBytes(ctx)), [], 'memory files changed');
      assert.deepEqual(memoryFileIds(path.join(ctx.root, 'archives')), [], 'nothing was archived');
      assert.equal(ctx.open().list({ limit: 500 }).total, 120);
    });
  }
});

/** git in a directory, with an identity and a default branch of its own. */
function gitIn(cwd: string) {
  const git = (...args: string[]) =>
    spawnSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', '-c', 'init.defaultBranch=main', ...args], { cwd, encoding: 'utf8' });
  const ok = (...args: string[]) => {
    const r = git(...args);
    assert.equal(r.status, 0, `git ${args.join(' ')}: ${r.stderr}`);
  };
  return { git, ok };
}

describe('integrity: every other kind of problem', () => {
  const ctx = useProject('ltm-integrity-');

  it('invalid frontmatter is reported with the file and the reason, and fix quarantines it', async () => {
    const { store, ids } = await seed(ctx);
    const bad: Record<string, string> = {
      'mem_0badf00d.md': '---\nid: mem_0badf00d\ntopic: [unclosed\n---\nbody\n',
      'mem_0badf00e.md': 'no frontmatter at all\n',
      'mem_0badf00f.md': '---\nid: mem_0badf00f\ntopic: "Phase seven"\nphase: 7\n---\nbody\n',
      'mem_0badf010.md': '---\nid: mem_0badf010\ntags: []\n---\nno topic\n',
    };
    for (const [name, text] of Object.entries(bad)) fs.writeFileSync(path.join(ctx.root, 'memories', name), text);
    const good = memoryBytes(ctx);
    for (const name of Object.keys(bad)) good.delete(name.slice(0, -3));

    // What an editor marks, without a full check: the same files, each with its reason.
    const listed = store.invalidFiles();
    assert.deepEqual(listed.map((f) => f.name).sort(), Object.keys(bad).sort());
    assert.match(listed.find((f) => f.name === 'mem_0badf00f.md')!.reason, /phase/);
    const report = store.check();
    const invalid = report.problems.filter((p) => p.kind === 'invalid_file');
    assert.deepEqual(invalid.map((p) => p.file).sort(), Object.keys(bad).sort(), describeProblems(report));
    const reason = (name: string) => invalid.find((p) => p.file === name)!.detail;
    assert.match(reason('mem_0badf00d.md'), /YAML/i);
    assert.match(reason('mem_0badf00e.md'), /frontmatter/i);
    assert.match(reason('mem_0badf00f.md'), /phase/);
    assert.match(reason('mem_0badf010.md'), /topic/);
    assert.equal(store.list().total, 3, 'invalid files are not memories');

    await fixAndExpectHealthy(ctx, store);
    assert.deepEqual(store.invalidFiles(), []);
    for (const name of Object.keys(bad)) assert.ok(!fs.existsSync(path.join(ctx.root, 'memories', name)), `${name} left in memories/`);
    const quarantined = fs.readdirSync(path.join(ctx.root, 'quarantine'));
    for (const [name, text] of Object.entries(bad)) {
      const q = quarantined.find((f) => f.endsWith(name));
      assert.ok(q, `${name} is in quarantine/: ${quarantined.join()}`);
      assert.equal(fs.readFileSync(path.join(ctx.root, 'quarantine', q), 'utf8'), text);
    }
    assert.deepEqual(snapshotDiff(good, memoryBytes(ctx)), []);
    assert.deepEqual(memoryKeys(path.join(ctx.root, 'index.json')), [...ids].sort());
  });

  it('a copy of a memory file under another mem_ name is a duplicate ID; fix gives the copy its own ID and both survive', async () => {
    const { store, ids } = await seed(ctx);
    const original = fs.readFileSync(memPath(ctx, ids[0]!));
    fs.writeFileSync(memPath(ctx, 'mem_12345678'), original);
    const report = store.check();
    const dup = find(report, 'duplicate_id');
    assert.ok(dup, describeProblems(report));
    assert.equal(dup.id, ids[0]);
    assert.equal(dup.file, 'mem_12345678.md');

    await fixAndExpectHealthy(ctx, store);
    assert.ok(fs.readFileSync(memPath(ctx, ids[0]!)).equals(original), 'the original is untouched');
    assert.ok(!fs.existsSync(memPath(ctx, 'mem_12345678')));
    const all = store.list().memories;
    assert.equal(all.length, 4);
    const copies = all.filter((m) => m.topic === 'Memory 0');
    assert.equal(copies.length, 2);
    const copy = copies.find((m) => m.id !== ids[0])!;
    assert.match(copy.id, /^mem_[0-9a-f]{8}$/);
    assert.ok(!ids.includes(copy.id));
    assert.equal(copy.content, 'Content 0.\n\nMore 0.');
    assert.match(fs.readFileSync(memPath(ctx, copy.id), 'utf8'), new RegExp(`^id: "?${copy.id}"?$`, 'm'));
    assert.deepEqual(memoryKeys(path.join(ctx.root, 'index.json')), [...ids, copy.id].sort());
  });

  it('a file named for another ID that does not exist is an ID mismatch; fix gives it its own ID', async () => {
    const { store } = await seed(ctx, 1);
    const text = '---\nid: mem_aaaaaaaa\ntopic: "Renamed by hand"\n---\nStill a memory.\n';
    fs.writeFileSync(memPath(ctx, 'mem_bbbbbbbb'), text);
    const p = find(store.check(), 'id_mismatch');
    assert.ok(p, describeProblems(store.check()));
    assert.equal(p.file, 'mem_bbbbbbbb.md');
    await fixAndExpectHealthy(ctx, store);
    const renamed = store.list().memories.find((m) => m.topic === 'Renamed by hand');
    assert.ok(renamed);
    assert.equal(renamed.content, 'Still a memory.');
    assert.equal(store.list().total, 2);
  });

  it('a hand-edited topic makes index.json stale; fix rewrites it', async () => {
    const { store: writer, ids } = await seed(ctx);
    writer.dispose();
    const file = memPath(ctx, ids[1]!);
    fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('Memory 1', 'Memory one, edited by hand'));
    // as `ltm check` would: a store opened after the edit (in-place edits reach a
    // long-lived store only through its watcher or a read of that one memory)
    const store = ctx.open();
    const report = store.check();
    const stale = find(report, 'index_stale');
    assert.ok(stale, describeProblems(report));
    assert.match(stale.detail, new RegExp(ids[1]!));
    await fixAndExpectHealthy(ctx, store);
    const index = readJson<{ memories: Record<string, { topic: string }> }>(path.join(ctx.root, 'index.json'));
    assert.equal(index.memories[ids[1]!]!.topic, 'Memory one, edited by hand');
  });

  it('hand-edited anchors entries it cannot read are named (memory, entry, why) as warnings: the store stays healthy, fix leaves the text alone', async () => {
    fs.mkdirSync(path.join(ctx.project, 'src'), { recursive: true });
    fs.writeFileSync(path.join(ctx.project, 'src', 'pool.ts'), 'export const size = 50;\n');
    const writer = ctx.open();
    const id = (await writer.store({ topic: 'Pool size', content: 'The pool size is 50.', anchors: ['src/pool.ts'] })).memory.id;
    const plain = (await writer.store({ topic: 'No anchors', content: 'Nothing anchored.' })).memory.id;
    writer.dispose();
    const file = memPath(ctx, id);
    const edited = fs
      .readFileSync(file, 'utf8')
      .replace('anchors:\n', 'anchors:\n  - path: "../../etc/passwd"\n    hash: "poly64:0000000000000000"\n  - path: "src/pool.ts"\n    lines: "nonsense"\n    hash: "poly64:0000000000000000"\n  - just a string\n');
    fs.writeFileSync(file, edited);
    // Not a list at all: one problem for the field.
    fs.writeFileSync(memPath(ctx, plain), fs.readFileSync(memPath(ctx, plain), 'utf8').replace(/\n---\n/, '\nanchors: src/pool.ts\n---\n'));
    const store = ctx.open();
    // The memory loads without them: its one readable anchor is used.
    assert.deepEqual(store.peek(id).anchors.map((a) => a.path), ['src/pool.ts']);
    const report = store.check();
    assert.equal(report.healthy, true, describeProblems(report));
    const byId = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
    assert.deepEqual(
      report.problems.map((p) => [p.kind, p.level, p.id, p.detail]),
      [
        ['unreadable_anchor', 'warning', id, `${id}: anchors[0] (../../etc/passwd) is left out: anchors[0].path must be a path inside the project`],
        ['unreadable_anchor', 'warning', id, `${id}: anchors[1] (src/pool.ts) is left out: anchors[1].lines must be written 10-24`],
        ['unreadable_anchor', 'warning', id, `${id}: anchors[2] is left out: anchors[2] must have path and hash`],
        ['unreadable_anchor', 'warning', plain, `${plain}: anchors is left out: anchors must be a list`],
      ].sort((a, b) => byId(a[2]!, b[2]!)),
      'by memory ID, each memory\'s entries in order',
    );
    const bytes = memoryBytes(ctx);
    const result = await store.fix();
    assert.deepEqual(result.actions, [], 'nothing to repair');
    assert.equal(result.report.healthy, true);
    assert.deepEqual(memoryBytes(ctx), bytes, 'neither deleted nor rewritten');
    assert.equal(fs.readFileSync(file, 'utf8'), edited);
    assert.equal(store.check().problems.length, 4, 'still named until a person corrects them');
    // A later process opens from the record cache (no memory file read): the entries are still named.
    store.flushCaches();
    const fromRecords = ctx.open();
    assert.equal(fromRecords.check().problems.filter((p) => p.kind === 'unreadable_anchor').length, 4, 'the record cache keeps what loading left out');
    fromRecords.dispose();
    // Corrected by hand: gone from the report.
    fs.writeFileSync(file, edited.replace(/  - path: "\.\.\/\.\.\/etc\/passwd"\n.*\n  - path: "src\/pool\.ts"\n    lines: "nonsense"\n.*\n  - just a string\n/, ''));
    fs.writeFileSync(memPath(ctx, plain), fs.readFileSync(memPath(ctx, plain), 'utf8').replace('anchors: src/pool.ts\n', ''));
    assert.deepEqual(ctx.open().check().problems, []);
  });

  it('a warning beside an error: the store is unhealthy for the error alone, and healthy once fix repairs it', async () => {
    const { store: writer, ids } = await seed(ctx);
    writer.dispose();
    fs.writeFileSync(memPath(ctx, ids[0]!), fs.readFileSync(memPath(ctx, ids[0]!), 'utf8').replace(/\n---\n/, '\nanchors:\n  - path: "a.ts"\n    hash: "nope"\n---\n'));
    fs.writeFileSync(memPath(ctx, 'mem_0e0e0e0e'), '---\nid: mem_0e0e0e0e\ntopic: "not indexed"\n---\nhello\n');
    const store = ctx.open();
    const report = store.check();
    assert.equal(report.healthy, false);
    assert.deepEqual(report.problems.map((p) => [p.kind, p.level]).sort(), [['not_indexed', 'error'], ['unreadable_anchor', 'warning']]);
    const result = await store.fix();
    assert.equal(result.actions.length, 1, result.actions.join('\n'));
    assert.equal(result.report.healthy, true);
    assert.deepEqual(result.report.problems.map((p) => p.kind), ['unreadable_anchor']);
  });

  for (const clean of [false, true]) {
    it(`an orphaned archive is ${clean ? 'deleted by fix --clean-archives' : 'listed as restorable by fix'}`, async () => {
      const { store, ids } = await seed(ctx, 2);
      await store.forget(ids[1]!); // archive_index.json exists and is usable
      fs.writeFileSync(path.join(ctx.root, 'archives', 'mem_abcdef01.md'), '---\nid: mem_abcdef01\ntopic: "Lost archive"\n---\nArchived text.\n');
      const p = find(store.check(), 'orphaned_archive', 'mem_abcdef01');
      assert.ok(p, describeProblems(store.check()));
      const result = await fixAndExpectHealthy(ctx, store, { cleanArchives: clean });
      if (clean) {
        assert.ok(!fs.existsSync(path.join(ctx.root, 'archives', 'mem_abcdef01.md')));
        assert.ok(fs.existsSync(path.join(ctx.root, 'archives', `${ids[1]}.md`)), 'the forgotten memory’s archive is kept');
        assert.equal((await store.restore(ids[1]!)).topic, 'Memory 1');
      } else {
        assert.ok(result.actions.some((a) => a.includes('mem_abcdef01') && /restorable/.test(a)), result.actions.join('\n'));
        assert.ok(store.list({ phase: 3 }).memories.some((m) => m.id === 'mem_abcdef01'));
        const restored = await store.restore('mem_abcdef01');
        assert.equal(restored.content, 'Archived text.');
        assert.equal(store.check().healthy, true, describeProblems(store.check()));
      }
    });
  }

  it('leftover temporary files older than 60 s are reported and removed; younger ones are left alone', async () => {
    const { store } = await seed(ctx);
    const old = [
      path.join(ctx.root, 'memories', '.mem_01234567.md.99999.abcd0123.ltm-tmp'),
      path.join(ctx.root, 'archives', '.mem_01234567.md.99999.abcd0124.ltm-tmp'),
      path.join(ctx.root, '.index.json.99999.abcd0125.ltm-tmp'),
    ];
    const young = path.join(ctx.root, '.stats.json.99999.abcd0126.ltm-tmp');
    const past = new Date(Date.now() - 120_000);
    for (const f of [...old, young]) fs.writeFileSync(f, 'partial');
    for (const f of old) fs.utimesSync(f, past, past);
    const report = store.check();
    const temps = report.problems.filter((p) => p.kind === 'temp_file').map((p) => p.file).sort();
    assert.deepEqual(temps, [...old].sort(), describeProblems(report));
    await fixAndExpectHealthy(ctx, store);
    for (const f of old) assert.ok(!fs.existsSync(f), `${f} left`);
    assert.ok(fs.existsSync(young), 'a write in progress is not touched');
  });

  it('orphaned stats and index entries without a file are dropped', async () => {
    const { store, ids } = await seed(ctx);
    // An edit by hand replaces stats.json, which outdates the stats journal: edit it whole, as after a server stopped.
    await store.compactStats();
    const stats = readJson<{ version: number; memories: Record<string, unknown> }>(path.join(ctx.root, 'stats.json'));
    stats.memories.mem_5a5a5a5a = { access_count: 3, accessed_at: '2026-01-01T00:00:00Z', last_session: 1, priority: 0.3 };
    fs.writeFileSync(path.join(ctx.root, 'stats.json'), JSON.stringify(stats, null, 2));
    fs.rmSync(memPath(ctx, ids[2]!));
    const report = store.check();
    assert.ok(find(report, 'orphaned_stats', 'mem_5a5a5a5a'), describeProblems(report));
    assert.ok(find(report, 'missing_file', ids[2]), describeProblems(report));
    await fixAndExpectHealthy(ctx, store);
    assert.deepEqual(memoryKeys(path.join(ctx.root, 'stats.json')), [ids[0]!, ids[1]!].sort());
    assert.deepEqual(memoryKeys(path.join(ctx.root, 'index.json')), [ids[0]!, ids[1]!].sort());
  });

  it('a reduced memory whose archive is gone is reported; fix archives what is left', async () => {
    writeConfig(ctx.project, { max_memories: 1, eviction_batch_size: 1 });
    const store = ctx.open();
    const low = (await store.store({ topic: 'low', content: 'First.\n\nSecond.', difficulty: 0 })).memory.id;
    await store.store({ topic: 'high', content: 'high', difficulty: 1 });
    await store.evict();
    fs.rmSync(path.join(ctx.root, 'archives', `${low}.md`));
    assert.ok(find(store.check(), 'missing_full_text', low), describeProblems(store.check()));
    await fixAndExpectHealthy(ctx, store);
    assert.ok(fs.readFileSync(path.join(ctx.root, 'archives', `${low}.md`)).equals(fs.readFileSync(memPath(ctx, low))));
  });

  it('archive-index entries for an active memory or without an archive file are dropped', async () => {
    const { store, ids } = await seed(ctx, 3);
    await store.forget(ids[2]!);
    const file = path.join(ctx.root, 'archive_index.json');
    const index = readJson<{ memories: Record<string, unknown> }>(file);
    index.memories[ids[0]!] = { topic: 'Memory 0', tags: [], archived_at: '2026-01-01T00:00:00Z', original_phase: 0, reason: 'eviction' };
    fs.writeFileSync(file, JSON.stringify(index, null, 2));
    fs.rmSync(path.join(ctx.root, 'archives', `${ids[2]}.md`));
    const report = store.check();
    assert.ok(find(report, 'archive_entry_active', ids[0]), describeProblems(report));
    assert.ok(find(report, 'archive_entry_without_file', ids[2]), describeProblems(report));
    await fixAndExpectHealthy(ctx, store);
    assert.deepEqual(memoryKeys(file), []);
    assert.equal(store.list().total, 2);
  });

  it('unreadable stats.json, state.json and archive_index.json are reported and rewritten', async () => {
    const { store, ids } = await seed(ctx, 3);
    await store.forget(ids[2]!);
    const archiveBytes = fs.readFileSync(path.join(ctx.root, 'archives', `${ids[2]}.md`));
    fs.writeFileSync(path.join(ctx.root, 'stats.json'), '{"memories": [');
    fs.writeFileSync(path.join(ctx.root, 'state.json'), '<<<<<<< HEAD\n{}\n=======\n{}\n>>>>>>> other\n');
    fs.writeFileSync(path.join(ctx.root, 'archive_index.json'), 'nonsense');
    const report = store.check();
    assert.deepEqual(
      kinds(report).filter((k) => ['stats_unreadable', 'state_unreadable', 'archive_index_unreadable'].includes(k)),
      ['archive_index_unreadable', 'state_unreadable', 'stats_unreadable'],
      describeProblems(report),
    );
    assert.equal(store.list().total, 2);
    await fixAndExpectHealthy(ctx, store);
    for (const f of ['stats.json', 'state.json', 'archive_index.json']) readJson(path.join(ctx.root, f));
    assert.ok(fs.readdirSync(path.join(ctx.root, 'quarantine')).some((f) => f.endsWith('state.json')), 'the old state.json is kept');
    assert.deepEqual(memoryKeys(path.join(ctx.root, 'archive_index.json')), [ids[2]!], 'the archived memory is listed again');
    assert.ok(fs.readFileSync(path.join(ctx.root, 'archives', `${ids[2]}.md`)).equals(archiveBytes));
    assert.equal((await store.restore(ids[2]!)).topic, 'Memory 2');
  });

  it('quarantine/ is git-ignored, also in a store whose .gitignore predates it: a quarantined file is never committed', async () => {
    const { ok, git } = gitIn(ctx.project);
    ok('init', '-q');
    const { store } = await seed(ctx, 1);
    // A .gitignore written by an earlier version, without the quarantine line.
    const gitignore = path.join(ctx.root, '.gitignore');
    fs.writeFileSync(gitignore, fs.readFileSync(gitignore, 'utf8').replace(/^quarantine\/\n/m, ''));
    fs.writeFileSync(path.join(ctx.root, 'memories', 'mem_0badf00d.md'), '---\nid: [\n---\nA hand edit gone wrong.\n');
    ok('add', '-A');
    ok('commit', '-q', '-m', 'broken');
    await fixAndExpectHealthy(ctx, store);
    const quarantined = fs.readdirSync(path.join(ctx.root, 'quarantine'));
    assert.equal(quarantined.length, 1);
    assert.equal(git('check-ignore', '-q', path.join(ctx.root, 'quarantine', quarantined[0]!)).status, 0, 'the quarantined file is ignored');
    ok('add', '-A');
    const tracked = git('ls-files', '.claude/ltm').stdout;
    assert.doesNotMatch(tracked, /quarantine/, tracked);
  });

  it('many problems at once are repaired by one fix', async () => {
    const { store, ids } = await seed(ctx, 4);
    await store.forget(ids[3]!);
    fs.writeFileSync(path.join(ctx.root, 'memories', 'mem_0badf00d.md'), '---\nid: [\n---\n');
    fs.writeFileSync(memPath(ctx, 'mem_12345678'), fs.readFileSync(memPath(ctx, ids[0]!)));
    const file = memPath(ctx, ids[1]!);
    fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('Memory 1', 'Memory 1 edited'));
    fs.writeFileSync(path.join(ctx.root, 'archives', 'mem_abcdef01.md'), '---\nid: mem_abcdef01\ntopic: "x"\n---\ny\n');
    const tmp = path.join(ctx.root, '.index.json.1.deadbeef.ltm-tmp');
    fs.writeFileSync(tmp, '');
    fs.utimesSync(tmp, new Date(Date.now() - 61_000), new Date(Date.now() - 61_000));
    fs.writeFileSync(memPath(ctx, 'mem_0e0e0e0e'), '---\nid: mem_0e0e0e0e\ntopic: "not indexed"\n---\nhello\n');
    const report = store.check();
    assert.ok(report.problems.length >= 6, describeProblems(report));
    await fixAndExpectHealthy(ctx, store);
    const topics = store.list().memories.map((m) => m.topic).sort();
    assert.deepEqual(topics, ['Memory 0', 'Memory 0', 'Memory 1 edited', 'Memory 2', 'not indexed']);
  });
});
