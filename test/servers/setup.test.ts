/**
 * `ltm init` and `ltm uninit` (the built CLI) on projects that already have
 * Claude Code settings, MCP servers, CLAUDE.md text and commands of their own.
 */
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ensureCliBuilt, ltmRoot, makeTempProject, memoryFileIds, readJson, removeDir, snapshotDiff, snapshotFiles } from '../support/storeKit';
import { CLI, HOOK_SCRIPT, startTestServer, type Json } from '../support/serverKit';

const HOOK_ENDPOINTS: Record<string, string> = {
  SessionStart: 'session_start',
  UserPromptSubmit: 'user_prompt_submit',
  PreToolUse: 'pre_tool_use',
  PostToolUse: 'post_tool_use',
  PostToolUseFailure: 'post_tool_use',
  PreCompact: 'pre_compact',
  SessionEnd: 'session_end',
  SubagentStart: 'subagent_start',
};
const COMMANDS = ['forget.md', 'ltm.md', 'recall.md', 'remember.md'];
/** How the hook commands init writes here start the script: with bash wherever there is one (see hookShell.ts). */
const HOOK_SHELL = spawnSync('sh', ['-c', 'command -v bash']).status === 0 ? 'bash --posix' : 'sh';
const MARKER = 'ltm:managed';

const SETTINGS = {
  permissions: { allow: ['Bash(npm test:*)'], deny: ['Read(./.env)'] },
  env: { FOO: 'bar' },
  hooks: {
    PostToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'echo mine >> /tmp/hook.log' }] }],
    Stop: [{ hooks: [{ type: 'command', command: 'notify-send done', timeout: 10 }] }],
  },
  model: 'sonnet',
};
const MCP = { mcpServers: { other: { type: 'stdio', command: 'other-server', args: ['--flag'], env: { X: '1' } } } };
const CLAUDE_MD = '# My project\n\nUse pnpm, not npm.\n';

function ltm(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  return ltmWith(process.env, ...args);
}

function ltmWith(env: NodeJS.ProcessEnv, ...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', env });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

function write(project: string, rel: string, text: string): void {
  fs.mkdirSync(path.dirname(path.join(project, rel)), { recursive: true });
  fs.writeFileSync(path.join(project, rel), text);
}

/** Every file of the project outside .claude/ltm/ (the memory store), with its bytes. */
function projectFiles(project: string): Map<string, Buffer> {
  const all = snapshotFiles(project);
  for (const name of [...all.keys()]) if (name.startsWith(`.claude${path.sep}ltm${path.sep}`)) all.delete(name);
  return all;
}

function isLtmHook(hook: Json): boolean {
  return String(hook.command ?? '').includes('.claude/ltm/hooks/ltm-hook.') || (hook.type === 'http' && String(hook.url).includes('/hook/'));
}

/** The events whose LTM hook is an http hook while a server runs; the others stay command hooks. */
const HTTP_EVENTS = ['UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'PostToolUseFailure', 'SubagentStart'];

/** The one LTM hook of each event. */
function ltmHooksOf(settings: Json): Record<string, Json> {
  const hooks = settings.hooks as Record<string, { hooks: Json[] }[]>;
  const own: Record<string, Json> = {};
  for (const event of Object.keys(HOOK_ENDPOINTS)) {
    const found = (hooks[event] ?? []).flatMap((g) => g.hooks).filter(isLtmHook);
    assert.equal(found.length, 1, `${event}: one LTM hook`);
    own[event] = found[0]!;
  }
  return own;
}

/** Asserts the LTM hooks a server on `port` wants: http for tool calls (with the project in the URL), command for the rest. */
function assertHttpHooks(settings: Json, port: number, project: string): void {
  for (const [event, hook] of Object.entries(ltmHooksOf(settings))) {
    if (!HTTP_EVENTS.includes(event)) {
      assert.equal(hook.type, 'command', event);
      continue;
    }
    assert.deepEqual(
      hook,
      {
        type: 'http',
        url: `http://127.0.0.1:${port}/hook/${HOOK_ENDPOINTS[event]}?project=${encodeURIComponent(project)}`,
        headers: { Authorization: 'Bearer $LTM_TOKEN' },
        allowedEnvVars: ['LTM_TOKEN'],
        timeout: 3,
      },
      event,
    );
  }
}

/** Settings with LTM's hook groups taken out (and hook events left empty dropped). */
function withoutLtm(settings: Json): Json {
  const hooks: Json = {};
  for (const [event, groups] of Object.entries((settings.hooks ?? {}) as Record<string, { hooks: Json[] }[]>)) {
    const kept = groups.filter((g) => !g.hooks.every(isLtmHook));
    if (kept.length > 0) hooks[event] = kept;
  }
  return { ...settings, hooks };
}

function initOk(project: string): string {
  const r = ltm('init', '--project', project);
  assert.equal(r.status, 0, `ltm init failed: ${r.stderr}`);
  assert.equal(r.stderr, '');
  return r.stdout;
}

function uninitOk(project: string): string {
  const r = ltm('uninit', '--project', project);
  assert.equal(r.status, 0, `ltm uninit failed: ${r.stderr}`);
  assert.equal(r.stderr, '');
  return r.stdout;
}

describe('ltm init / uninit', function () {
  this.timeout(30_000);
  let project: string;

  before(() => ensureCliBuilt());
  beforeEach(() => (project = makeTempProject('ltm-setup-')));
  afterEach(() => removeDir(project));

  function withExistingFiles(): void {
    write(project, '.claude/settings.local.json', `${JSON.stringify(SETTINGS, null, 2)}\n`);
    write(project, '.mcp.json', `${JSON.stringify(MCP, null, 2)}\n`);
    write(project, 'CLAUDE.md', CLAUDE_MD);
  }

  it('merges hooks, the MCP entry, slash commands and a CLAUDE.md block without touching what was there', async () => {
    withExistingFiles();
    initOk(project);

    const settings = readJson(path.join(project, '.claude', 'settings.local.json'));
    assert.deepEqual(withoutLtm(settings), SETTINGS, 'the other settings and hooks are as they were');
    const hooks = settings.hooks as Record<string, { matcher?: string; hooks: Json[] }[]>;
    for (const [event, endpoint] of Object.entries(HOOK_ENDPOINTS)) {
      const ltmHooks = (hooks[event] ?? []).flatMap((g) => g.hooks).filter(isLtmHook);
      assert.equal(ltmHooks.length, 1, `${event}: one LTM hook`);
      assert.equal(ltmHooks[0]!.type, 'command', event);
      assert.equal(ltmHooks[0]!.command, `${HOOK_SHELL} "$CLAUDE_PROJECT_DIR/.claude/ltm/hooks/ltm-hook.sh" ${endpoint}`, event);
      assert.equal(typeof ltmHooks[0]!.timeout, 'number', event);
    }
    // The Agent tool's PreToolUse keeps the task its subagent's SubagentStart is answered with; SubagentStart has no matcher (every agent type).
    assert.deepEqual(hooks.PreToolUse![0]!.matcher!.split('|').filter((t) => t === 'Agent' || t === 'Task'), ['Agent', 'Task']);
    assert.equal(hooks.SubagentStart![0]!.matcher, undefined);
    assert.deepEqual(hooks.PostToolUse![0], SETTINGS.hooks.PostToolUse[0], "the user's own PostToolUse hook stays first and unchanged");
    assert.deepEqual(hooks.Stop, SETTINGS.hooks.Stop);

    const installed = path.join(ltmRoot(project), 'hooks', 'ltm-hook.sh');
    assert.ok(fs.readFileSync(installed).equals(fs.readFileSync(HOOK_SCRIPT)), 'the installed script is the shipped one');
    assert.ok(fs.statSync(installed).mode & 0o100, 'the installed script is executable');

    const mcp = readJson<{ mcpServers: Record<string, Json> }>(path.join(project, '.mcp.json'));
    assert.deepEqual(Object.keys(mcp), ['mcpServers']);
    assert.deepEqual(mcp.mcpServers.other, MCP.mcpServers.other);
    const entry = mcp.mcpServers.ltm!;
    assert.equal(entry.type, 'http');
    assert.ok((entry.url as string).includes('${LTM_PORT}'), String(entry.url));
    assert.doesNotMatch(entry.url as string, /:\d+/, 'no port number in the url');
    assert.deepEqual(Object.keys(entry.headers as Json), ['Authorization']);
    assert.equal((entry.headers as Json).Authorization, 'Bearer ${LTM_TOKEN}');

    const commandsDir = path.join(project, '.claude', 'commands');
    assert.deepEqual(fs.readdirSync(commandsDir).sort(), COMMANDS);
    for (const name of COMMANDS) {
      const text = fs.readFileSync(path.join(commandsDir, name), 'utf8');
      assert.match(text, /^---\ndescription: .+\n/, `${name} has a description`);
      assert.ok(text.includes(MARKER), `${name} carries the marker`);
      assert.ok(text.includes('mcp__ltm__'), `${name} uses the ltm tools`);
    }

    const claudeMd = fs.readFileSync(path.join(project, 'CLAUDE.md'), 'utf8');
    assert.ok(claudeMd.startsWith(CLAUDE_MD), 'the existing CLAUDE.md text comes first, unchanged');
    const begin = claudeMd.indexOf('<!-- LTM:BEGIN');
    const end = claudeMd.indexOf('<!-- LTM:END -->');
    assert.ok(begin > CLAUDE_MD.length - 1 && end > begin, 'one marked block after the text');
    assert.equal(claudeMd.lastIndexOf('<!-- LTM:BEGIN'), begin);
    assert.match(claudeMd.slice(begin, end), /mcp__ltm__recall/);
  });

  it('never writes the token into a file; the port only into the git-ignored settings.local.json, only while a server runs', async () => {
    withExistingFiles();
    const settingsFile = path.join('.claude', 'settings.local.json');
    const t = await startTestServer({ project });
    try {
      initOk(project);
      for (const [name, bytes] of projectFiles(project)) {
        const text = bytes.toString('utf8');
        assert.ok(!text.includes(t.token), `${name} contains the token`);
        if (name !== settingsFile) assert.ok(!text.includes(`:${t.port}`), `${name} contains the port`);
      }
      // init next to a running server writes the http hooks at once.
      assertHttpHooks(readJson(path.join(project, settingsFile)), t.port, project);
    } finally {
      await t.stop();
    }
    for (const [name, bytes] of projectFiles(project)) assert.ok(!bytes.toString('utf8').includes(`:${t.port}`), `${name} keeps the port after the server stopped`);
  });

  it("a server switches LTM's tool-call hooks to http hooks while it runs and back when it stops, touching nothing else", async () => {
    // Tabs and CRLF line endings: the person's formatting stays.
    write(project, '.claude/settings.local.json', JSON.stringify(SETTINGS, null, '\t').replace(/\n/g, '\r\n') + '\r\n');
    initOk(project);
    const settingsFile = path.join(project, '.claude', 'settings.local.json');
    const initialized = fs.readFileSync(settingsFile, 'utf8');
    for (const hook of Object.values(ltmHooksOf(readJson(settingsFile)))) assert.equal(hook.type, 'command');
    const logged: string[] = [];
    const t = await startTestServer({ project, log: (m) => logged.push(m) });
    let running: string;
    try {
      running = fs.readFileSync(settingsFile, 'utf8');
      const settings = readJson(settingsFile);
      assertHttpHooks(settings, t.port, project);
      assert.deepEqual(withoutLtm(settings), SETTINGS, 'the other settings and hooks are as they were');
      assert.ok(running.includes('\r\n\t\t"PreToolUse"') && !/[^\r]\n/.test(running), 'tabs and CRLF kept');
      assert.deepEqual(logged.filter((m) => m.includes('settings.local.json')), [`${settingsFile}: LTM's tool-call hooks are now http hooks`]);
    } finally {
      await t.stop();
    }
    assert.equal(fs.readFileSync(settingsFile, 'utf8'), initialized, 'byte for byte as init wrote it');
    // A server on the same port again rewrites the same bytes.
    const again = await startTestServer({ project, preferredPort: t.port });
    try {
      assert.equal(fs.readFileSync(settingsFile, 'utf8'), running);
    } finally {
      await again.stop();
    }
  });

  it('init replaces http hooks a killed server left by the hooks that fit; uninit removes http hooks too', () => {
    withExistingFiles();
    const before = projectFiles(project);
    initOk(project);
    const settingsFile = path.join(project, '.claude', 'settings.local.json');
    const commandHooks = fs.readFileSync(settingsFile, 'utf8');
    // What a server killed with SIGKILL leaves behind: http hooks to a port nobody serves.
    const settings = readJson<{ hooks: Record<string, { hooks: Json[] }[]> }>(settingsFile);
    for (const event of HTTP_EVENTS) {
      for (const group of settings.hooks[event]!) {
        group.hooks = group.hooks.map((h) =>
          isLtmHook(h)
            ? { type: 'http', url: `http://127.0.0.1:9/hook/${HOOK_ENDPOINTS[event]}?project=${encodeURIComponent(project)}`, headers: { Authorization: 'Bearer $LTM_TOKEN' }, allowedEnvVars: ['LTM_TOKEN'], timeout: 3 }
            : h,
        );
      }
    }
    const left = `${JSON.stringify(settings, null, 2)}\n`;
    fs.writeFileSync(settingsFile, left);
    initOk(project);
    assert.equal(fs.readFileSync(settingsFile, 'utf8'), commandHooks, 'init with no server writes command hooks again');
    // uninit with http hooks in place removes them as well, and nothing else.
    fs.writeFileSync(settingsFile, left);
    uninitOk(project);
    assert.deepEqual(snapshotDiff(before, projectFiles(project)), []);
  });

  it('a server leaves settings.local.json that is not valid JSON alone, and says so', async () => {
    initOk(project);
    const settingsFile = path.join(project, '.claude', 'settings.local.json');
    const broken = fs.readFileSync(settingsFile, 'utf8').replace(/}\s*$/, ',}');
    fs.writeFileSync(settingsFile, broken);
    const logged: string[] = [];
    const t = await startTestServer({ project, log: (m) => logged.push(m) });
    await t.stop();
    assert.equal(fs.readFileSync(settingsFile, 'utf8'), broken);
    assert.equal(logged.filter((m) => m.startsWith('could not update the hooks in settings.local.json')).length, 2, logged.join('\n'));
  });

  describe('the shell of the hook commands', () => {
    const commandsOf = (project: string) => Object.fromEntries(Object.entries(ltmHooksOf(readJson(path.join(project, '.claude', 'settings.local.json')))).map(([event, hook]) => [event, String(hook.command)]));
    /** settings.local.json as an earlier LTM wrote it: every LTM hook command runs the script with sh. */
    function asSetUpWithSh(): string {
      const file = path.join(project, '.claude', 'settings.local.json');
      const older = fs.readFileSync(file, 'utf8').replaceAll(`"${HOOK_SHELL} \\"$CLAUDE_PROJECT_DIR`, '"sh \\"$CLAUDE_PROJECT_DIR');
      fs.writeFileSync(file, older);
      return older;
    }

    it('is bash where bash is on PATH, else sh', function () {
      if (HOOK_SHELL === 'sh') this.skip();
      initOk(project);
      for (const [event, command] of Object.entries(commandsOf(project))) assert.ok(command!.startsWith(`${HOOK_SHELL} "$CLAUDE_PROJECT_DIR/`), `${event}: ${command}`);
      const other = makeTempProject('ltm-setup-nobash-');
      try {
        // A PATH without bash (node itself is found through process.execPath).
        const r = ltmWith({ ...process.env, PATH: path.join(other, 'no-such-bin') }, 'init', '--project', other);
        assert.equal(r.status, 0, r.stderr);
        for (const [event, command] of Object.entries(commandsOf(other))) assert.ok(command!.startsWith('sh "$CLAUDE_PROJECT_DIR/'), `${event}: ${command}`);
      } finally {
        removeDir(other);
      }
    });

    it('init again moves hook commands an earlier version wrote with sh to bash, and says so', function () {
      if (HOOK_SHELL === 'sh') this.skip();
      initOk(project);
      const current = fs.readFileSync(path.join(project, '.claude', 'settings.local.json'), 'utf8');
      assert.notEqual(asSetUpWithSh(), current);
      const out = initOk(project);
      assert.match(out, /updated \.claude\/settings\.local\.json: the hook commands now run ltm-hook\.sh with bash, which talks to the server itself: no curl process per hook/);
      assert.equal(fs.readFileSync(path.join(project, '.claude', 'settings.local.json'), 'utf8'), current, 'as a new init writes it');
      assert.match(initOk(project), /^Nothing to change/, 'and only once');
    });

    it('a starting server moves them to bash too, the SessionStart command included, and leaves them there when it stops', async function () {
      if (HOOK_SHELL === 'sh') this.skip();
      initOk(project);
      const current = fs.readFileSync(path.join(project, '.claude', 'settings.local.json'), 'utf8');
      asSetUpWithSh();
      const t = await startTestServer({ project });
      try {
        const running = commandsOf(project);
        for (const event of ['SessionStart', 'PreCompact', 'SessionEnd']) assert.ok(running[event]!.startsWith(`${HOOK_SHELL} "$CLAUDE_PROJECT_DIR/`), `${event}: ${running[event]}`);
      } finally {
        await t.stop();
      }
      assert.equal(fs.readFileSync(path.join(project, '.claude', 'settings.local.json'), 'utf8'), current, 'after it stops: as init writes them now');
    });
  });

  it('a starting server brings hook scripts an earlier version installed up to date, and leaves anything else alone', async () => {
    initOk(project);
    const hooksDir = path.join(ltmRoot(project), 'hooks');
    const shipped = fs.readFileSync(HOOK_SCRIPT, 'utf8');
    // As an earlier version installed it: the token on curl's command line.
    const older = shipped.replace(/-K \/dev\/fd\/3/, '-H "Authorization: Bearer $token"');
    assert.notEqual(older, shipped);
    fs.writeFileSync(path.join(hooksDir, 'ltm-hook.sh'), older);
    // A script of the person's own under the same name (no LTM mark) is theirs.
    const own = '#!/bin/sh\n# my own hook\nexit 0\n';
    fs.writeFileSync(path.join(hooksDir, 'ltm-hook.ps1'), own);
    const logged: string[] = [];
    const t = await startTestServer({ project, log: (m) => logged.push(m) });
    try {
      assert.equal(fs.readFileSync(path.join(hooksDir, 'ltm-hook.sh'), 'utf8'), shipped);
      assert.equal(fs.statSync(path.join(hooksDir, 'ltm-hook.sh')).mode & 0o777, 0o755);
      assert.equal(fs.readFileSync(path.join(hooksDir, 'ltm-hook.ps1'), 'utf8'), own);
      assert.deepEqual(logged.filter((m) => m.includes('hook script')), [`updated ${path.join(hooksDir, 'ltm-hook.sh')} to the hook script of this version`]);
    } finally {
      await t.stop();
    }
    // A project that never ran init gets no scripts.
    const bare = makeTempProject('ltm-setup-bare-');
    const u = await startTestServer({ project: bare });
    try {
      assert.equal(fs.existsSync(path.join(ltmRoot(bare), 'hooks')), false);
    } finally {
      await u.stop();
      removeDir(bare);
    }
  });

  describe('in a git repository', () => {
    const git = (cwd: string, ...args: string[]) => spawnSync('git', args, { cwd, encoding: 'utf8' });
    const ignored = (cwd: string, file: string) => git(cwd, 'check-ignore', '-q', file).status === 0;
    const excludeOf = (repo: string) => path.join(repo, '.git', 'info', 'exclude');

    it("keeps settings.local.json out of git in the clone's info/exclude, and uninit takes exactly that out again", () => {
      assert.equal(git(project, 'init', '-q').status, 0);
      const before = fs.readFileSync(excludeOf(project), 'utf8');
      initOk(project);
      assert.ok(ignored(project, '.claude/settings.local.json'), 'git ignores it');
      assert.ok(!git(project, 'status', '--porcelain', '--untracked-files=all').stdout.includes('settings.local.json'), 'git status does not show it');
      assert.ok(!ignored(project, '.mcp.json') && !ignored(project, 'CLAUDE.md'), 'what a team shares stays visible');
      initOk(project);
      assert.equal(fs.readFileSync(excludeOf(project), 'utf8').split('.claude/settings.local.json').length - 1, 1, 'added once');
      uninitOk(project);
      assert.equal(fs.readFileSync(excludeOf(project), 'utf8'), before, 'info/exclude as it was');
      assert.equal(ignored(project, '.claude/settings.local.json'), false);
    });

    it('anchors the pattern at the repository top for a project in a subfolder, and adds nothing where git already ignores the file', () => {
      assert.equal(git(project, 'init', '-q').status, 0);
      const sub = path.join(project, 'apps', 'web [beta]');
      fs.mkdirSync(sub, { recursive: true });
      initOk(sub);
      assert.ok(ignored(project, 'apps/web [beta]/.claude/settings.local.json'));
      assert.equal(ignored(project, '.claude/settings.local.json'), false, 'only that project');
      uninitOk(sub);

      fs.writeFileSync(path.join(project, '.gitignore'), '.claude/settings.local.json\n');
      const before = fs.readFileSync(excludeOf(project), 'utf8');
      initOk(project);
      assert.equal(fs.readFileSync(excludeOf(project), 'utf8'), before, 'already ignored by .gitignore: info/exclude untouched');
    });

    it('outside a git repository changes no git file', () => {
      initOk(project);
      assert.equal(fs.existsSync(path.join(project, '.git')), false);
    });
  });

  it('changes nothing when run twice (every file byte-identical)', () => {
    withExistingFiles();
    initOk(project);
    const once = snapshotFiles(project);
    const out = initOk(project);
    assert.deepEqual(snapshotDiff(once, snapshotFiles(project)), []);
    assert.match(out, /^Nothing to change: LTM is already set up/);
  });

  it('uninit restores every file that was there byte for byte, removes what init created and keeps the memories', () => {
    withExistingFiles();
    const before = projectFiles(project);
    initOk(project);
    const stored = ltm('store', '--project', project, '--topic', 'Kept after uninit', '--content', 'Memories survive uninit.', '--json');
    assert.equal(stored.status, 0, stored.stderr);
    const id = (JSON.parse(stored.stdout) as { id: string }).id;

    uninitOk(project);
    assert.deepEqual(snapshotDiff(before, projectFiles(project)), [], 'project files differ from before init');
    assert.equal(fs.existsSync(path.join(project, '.claude', 'commands')), false, 'the commands folder init created is gone');
    assert.equal(fs.existsSync(path.join(ltmRoot(project), 'hooks')), false, 'the installed hook scripts are gone');
    assert.deepEqual(memoryFileIds(path.join(ltmRoot(project), 'memories')), [id]);
    // And once more: nothing left to remove.
    assert.match(uninitOk(project), /^Nothing to change: LTM is not set up/);
  });

  it('uninit on a project that had none of these files leaves only the memory store', () => {
    initOk(project);
    assert.deepEqual([...projectFiles(project).keys()].sort(), [
      '.claude/commands/forget.md',
      '.claude/commands/ltm.md',
      '.claude/commands/recall.md',
      '.claude/commands/remember.md',
      '.claude/settings.local.json',
      '.mcp.json',
      'CLAUDE.md',
    ]);
    uninitOk(project);
    assert.deepEqual([...projectFiles(project).keys()], []);
    assert.deepEqual(fs.readdirSync(path.join(project, '.claude')), ['ltm']);
    assert.ok(fs.existsSync(path.join(ltmRoot(project), 'memories')));
  });

  for (const [file, text] of [
    ['.claude/settings.local.json', '{\n  "permissions": {\n    "allow": ["Bash(ls)"],\n  }\n}\n'],
    ['.mcp.json', '{"mcpServers": {"other": {"command": "x"}'],
  ] as const) {
    it(`fails with a one-line error naming a malformed ${file}, and changes nothing`, () => {
      withExistingFiles();
      write(project, file, text);
      const before = snapshotFiles(project);
      const r = ltm('init', '--project', project);
      assert.notEqual(r.status, 0);
      assert.equal(r.stdout, '');
      assert.match(r.stderr, /^ltm: [^\n]+\n$/, `one line: ${JSON.stringify(r.stderr)}`);
      assert.ok(r.stderr.includes(path.join(project, file)), `names the file: ${r.stderr}`);
      assert.deepEqual(snapshotDiff(before, snapshotFiles(project)), []);
      assert.equal(fs.existsSync(ltmRoot(project)), false, 'not even the store was created');
    });
  }

  it("leaves a user's own .claude/commands/remember.md alone, in init and in uninit", () => {
    const mine = '---\ndescription: my own remember command\n---\nWrite it down in NOTES.md: $ARGUMENTS\n';
    write(project, '.claude/commands/remember.md', mine);
    initOk(project);
    assert.equal(fs.readFileSync(path.join(project, '.claude', 'commands', 'remember.md'), 'utf8'), mine);
    assert.deepEqual(fs.readdirSync(path.join(project, '.claude', 'commands')).sort(), COMMANDS);
    uninitOk(project);
    assert.deepEqual(fs.readdirSync(path.join(project, '.claude', 'commands')), ['remember.md']);
    assert.equal(fs.readFileSync(path.join(project, '.claude', 'commands', 'remember.md'), 'utf8'), mine);
  });

  describe('uninit restores files written in other styles byte for byte', () => {
    const variants: { what: string; file: string; text: string }[] = [
      { what: 'settings.local.json indented with 4 spaces (as VS Code formats JSON)', file: '.claude/settings.local.json', text: `${JSON.stringify(SETTINGS, null, 4)}\n` },
      { what: '.mcp.json without a final newline', file: '.mcp.json', text: JSON.stringify(MCP, null, 2) },
      { what: 'CLAUDE.md without a final newline', file: 'CLAUDE.md', text: '# My project\n\nUse pnpm, not npm.' },
    ];
    for (const v of variants) {
      it(v.what, () => {
        write(project, v.file, v.text);
        initOk(project);
        assert.notEqual(fs.readFileSync(path.join(project, v.file), 'utf8'), v.text, 'init changed the file');
        uninitOk(project);
        assert.equal(fs.readFileSync(path.join(project, v.file), 'utf8'), v.text);
      });
    }
  });
});
