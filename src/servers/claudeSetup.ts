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

export const HOOK_SCRIPT_NAMES = ['ltm-hook.sh', 'ltm-hook.ps1'] as const;
/** Every hook command LTM writes contains this; nothing else is touched. */
const HOOK_COMMAND_MARK = '.claude/ltm/hooks/ltm-hook.';

/** Claude Code hook events and the LTM endpoint each one calls. */
const HOOK_EVENTS: readonly { event: string; endpoint: string; matcher?: string; timeout: number }[] = [
  { event: 'SessionStart', endpoint: 'session_start', timeout: 5 },
  { event: 'PreToolUse', endpoint: 'pre_tool_use', matcher: 'mcp__ltm__store_memory', timeout: 3 },
  { event: 'PostToolUse', endpoint: 'post_tool_use', matcher: '*', timeout: 3 },
  { event: 'PostToolUseFailure', endpoint: 'post_tool_use', matcher: '*', timeout: 3 },
  { event: 'PreCompact', endpoint: 'pre_compact', timeout: 3 },
  { event: 'SessionEnd', endpoint: 'session_end', timeout: 5 },
];

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

export type Change = { file: string; action: 'created' | 'updated' | 'removed' | 'unchanged' };

/** Finds the shipped hook scripts: next to dist/ in a package, at the repo root in development. */
export function findHookScripts(start = __dirname): string {
  for (let dir = start; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'hooks', 'ltm-hook.sh');
    if (fs.existsSync(candidate)) return path.dirname(candidate);
    if (path.dirname(dir) === dir) throw new Error(`cannot find the LTM hook scripts above ${start}`);
  }
}

function hookCommand(endpoint: string, platform: NodeJS.Platform): string {
  if (platform === 'win32') {
    return `powershell -NoProfile -ExecutionPolicy Bypass -File "$CLAUDE_PROJECT_DIR/${HOOK_COMMAND_MARK}ps1" ${endpoint}`;
  }
  return `sh "$CLAUDE_PROJECT_DIR/${HOOK_COMMAND_MARK}sh" ${endpoint}`;
}

type Json = Record<string, unknown>;

function readJsonObject(file: string): Json | null {
  const text = readTextIfExists(file);
  if (text === null) return null;
  try {
    const value: unknown = JSON.parse(text);
    if (value && typeof value === 'object' && !Array.isArray(value)) return value as Json;
  } catch (error) {
    throw invalidInput(`cannot read ${file}: ${(error as Error).message}; fix it by hand, nothing was changed`);
  }
  throw invalidInput(`cannot read ${file}: it is not a JSON object; nothing was changed`);
}

/** Writes `text` unless the file already holds it; reports what happened. */
function writeIfChanged(file: string, text: string | null, changes: Change[]): void {
  const before = readTextIfExists(file);
  if (text === null) {
    if (before !== null) {
      fs.rmSync(file);
      changes.push({ file, action: 'removed' });
    }
    return;
  }
  if (before === text) {
    changes.push({ file, action: 'unchanged' });
    return;
  }
  fs.mkdirSync(path.dirname(file), { recursive: true });
  writeFileAtomic(file, text);
  changes.push({ file, action: before === null ? 'created' : 'updated' });
}

function isLtmHook(hook: unknown): boolean {
  return Boolean(hook && typeof hook === 'object' && String((hook as Json).command ?? '').includes(HOOK_COMMAND_MARK));
}

/** Settings without any LTM hook; groups left empty are dropped. */
function withoutLtmHooks(settings: Json): Json {
  const hooks = settings.hooks;
  if (!hooks || typeof hooks !== 'object' || Array.isArray(hooks)) return settings;
  const kept: Json = {};
  for (const [event, groups] of Object.entries(hooks as Json)) {
    if (!Array.isArray(groups)) {
      kept[event] = groups;
      continue;
    }
    const remaining = groups
      .map((group: unknown) => {
        if (!group || typeof group !== 'object' || !Array.isArray((group as Json).hooks)) return group;
        return { ...(group as Json), hooks: ((group as Json).hooks as unknown[]).filter((h) => !isLtmHook(h)) };
      })
      .filter((group: unknown) => !(group && typeof group === 'object' && Array.isArray((group as Json).hooks) && ((group as Json).hooks as unknown[]).length === 0));
    if (remaining.length > 0) kept[event] = remaining;
  }
  const result = { ...settings, hooks: kept };
  if (Object.keys(kept).length === 0) delete (result as Json).hooks;
  return result;
}

function withLtmHooks(settings: Json, platform: NodeJS.Platform): Json {
  const base = withoutLtmHooks(settings);
  const hooks: Json = { ...((base.hooks as Json | undefined) ?? {}) };
  for (const { event, endpoint, matcher, timeout } of HOOK_EVENTS) {
    const group: Json = {};
    if (matcher) group.matcher = matcher;
    group.hooks = [{ type: 'command', command: hookCommand(endpoint, platform), timeout }];
    hooks[event] = [...((hooks[event] as unknown[] | undefined) ?? []), group];
  }
  return { ...base, hooks };
}

function jsonText(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

function withClaudeMdBlock(text: string | null): string {
  if (text === null || !text.trim()) return `${CLAUDE_MD_BLOCK}\n`;
  const replaced = replaceBlock(text, CLAUDE_MD_BLOCK);
  if (replaced !== null) return replaced;
  return `${text.replace(/\s*$/, '')}\n\n${CLAUDE_MD_BLOCK}\n`;
}

function replaceBlock(text: string, replacement: string): string | null {
  const start = text.indexOf(CLAUDE_MD_BEGIN);
  if (start < 0) return null;
  const end = text.indexOf(CLAUDE_MD_END, start);
  if (end < 0) return null;
  return text.slice(0, start) + replacement + text.slice(end + CLAUDE_MD_END.length);
}

export interface InitOptions {
  platform?: NodeJS.Platform;
  /** Where the shipped hook scripts are (found automatically by default). */
  hookScriptsDir?: string;
}

/** Sets a project up for Claude Code. Validates every file it merges before changing any. */
export function initProject(projectDir: string, options: InitOptions = {}): Change[] {
  const p = setupPaths(projectDir);
  const platform = options.platform ?? process.platform;
  // Read (and so validate) everything first: a malformed file stops init before any change.
  const settings = readJsonObject(p.settings) ?? {};
  const mcp = readJsonObject(p.mcp) ?? {};
  const servers = mcp.mcpServers ?? {};
  if (typeof servers !== 'object' || Array.isArray(servers)) throw invalidInput(`${p.mcp}: "mcpServers" is not an object; nothing was changed`);
  const scripts = options.hookScriptsDir ?? findHookScripts();

  const changes: Change[] = [];
  fs.mkdirSync(p.hooksDir, { recursive: true });
  for (const name of HOOK_SCRIPT_NAMES) {
    writeIfChanged(path.join(p.hooksDir, name), fs.readFileSync(path.join(scripts, name), 'utf8'), changes);
    if (name.endsWith('.sh')) fs.chmodSync(path.join(p.hooksDir, name), 0o755);
  }
  writeIfChanged(p.settings, jsonText(withLtmHooks(settings, platform)), changes);
  writeIfChanged(p.mcp, jsonText({ ...mcp, mcpServers: { ...(servers as Json), ltm: MCP_ENTRY } }), changes);
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
  const settings = readJsonObject(p.settings);
  const mcp = readJsonObject(p.mcp);
  const changes: Change[] = [];

  for (const name of HOOK_SCRIPT_NAMES) writeIfChanged(path.join(p.hooksDir, name), null, changes);
  if (fs.existsSync(p.hooksDir) && fs.readdirSync(p.hooksDir).length === 0) fs.rmdirSync(p.hooksDir);

  if (settings) {
    const cleaned = withoutLtmHooks(settings);
    writeIfChanged(p.settings, Object.keys(cleaned).length === 0 ? null : jsonText(cleaned), changes);
  }
  if (mcp && mcp.mcpServers && typeof mcp.mcpServers === 'object' && 'ltm' in (mcp.mcpServers as Json)) {
    const { ltm: _removed, ...others } = mcp.mcpServers as Json;
    const rest = { ...mcp, mcpServers: others };
    if (Object.keys(others).length === 0) delete (rest as Json).mcpServers;
    writeIfChanged(p.mcp, Object.keys(rest).length === 0 ? null : jsonText(rest), changes);
  }
  for (const name of Object.keys(SLASH_COMMANDS)) {
    const file = path.join(p.commandsDir, name);
    if (readTextIfExists(file)?.includes(MANAGED_MARKER)) writeIfChanged(file, null, changes);
  }
  if (fs.existsSync(p.commandsDir) && fs.readdirSync(p.commandsDir).length === 0) fs.rmdirSync(p.commandsDir);

  const claudeMd = readTextIfExists(p.claudeMd);
  const start = claudeMd?.indexOf(CLAUDE_MD_BEGIN) ?? -1;
  const end = start >= 0 ? claudeMd!.indexOf(CLAUDE_MD_END, start) : -1;
  if (claudeMd !== null && start >= 0 && end >= 0) {
    // Undo exactly what init did: the block and the blank line init put before it.
    const before = claudeMd.slice(0, start).replace(/\n\n$/, '\n');
    const after = claudeMd.slice(end + CLAUDE_MD_END.length).replace(/^\r?\n/, '');
    const rest = before + after;
    writeIfChanged(p.claudeMd, rest.trim() ? rest : null, changes);
  }
  return changes;
}
