/**
 * The git situation session start ranks by, read from real repositories
 * with the real `git`, and what happens when there is none to read.
 */
import { strict as assert } from 'node:assert';
import { execFile, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { MAX_SITUATION_FILES, RECENT_COMMITS, cachedGitSituation, insideGitWorkTree, parseStatus, readGitSituation } from '../../src/servers/gitSituation';
import { makeTempProject, removeDir } from '../support/storeKit';

const execFileAsync = promisify(execFile);

function git(cwd: string, ...args: string[]): string {
  const r = spawnSync('git', ['-c', 'user.name=T', '-c', 'user.email=t@t.invalid', '-c', 'commit.gpgsign=false', ...args], { cwd, encoding: 'utf8' });
  assert.equal(r.status, 0, `git ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

function write(dir: string, rel: string, text = `${rel}\n`): void {
  fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
  fs.writeFileSync(path.join(dir, rel), text);
}

function commit(dir: string, files: string[], message: string): void {
  for (const f of files) write(dir, f, `${f} ${message}\n`);
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', message);
}

describe('gitSituation: the branch and the changed files, from git', function () {
  this.timeout(20_000);
  let repo: string;

  beforeEach(() => {
    repo = makeTempProject('ltm-git-');
    git(repo, 'init', '-q', '-b', 'main');
  });
  afterEach(() => removeDir(repo));

  it('reads the branch, the files changed in the working tree (staged, unstaged, renamed, untracked) and those of the last commits', async () => {
    commit(repo, ['old.ts', 'src/a.ts', 'src/b.ts', 'docs/readme.md'], 'first');
    commit(repo, ['src/c.ts'], 'second');
    commit(repo, ['src/d.ts', 'src/a.ts'], 'third');
    commit(repo, ['src/e.ts'], 'fourth');
    git(repo, 'checkout', '-q', '-b', 'fix/pool-timeout');
    write(repo, 'src/b.ts', 'changed\n');
    write(repo, 'src/staged.ts');
    git(repo, 'add', 'src/staged.ts');
    git(repo, 'mv', 'old.ts', 'src/renamed with space.ts');
    write(repo, 'src/new file.md');
    // A new directory is listed as `notes/` (git status -unormal: listing all its files could take long): no file.
    write(repo, 'notes/inside.md');
    const situation = await readGitSituation(repo);
    assert.ok(situation);
    assert.equal(situation.branch, 'fix/pool-timeout');
    assert.deepEqual([...situation.changedFiles].sort(), ['src/b.ts', 'src/new file.md', 'src/renamed with space.ts', 'src/staged.ts']);
    // The last RECENT_COMMITS commits (fourth, third, second), without files changed in the tree now.
    assert.equal(RECENT_COMMITS, 3);
    assert.deepEqual([...situation.recentFiles].sort(), ['src/a.ts', 'src/c.ts', 'src/d.ts', 'src/e.ts']);
  });

  it('gives paths relative to a project in a subfolder of the repository, and only those under it', async () => {
    commit(repo, ['app/src/x.ts', 'other/y.ts'], 'first');
    write(repo, 'app/src/x.ts', 'changed\n');
    write(repo, 'other/y.ts', 'changed\n');
    const situation = await readGitSituation(path.join(repo, 'app'));
    assert.deepEqual(situation, { branch: 'main', changedFiles: ['src/x.ts'], recentFiles: [] });
  });

  it('works in a repository without a commit yet (no recent files), and names no untracked directory', async () => {
    write(repo, 'newdir/inner.ts');
    write(repo, 'top.ts');
    assert.deepEqual(await readGitSituation(repo), { branch: 'main', changedFiles: ['top.ts'], recentFiles: [] });
  });

  it("leaves out LTM's own store (.claude/ltm/: memory files, index.json), changed or committed, in a project at the top or in a subfolder", async () => {
    commit(repo, ['src/a.ts', '.claude/ltm/memories/mem_0000000a.md', '.claude/ltm/index.json', 'app/.claude/ltm/memories/mem_0000000b.md'], 'first');
    write(repo, '.claude/ltm/memories/mem_0000000c.md');
    write(repo, '.claude/ltm/index.json', '{}\n');
    write(repo, 'src/b.ts');
    write(repo, 'app/.claude/ltm/memories/mem_0000000d.md');
    write(repo, 'app/src/c.ts');
    // .claude/settings.json is the project's, not the store's: it stays.
    write(repo, '.claude/settings.json', '{}\n');
    const situation = await readGitSituation(repo);
    assert.ok(situation);
    // app/.claude/ltm/ is another project's store, seen from this one: its files stay (app/src/, a new folder, names no file).
    assert.deepEqual([...situation.changedFiles].sort(), ['.claude/settings.json', 'app/.claude/ltm/memories/mem_0000000d.md', 'src/b.ts']);
    assert.deepEqual([...situation.recentFiles].sort(), ['app/.claude/ltm/memories/mem_0000000b.md', 'src/a.ts']);
    const inApp = await readGitSituation(path.join(repo, 'app'));
    assert.deepEqual(inApp, { branch: 'main', changedFiles: [], recentFiles: [] });
  });

  it("asks git status for the project's files only, without the store's (which it would stat one by one), and reads the same situation", async () => {
    commit(repo, ['src/a.ts', '.claude/ltm/memories/mem_0000000a.md', 'app/.claude/ltm/memories/mem_0000000b.md'], 'first');
    write(repo, '.claude/ltm/memories/mem_0000000a.md', 'edited\n');
    write(repo, 'app/.claude/ltm/memories/mem_0000000b.md', 'edited\n');
    write(repo, 'src/a.ts', 'edited\n');
    // The real git, through a script that notes the arguments of each call.
    const calls = path.join(repo, '..', `${path.basename(repo)}-git-calls.txt`);
    const noting = path.join(repo, '..', `${path.basename(repo)}-git.sh`);
    fs.writeFileSync(noting, `#!/bin/sh\nprintf '%s\\n' "$*" >> '${calls}'\nexec git "$@"\n`, { mode: 0o755 });
    try {
      const situation = await readGitSituation(repo, { gitPath: noting });
      assert.deepEqual(situation, { branch: 'main', changedFiles: ['app/.claude/ltm/memories/mem_0000000b.md', 'src/a.ts'], recentFiles: [] });
      const status = fs.readFileSync(calls, 'utf8').split('\n').find((line) => line.startsWith('status '));
      assert.ok(status?.endsWith(' -- . :(exclude).claude/ltm'), status);
    } finally {
      fs.rmSync(calls, { force: true });
      fs.rmSync(noting, { force: true });
    }
  });

  it('keeps at most MAX_SITUATION_FILES of each kind', async () => {
    commit(repo, ['seed.ts'], 'first');
    for (let i = 0; i < MAX_SITUATION_FILES + 20; i++) write(repo, `many/f${i}.ts`);
    git(repo, 'add', '-A');
    const situation = await readGitSituation(repo);
    assert.equal(situation?.changedFiles.length, MAX_SITUATION_FILES);
  });

  it('gives no situation for a detached HEAD, outside a repository, without git, or when git is too slow', async () => {
    commit(repo, ['a.ts'], 'first');
    commit(repo, ['b.ts'], 'second');
    git(repo, 'checkout', '-q', '--detach', 'HEAD~1');
    assert.equal(await readGitSituation(repo), null, 'detached HEAD');
    const outside = makeTempProject('ltm-nogit-');
    try {
      assert.equal(await readGitSituation(outside), null, 'not a repository');
      assert.equal(await readGitSituation(path.join(outside, 'missing')), null, 'no such directory');
    } finally {
      removeDir(outside);
    }
    git(repo, 'checkout', '-q', 'main');
    assert.equal(await readGitSituation(repo, { gitPath: path.join(repo, 'no-such-git') }), null, 'git missing');
    // A "git" that hangs: killed after the timeout, and no situation, at once.
    const slowGit = path.join(repo, 'slow-git.sh');
    fs.writeFileSync(slowGit, '#!/bin/sh\nsleep 10\n', { mode: 0o755 });
    const started = Date.now();
    assert.equal(await readGitSituation(repo, { gitPath: slowGit, timeoutMs: 150 }), null, 'git too slow');
    assert.ok(Date.now() - started < 2000, `${Date.now() - started} ms`);
  });

  it('insideGitWorkTree: a repository, a folder in it and a linked worktree are; a folder outside is not', () => {
    commit(repo, ['a.ts'], 'first');
    fs.mkdirSync(path.join(repo, 'packages', 'app'), { recursive: true });
    assert.equal(insideGitWorkTree(repo), true);
    assert.equal(insideGitWorkTree(path.join(repo, 'packages', 'app')), true, 'a project in a subfolder');
    const worktree = `${repo}-worktree`;
    const outside = makeTempProject('ltm-nogit-');
    try {
      // A linked worktree has a .git file, not a folder.
      git(repo, 'worktree', 'add', '-q', worktree);
      assert.equal(insideGitWorkTree(worktree), true, 'a linked worktree');
      assert.equal(insideGitWorkTree(outside), false);
    } finally {
      removeDir(worktree);
      removeDir(outside);
    }
  });

  it('never takes the index lock, so a git command run meanwhile is not held up', async () => {
    commit(repo, ['a.ts'], 'first');
    write(repo, 'a.ts', 'changed\n');
    // Reading the situation many times while git writes the index: no "index.lock exists" failure.
    // (git add runs as its own process, asynchronously: a spawnSync would stop the timers of the reads.)
    const adds = async () => {
      for (let i = 0; i < 5; i++) {
        write(repo, 'a.ts', `changed ${i}\n`);
        await execFileAsync('git', ['add', 'a.ts'], { cwd: repo });
      }
    };
    const reads = Promise.all(Array.from({ length: 5 }, () => readGitSituation(repo)));
    await adds();
    for (const s of await reads) assert.equal(s?.branch, 'main');
  });

  it('shares one read among the session starts of a few seconds, and reads again after', async () => {
    commit(repo, ['a.ts'], 'first');
    let clock = 0;
    const read = cachedGitSituation(repo, { maxAgeMs: 5000, now: () => clock });
    const [one, two] = await Promise.all([read(), read()]);
    assert.equal(one, two, 'one read for both');
    git(repo, 'checkout', '-q', '-b', 'next');
    clock = 4000;
    assert.equal((await read())?.branch, 'main', 'reused within maxAgeMs');
    clock = 5001;
    assert.equal((await read())?.branch, 'next', 'read again after');
  });

  it('parses porcelain v2 status: ordinary, renamed (with the original path after it), unmerged and untracked entries', () => {
    const out = [
      '# branch.oid 0123',
      '# branch.head topic/x',
      '1 .M N... 100644 100644 100644 aaaa bbbb src/a b.ts',
      '2 R. N... 100644 100644 100644 aaaa bbbb R100 src/new.ts',
      'src/old.ts',
      'u UU N... 100644 100644 100644 100644 aaaa bbbb cccc src/conflict.ts',
      '? untracked.ts',
      '! ignored.ts',
      '',
    ].join('\0');
    assert.deepEqual(parseStatus(out), { branch: 'topic/x', paths: ['src/a b.ts', 'src/new.ts', 'src/conflict.ts', 'untracked.ts'] });
    assert.equal(parseStatus('# branch.oid 0123\0# branch.head (detached)\0').branch, null);
  });
});
