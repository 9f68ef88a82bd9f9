import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { buildPromptContext } from '../../src/core/promptContext';
import { sessionStartContext } from '../../src/core/sessionStartContext';
import { MemoryStore } from '../../src/core/store';
import { gitRenameLookup } from '../../src/servers/gitRenames';
import { ltmRoot, makeTempProject, removeDir, snapshotFiles } from './storeTestKit';

const numbered = (n: number) => Array.from({ length: n }, (_, i) => `const line${i + 1} = ${i + 1};`).join('\n') + '\n';

describe('storeAnchors: memories anchored to code', () => {
  let project: string;
  let store: MemoryStore;
  const write = (file: string, text: string) => {
    fs.mkdirSync(path.dirname(path.join(project, file)), { recursive: true });
    fs.writeFileSync(path.join(project, file), text);
  };
  const memoryFile = (id: string) => fs.readFileSync(path.join(ltmRoot(project), 'memories', `${id}.md`), 'utf8');
  const git = (...args: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd: project, stdio: ['ignore', 'pipe', 'pipe'] });

  beforeEach(() => {
    project = makeTempProject();
    write('src/db/pool.ts', numbered(40));
    write('src/db/retry.ts', numbered(10));
    store = MemoryStore.open(project, { renames: gitRenameLookup(project) });
  });
  afterEach(() => {
    store.dispose();
    removeDir(project);
  });

  const storeAnchored = async (anchors: string[], topic = 'Pool size is 50') =>
    (await store.store({ topic, content: 'The pool of 10 ran dry under load; it is 50 now.', anchors })).memory.id;

  it('stores anchors in path, lines, hash order; a memory without anchors has no anchors key', async () => {
    const id = await storeAnchored(['src/db/pool.ts#L10-12', 'src/db/retry.ts']);
    assert.match(memoryFile(id), /\nanchors:\n  - path: "src\/db\/pool\.ts"\n    lines: "10-12"\n    hash: "poly64:[0-9a-f]{16}"\n  - path: "src\/db\/retry\.ts"\n    hash: "poly64:[0-9a-f]{16}"\n/);
    assert.deepEqual(store.peek(id).anchors.map((a) => a.lines ?? null), [[10, 12], null]);
    const plain = (await store.store({ topic: 'No code', content: 'A convention.' })).memory.id;
    assert.doesNotMatch(memoryFile(plain), /anchors/);
    assert.equal(store.staleness(plain), null);
  });

  it('refuses an anchor it cannot make, names it, and stores nothing', async () => {
    const before = snapshotFiles(ltmRoot(project));
    for (const [spec, reason] of [
      ['src/db/missing.ts', /cannot anchor "src\/db\/missing\.ts": src\/db\/missing\.ts does not exist/],
      ['src/db/pool.ts#L39-45', /has 40 lines/],
      ['../outside.ts', /not a file inside the project/],
      ['src/db', /is not a file/],
    ] as const) {
      await assert.rejects(storeAnchored([spec]), reason, spec);
    }
    assert.deepEqual([...snapshotFiles(ltmRoot(project)).keys()], [...before.keys()], 'nothing written');
  });

  it('is stale after an edit inside the range, with the reason; an edit elsewhere does not matter', async () => {
    const id = await storeAnchored(['src/db/pool.ts#L10-12']);
    assert.equal(store.staleness(id)!.stale, false);
    write('src/db/pool.ts', numbered(40).replace('line30 = 30', 'line30 = 300'));
    assert.equal(store.staleness(id)!.stale, false, 'outside the range');
    write('src/db/pool.ts', numbered(40).replace('line11 = 11', 'line11 = 99'));
    assert.deepEqual(store.staleness(id)!.reasons, ['src/db/pool.ts#L10-12: the lines changed']);
    assert.deepEqual(store.staleMemories(), [{ id, topic: 'Pool size is 50', reasons: ['src/db/pool.ts#L10-12: the lines changed'] }]);
    assert.equal(store.status().stale_memories, 1);
    // What the views show: the same total, without checking any anchor.
    assert.equal(store.memoryCount(), store.status().total_memories);
    assert.equal(store.memoryCount(), 1);
  });

  it('follows lines that only moved, and writes where they are now', async () => {
    const id = await storeAnchored(['src/db/pool.ts#L10-12', 'src/db/retry.ts']);
    write('src/db/pool.ts', `import { a } from 'a';\nimport { b } from 'b';\n${numbered(40)}`);
    assert.equal(store.staleness(id)!.stale, false);
    assert.deepEqual(await store.followAnchors(), [id]);
    assert.match(memoryFile(id), /lines: "12-14"\n/);
    assert.deepEqual(await store.followAnchors(), [], 'nothing left to follow');
    assert.equal(store.staleness(id)!.stale, false);
  });

  it('says a deleted file is gone, and follows a file git renamed', async () => {
    git('init', '-q');
    git('add', '.');
    git('commit', '-qm', 'code');
    const id = await storeAnchored(['src/db/pool.ts#L10-12', 'src/db/retry.ts']);
    git('mv', 'src/db/pool.ts', 'src/db/connectionPool.ts');
    git('commit', '-qm', 'rename');
    assert.equal(store.staleness(id)!.stale, false);
    await store.followAnchors();
    assert.match(memoryFile(id), /path: "src\/db\/connectionPool\.ts"\n    lines: "10-12"\n/);
    fs.rmSync(path.join(project, 'src/db/retry.ts'));
    assert.deepEqual(store.staleness(id)!.reasons, ['src/db/retry.ts: the file is gone']);
  });

  it('re-anchors a memory that is still true, and refuses while an anchored file is gone', async () => {
    const id = await storeAnchored(['src/db/pool.ts#L10-12']);
    write('src/db/pool.ts', numbered(40).replace('line11 = 11', 'line11 = 99'));
    assert.equal(store.staleness(id)!.stale, true);
    const hashBefore = store.peek(id).anchors[0]!.hash;
    await store.reanchor(id);
    assert.equal(store.staleness(id)!.stale, false);
    assert.notEqual(store.peek(id).anchors[0]!.hash, hashBefore);
    fs.rmSync(path.join(project, 'src/db/pool.ts'));
    const text = memoryFile(id);
    await assert.rejects(store.reanchor(id), /src\/db\/pool\.ts does not exist/);
    assert.equal(memoryFile(id), text, 'unchanged');
    await store.setAnchors(id, []);
    assert.doesNotMatch(memoryFile(id), /anchors/, 'removed');
  });

  it('reads hand-edited anchors entry by entry: a broken one is left out, the memory still loads', async () => {
    const id = await storeAnchored(['src/db/pool.ts#L10-12']);
    const file = path.join(ltmRoot(project), 'memories', `${id}.md`);
    fs.writeFileSync(file, memoryFile(id).replace('anchors:\n', 'anchors:\n  - path: ../../etc/passwd\n    hash: poly64:0000000000000000\n  - lines: nonsense\n'));
    store.refresh();
    assert.deepEqual(store.peek(id).anchors.map((a) => a.path), ['src/db/pool.ts']);
  });

  it('keeps anchors through a reopen (from the records cache) and labels a stale memory where it is injected or offered', async () => {
    const id = await storeAnchored(['src/db/pool.ts#L10-12']);
    store.flushCaches();
    store.dispose();
    store = MemoryStore.open(project);
    assert.equal(store.peek(id).anchors[0]!.path, 'src/db/pool.ts');
    write('src/db/pool.ts', numbered(40).replace('line11 = 11', 'line11 = 99'));
    const injected = sessionStartContext(store, { session: 1, situation: null, budgetTokens: 2000 });
    assert.match(injected.text, /possibly outdated, its code changed: src\/db\/pool\.ts#L10-12: the lines changed/);
    const offers = store.relevantTo('the connection pool ran dry under load again');
    assert.deepEqual(offers.map((o) => o.outdated), [['src/db/pool.ts#L10-12: the lines changed']]);
    assert.match(buildPromptContext(offers).text, /possibly outdated, its code changed/);
  });
});
