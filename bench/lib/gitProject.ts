/**
 * A project as most people run LTM in: a git repository. The bench's stores
 * are plain folders; session start ranks by the git situation (branch,
 * changed files, the last commits' files) only in a repository, and reads
 * git to know it, so its first answer there is measured on a copy that is one.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

/** Commits of code files after the store's own commit: the situation's "recent files" (the server reads the last 3). */
const CODE_COMMITS = 3;
const FILES_PER_COMMIT = 10;

function git(cwd: string, ...args: string[]): void {
  const run = spawnSync('git', ['-c', 'user.name=ltm-bench', '-c', 'user.email=bench@localhost.invalid', '-c', 'commit.gpgsign=false', ...args], { cwd, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`git ${args.join(' ')} failed: ${run.error?.message ?? run.stderr}`);
}

/**
 * A copy of `projectDir` at `${projectDir}-git` (replaced if there), made a
 * repository: the project committed with its store (memory files and
 * index.json are shared through git; the store's .gitignore keeps the rest
 * out), then CODE_COMMITS commits of source files, and one of them changed
 * in the working tree. Returns its path.
 */
export function gitCopyOf(projectDir: string): string {
  const copy = `${projectDir}-git`;
  fs.rmSync(copy, { recursive: true, force: true });
  fs.cpSync(projectDir, copy, { recursive: true });
  fs.rmSync(path.join(copy, '.claude', 'ltm', 'server.json'), { force: true });
  git(copy, 'init', '-q', '-b', 'main');
  git(copy, 'add', '-A');
  git(copy, 'commit', '-q', '-m', 'the project and its memories');
  for (let c = 1; c <= CODE_COMMITS; c++) {
    const dir = path.join(copy, 'src', `module${c}`);
    fs.mkdirSync(dir, { recursive: true });
    for (let f = 1; f <= FILES_PER_COMMIT; f++) {
      fs.writeFileSync(path.join(dir, `connection_pool_${f}.ts`), `export const poolTimeoutMs${f} = ${c * 1000 + f};\n`);
    }
    git(copy, 'add', '-A');
    git(copy, 'commit', '-q', '-m', `module ${c}`);
  }
  fs.appendFileSync(path.join(copy, 'src', 'module1', 'connection_pool_1.ts'), '// work in progress\n');
  git(copy, 'checkout', '-q', '-b', 'fix/connection-pool-timeout');
  return copy;
}
