/**
 * One-step setup of a project for Claude Code (`ltm init`, "LTM: Set up Claude
 * Code") and its exact undoing (`ltm uninit`). Every file is merged, never
 * overwritten: other settings, hooks, MCP servers and text stay as they are,
 * and running init twice changes nothing.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { invalidInput } from '../core/errors';
import { readTextIfExists, writeFileAtomic } from '../core/files';
import { storePaths } from '../core/storeFiles';
import { CLAUDE_MD_BEGIN, CLAUDE_MD_BLOCK, CLAUDE_MD_END, MANAGED_MARKER, SLASH_COMMANDS } from './claudeTemplates';
import { addLtmHooks, isLtmHook, removeLtmHooks, retargetLtmHooks, type HookTransport } from './hookSettings';
import { SHELL_COMMANDS, commandHostNow, type CommandHost } from './hookShell';
import { excludeLocalSettings, removeLocalSettingsExclude } from './gitExclude';
import { JsonFileEdit, writeIfChanged, type Change, type Json } from './jsonFileEdit';
import { readServerInfo, serverHolderState } from './serverInfo';

export type { Change } from './jsonFileEdit';

export const HOOK_SCRIPT_NAMES = ['ltm-hook.sh', 'ltm-hook.ps1'] as const;
/** The MCP entry: no port and no secret; Claude Code expands both from the environment. */
export const MCP_ENTRY = {
  type: 'http',
  url: 'http://127.0.0.1:${LTM_PORT}/mcp',
  headers: { Authorization: 'Bearer ${LTM_TOKEN}' },
} as const;

export interface SetupPaths {
  project: string;
  hooksDir: string;
  settings: string;
  mcp: string;
  commandsDir: string;
  claudeMd: string;
}

export function setupPaths(projectDir: string): SetupPaths {
  const project = path.resolve(projectDir);
  return {
    project,
    hooksDir: path.join(storePaths(project).root, 'hooks'),
    settings: path.join(project, '.claude', 'settings.local.json'),
    mcp: path.join(project, '.mcp.json'),
    commandsDir: path.join(project, '.claude', 'commands'),
    claudeMd: path.join(project, 'CLAUDE.md'),
  };
}

/** Finds the shipped hook scripts: next to dist/ in a package, at the repo root in development. */
export function findHookScripts(start = __dirname): string {
  for (let dir = start; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'hooks', 'ltm-hook.sh');
    if (fs.existsSync(candidate)) return path.dirname(candidate);
    if (path.dirname(dir) === dir) throw new Error(`cannot find the LTM hook scripts above ${start}`);
  }
}

/** The first lines of every hook script LTM ships (and so of every one it installed). */
const HOOK_SCRIPT_MARK = '# LTM hook for Claude Code';

/**
 * Replaces hook scripts that an earlier LTM installed in the project with the
 * ones this version ships, so that a fix in the script (such as keeping the
 * token off curl's command line) reaches projects set up before it. A script
 * LTM did not install (no LTM mark in its first lines) and a project without
 * installed scripts are left alone. Returns the scripts it updated.
 */
export function refreshInstalledHookScripts(projectDir: string, options: { hookScriptsDir?: string } = {}): string[] {
  const { hooksDir } = setupPaths(projectDir);
  const updated: string[] = [];
  let shipped: string | undefined;
  for (const name of HOOK_SCRIPT_NAMES) {
    const file = path.join(hooksDir, name);
    const installed = readTextIfExists(file);
    if (installed === null || !installed.split('\n', 5).some((line) => line.startsWith(HOOK_SCRIPT_MARK))) continue;
    shipped ??= options.hookScriptsDir ?? findHookScripts();
    const text = fs.readFileSync(path.join(shipped, name), 'utf8');
    if (text === installed) continue;
    writeFileAtomic(file, text);
    if (name.endsWith('.sh')) fs.chmodSync(file, 0o755);
    updated.push(file);
  }
  return updated;
}

/**
 * Adds the CLAUDE.md block (or replaces an older one) so that uninit can take
 * away exactly what was added: after a text ending in a newline, a blank line,
 * the block and a newline; after one that does not, a blank line and the block.
 */
function withClaudeMdBlock(text: string | null): string {
  if (!text) return `${CLAUDE_MD_BLOCK}\n`;
  const span = blockSpan(text);
  if (span) return text.slice(0, span.start) + CLAUDE_MD_BLOCK + text.slice(span.end);
  return text.endsWith('\n') ? `${text}\n${CLAUDE_MD_BLOCK}\n` : `${text}\n\n${CLAUDE_MD_BLOCK}`;
}

/** The text without the block and the separators init put around it; null when nothing else is left. */
function withoutClaudeMdBlock(text: string): string | null {
  const span = blockSpan(text);
  if (!span) return text;
  const before = text.slice(0, span.start);
  const after = text.slice(span.end);
  let rest: string;
  if (after === '') rest = before.replace(/\n\n$/, '');
  else if (after === '\n') rest = before.replace(/\n$/, '');
  else rest = before.replace(/\n$/, '') + after.replace(/^\n/, '');
  return rest === '' ? null : rest;
}

function blockSpan(text: string): { start: number; end: number } | null {
  const start = text.indexOf(CLAUDE_MD_BEGIN);
  const end = start < 0 ? -1 : text.indexOf(CLAUDE_MD_END, start);
  return end < 0 ? null : { start, end: end + CLAUDE_MD_END.length };
}

export interface InitOptions {
  platform?: NodeJS.Platform;
  /** Where the shipped hook scripts are (found automatically by default). */
  hookScriptsDir?: string;
}

/**
 * The hooks that fit the project right now: http hooks to its server when
 * one runs (it switches them back to command hooks when it stops), command
 * hooks otherwise. Only a server whose recorded process identity is alive
 * counts; an older server.json cannot be judged without asking its port.
 */
function hookTransportNow(project: string, host: CommandHost): HookTransport {
  const info = readServerInfo(storePaths(project));
  if (info && info.holder && serverHolderState(info) === 'alive') return { kind: 'http', port: info.port, project, ...host };
  return { kind: 'command', ...host };
}

/**
 * Points the LTM hooks already in the project's settings.local.json at
 * `transport`: a starting server passes its port, a stopping one asks for
 * command hooks again. A project without LTM hooks, or whose hooks already
 * fit, is left alone (the file is not even rewritten). Returns the file when
 * it changed. Throws when the settings are not valid JSON: nothing is changed.
 */
export function setHookTransport(projectDir: string, transport: HookTransport): string | null {
  const { settings: file } = setupPaths(projectDir);
  if (readTextIfExists(file) === null) return null;
  const settings = JsonFileEdit.read(file);
  if (!retargetLtmHooks(settings, transport)) return null;
  const changes: Change[] = [];
  writeIfChanged(file, settings.resultKeepingEquivalent(), changes);
  return changes.some((c) => c.action === 'updated') ? file : null;
}

/** The commands of the LTM command hooks in the settings. */
function ltmHookCommands(settings: JsonFileEdit): string[] {
  const hooks = settings.value().hooks;
  if (!hooks || typeof hooks !== 'object' || Array.isArray(hooks)) return [];
  return Object.values(hooks as Json)
    .flatMap((groups) => (Array.isArray(groups) ? groups : []))
    .flatMap((group) => ((group as Json | null)?.hooks as unknown[] | undefined) ?? [])
    .filter((hook): hook is Json => isLtmHook(hook) && typeof (hook as Json).command === 'string')
    .map((hook) => hook.command as string);
}

/**
 * What to tell a person whose hook commands init just moved to another
 * shell (a project set up before the hooks ran with bash); null otherwise.
 */
function commandsUpgradedTo(before: readonly string[], after: readonly string[]): string | null {
  const shellOf = (command: string) => /^(.+?) "\$CLAUDE_PROJECT_DIR\//.exec(command)?.[1];
  const was = new Set(before.map(shellOf).filter(Boolean));
  const now = new Set(after.map(shellOf).filter(Boolean));
  if (was.size === 0 || now.size !== 1) return null;
  const [shell] = now;
  if (was.size === 1 && was.has(shell)) return null;
  return shell === SHELL_COMMANDS.bash
    ? 'the hook commands now run ltm-hook.sh with bash, which talks to the server itself: no curl process per hook'
    : `the hook commands now run ltm-hook.sh with ${shell}`;
}

/** Sets a project up for Claude Code. Validates every file it merges before changing any. */
export function initProject(projectDir: string, options: InitOptions = {}): Change[] {
  const p = setupPaths(projectDir);
  // The shell of the hook commands is this machine's (see hookShell.ts).
  const host: CommandHost = { ...commandHostNow(), ...(options.platform ? { platform: options.platform } : {}) };
  // Read (and so validate) everything first: a malformed file stops init before any change.
  const settings = JsonFileEdit.read(p.settings);
  const mcp = JsonFileEdit.read(p.mcp);
  const servers = mcp.value().mcpServers;
  if (servers !== undefined && (typeof servers !== 'object' || servers === null || Array.isArray(servers))) {
    throw invalidInput(`${p.mcp}: "mcpServers" is not an object; nothing was changed`);
  }
  const scripts = options.hookScriptsDir ?? findHookScripts();

  const changes: Change[] = [];
  fs.mkdirSync(p.hooksDir, { recursive: true });
  for (const name of HOOK_SCRIPT_NAMES) {
    writeIfChanged(path.join(p.hooksDir, name), fs.readFileSync(path.join(scripts, name), 'utf8'), changes);
    if (name.endsWith('.sh')) fs.chmodSync(path.join(p.hooksDir, name), 0o755);
  }
  const commandsBefore = ltmHookCommands(settings);
  removeLtmHooks(settings);
  addLtmHooks(settings, hookTransportNow(p.project, host));
  writeIfChanged(p.settings, settings.resultKeepingEquivalent(), changes);
  const upgraded = commandsUpgradedTo(commandsBefore, ltmHookCommands(settings));
  if (upgraded) changes.at(-1)!.note = upgraded;
  excludeLocalSettings(p.project, changes);
  if (servers === undefined) mcp.set(['mcpServers'], { ltm: MCP_ENTRY });
  else mcp.set(['mcpServers', 'ltm'], MCP_ENTRY);
  writeIfChanged(p.mcp, mcp.resultKeepingEquivalent(), changes);
  for (const [name, text] of Object.entries(SLASH_COMMANDS)) {
    const file = path.join(p.commandsDir, name);
    const existing = readTextIfExists(file);
    if (existing !== null && !existing.includes(MANAGED_MARKER)) {
      // A person's own command of the same name wins.
      changes.push({ file, action: 'unchanged' });
      continue;
    }
    writeIfChanged(file, text, changes);
  }
  writeIfChanged(p.claudeMd, withClaudeMdBlock(readTextIfExists(p.claudeMd)), changes);
  return changes;
}

/** Removes exactly what init added. Memories in .claude/ltm/ are never touched. */
export function uninitProject(projectDir: string): Change[] {
  const p = setupPaths(projectDir);
  const settings = fs.existsSync(p.settings) ? JsonFileEdit.read(p.settings) : null;
  const mcp = fs.existsSync(p.mcp) ? JsonFileEdit.read(p.mcp) : null;
  const changes: Change[] = [];

  for (const name of HOOK_SCRIPT_NAMES) writeIfChanged(path.join(p.hooksDir, name), null, changes);
  if (fs.existsSync(p.hooksDir) && fs.readdirSync(p.hooksDir).length === 0) fs.rmdirSync(p.hooksDir);

  if (settings) {
    removeLtmHooks(settings);
    writeIfChanged(p.settings, settings.resultKeepingEquivalent(), changes);
  }
  removeLocalSettingsExclude(p.project, changes);
  const servers = mcp?.value().mcpServers as Json | undefined;
  if (mcp && servers && typeof servers === 'object' && 'ltm' in servers) {
    mcp.set(['mcpServers', 'ltm'], undefined);
    if (Object.keys(mcp.value().mcpServers as Json).length === 0) mcp.set(['mcpServers'], undefined);
    writeIfChanged(p.mcp, mcp.result(), changes);
  }
  for (const name of Object.keys(SLASH_COMMANDS)) {
    const file = path.join(p.commandsDir, name);
    if (readTextIfExists(file)?.includes(MANAGED_MARKER)) writeIfChanged(file, null, changes);
  }
  if (fs.existsSync(p.commandsDir) && fs.readdirSync(p.commandsDir).length === 0) fs.rmdirSync(p.commandsDir);

  const claudeMd = readTextIfExists(p.claudeMd);
  if (claudeMd !== null && blockSpan(claudeMd)) writeIfChanged(p.claudeMd, withoutClaudeMdBlock(claudeMd), changes);
  return changes;
}
