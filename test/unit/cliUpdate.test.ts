/**
 * `ltm store` naming near-duplicates, `ltm update` and `ltm merge`, through
 * the built CLI (dist/cli.js) as a person runs it.
 */
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DUPLICATE_PAIRS } from './similarityPairs';
import { REPO_ROOT, ensureCliBuilt, ltmRoot, makeTempProject, readJson, removeDir, snapshotDiff, snapshotFiles } from '../support/storeKit';

const CLI = path.join(REPO_ROOT, 'dist', 'cli.js');

describe('cli: similar memories, update, merge (built CLI)', function () {
  this.timeout(60_000);
  let project: string;
  before(() => ensureCliBuilt());
  beforeEach(() => (project = makeTempProject('ltm-cli-update-')));
  afterEach(() => removeDir(project));

  const ltm = (...args: string[]) => spawnSync(process.execPath, [CLI, ...args, '--project', project], { encoding: 'utf8' });
  function ok(...args: string[]): string {
    const r = ltm(...args);
    assert.equal(r.status, 0, `ltm ${args.join(' ')}: ${r.stderr}`);
    assert.equal(r.stderr, '');
    return r.stdout;
  }
  const json = <T = Record<string, unknown>>(...args: string[]) => JSON.parse(ok(...args, '--json')) as T;
  const pair = DUPLICATE_PAIRS[0]!;
  const storeArgs = (m: { topic: string; summary: string; content: string }) => ['store', '--topic', m.topic, '--summary', m.summary, '--content', m.content];

  it('store prints the similar memories, and --json has them as similar', () => {
    const first = json<{ id: string; similar: unknown[] }>(...storeArgs(pair.existing));
    assert.deepEqual(first.similar, []);
    const text = ok(...storeArgs(pair.incoming));
    assert.match(text, new RegExp(`Similar memory already stored[\\s\\S]*${first.id}, similarity 0\\.\\d\\d[\\s\\S]*update_memory`));
    const second = /ID: (mem_[0-9a-f]{8})/.exec(text)![1]!;
    // The same text a third time: both earlier ones are named, the copy first.
    const again = json<{ id: string; similar: { id: string; topic: string; score: number }[] }>(...storeArgs(pair.incoming));
    assert.deepEqual(again.similar.map((s) => s.id), [second, first.id]);
    assert.equal(again.similar[0]!.score, 1);
    assert.ok(again.similar.every((s) => s.score > 0 && s.score <= 1 && typeof s.topic === 'string'));
  });

  it('update changes only the given fields, archives the previous text, and refuses bad input with one line', () => {
    const { id } = json<{ id: string }>('store', '--topic', 'Pool', '--content', 'Pool of 10.', '--tags', 'db,pg');
    const before = fs.readFileSync(path.join(ltmRoot(project), 'memories', `${id}.md`), 'utf8');
    const updated = json<{ changed: string[]; archived_versions: string[] }>('update', id, '--content', 'Pool of 50.', '--tags', 'db');
    assert.deepEqual(updated.changed, ['tags', 'content']);
    const got = json<{ topic: string; content: string; tags: string[] }>('get', id);
    assert.deepEqual([got.topic, got.content, got.tags], ['Pool', 'Pool of 50.', ['db']]);
    const version = updated.archived_versions[0]!;
    assert.equal(fs.readFileSync(path.join(ltmRoot(project), 'archives', `${version}.md`), 'utf8'), before.replace(id, version));
    assert.match(ok('update', id, '--topic', 'Postgres pool'), /^Updated Postgres pool .*: topic\.\nThe previous text is archived as mem_[0-9a-f]{8} \(restorable\)\.\n$/);

    const snapshot = snapshotFiles(ltmRoot(project));
    for (const [args, message] of [
      [['update', id], /at least one field/],
      [['update', id, '--topic', ' '], /topic/],
      [['update', 'mem_ffffffff', '--topic', 'x'], /no memory with ID mem_ffffffff/],
      [['update', 'nope', '--topic', 'x'], /not a memory ID/],
      [['merge', id, id], /into itself/],
      [['merge', id], /merge takes <source> <into>/],
    ] as [string[], RegExp][]) {
      const r = ltm(...args);
      assert.notEqual(r.status, 0, args.join(' '));
      assert.equal(r.stdout, '');
      assert.match(r.stderr, /^ltm: [^\n]+\n$/);
      assert.match(r.stderr, message);
    }
    assert.deepEqual(snapshotDiff(snapshot, snapshotFiles(ltmRoot(project))), []);
  });

  it('merge archives both, keeps one memory with both texts, and check stays healthy', () => {
    const target = json<{ id: string }>('store', '--topic', 'Target', '--content', 'Target text.');
    const source = json<{ id: string }>('store', '--topic', 'Source', '--content', 'Source text.');
    const merged = json<{ id: string; merged: string; archived_versions: string[] }>('merge', source.id, target.id);
    assert.deepEqual([merged.id, merged.merged], [target.id, source.id]);
    assert.match(json<{ content: string }>('get', target.id).content, /Target text\.[\s\S]*Source text\./);
    assert.deepEqual(json<{ memories: { id: string }[] }>('list').memories.map((m) => m.id), [target.id]);
    const archive = readJson<{ memories: Record<string, { reason: string; merged_into?: string }> }>(path.join(ltmRoot(project), 'archive_index.json'));
    assert.deepEqual([archive.memories[source.id]!.reason, archive.memories[source.id]!.merged_into], ['merged', target.id]);
    ok('check');
    assert.match(json<{ content: string }>('restore', source.id) && json<{ content: string }>('get', source.id).content, /^Source text\.$/);
  });
});
