import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { buildPromptContext } from '../../src/core/promptContext';
import { sessionStartContext } from '../../src/core/sessionStartContext';
import { MemoryStore } from '../../src/core/store';
import { gitRenameLookup } from '../../src/servers/gitRenames';
import { ltmRoot, makeTempProject, removeDir, snapshotFiles } from '../support/storeKit';

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

  describe('stale_memories: label or skip', () => {
    const PROMPT = 'the connection pool ran dry under load again';
    /** A stale memory that outranks a fresh one in every way: by priority, by relevance to PROMPT and to pool.ts. */
    async function staleAndFresh(): Promise<{ stale: string; fresh: string }> {
      const stale = (await store.store({ topic: 'Connection pool ran dry under load', content: 'The connection pool in src/db/pool.ts ran dry under load; it is 50 now.', difficulty: 0.9, anchors: ['src/db/pool.ts#L10-12'] })).memory.id;
      const fresh = (await store.store({ topic: 'Pool under load: leaked connections', content: 'When the pool in src/db/pool.ts runs dry under load, look for leaked connections.', difficulty: 0.2 })).memory.id;
      await store.updateState((state) => {
        state.config.memories_to_load = 1;
      });
      write('src/db/pool.ts', numbered(40).replace('line11 = 11', 'line11 = 99'));
      assert.equal(store.staleness(stale)!.stale, true);
      return { stale, fresh };
    }
    const startIds = () => sessionStartContext(store, { session: 1, situation: null, budgetTokens: 2000 }).injectedIds;

    it('labels by default: the stale memory is given, marked, before the next one', async () => {
      const { stale } = await staleAndFresh();
      assert.equal(store.config.stale_memories, 'label');
      assert.deepEqual(startIds(), [stale]);
      assert.deepEqual(store.relevantTo(PROMPT, { limit: 1 }).map((o) => [o.view.id, o.outdated]), [[stale, ['src/db/pool.ts#L10-12: the lines changed']]]);
      assert.deepEqual(store.aboutFile('src/db/pool.ts', { limit: 1 }).map((o) => o.view.id), [stale]);
    });

    it('skip: session start, prompt/failure/subagent offers and file offers leave it out, the next memory in its place', async () => {
      const { stale, fresh } = await staleAndFresh();
      await store.setStaleMemories('skip');
      const injection = sessionStartContext(store, { session: 1, situation: null, budgetTokens: 2000 });
      assert.deepEqual(injection.injectedIds, [fresh]);
      assert.ok(!injection.text.includes(stale));
      assert.doesNotMatch(injection.text, /possibly outdated/);
      // Still a memory that recall reaches: counted among those "more" stored.
      assert.equal(injection.omitted, 1);
      assert.deepEqual(store.relevantTo(PROMPT, { limit: 1 }).map((o) => o.view.id), [fresh]);
      assert.deepEqual(store.aboutFile('src/db/pool.ts', { limit: 1 }).map((o) => o.view.id), [fresh]);
      // The situation's candidates too: a session on a branch about the pool is not given it either.
      assert.deepEqual(store.candidatesFor(['connection pool dry'], 1).map((v) => v.id), [fresh]);
      const situated = sessionStartContext(store, { session: 1, situation: { branch: 'fix/pool-dry', changedFiles: ['src/db/pool.ts'], recentFiles: [] }, budgetTokens: 2000 });
      assert.deepEqual(situated.injectedIds, [fresh]);
    });

    it('skip: recall and get still return it, marked stale (asked for explicitly, it is shown)', async () => {
      const { stale } = await staleAndFresh();
      await store.setStaleMemories('skip');
      assert.ok(store.search(PROMPT).some((hit) => hit.id === stale));
      assert.ok(store.searchAny([PROMPT, 'pool exhausted']).some((hit) => hit.id === stale));
      assert.equal((await store.get(stale)).id, stale);
      assert.deepEqual(store.staleness(stale)!.reasons, ['src/db/pool.ts#L10-12: the lines changed']);
    });

    it('skip leaves out only what is stale: once re-anchored, the memory is given again', async () => {
      const { stale } = await staleAndFresh();
      await store.setStaleMemories('skip');
      assert.deepEqual(startIds().includes(stale), false);
      await store.reanchor(stale);
      assert.deepEqual(startIds(), [stale]);
      assert.deepEqual(store.relevantTo(PROMPT, { limit: 1 }).map((o) => o.view.id), [stale]);
    });

    it('is kept in state.json, read by every process; back to label gives it marked again; a bad mode is refused, nothing written', async () => {
      const { stale } = await staleAndFresh();
      await store.setStaleMemories('skip');
      const statePath = path.join(ltmRoot(project), 'state.json');
      assert.equal((JSON.parse(fs.readFileSync(statePath, 'utf8')) as { config: { stale_memories: string } }).config.stale_memories, 'skip');
      const other = MemoryStore.open(project);
      try {
        assert.equal(other.config.stale_memories, 'skip');
        assert.equal(other.status().config.stale_memories, 'skip');
        assert.deepEqual(sessionStartContext(other, { session: 1, situation: null, budgetTokens: 2000 }).injectedIds.includes(stale), false);
      } finally {
        other.dispose();
      }
      const before = fs.readFileSync(statePath, 'utf8');
      await assert.rejects(store.setStaleMemories('hide' as 'skip'), /stale_memories must be label or skip/);
      assert.equal(fs.readFileSync(statePath, 'utf8'), before);
      await store.setStaleMemories('label');
      assert.deepEqual(startIds(), [stale]);
    });

    it('skip with every ranked memory stale gives none of them, and still says how many recall reaches', async () => {
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) ids.push((await store.store({ topic: `Pool note ${i}`, content: `Pool fact ${i}.`, anchors: ['src/db/pool.ts#L10-12'] })).memory.id);
      write('src/db/pool.ts', numbered(40).replace('line11 = 11', 'line11 = 99'));
      await store.setStaleMemories('skip');
      const injection = sessionStartContext(store, { session: 1, situation: null, budgetTokens: 2000 });
      assert.deepEqual(injection.injectedIds, []);
      assert.equal(injection.omitted, 5);
      assert.match(injection.text, /5 more memories are stored/);
    });
  });
});
