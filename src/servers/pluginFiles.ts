/**
 * The files of the Claude Code plugin that scripts/buildPlugin.ts stages
 * (besides the CLI bundle and the hook script it copies), derived from what
 * `ltm init` writes so that both setups stay one: the same hook events and
 * timeouts (hookSettings.ts), the same slash commands (claudeTemplates.ts)
 * for the plugin's tool names, the same MCP tools served by `ltm mcp`.
 *
 * - SessionStart, PreCompact and SessionEnd run `ltm hook <event>` (Node):
 *   it forwards to a running server, else answers on the store itself
 *   (hookCommand.ts). They fire once per session or compaction.
 * - The per-prompt and per-tool-call events run hooks/ltm-hook.sh (no Node):
 *   under bash where there is one (it then sends the request itself, with no
 *   curl process), else sh; it forwards to a running server and exits 0 at
 *   once without one.
 * - MCP: `ltm mcp` over stdio, one process per session; no port, no token;
 *   Node started with a smaller young generation (pluginMcpLaunch).
 */
import { slashCommands } from './claudeTemplates';
import { HOOK_EVENTS, type HookEvent } from './hookSettings';
import { SHELL_COMMANDS } from './hookShell';
import { MCP_SERVER_NAME, PLUGIN_NAME, PLUGIN_TOOL_PREFIX, PROJECT_TOOL_PREFIX } from '../shared/toolNames';
import PLUGIN_MCP_NODE_OPTIONS from '../shared/pluginMcpNodeOptions.json';

/** Where the bundle and the hook script are inside the plugin (the same places as in the repository and the npm package). */
export const PLUGIN_CLI = 'dist/cli.js';
export const PLUGIN_HOOK_SCRIPT = 'hooks/ltm-hook.sh';
/** The script's option for the plugin: leave an event to the project's own LTM hook, when it has one. */
export const UNLESS_PROJECT_HOOKS = '--unless-project-hooks';

/** What the plugin's manifest takes from the extension's. */
export interface PluginManifestSource {
  version: string;
  description: string;
  license: string;
  homepage: string;
  keywords: readonly string[];
}

const ROOT = '${CLAUDE_PLUGIN_ROOT}';

/**
 * How the plugin launches its MCP server (`ltm mcp`): the plugin's .mcp.json, and the bench and the
 * tests as it ships. The process lives as long as its Claude Code session, one per session, and V8
 * grows its young generation to two 16 MB halves under steady allocation and keeps them; with halves
 * of at most 4 MB (`--max-semi-space-size=4`, pluginMcpNodeOptions.json) its peak RSS after the bench's
 * 220 recalls and 220 stores at 10,000 memories was 121.6, 121.7, 121.8, 122.5 and 143.8 MB in five
 * runs, against 141.1, 141.4 and 142.2 MB without. V8 takes the build's code cache only in a process started
 * with the options it was made with, so the build makes one for these (cliLauncher.ts).
 */
export function pluginMcpLaunch(root: string = ROOT): { command: 'node'; args: string[] } {
  return { command: 'node', args: [...PLUGIN_MCP_NODE_OPTIONS, `${root}/${PLUGIN_CLI}`, 'mcp'] };
}

/**
 * SessionStart's timeout in the plugin, in seconds. Without a server the hook
 * opens the store itself: at 10,000 memories, the first time (no parse cache
 * yet) took 4 s on a loaded 2-core machine (scripts/plugin-hook-timing.ts),
 * next to the 5 s that suit a forward to a server. Claude Code waits for
 * SessionStart only as long as the hook runs.
 */
export const PLUGIN_SESSION_START_TIMEOUT_S = 15;

/**
 * The script under bash where the machine has one, else sh. The plugin's
 * files are written once, when it is built, so the shell is chosen when the
 * hook runs, with shell builtins only (ltm init chooses it when it writes
 * the project's settings: hookShell.ts).
 */
function scriptCommand(endpoint: string): string {
  // The event is left to the project's own LTM hook where `ltm init` set one up (see the script).
  const script = `"${ROOT}/${PLUGIN_HOOK_SCRIPT}" ${endpoint} ${UNLESS_PROJECT_HOOKS}`;
  return `if command -v bash >/dev/null 2>&1; then exec ${SHELL_COMMANDS.bash} ${script}; else exec ${SHELL_COMMANDS.sh} ${script}; fi`;
}

function pluginHook(spec: HookEvent): Record<string, unknown> {
  const command = spec.perToolCall ? scriptCommand(spec.endpoint) : `node "${ROOT}/${PLUGIN_CLI}" hook ${spec.endpoint}`;
  return { type: 'command', command, timeout: spec.event === 'SessionStart' ? Math.max(spec.timeout, PLUGIN_SESSION_START_TIMEOUT_S) : spec.timeout };
}

/** hooks/hooks.json: every event `ltm init` hooks, with the plugin's commands and tool names. */
export function pluginHooks(): { hooks: Record<string, unknown[]> } {
  const hooks: Record<string, unknown[]> = {};
  for (const spec of HOOK_EVENTS) {
    const group: Record<string, unknown> = {};
    if (spec.matcher) group.matcher = spec.matcher.replaceAll(PROJECT_TOOL_PREFIX, PLUGIN_TOOL_PREFIX);
    group.hooks = [pluginHook(spec)];
    (hooks[spec.event] ??= []).push(group);
  }
  return { hooks };
}

/** Every generated file of the plugin, by its path inside the plugin. */
export function pluginFiles(source: PluginManifestSource): Record<string, string> {
  const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;
  const files: Record<string, string> = {
    '.claude-plugin/plugin.json': json({
      name: PLUGIN_NAME,
      version: source.version,
      description: source.description,
      author: { name: 'LTM' },
      homepage: source.homepage,
      license: source.license,
      keywords: source.keywords,
    }),
    '.mcp.json': json({ mcpServers: { [MCP_SERVER_NAME]: pluginMcpLaunch() } }),
    'hooks/hooks.json': json(pluginHooks()),
  };
  for (const [name, text] of Object.entries(slashCommands(PLUGIN_TOOL_PREFIX, null))) files[`commands/${name}`] = text;
  return files;
}
