/**
 * How Claude Code names LTM's MCP tools. A project set up with `ltm init`
 * declares the server `ltm` in .mcp.json: its tools are `mcp__ltm__<tool>`.
 * The Claude Code plugin declares the same server inside the plugin `ltm`,
 * and Claude Code prefixes such tools with the plugin's name as well
 * (`mcp__plugin_<plugin>_<server>__<tool>`, checked with Claude Code 2.1.197).
 * Text that names a tool (slash commands, the injected context) is written
 * for one of the two prefixes.
 */
export const MCP_SERVER_NAME = 'ltm';
export const PLUGIN_NAME = 'ltm';

/** The tools of the server in a project's .mcp.json (`ltm init`). */
export const PROJECT_TOOL_PREFIX = `mcp__${MCP_SERVER_NAME}__`;
/** The tools of the plugin's server. */
export const PLUGIN_TOOL_PREFIX = `mcp__plugin_${PLUGIN_NAME}_${MCP_SERVER_NAME}__`;

/**
 * The header a hook forwarded by the plugin's `ltm hook` carries, so that a
 * server names the tools as that session has them; any value but the two
 * prefixes above is ignored.
 */
export const TOOL_PREFIX_HEADER = 'X-LTM-Tool-Prefix';

/** A prefix a hook asked for, when it is one of LTM's. */
export function knownToolPrefix(value: unknown): string | undefined {
  return value === PROJECT_TOOL_PREFIX || value === PLUGIN_TOOL_PREFIX ? value : undefined;
}
