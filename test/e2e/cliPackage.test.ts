/**
 * The README's "Without VS Code" path, verbatim, as a terminal user follows
 * it: the CLI packed by `npm run pack:cli`, installed with `npm install -g`
 * into a temporary prefix, then `ltm init`, `ltm serve`, `eval "$(ltm env)"`
 * in bash, and the real Claude Code CLI (fake model) storing a memory in one
 * session and being given it in the next; `ltm uninit` and `npm uninstall -g`
 * leave nothing behind.
 */
import { strict as assert } from 'node:assert';
import { spawn, spawnSync, type SpawnSyncReturns } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { packCli, CLI_PACKAGE_NAME } from '../../scripts/packCli';
import { claudeBinary, runClaude } from '../support/claudeCode';
import { FakeAnthropic, lastToolResult, textOf } from '../support/fakeAnthropic';
import { REPO_ROOT, requireBuiltCli } from '../support/ltmProcess';

describe('the packed CLI installed with npm install -g (README: Without VS Code)', function () {
  this.timeout(300_000);
  let root: string;
  let prefix: string;
  let project: string;
  let home: string;
  let env: NodeJS.ProcessEnv;
  let fake: FakeAnthropic;
  let serve: ReturnType<typeof spawn> | undefined;

  /** A command line as the user types it, in bash, in the project, with the installed `ltm` first on the PATH. */
  const sh = (line: string): SpawnSyncReturns<string> => spawnSync('bash', ['-c', line], { cwd: project, env, encoding: 'utf8' });

  before(async () => {
    requireBuiltCli();
    claudeBinary();
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'ltm-cli-package-'));
    prefix = path.join(root, 'prefix');
    project = path.join(root, 'my project');
    home = path.join(root, 'home');
    fs.mkdirSync(project);
    fs.mkdirSync(home);
    const tarball = packCli();
    const install = spawnSync('npm', ['install', '-g', '--prefix', prefix, '--no-audit', '--no-fund', tarball], { cwd: root, encoding: 'utf8' });
    assert.equal(install.status, 0, install.stderr);
    env = { ...process.env, PATH: `${path.join(prefix, 'bin')}${path.delimiter}${process.env.PATH ?? ''}`, LTM_PORT: undefined, LTM_TOKEN: undefined, LTM_MCP_URL: undefined };
    fake = new FakeAnthropic(() => ({ text: 'ok' }));
    await fake.start();
  });

  after(async () => {
    if (serve && serve.exitCode === null) {
      const exited = new Promise((r) => serve!.once('exit', r));
      serve.kill('SIGTERM');
      await exited;
    }
    await fake?.stop();
    if (root) fs.rmSync(root, { recursive: true, force: true });
  });

  it('puts `ltm` on the PATH: the bundle alone, with the version of this repository', () => {
    const which = sh('command -v ltm');
    assert.equal(which.stdout.trim(), path.join(prefix, 'bin', 'ltm'));
    const manifest = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string };
    assert.equal(sh('ltm --version').stdout, `${manifest.version}\n`);
    const installed = path.join(prefix, 'lib', 'node_modules', CLI_PACKAGE_NAME);
    assert.deepEqual(fs.readdirSync(installed).sort(), ['LICENSE', 'README.md', 'dist', 'hooks', 'package.json']);
    assert.ok(!fs.existsSync(path.join(installed, 'node_modules')), 'no dependency is installed: they are in the bundle');
  });

  it('ltm init, ltm serve, eval "$(ltm env)": Claude Code stores a memory in session 1 and is given it in session 2', async () => {
    const init = sh('ltm init');
    assert.equal(init.status, 0, init.stderr);
    assert.match(init.stdout, /created \.claude\/ltm\/hooks\/ltm-hook\.sh/);

    serve = spawn('ltm', ['serve'], { cwd: project, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let banner = '';
    serve.stdout!.on('data', (d: Buffer) => (banner += d.toString()));
    const deadline = Date.now() + 20_000;
    while (!banner.includes('eval "$(ltm env')) {
      assert.ok(Date.now() < deadline && serve.exitCode === null, `ltm serve did not start: ${banner}`);
      await new Promise((r) => setTimeout(r, 50));
    }

    // What `eval "$(ltm env)"` leaves in the user's shell.
    const shell = sh('eval "$(ltm env)" && printf "%s\\n%s\\n%s\\n" "$LTM_PORT" "$LTM_TOKEN" "$LTM_MCP_URL"');
    assert.equal(shell.status, 0, shell.stderr);
    const [port, token, mcpUrl] = shell.stdout.trim().split('\n');
    assert.match(port!, /^\d+$/);
    assert.equal(mcpUrl, `http://127.0.0.1:${port}/mcp`);
    const claudeEnv = { PATH: env.PATH, LTM_PORT: port, LTM_TOKEN: token, LTM_MCP_URL: mcpUrl };

    fake.setScript((req) => {
      const result = lastToolResult(req);
      if (result) return { text: 'Stored.' };
      return { toolUse: { name: 'mcp__ltm__store_memory', input: { topic: 'Release builds need NODE_ENV=production', content: 'Without it the bundle keeps dev-only checks and is 3x larger.', tags: ['build'] } } };
    });
    const first = await runClaude('remember the release build lesson', { cwd: project, home, modelUrl: fake.url, env: claudeEnv });
    assert.equal(first.status, 0, first.stderr);
    assert.equal(first.result?.is_error, false, first.stdout);
    const listed = JSON.parse(sh('ltm list --json').stdout) as { memories: { topic: string }[] };
    assert.deepEqual(listed.memories.map((m) => m.topic), ['Release builds need NODE_ENV=production']);

    fake.setScript(() => ({ text: 'hello' }));
    const before = fake.requests.length;
    const second = await runClaude('hello', { cwd: project, home, modelUrl: fake.url, env: claudeEnv });
    assert.equal(second.status, 0, second.stderr);
    const firstRequest = fake.requests[before]!;
    assert.match(textOf(firstRequest.messages) + textOf(firstRequest.system), /Release builds need NODE_ENV=production/);
  });

  it('ltm uninit and npm uninstall -g remove the setup and the command; the memories stay', async () => {
    const exited = new Promise((r) => serve!.once('exit', r));
    serve!.kill('SIGTERM');
    await exited;
    const uninit = sh('ltm uninit');
    assert.equal(uninit.status, 0, uninit.stderr);
    assert.ok(!fs.existsSync(path.join(project, '.mcp.json')));
    assert.equal(fs.readdirSync(path.join(project, '.claude', 'ltm', 'memories')).length, 1, 'the memory is kept');
    const removed = spawnSync('npm', ['uninstall', '-g', '--prefix', prefix, CLI_PACKAGE_NAME], { cwd: root, encoding: 'utf8' });
    assert.equal(removed.status, 0, removed.stderr);
    assert.equal(sh('command -v ltm').status, 1, 'ltm is no longer on the PATH');
  });
});
