/**
 * One-step setup of a project for Claude Code (`ltm init`, "LTM: Set up Claude
 * Code") and its exact undoing (`ltm uninit`). Every file is merged, never
 * overwritten: other settings, hooks, MCP servers and text stay as they are,
 * and running init twice changes nothing.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { applyEdits, modify, parse as parseJsonc, printParseErrorCode, type FormattingOptions, type JSONPath, type ParseError } from 'jsonc-parser';
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

function hookCommand(endpoint: string, platform: NodeJS.Platform): string {
  if (platform === 'win32') {
    return `powershell -NoProfile -ExecutionPolicy Bypass -File "$CLAUDE_PROJECT_DIR/${HOOK_COMMAND_MARK}ps1" ${endpoint}`;
  }
  return `sh "$CLAUDE_PROJECT_DIR/${HOOK_COMMAND_MARK}sh" ${endpoint}`;
}

type Json = Record<string, unknown>;

/**
 * A JSON file edited in place with jsonc-parser: only the parts LTM adds or
 * removes change; indentation, key order, line endings and the final newline
 * of everything else stay as the person wrote them.
 */
class JsonFileEdit {
  private constructor(
    readonly file: string,
    readonly original: string | null,
    private text: string,
  ) {}

  static read(file: string): JsonFileEdit {
    const original = readTextIfExists(file);
    const edit = new JsonFileEdit(file, original, original ?? '{}\n');
    edit.value(); // validates before anything changes
    return edit;
  }

  value(): Json {
    const errors: ParseError[] = [];
    // Strict JSON: Claude Code itself reads these files with a JSON parser.
    const value: unknown = parseJsonc(this.text, errors, { allowTrailingComma: false, disallowComments: true });
    if (errors.length > 0) {
      const e = errors[0]!;
      throw invalidInput(`cannot read ${this.file}: ${printParseErrorCode(e.error)} at offset ${e.offset}; fix it by hand, nothing was changed`);
    }
    if (!value || typeof value !== 'object' || Array.isArray(value)) {
      throw invalidInput(`cannot read ${this.file}: it is not a JSON object; nothing was changed`);
    }
    return value as Json;
  }

  set(path: JSONPath, value: unknown): void {
    this.text = applyEdits(this.text, modify(this.text, path, value, { formattingOptions: formattingOf(this.text) }));
  }

  /** The text to write, or null when nothing is left (an empty object) and the file should go. */
  result(): string | null {
    return Object.keys(this.value()).length === 0 && (this.original === null || Object.keys(parseJsonc(this.original) ?? {}).length > 0)
      ? null
      : this.text;
  }

  /** Keeps the original bytes when the edits changed nothing that a JSON reader sees. */
  resultKeepingEquivalent(): string | null {
    if (this.original !== null && isDeepStrictEqual(parseJsonc(this.original), this.value())) return this.original;
    return this.result();
  }
}

/** The indentation and line ending a file already uses, for what LTM inserts. */
function formattingOf(text: string): FormattingOptions {
  const indent = /^([ \t]+)\S/m.exec(text)?.[1] ?? '  ';
  return {
    insertSpaces: !indent.startsWith('\t'),
    tabSize: indent.startsWith('\t') ? 1 : indent.length,
    eol: text.includes('\r\n') ? '\r\n' : '\n',
  };
}

/** Writes `text` unless the file already holds it; `null` removes the file. Reports what happened. */
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

/** Removes every LTM hook; groups, events and `hooks` left empty go too. */
function removeLtmHooks(settings: JsonFileEdit): void {
  const hooks = settings.value().hooks;
  if (!hooks || typeof hooks !== 'object' || Array.isArray(hooks)) return;
  for (const [event, groups] of Object.entries(hooks as Json)) {
    if (!Array.isArray(groups)) continue;
    let remainingGroups = groups.length;
    // From the end, so that earlier indices stay valid while removing.
    for (let g = groups.length - 1; g >= 0; g--) {
      const group = groups[g] as Json | undefined;
      if (!group || !Array.isArray(group.hooks)) continue;
      const own = group.hooks.map(isLtmHook);
      if (!own.includes(true)) continue;
      if (own.every(Boolean)) {
        settings.set(['hooks', event, g], undefined);
        remainingGroups--;
      } else {
        for (let h = own.length - 1; h >= 0; h--) if (own[h]) settings.set(['hooks', event, g, 'hooks', h], undefined);
      }
    }
    if (remainingGroups === 0) settings.set(['hooks', event], undefined);
  }
  const left = settings.value().hooks;
  if (left && typeof left === 'object' && Object.keys(left).length === 0) settings.set(['hooks'], undefined);
}

function addLtmHooks(settings: JsonFileEdit, platform: NodeJS.Platform): void {
  for (const { event, endpoint, matcher, timeout } of HOOK_EVENTS) {
    const group: Json = {};
    if (matcher) group.matcher = matcher;
    group.hooks = [{ type: 'command', command: hookCommand(endpoint, platform), timeout }];
    const hooks = settings.value().hooks as Json | undefined;
    if (!hooks || typeof hooks !== 'object') settings.set(['hooks'], { [event]: [group] });
    else if (!Array.isArray(hooks[event])) settings.set(['hooks', event], [group]);
    else settings.set(['hooks', event, -1], group);
  }
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

/** Sets a project up for Claude Code. Validates every file it merges before changing any. */
export function initProject(projectDir: string, options: InitOptions = {}): Change[] {
  const p = setupPaths(projectDir);
  const platform = options.platform ?? process.platform;
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
  removeLtmHooks(settings);
  addLtmHooks(settings, platform);
  writeIfChanged(p.settings, settings.resultKeepingEquivalent(), changes);
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
