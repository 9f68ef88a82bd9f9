/**
 * `ltm hook <event>`: a Claude Code command hook that needs no running
 * server, as the Claude Code plugin runs it for the events that fire once
 * per session or compaction (SessionStart, PreCompact, SessionEnd).
 *
 * When the project's server answers (VS Code's, or `ltm serve`; found as
 * hooks/ltm-hook.sh finds it: LTM_PORT and LTM_TOKEN, else server.json), the
 * payload goes to it, so that one process keeps the session's counters and
 * what it was offered. Otherwise the answer is computed here, on the store
 * opened for this one call: SessionStart cannot wait for a server that is
 * not there (Claude Code runs only command hooks for it, before any MCP
 * server connects). The per-tool-call events are not computed here (a Node
 * start per tool call would slow every call): without a server they get
 * nothing, which is what the shell script gives them too.
 *
 * A project whose own settings run LTM's hook for the event (`ltm init`) is
 * left to it: with both, the session would be given everything twice.
 *
 * Whatever fails, the hook prints nothing and exits 0: a hook must never
 * break or slow Claude Code beyond its own start.
 */
import * as fs from 'node:fs';
import { MemoryStore } from '../core/store';
import { SessionTracker } from '../core/sessions';
import { sessionStartContext } from '../core/sessionStartContext';
import { DEFAULT_INJECTION_BUDGET_TOKENS } from '../core/injection';
import { storePaths } from '../core/storeFiles';
import { HookRoutes, type HookEvent } from './hookRoutes';
import { readGitSituation } from './gitSituation';
import { gitRenameLookup } from './gitRenames';
import { projectRunsLtmHook } from './hookSettings';
import { TOOL_PREFIX_HEADER } from '../shared/toolNames';
import { projectHeaderValue, readServerInfo, serverHolderState } from './serverInfo';

/** The events whose answer is computed in this process when no server answers. */
export const IN_PROCESS_HOOK_EVENTS: readonly HookEvent[] = ['session_start', 'pre_compact', 'session_end'];
/** The events whose answer Claude Code reads as context (the shell script prints only these too). */
const CONTEXT_EVENTS: readonly HookEvent[] = ['session_start', 'user_prompt_submit', 'subagent_start'];
/** As the shell script's curl: a server that does not answer in time counts as none. */
export const FORWARD_TIMEOUT_MS = 2_000;

export interface HookCommandInput {
  event: HookEvent;
  /** The payload as Claude Code wrote it on standard input. */
  payload: string;
  projectDir: string;
  /** LTM_PORT and LTM_TOKEN, as a terminal LTM set up has them. */
  env: { LTM_PORT?: string; LTM_TOKEN?: string };
  /** How the session names LTM's tools, for the injected text (see toolNames.ts). */
  toolPrefix?: string;
}

export interface HookCommandResult {
  /** What to print for Claude Code ('' for nothing). */
  stdout: string;
  /** Who answered, for tests and people: the server, this process, the project's own LTM hooks (left to them), or nobody. */
  answeredBy: 'server' | 'in-process' | 'project hooks' | 'none';
}

const NOTHING: HookCommandResult = { stdout: '', answeredBy: 'none' };

export async function runHookCommand(input: HookCommandInput): Promise<HookCommandResult> {
  try {
    // The project set up with `ltm init` (or a shared settings.json) runs LTM's own hook for this event.
    if (projectRunsLtmHook(input.projectDir, input.event)) return { stdout: '', answeredBy: 'project hooks' };
    const forwarded = await forwardToServer(input);
    if (forwarded !== null) return { stdout: CONTEXT_EVENTS.includes(input.event) ? forwarded : '', answeredBy: 'server' };
    if (!IN_PROCESS_HOOK_EVENTS.includes(input.event)) return NOTHING;
    return await answerInProcess(input);
  } catch {
    return NOTHING;
  }
}

/** The server's address: LTM_PORT and LTM_TOKEN when both are valid, else a server.json whose process may be alive. */
function serverAddress(input: HookCommandInput): { port: number; token: string } | null {
  const { LTM_PORT: port, LTM_TOKEN: token } = input.env;
  if (port && token && /^\d+$/.test(port) && /^[A-Za-z0-9_-]+$/.test(token)) return { port: Number(port), token };
  const info = readServerInfo(storePaths(input.projectDir));
  if (!info || serverHolderState(info) === 'dead') return null;
  return { port: info.port, token: info.token };
}

/** The server's answer, or null when none answers (then the hook is answered here, or not at all). */
async function forwardToServer(input: HookCommandInput): Promise<string | null> {
  const address = serverAddress(input);
  if (!address) return null;
  try {
    const response = await fetch(`http://127.0.0.1:${address.port}/hook/${input.event}`, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${address.token}`,
        'Content-Type': 'application/json',
        'X-LTM-Project': projectHeaderValue(input.projectDir),
        // The server then names the tools as this session has them.
        ...(input.toolPrefix ? { [TOOL_PREFIX_HEADER]: input.toolPrefix } : {}),
      },
      body: input.payload.trim() === '' ? '{}' : input.payload,
      signal: AbortSignal.timeout(FORWARD_TIMEOUT_MS),
    });
    const text = await response.text();
    return response.ok ? text : null;
  } catch {
    return null;
  }
}

function parsePayload(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return {};
  }
}

async function answerInProcess(input: HookCommandInput): Promise<HookCommandResult> {
  const paths = storePaths(input.projectDir);
  if (!fs.existsSync(paths.root)) {
    // No memories yet: say how to store one, and create nothing (the first memory creates the store).
    if (input.event !== 'session_start') return NOTHING;
    const store = MemoryStore.open(input.projectDir);
    try {
      const injection = sessionStartContext(store, { session: 1, situation: null, budgetTokens: DEFAULT_INJECTION_BUDGET_TOKENS, toolPrefix: input.toolPrefix });
      return { stdout: JSON.stringify({ hookSpecificOutput: { hookEventName: 'SessionStart', additionalContext: injection.text } }), answeredBy: 'in-process' };
    } finally {
      store.dispose();
    }
  }
  const store = MemoryStore.open(input.projectDir, { renames: gitRenameLookup(input.projectDir) });
  try {
    // Counters are written below, once, rather than on a timer this short-lived process would outlive.
    const sessions = new SessionTracker(store, () => undefined);
    const routes = new HookRoutes(store, sessions, {
      readSituation: () => readGitSituation(paths.project),
      toolPrefix: input.toolPrefix,
    });
    const answer = await routes.handle(input.event, parsePayload(input.payload));
    // The follow-up work (the session's count, what was injected, an eviction cycle) is done before
    // exiting: there is no server to do it later. Claude Code waits for it, as for the answer.
    await answer.after?.();
    await sessions.flush();
    await store.settled();
    // The parse cache and search index, so that the next session's hook opens the store quickly.
    store.flushCaches();
    return { stdout: CONTEXT_EVENTS.includes(input.event) ? JSON.stringify(answer.body) : '', answeredBy: 'in-process' };
  } finally {
    store.dispose();
  }
}
