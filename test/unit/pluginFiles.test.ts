/**
 * The Claude Code plugin's files: derived from the `ltm init` setup (one
 * source), named for the plugin's tools, and complete once staged.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import CLI_FILES from '../../src/shared/cliFiles.json';
import { PLUGIN_DIR, buildPlugin } from '../../scripts/buildPlugin';
import { MANAGED_MARKER, SLASH_COMMANDS } from '../../src/servers/claudeTemplates';
import { HOOK_EVENTS } from '../../src/servers/hookSettings';
import { PLUGIN_CLI, PLUGIN_HOOK_SCRIPT, PLUGIN_SESSION_START_TIMEOUT_S, pluginFiles, pluginHooks } from '../../src/servers/pluginFiles';
import { PLUGIN_NAME, PLUGIN_TOOL_PREFIX, PROJECT_TOOL_PREFIX } from '../../src/shared/toolNames';
import { REPO_ROOT } from '../support/storeKit';

const manifest = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string; description: string; license: string; homepage: string; keywords: string[] };

describe('Claude Code plugin files', () => {
  const files = pluginFiles(manifest);

  it('hooks every event ltm init hooks, with its timeout (SessionStart longer: it may open the store); Node only for the once-per-session events', () => {
    const { hooks } = pluginHooks();
    assert.deepEqual(Object.keys(hooks), [...new Set(HOOK_EVENTS.map((e) => e.event))]);
    for (const spec of HOOK_EVENTS) {
      const [group] = hooks[spec.event] as { matcher?: string; hooks: { type: string; command: string; timeout: number }[] }[];
      const [hook] = group!.hooks;
      assert.equal(hook!.type, 'command');
      assert.equal(hook!.timeout, spec.event === 'SessionStart' ? PLUGIN_SESSION_START_TIMEOUT_S : spec.timeout);
      // --unless-project-hooks: the script leaves the event to the project's own LTM hook (`ltm init`).
      const script = `"\${CLAUDE_PLUGIN_ROOT}/${PLUGIN_HOOK_SCRIPT}" ${spec.endpoint} --unless-project-hooks`;
      const expected = spec.perToolCall
        ? `if command -v bash >/dev/null 2>&1; then exec bash --posix ${script}; else exec sh ${script}; fi`
        : `node "\${CLAUDE_PLUGIN_ROOT}/${PLUGIN_CLI}" hook ${spec.endpoint}`;
      assert.equal(hook!.command, expected, spec.event);
    }
    assert.match(JSON.stringify(hooks), new RegExp(`${PLUGIN_TOOL_PREFIX}store_memory\\|Read`));
  });

  it('names the tools as Claude Code names a plugin server: no text says mcp__ltm__', () => {
    for (const [file, text] of Object.entries(files)) assert.ok(!text.includes(PROJECT_TOOL_PREFIX), file);
    assert.deepEqual(JSON.parse(files['.mcp.json']!).mcpServers.ltm.args.slice(-2), [`\${CLAUDE_PLUGIN_ROOT}/${PLUGIN_CLI}`, 'mcp']);
  });

  it('starts `ltm mcp` with a young generation of at most 4 MB halves (a process per session, for its whole life)', () => {
    assert.deepEqual(JSON.parse(files['.mcp.json']!), {
      mcpServers: { ltm: { command: 'node', args: ['--max-semi-space-size=4', `\${CLAUDE_PLUGIN_ROOT}/${PLUGIN_CLI}`, 'mcp'] } },
    });
  });

  it("ships ltm init's slash commands, for the plugin's tool names and without init's marker", () => {
    for (const [name, text] of Object.entries(SLASH_COMMANDS)) {
      assert.equal(files[`commands/${name}`], text.replace(`${MANAGED_MARKER}\n`, '').replaceAll(PROJECT_TOOL_PREFIX, PLUGIN_TOOL_PREFIX), name);
    }
  });

  it("takes its name, version and description from the extension's manifest", () => {
    const plugin = JSON.parse(files['.claude-plugin/plugin.json']!) as Record<string, unknown>;
    assert.deepEqual([plugin.name, plugin.version, plugin.description], [PLUGIN_NAME, manifest.version, manifest.description]);
  });

  it("the repository's marketplace lists the plugin where the build stages it", () => {
    const marketplace = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, '.claude-plugin', 'marketplace.json'), 'utf8')) as { plugins: { name: string; source: string }[] };
    assert.deepEqual(marketplace.plugins.map((p) => [p.name, path.resolve(REPO_ROOT, p.source)]), [[PLUGIN_NAME, PLUGIN_DIR]]);
  });

  it('staged, it holds every file its hooks and MCP server run', function () {
    if (!fs.existsSync(path.join(REPO_ROOT, 'dist', 'cli.js'))) this.skip();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ltm-plugin-stage-'));
    try {
      const out = buildPlugin(path.join(dir, 'plugin'));
      const text = Object.values(files).join('\n');
      const referenced = [...text.matchAll(/\$\{CLAUDE_PLUGIN_ROOT\}\/([\w./-]+)/g)].map((m) => m[1]!);
      assert.deepEqual([...new Set(referenced)].sort(), [PLUGIN_CLI, PLUGIN_HOOK_SCRIPT].sort());
      for (const file of [...referenced, ...Object.keys(files)]) assert.ok(fs.existsSync(path.join(out, file)), file);
      assert.ok((fs.statSync(path.join(out, PLUGIN_HOOK_SCRIPT)).mode & 0o111) !== 0, 'the hook script is executable');
      // What the CLI looks for next to itself: the bundle, its code caches, the search index worker (without
      // it, a session in a fresh clone would build the search index on the thread that answers).
      for (const file of Object.values(CLI_FILES)) assert.ok(fs.existsSync(path.join(out, path.dirname(PLUGIN_CLI), path.basename(file))), file);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
