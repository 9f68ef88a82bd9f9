/**
 * LTM's entries in `.claude/settings.local.json` and the two ways a hook
 * reaches the server:
 * - a command hook runs hooks/ltm-hook.sh (or .ps1), which finds the server
 *   through LTM_PORT/LTM_TOKEN or server.json and exits 0 silently when none
 *   answers: always correct, but a process spawn per call (bash alone, or sh
 *   and curl where there is no bash: see hookShell.ts);
 * - an http hook is one POST from Claude Code itself, with no process.
 *
 * Claude Code (checked with 2.1.197) expands no variable in an http hook's
 * `url` (a `${LTM_PORT}` there makes the URL invalid and the whole settings
 * file is ignored, SessionStart included), so the port must be written in
 * literally; and it reports every refused connection as a "hook error" (in
 * red, on each tool call, and on stderr for SessionEnd). So the http form is
 * only right while a server listens on that port: the server switches the
 * tool-call hooks to http when it starts and back to command hooks when it
 * stops (setHookTransport). SubagentStart fires within a turn, like a tool
 * call, and gets the same treatment. SessionStart must stay a command hook (Claude
 * Code runs no http hook for it); PreCompact and SessionEnd stay command hooks
 * too: they fire once per compaction or session, so a spawn costs nothing
 * there, while SessionEnd is exactly when a server may have just stopped and
 * an http hook would print an error.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { SHELL_COMMANDS, type CommandHost } from './hookShell';
import type { Json, JsonFileEdit } from './jsonFileEdit';
import { PROJECT_TOOL_PREFIX } from '../shared/toolNames';

/** Every hook command LTM writes contains this. */
export const HOOK_COMMAND_MARK = '.claude/ltm/hooks/ltm-hook.';
/** The header of every http hook LTM writes: with the URL's form, it tells LTM's http hooks from others. */
const HTTP_AUTHORIZATION = 'Bearer $LTM_TOKEN';
const LTM_HTTP_URL = /^http:\/\/127\.0\.0\.1:\d+\/hook\/[a-z_]+(\?|$)/;

export interface HookEvent {
  event: string;
  endpoint: string;
  matcher?: string;
  timeout: number;
  /** Fires on every tool call or prompt: worth an http hook while a server runs. */
  perToolCall?: boolean;
}

/** Claude Code hook events and the LTM endpoint each one calls. */
export const HOOK_EVENTS: readonly HookEvent[] = [
  { event: 'SessionStart', endpoint: 'session_start', timeout: 5 },
  { event: 'UserPromptSubmit', endpoint: 'user_prompt_submit', timeout: 3, perToolCall: true },
  // store_memory: to link the call to its session; the file tools: to offer the memories that name the file;
  // Agent (Task before): to keep the task for the subagent's SubagentStart, whose payload does not hold it.
  { event: 'PreToolUse', endpoint: 'pre_tool_use', matcher: `${PROJECT_TOOL_PREFIX}store_memory|Read|Edit|Write|MultiEdit|NotebookEdit|Agent|Task`, timeout: 3, perToolCall: true },
  { event: 'PostToolUse', endpoint: 'post_tool_use', matcher: '*', timeout: 3, perToolCall: true },
  { event: 'PostToolUseFailure', endpoint: 'post_tool_use', matcher: '*', timeout: 3, perToolCall: true },
  // A subagent starts: the memories about its task. Claude Code runs http hooks for it, as for tool calls.
  { event: 'SubagentStart', endpoint: 'subagent_start', timeout: 3, perToolCall: true },
  { event: 'PreCompact', endpoint: 'pre_compact', timeout: 3 },
  { event: 'SessionEnd', endpoint: 'session_end', timeout: 5 },
];

/** Where the hooks go: command hooks, or http hooks to a server on `port` serving `project`. */
export type HookTransport = ({ kind: 'command' } | { kind: 'http'; port: number; project: string }) & CommandHost;

export function hookCommand(endpoint: string, host: CommandHost): string {
  if (host.platform === 'win32') {
    return `powershell -NoProfile -ExecutionPolicy Bypass -File "$CLAUDE_PROJECT_DIR/${HOOK_COMMAND_MARK}ps1" ${endpoint}`;
  }
  return `${SHELL_COMMANDS[host.shell]} "$CLAUDE_PROJECT_DIR/${HOOK_COMMAND_MARK}sh" ${endpoint}`;
}

/**
 * The URL of an http hook. The project goes in the query, as the hook
 * script's X-LTM-Project header does: Claude Code cannot expand
 * $CLAUDE_PROJECT_DIR in an http hook's headers (it is set only for command
 * hooks), and a literal header would break on non-Latin-1 paths or be
 * rewritten where a path holds `$NAME`. A URL is neither.
 */
export function hookUrl(port: number, endpoint: string, project: string): string {
  return `http://127.0.0.1:${port}/hook/${endpoint}?project=${encodeURIComponent(project)}`;
}

/** The hook LTM writes for one event. */
export function ltmHook(spec: HookEvent, transport: HookTransport): Json {
  if (transport.kind === 'http' && spec.perToolCall) {
    return {
      type: 'http',
      url: hookUrl(transport.port, spec.endpoint, transport.project),
      // The token is never written: Claude Code fills it in from its environment,
      // and only because LTM_TOKEN is listed in allowedEnvVars.
      headers: { Authorization: HTTP_AUTHORIZATION },
      allowedEnvVars: ['LTM_TOKEN'],
      timeout: spec.timeout,
    };
  }
  return { type: 'command', command: hookCommand(spec.endpoint, transport), timeout: spec.timeout };
}

export function isLtmHook(hook: unknown): boolean {
  if (!hook || typeof hook !== 'object') return false;
  const h = hook as Json;
  if (String(h.command ?? '').includes(HOOK_COMMAND_MARK)) return true;
  const headers = h.headers as Json | undefined;
  return h.type === 'http' && LTM_HTTP_URL.test(String(h.url ?? '')) && headers?.Authorization === HTTP_AUTHORIZATION;
}

/**
 * Whether the project's own Claude Code settings run LTM's hook for
 * `endpoint`: `ltm init` writes them to .claude/settings.local.json, and a
 * team may commit them to .claude/settings.json. The plugin's hooks then
 * leave the event to them, or the session would get everything twice.
 */
export function projectRunsLtmHook(projectDir: string, endpoint: string): boolean {
  const events = HOOK_EVENTS.filter((spec) => spec.endpoint === endpoint).map((spec) => spec.event);
  for (const name of ['settings.local.json', 'settings.json']) {
    let settings: unknown;
    try {
      settings = JSON.parse(fs.readFileSync(path.join(projectDir, '.claude', name), 'utf8'));
    } catch {
      continue;
    }
    const hooks = settings && typeof settings === 'object' ? (settings as Json).hooks : undefined;
    if (!hooks || typeof hooks !== 'object' || Array.isArray(hooks)) continue;
    for (const event of events) {
      const groups = Object.hasOwn(hooks, event) ? (hooks as Json)[event] : undefined;
      if (!Array.isArray(groups)) continue;
      if (groups.some((group: unknown) => Array.isArray((group as Json | null)?.hooks) && ((group as Json).hooks as unknown[]).some(isLtmHook))) return true;
    }
  }
  return false;
}

function hooksOf(settings: JsonFileEdit): Json | null {
  const hooks = settings.value().hooks;
  return hooks && typeof hooks === 'object' && !Array.isArray(hooks) ? (hooks as Json) : null;
}

/** Removes every LTM hook, command or http; groups, events and `hooks` left empty go too. */
export function removeLtmHooks(settings: JsonFileEdit): void {
  const hooks = hooksOf(settings);
  if (!hooks) return;
  for (const [event, groups] of Object.entries(hooks)) {
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

export function addLtmHooks(settings: JsonFileEdit, transport: HookTransport): void {
  for (const spec of HOOK_EVENTS) {
    const group: Json = {};
    if (spec.matcher) group.matcher = spec.matcher;
    group.hooks = [ltmHook(spec, transport)];
    const hooks = hooksOf(settings);
    if (!hooks) settings.set(['hooks'], { [spec.event]: [group] });
    else if (!Array.isArray(hooks[spec.event])) settings.set(['hooks', spec.event], [group]);
    else settings.set(['hooks', spec.event, -1], group);
  }
}

/**
 * Rewrites the LTM hooks already in the settings for `transport`, each in
 * its place; adds none and leaves every other entry as it is. Hooks a person
 * removed stay removed. Returns whether anything changed.
 */
export function retargetLtmHooks(settings: JsonFileEdit, transport: HookTransport): boolean {
  let changed = false;
  for (const spec of HOOK_EVENTS) {
    const groups = hooksOf(settings)?.[spec.event];
    if (!Array.isArray(groups)) continue;
    groups.forEach((group: unknown, g) => {
      const list = (group as Json | null)?.hooks;
      if (!Array.isArray(list)) return;
      list.forEach((hook: unknown, h) => {
        if (!isLtmHook(hook)) return;
        const wanted = ltmHook(spec, transport);
        if (JSON.stringify(hook) === JSON.stringify(wanted)) return;
        settings.set(['hooks', spec.event, g, 'hooks', h], wanted);
        changed = true;
      });
    });
  }
  return changed;
}
