/**
 * Guards against: memories hidden or lost after a git merge, and bad hand edits
 * taking the store (or a running server) down. With real git: two clones each
 * add memories and the index.json conflict is resolved three ways (markers left,
 * `git checkout --ours`, `--theirs`); archive_index.json conflicts (both sides
 * forget or evict different memories) resolved with ours/theirs. After `ltm fix`
 * every memory of both branches is active, every archived one restorable, the
 * store healthy, nothing quarantined, no JSON edited by hand. And a broken file
 * (bad YAML), a file claiming another memory's ID and a file that is not a
 * memory, written while `ltm serve` runs: the server keeps answering, `ltm check`
 * reports them (exit 1), `ltm fix` quarantines only the invalid ones (in a
 * git-ignored quarantine/) and keeps every valid memory.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { MemoryStore } from '../../src/core/store';
import { mcpClient, setConfig } from '../support/serverKit';
import { ensureCliBuilt, ltmRoot } from '../support/storeKit';
import { Processes, TempDirs, fileSections, git, ltmJsonAsync, nonceWord, prng, runLtm, startServe } from './kit';

interface Original {
  id: string;
  topic: string;
  content: string;
  word: string;
}

const INDEX = '.claude/ltm/index.json';
const ARCHIVE_INDEX = '.claude/ltm/archive_index.json';

describe('adversarial: git merges and hand edits', function () {
  this.timeout(120_000);
  const procs = new Processes();
  const dirs = new TempDirs();

  before(() => ensureCliBuilt());
  after(async () => {
    await procs.killAll();
    dirs.removeAll();
  });

  async function addMemories(project: string, label: string, n: number, rand: ReturnType<typeof prng>, tags: string[] = []): Promise<Original[]> {
    const store = MemoryStore.open(project);
    const out: Original[] = [];
    try {
      for (let i = 0; i < n; i++) {
        const word = nonceWord(rand, 10);
        const m = { topic: `${label} memory ${i} ${word}`, content: `Written on ${label}, number ${i}: ${word}.\n\nDetails of ${word} follow here.` };
        const r = await store.store({ ...m, tags: [label, ...tags] });
        out.push({ ...m, word, id: r.memory.id });
      }
    } finally {
      store.dispose();
    }
    return out;
  }

  function conflicted(repo: string): string[] {
    return git(repo, ['diff', '--name-only', '--diff-filter=U']).stdout.split('\n').filter(Boolean).sort();
  }

  /** A repo with a base commit, a clone whose branch `other` adds to it, and the merge of `other` under way. */
  async function mergeInProgress(
    name: string,
    onBase: (repo: string, rand: ReturnType<typeof prng>) => Promise<void>,
    onMain: (repo: string, rand: ReturnType<typeof prng>) => Promise<void>,
    onOther: (repo: string, rand: ReturnType<typeof prng>) => Promise<void>,
  ): Promise<string> {
    const rand = prng(name);
    const repoA = dirs.make(`ltm-adv-merge-${name}-`);
    git(repoA, ['init', '-q']);
    await onBase(repoA, rand);
    git(repoA, ['add', '-A']);
    git(repoA, ['commit', '-q', '-m', 'base']);
    const repoB = path.join(dirs.make(`ltm-adv-merge-${name}-clone-`), 'b');
    git(path.dirname(repoB), ['clone', '-q', repoA, repoB]);
    git(repoB, ['checkout', '-q', '-b', 'other']);
    await onOther(repoB, rand);
    git(repoB, ['add', '-A']);
    git(repoB, ['commit', '-q', '-m', 'other']);
    await onMain(repoA, rand);
    git(repoA, ['add', '-A']);
    git(repoA, ['commit', '-q', '-m', 'main']);
    git(repoA, ['fetch', '-q', repoB, 'other']);
    // Not committed even when clean, so that every resolution below starts from the same state.
    const merge = git(repoA, ['merge', '--no-edit', '--no-commit', 'FETCH_HEAD'], true);
    assert.ok(merge.status === 0 || conflicted(repoA).length > 0, `the merge failed:\n${merge.stdout}${merge.stderr}`);
    return repoA;
  }

  /** Copies a repo (working tree and .git) so that each resolution starts from the same merge. */
  function copyRepo(repo: string, label: string): string {
    const copy = path.join(dirs.make(`ltm-adv-merge-${label}-`), 'repo');
    fs.cpSync(repo, copy, { recursive: true });
    return copy;
  }

  /** Resolves the conflicted ones of `files` the given way, and commits (markers: leaves them as they are). */
  function resolve(repo: string, how: 'markers' | 'ours' | 'theirs', files: string[]): void {
    if (how === 'markers') return;
    const unmerged = conflicted(repo);
    for (const f of files.filter((x) => unmerged.includes(x))) git(repo, ['checkout', `--${how}`, '--', f]);
    git(repo, ['add', '-A']);
    git(repo, ['commit', '-q', '--no-edit']);
  }

  async function fixAndCheck(repo: string, where: string): Promise<string[]> {
    const fix = await ltmJsonAsync<{ actions: string[]; healthy: boolean }>(procs, ['fix', '--project', repo]);
    assert.equal(fix.healthy, true, `${where}: ltm fix left problems`);
    const check = await runLtm(procs, ['check', '--project', repo]);
    assert.equal(check.status, 0, `${where}: ltm check after fix exited ${check.status}:\n${check.stdout}${check.stderr}`);
    const quarantine = path.join(ltmRoot(repo), 'quarantine');
    assert.deepEqual(fs.existsSync(quarantine) ? fs.readdirSync(quarantine) : [], [], `${where}: fix quarantined files of a merge`);
    return fix.actions;
  }

  describe('anchored memories: each branch changes anchored code and memories', () => {
    const numbered = (n: number, name: string) => Array.from({ length: n }, (_, i) => `export const ${name}${i + 1} = ${i + 1};`).join('\n') + '\n';
    const ids = new Map<string, string>();
    const anchored = async (repo: string, key: string, files: string) => {
      const r = await ltmJsonAsync<{ id: string }>(procs, ['store', '--project', repo, '--topic', `Memory ${key} about ${files}`, '--content', `What ${key} learned.`, '--files', files]);
      ids.set(key, r.id);
    };

    it('merge cleanly, and afterwards each side\'s memories are stale exactly where their code changed', async () => {
      const merged = await mergeInProgress(
        'anchors',
        async (repo) => {
          fs.mkdirSync(path.join(repo, 'src'));
          fs.writeFileSync(path.join(repo, 'src/a.ts'), numbered(40, 'a'));
          fs.writeFileSync(path.join(repo, 'src/b.ts'), numbered(40, 'b'));
          await anchored(repo, 'base-a', 'src/a.ts#L10-12');
          await anchored(repo, 'base-b', 'src/b.ts#L2-3');
        },
        async (repo) => {
          // main changes the lines base-a is about, and anchors a memory of its own.
          fs.writeFileSync(path.join(repo, 'src/a.ts'), numbered(40, 'a').replace('a11 = 11', 'a11 = 110'));
          await anchored(repo, 'main-a', 'src/a.ts#L20-21');
        },
        async (repo) => {
          // other only inserts lines above base-b's (followed, and written by ltm stale), and anchors one too.
          fs.writeFileSync(path.join(repo, 'src/b.ts'), `// header\n// more\n${numbered(40, 'b')}`);
          const stale = await ltmJsonAsync<{ stale: unknown[]; followed: string[] }>(procs, ['stale', '--project', repo]);
          assert.deepEqual(stale, { stale: [], followed: [ids.get('base-b')], stale_memories: 'label' });
          await anchored(repo, 'other-b', 'src/b.ts#L30-31');
        },
      );
      const unmerged = conflicted(merged);
      assert.deepEqual(unmerged.filter((f) => f !== INDEX), [], 'no memory file or code file conflicts');
      resolve(merged, 'ours', [INDEX]);
      await fixAndCheck(merged, 'anchors');
      const stale = await ltmJsonAsync<{ stale: { id: string; reasons: string[] }[]; followed: string[] }>(procs, ['stale', '--project', merged]);
      assert.deepEqual(stale.stale, [{ id: ids.get('base-a'), topic: 'Memory base-a about src/a.ts#L10-12', reasons: ['src/a.ts#L10-12: the lines changed'] }]);
      assert.deepEqual(stale.followed, [], 'base-b was followed on its branch already');
      for (const key of ['base-b', 'main-a', 'other-b']) {
        const got = await ltmJsonAsync<{ stale: boolean; anchors: string[] }>(procs, ['get', ids.get(key)!, '--project', merged]);
        assert.equal(got.stale, false, `${key} (${got.anchors.join(', ')}) holds after the merge`);
      }
      const baseB = await ltmJsonAsync<{ anchors: string[] }>(procs, ['get', ids.get('base-b')!, '--project', merged]);
      assert.deepEqual(baseB.anchors, ['src/b.ts#L4-5']);
    });
  });

  describe('index.json conflict: 10 common memories, 30 added on each side', () => {
    let merged: string;
    const all: Original[] = [];

    before(async () => {
      merged = await mergeInProgress(
        'index',
        async (repo, rand) => void all.push(...(await addMemories(repo, 'base', 10, rand))),
        async (repo, rand) => void all.push(...(await addMemories(repo, 'main', 30, rand))),
        async (repo, rand) => void all.push(...(await addMemories(repo, 'other', 30, rand))),
      );
      const unmerged = conflicted(merged);
      assert.deepEqual(unmerged.filter((f) => f !== INDEX), [], 'only index.json may conflict');
      if (unmerged.includes(INDEX)) assert.match(fs.readFileSync(path.join(merged, INDEX), 'utf8'), /^<<<<<<< /m);
      else console.log('      merges: index.json merged without a conflict (the resolutions below are then the same)');
    });

    for (const how of ['markers', 'ours', 'theirs'] as const) {
      it(`resolved with ${how === 'markers' ? 'the conflict markers left in' : `git checkout --${how}`}: after ltm fix all 70 memories are active and healthy`, async () => {
        const repo = copyRepo(merged, how);
        resolve(repo, how, [INDEX]);
        await fixAndCheck(repo, how);
        const listed = await ltmJsonAsync<{ total: number; memories: { id: string }[] }>(procs, ['list', '--project', repo, '--limit', '500']);
        assert.equal(listed.total, 70, `${how}: ltm list total ${listed.total} of 70`);
        assert.deepEqual(listed.memories.map((m) => m.id).sort(), all.map((m) => m.id).sort(), `${how}: the listed IDs`);
        const index = JSON.parse(fs.readFileSync(path.join(repo, INDEX), 'utf8')) as { memories: Record<string, unknown> };
        assert.equal(Object.keys(index.memories).length, 70, `${how}: index.json after fix`);
        // What fix wrote can be committed: the merge ends with a clean tree.
        git(repo, ['add', '-A']);
        git(repo, ['commit', '-q', '--no-edit', '-m', 'after ltm fix']);
        assert.equal(git(repo, ['status', '--porcelain']).stdout, '', `${how}: the tree is not clean after committing`);
        const recalled = await ltmJsonAsync<{ memories: { id: string }[] }>(procs, ['recall', all[45]!.word, '--project', repo]);
        assert.ok(recalled.memories.some((m) => m.id === all[45]!.id), `${how}: recall does not find a memory of the other branch`);
      });
    }
  });

  describe('archive_index.json conflict: each side forgets different memories, one side also evicts', () => {
    let merged: string;
    let base: Original[] = [];
    let forgottenMain: Original[] = [];
    let forgottenOther: Original[] = [];
    let reducedOther: string[] = [];

    before(async () => {
      merged = await mergeInProgress(
        'archives',
        async (repo, rand) => {
          // The ones main forgets are critical on the base, so that eviction on the other side cannot touch them.
          base = [...(await addMemories(repo, 'keep', 3, rand, ['importance:critical'])), ...(await addMemories(repo, 'base', 13, rand))];
        },
        async (repo) => {
          const store = MemoryStore.open(repo);
          try {
            forgottenMain = base.slice(0, 3);
            for (const m of forgottenMain) await store.forget(m.id);
          } finally {
            store.dispose();
          }
        },
        async (repo) => {
          const store = MemoryStore.open(repo);
          try {
            forgottenOther = base.slice(3, 6);
            for (const m of forgottenOther) await store.forget(m.id);
          } finally {
            store.dispose();
          }
          setConfig(repo, { max_memories: 9, eviction_batch_size: 4 });
          const evicting = MemoryStore.open(repo);
          try {
            const result = await evicting.evict();
            reducedOther = result.steps.map((s) => s.id);
          } finally {
            evicting.dispose();
          }
          assert.equal(reducedOther.length, 4, 'the other side reduced 4 memories');
        },
      );
      // archive_index.json conflicts; index.json may too, depending on how far apart the changes are.
      const unmerged = conflicted(merged);
      assert.ok(unmerged.includes(ARCHIVE_INDEX), `archive_index.json does not conflict: ${JSON.stringify(unmerged)}`);
      assert.deepEqual(unmerged.filter((f) => f !== INDEX && f !== ARCHIVE_INDEX), [], 'only the indexes conflict');
    });

    for (const how of ['ours', 'theirs'] as const) {
      it(`resolved with git checkout --${how}: after ltm fix every forgotten and every reduced memory is restorable with its full text`, async () => {
        const repo = copyRepo(merged, how);
        resolve(repo, how, [INDEX, ARCHIVE_INDEX]);
        await fixAndCheck(repo, how);
        const archived = await ltmJsonAsync<{ memories: { id: string }[] }>(procs, ['list', '--phase', '3', '--project', repo, '--limit', '500']);
        const archivedIds = archived.memories.map((m) => m.id);
        for (const m of [...forgottenMain, ...forgottenOther]) assert.ok(archivedIds.includes(m.id), `${how}: forgotten ${m.id} is not listed as archived`);
        const active = await ltmJsonAsync<{ total: number; memories: { id: string }[] }>(procs, ['list', '--project', repo, '--limit', '500']);
        assert.equal(active.total, 10, `${how}: 16 - 6 forgotten = 10 active memories`);
        // Restore each one (the engine in this process, one through the CLI) and compare the text.
        const viaCli = forgottenOther[0]!;
        const cli = await runLtm(procs, ['restore', viaCli.id, '--project', repo]);
        assert.equal(cli.status, 0, `${how}: ltm restore ${viaCli.id}: ${cli.stderr}`);
        const store = MemoryStore.open(repo);
        try {
          for (const m of [...forgottenMain, ...forgottenOther.slice(1)]) await store.restore(m.id);
          for (const id of reducedOther) await store.restore(id);
          for (const m of base) {
            const view = store.peek(m.id);
            assert.deepEqual([view.phase, view.content], [0, m.content], `${how}: ${m.id} after restore`);
          }
          assert.equal(store.check().healthy, true, `${how}: ${JSON.stringify(store.check().problems)}`);
        } finally {
          store.dispose();
        }
      });
    }
  });

  describe('hand edits and invalid files while ltm serve runs', () => {
    it('a broken file, a copy with another memory\'s ID and a non-memory file: served around, reported by check, only the invalid ones quarantined (git-ignored)', async () => {
      const repo = dirs.make('ltm-adv-handedit-');
      git(repo, ['init', '-q']);
      const init = await runLtm(procs, ['init', '--project', repo]);
      assert.equal(init.status, 0, init.stderr);
      const rand = prng('handedit');
      const valid = await addMemories(repo, 'valid', 5, rand);
      git(repo, ['add', '-A']);
      git(repo, ['commit', '-q', '-m', 'memories']);
      const { proc, info } = await startServe(procs, repo);
      const memories = path.join(ltmRoot(repo), 'memories');
      const brokenName = 'mem_deadbeef.md';
      const strayName = 'mem_0badc0de.md';
      const notMemoryName = 'notes.md';
      fs.writeFileSync(path.join(memories, brokenName), '---\nid: "mem_deadbeef\ntopic: [unclosed\ntags: {\n---\n\n## Summary\nbroken\n\n## Content\nbroken text\n');
      const copied = fs.readFileSync(path.join(memories, `${valid[1]!.id}.md`), 'utf8');
      fs.writeFileSync(path.join(memories, strayName), copied);
      fs.writeFileSync(path.join(memories, notMemoryName), '# my notes\n');

      const client = await mcpClient(info.port, info.token, 'adv-handedit');
      try {
        // The server keeps answering, recall and store still work.
        const recall = await client.callTool({ name: 'recall', arguments: { query: valid[3]!.word } });
        assert.notEqual(recall.isError, true, JSON.stringify(recall.content));
        assert.ok((recall.structuredContent as { memories: { id: string }[] }).memories.some((m) => m.id === valid[3]!.id), 'recall misses a valid memory next to broken files');
        const stored = await client.callTool({ name: 'store_memory', arguments: { topic: 'stored next to broken files', content: 'still works' } });
        assert.notEqual(stored.isError, true, JSON.stringify(stored.content));
        const newId = (stored.structuredContent as { id: string }).id;

        const check = await runLtm(procs, ['check', '--project', repo]);
        assert.equal(check.status, 1, `ltm check must exit 1 when it finds problems (exit ${check.status}):\n${check.stdout}`);
        for (const name of [brokenName, strayName, notMemoryName]) assert.ok(check.stdout.includes(name), `ltm check does not name ${name}:\n${check.stdout}`);

        const fix = await ltmJsonAsync<{ actions: string[]; healthy: boolean }>(procs, ['fix', '--project', repo]);
        assert.equal(fix.healthy, true, `fix left problems: ${JSON.stringify(fix)}`);
        const quarantine = path.join(ltmRoot(repo), 'quarantine');
        const quarantined = fs.existsSync(quarantine) ? fs.readdirSync(quarantine).sort() : [];
        assert.equal(quarantined.length, 2, `quarantine/ holds ${JSON.stringify(quarantined)}, expected the broken file and the non-memory file`);
        assert.ok(quarantined.some((n) => n.endsWith(brokenName)) && quarantined.some((n) => n.endsWith(notMemoryName)), JSON.stringify(quarantined));
        for (const n of quarantined) {
          const rel = path.relative(repo, path.join(quarantine, n));
          assert.equal(git(repo, ['check-ignore', '-q', rel], true).status, 0, `${rel} is not git-ignored`);
        }
        assert.equal(fs.readFileSync(path.join(quarantine, quarantined.find((n) => n.endsWith(brokenName))!), 'utf8').includes('broken text'), true, 'the quarantined file lost its text');
        assert.equal(fs.existsSync(path.join(memories, strayName)), false, 'the copy claiming another ID is still under its old name');

        // Every valid memory stays, unchanged; the copy is kept as a memory of its own.
        for (const m of valid) assert.equal(fileSections(fs.readFileSync(path.join(memories, `${m.id}.md`), 'utf8')).content, m.content, `${m.id} changed`);
        const listed = await ltmJsonAsync<{ total: number; memories: { id: string; topic: string }[] }>(procs, ['list', '--project', repo, '--limit', '500']);
        const ids = listed.memories.map((m) => m.id);
        for (const id of [...valid.map((m) => m.id), newId]) assert.ok(ids.includes(id), `${id} is missing after fix`);
        assert.equal(listed.total, 7, `5 valid + 1 stored + the re-identified copy; got ${JSON.stringify(listed.memories.map((m) => m.topic))}`);
        assert.equal(listed.memories.filter((m) => m.topic === valid[1]!.topic).length, 2, 'the copy is kept as its own memory');
        const checkAfter = await runLtm(procs, ['check', '--project', repo]);
        assert.equal(checkAfter.status, 0, `ltm check after fix: ${checkAfter.stdout}`);
        assert.equal(git(repo, ['status', '--porcelain', '--', '.claude/ltm/quarantine']).stdout, '', 'git sees quarantine/');

        // The running server serves the repaired store.
        const status = await client.callTool({ name: 'ltm_status', arguments: {} });
        assert.equal((status.structuredContent as { total_memories: number }).total_memories, 7, 'the running server does not see the repaired store');
        const recallAfter = await client.callTool({ name: 'recall', arguments: { query: valid[0]!.word } });
        assert.ok((recallAfter.structuredContent as { memories: { id: string }[] }).memories.some((m) => m.id === valid[0]!.id));
      } finally {
        await client.close();
      }
      proc.child.kill('SIGTERM');
      assert.equal(await proc.exited, 0, proc.output());
    });
  });
});
