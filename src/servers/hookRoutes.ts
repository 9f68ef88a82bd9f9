/**
 * The hook endpoints Claude Code reaches through hooks/ltm-hook.sh (or http hooks). Payloads
 * are taken as Claude Code sends them; fields that are missing or of another
 * shape are tolerated, because a hook must never make Claude Code fail.
 */
import { DEFAULT_INJECTION_BUDGET_TOKENS } from '../core/injection';
import {
  DEFAULT_PROMPT_BUDGET_TOKENS,
  DEFAULT_PROMPT_MEMORIES,
  DEFAULT_SUBAGENT_BUDGET_TOKENS,
  DEFAULT_SUBAGENT_MEMORIES,
  buildPromptContext,
  failureText,
  fileOfToolCall,
  isSearchablePrompt,
  type OfferedMemory,
  type PromptContext,
} from '../core/promptContext';
import { sessionStartContext } from '../core/sessionStartContext';
import { isToolFailure, sessionKey, type ClosedSession, type SessionTracker } from '../core/sessions';
import type { SessionSituation } from '../core/situation';
import type { EvictionResult, MemoryStore } from '../core/store';
import { SubagentTasks, subagentTaskOf } from './subagentTasks';
import { UsageBatch } from './usageBatch';

export const HOOK_EVENTS = ['session_start', 'user_prompt_submit', 'pre_tool_use', 'post_tool_use', 'pre_compact', 'session_end', 'subagent_start'] as const;
export type HookEvent = (typeof HOOK_EVENTS)[number];

export function isHookEvent(value: string): value is HookEvent {
  return (HOOK_EVENTS as readonly string[]).includes(value);
}

interface HookPayload {
  session_id?: unknown;
  prompt?: unknown;
  tool_input?: unknown;
  error?: unknown;
  source?: unknown;
  hook_event_name?: unknown;
  tool_use_id?: unknown;
  tool_response?: unknown;
  tool_name?: unknown;
  /** Set by Claude Code on SubagentStart, and on the hooks of tool calls a subagent makes. */
  agent_id?: unknown;
  agent_type?: unknown;
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

/** Remembers which session made a tool call, so store_memory can use that session's difficulty. */
class ToolUseSessions {
  private readonly sessions = new Map<string, string>();

  constructor(private readonly capacity = 1000) {}

  set(toolUseId: string, sessionId: string): void {
    this.sessions.delete(toolUseId);
    this.sessions.set(toolUseId, sessionId);
    if (this.sessions.size > this.capacity) this.sessions.delete(this.sessions.keys().next().value!);
  }

  get(toolUseId: string | undefined): string | undefined {
    return toolUseId ? this.sessions.get(toolUseId) : undefined;
  }
}

/**
 * The memories each session was given (injected at its start or offered with
 * a prompt), so that none is offered twice; forgotten at a compaction, when
 * the context that held them is gone. Kept for the most recent sessions only.
 */
class OfferedMemories {
  private readonly bySession = new Map<string, Set<string>>();

  constructor(private readonly capacity = 500) {}

  of(sessionId: string): ReadonlySet<string> {
    return this.bySession.get(sessionKey(sessionId)) ?? new Set();
  }

  add(sessionId: string, ids: readonly string[]): void {
    const key = sessionKey(sessionId);
    const set = this.bySession.get(key) ?? new Set<string>();
    for (const id of ids) set.add(id);
    this.bySession.delete(key);
    this.bySession.set(key, set);
    if (this.bySession.size > this.capacity) this.bySession.delete(this.bySession.keys().next().value!);
  }

  reset(sessionId: string): void {
    this.bySession.delete(sessionKey(sessionId));
  }
}

/**
 * The context a hook's offer goes to: the session's own, or a subagent's.
 * A subagent starts with a fresh context that holds none of what its parent
 * was given, so what the parent saw is offered to it again when it is about
 * its task; what the subagent itself was given is not offered to it twice.
 * Claude Code sends `agent_id` with the hooks of a subagent's tool calls
 * too, so their offers go to the subagent's context as well.
 */
function contextOf(sessionId: string, agentId: string | undefined): string {
  return agentId ? `${sessionId}\u0000subagent\u0000${agentId}` : sessionId;
}

/** A pasted log can be long: the first part of a prompt says what it is about, and bounds the search. */
const MAX_PROMPT_CHARS = 4000;

export interface HookAnswer {
  /** What the hook script prints for Claude Code: nothing but the documented fields. */
  body: unknown;
  info: Record<string, unknown>;
  /**
   * Work that must happen but that Claude Code need not wait for; the server
   * runs it right after answering. What it returns adds to `info`.
   */
  after?: () => Promise<Record<string, unknown>>;
  /** `after` is maintenance: it may wait for a pause between hooks (eviction). */
  maintenance?: boolean;
}

export interface HookRoutesOptions {
  /** Token budget of the context injected at session start. */
  injectionBudgetTokens?: () => number;
  /** Token budget of the memories offered with a prompt. */
  promptBudgetTokens?: () => number;
  /** Token budget of the memories a subagent starts with. */
  subagentBudgetTokens?: () => number;
  /**
   * The situation a session starts in (git branch, changed files), which
   * session start ranks by with priority; null when there is none. Must be
   * quick and never throw (see gitSituation.ts); none when not given.
   */
  readSituation?: () => Promise<SessionSituation | null>;
  /** How the sessions name LTM's tools, for the injected text (see toolNames.ts); `mcp__ltm__` by default. */
  toolPrefix?: string;
}

export class HookRoutes {
  private readonly toolUses = new ToolUseSessions();
  private readonly offered = new OfferedMemories();
  private readonly subagentTasks = new SubagentTasks();

  constructor(
    private readonly store: MemoryStore,
    private readonly sessions: SessionTracker,
    private readonly options: HookRoutesOptions = {},
  ) {}

  /** Ended sessions whose maintenance has not run yet; done together. */
  private pendingEnds: { closed: ClosedSession; resolve: (r: EvictionResult) => void; reject: (e: unknown) => void }[] = [];

  private async flushEnds(): Promise<void> {
    const batch = this.pendingEnds;
    this.pendingEnds = [];
    if (batch.length === 0) return;
    try {
      const results = await this.sessions.maintain(batch.map((b) => b.closed));
      batch.forEach((b, i) => b.resolve(results[i]!));
    } catch (error) {
      for (const b of batch) b.reject(error);
    }
  }

  /**
   * Uses waiting to be written: what session starts injected and what hooks
   * offered (see usage.ts); both count as accesses, as they always have.
   * Written with the answers that give them (`after`), in one write.
   */
  private readonly accesses = new UsageBatch((batch) => this.store.recordUsageBySession(batch));

  private queueAccesses(session: number, ids: readonly string[], kind: 'injected' | 'offered'): void {
    this.accesses.add(session, kind, ids);
  }

  private async flushAccesses(): Promise<void> {
    await this.accesses.flush();
  }

  sessionForToolUse(toolUseId: string | undefined): string | undefined {
    return this.toolUses.get(toolUseId);
  }

  /**
   * Returns the body Claude Code reads (`{}` when there is no context: the hook
   * script prints nothing then) and, apart, what happened, which the server
   * sends in a header for people and tests. `asked.toolPrefix`: how the
   * session names LTM's tools, when the hook said (the plugin's do).
   */
  async handle(event: HookEvent, body: unknown, asked: { toolPrefix?: string } = {}): Promise<HookAnswer> {
    const payload: HookPayload = body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as HookPayload) : {};
    // Without a session_id the counters of all such calls share one bucket rather than being lost.
    const sessionId = text(payload.session_id) ?? 'unknown-session';
    // Whose context an offer goes to: the session's, or the subagent's making the call.
    const context = contextOf(sessionId, text(payload.agent_id));
    switch (event) {
      case 'session_start':
        return this.sessionStart(sessionId, text(payload.source), asked.toolPrefix);
      case 'user_prompt_submit':
        return this.userPromptSubmit(sessionId, text(payload.prompt));
      case 'subagent_start':
        return this.subagentStart(sessionId, text(payload.agent_id), text(payload.agent_type));
      case 'pre_tool_use': {
        const toolUseId = text(payload.tool_use_id);
        if (toolUseId) this.toolUses.set(toolUseId, sessionId);
        // The Agent tool: its task waits for the subagent's SubagentStart, whose payload does not hold it.
        const task = subagentTaskOf(payload.tool_name, payload.tool_input);
        if (task) this.subagentTasks.add(sessionId, task.agentType, task.text);
        // A file tool (Read, Edit, Write…): the memories that name the file, once per context.
        const file = fileOfToolCall(payload.tool_input);
        const offer = file ? this.offerAbout(context, this.store.aboutFile(file, { exclude: this.offered.of(context) }), 'this file') : null;
        return {
          body: offer ? { hookSpecificOutput: { hookEventName: 'PreToolUse', additionalContext: offer.text } } : {},
          info: { tool_use_id: toolUseId ?? null, ...(file ? { offered: offer?.offeredIds ?? [] } : {}) },
          ...(offer ? { after: async () => (await this.flushAccesses(), {}) } : {}),
        };
      }
      case 'post_tool_use': {
        const failed = payload.hook_event_name === 'PostToolUseFailure' || isToolFailure(payload.tool_response);
        // Counted at once; written to state.json with the rest of the burst.
        const written = this.sessions.recordToolCall(sessionId, failed);
        const offer = failed ? this.offer(context, failureText(payload), 'this failure') : null;
        const hookEventName = payload.hook_event_name === 'PostToolUseFailure' ? 'PostToolUseFailure' : 'PostToolUse';
        return {
          body: offer ? { hookSpecificOutput: { hookEventName, additionalContext: offer.text } } : {},
          info: { recorded: failed ? 'failure' : 'success', ...(failed ? { offered: offer?.offeredIds ?? [] } : {}) },
          after: async () => {
            await written;
            if (offer) await this.flushAccesses();
            return {};
          },
        };
      }
      case 'pre_compact': {
        // The context that held what was offered is about to go: it may be offered again.
        this.offered.reset(sessionId);
        const written = this.sessions.markCompacted(sessionId);
        return { body: {}, info: { compacted: true }, after: async () => (await written, {}) };
      }
      case 'session_end': {
        const closed = this.sessions.close(sessionId);
        const maintained = new Promise<EvictionResult>((resolve, reject) => this.pendingEnds.push({ closed, resolve, reject }));
        return {
          body: {},
          info: { session: closed.number, session_difficulty: closed.difficulty },
          // Claude Code waits for SessionEnd hooks; an eviction cycle must not hold it.
          maintenance: true,
          after: async () => {
            await this.flushEnds();
            const eviction = await maintained;
            return { eviction_ran: eviction.ran, evicted: eviction.steps.length };
          },
        };
      }
    }
  }

  /**
   * The memories relevant to a person's prompt that this session has not been
   * given yet, as context next to the prompt; nothing for most prompts.
   */
  private userPromptSubmit(sessionId: string, prompt: string | undefined): HookAnswer {
    const offer = prompt && isSearchablePrompt(prompt) ? this.offer(sessionId, prompt.slice(0, MAX_PROMPT_CHARS), 'this prompt') : null;
    if (!offer) return { body: {}, info: { offered: [] } };
    return {
      body: { hookSpecificOutput: { hookEventName: 'UserPromptSubmit', additionalContext: offer.text } },
      info: { offered: offer.offeredIds },
      after: async () => {
        await this.flushAccesses();
        return {};
      },
    };
  }

  /**
   * The memories relevant to `text` (a prompt, a failure) that this session
   * has not been given yet, as context; null when there are none. What is
   * offered is remembered for the session and counted as an access.
   */
  private offer(sessionId: string, text: string, about: string): PromptContext | null {
    return this.offerAbout(sessionId, this.store.relevantTo(text, { limit: DEFAULT_PROMPT_MEMORIES, exclude: this.offered.of(sessionId) }), about);
  }

  private offerAbout(sessionId: string, offers: OfferedMemory[], about: string, budgetTokens = this.options.promptBudgetTokens?.() ?? DEFAULT_PROMPT_BUDGET_TOKENS): PromptContext | null {
    const context = buildPromptContext(offers, budgetTokens, about);
    if (context.offeredIds.length === 0) return null;
    this.offered.add(sessionId, context.offeredIds);
    this.queueAccesses(-1, context.offeredIds, 'offered');
    return context;
  }

  /**
   * A subagent starts: the memories relevant to its task, in its own small
   * budget, as context of its own (see contextOf). The task comes from the
   * parent's Agent tool call (see subagentTasks.ts); a subagent whose task
   * LTM did not see (no PreToolUse hook on Agent, as in projects set up
   * before this hook) is offered nothing rather than guesses.
   */
  private subagentStart(sessionId: string, agentId: string | undefined, agentType: string | undefined): HookAnswer {
    const task = this.subagentTasks.take(sessionId, agentType);
    const context = contextOf(sessionId, agentId ?? 'unknown-agent');
    const offer =
      task && isSearchablePrompt(task)
        ? this.offerAbout(
            context,
            this.store.relevantTo(task, { limit: DEFAULT_SUBAGENT_MEMORIES, exclude: this.offered.of(context) }),
            "this subagent's task",
            this.options.subagentBudgetTokens?.() ?? DEFAULT_SUBAGENT_BUDGET_TOKENS,
          )
        : null;
    const info = { agent_type: agentType ?? null, task: task !== null, offered: offer?.offeredIds ?? [] };
    if (!offer) return { body: {}, info };
    return {
      body: { hookSpecificOutput: { hookEventName: 'SubagentStart', additionalContext: offer.text } },
      info,
      after: async () => (await this.flushAccesses(), {}),
    };
  }

  /**
   * Starts reading the situation for a session start that will come in soon
   * (the server waits for its store first). The reader given keeps its answer
   * a few seconds (cachedGitSituation), and the session start takes it.
   */
  readSituationAhead(): void {
    // situation() never rejects: a failed read is no situation.
    void this.situation();
  }

  /** The situation, or null: reading it never fails a session start. */
  private async situation(): Promise<SessionSituation | null> {
    try {
      return (await this.options.readSituation?.()) ?? null;
    } catch {
      return null;
    }
  }

  private async sessionStart(sessionId: string, source: string | undefined, toolPrefix = this.options.toolPrefix): Promise<HookAnswer> {
    const [started, situation] = await Promise.all([this.sessions.start(sessionId, source), this.situation()]);
    // Ranking by the situation searches: the index a worker may be building is waited for, not built twice.
    if (situation) await this.store.untilSearchIndexReady();
    // Ranked as of the new session, whose count reaches state.json after the answer.
    const injection = sessionStartContext(this.store, {
      session: started.number,
      situation,
      budgetTokens: this.options.injectionBudgetTokens?.() ?? DEFAULT_INJECTION_BUDGET_TOKENS,
      toolPrefix,
    });
    this.queueAccesses(started.number, injection.injectedIds, 'injected');
    // A start after a compaction (or /clear) begins a new context: what it injects is all the session
    // has been given. A resumed session keeps its conversation, and with it what was offered before.
    if (source !== 'resume') this.offered.reset(sessionId);
    this.offered.add(sessionId, injection.injectedIds);
    return {
      body: { hookSpecificOutput: { hookEventName: 'SessionStart', additionalContext: injection.text } },
      info: {
        session: started.number,
        counted: started.counted,
        injected: injection.injectedIds,
        omitted: injection.omitted,
        situation: situation ? { branch: situation.branch, changed_files: situation.changedFiles.length, recent_files: situation.recentFiles.length } : null,
        related: [...injection.reasons.keys()],
      },
      // The session's count and the accesses of the injected memories are written after
      // answering, together with the other sessions that started meanwhile.
      after: async () => {
        await this.sessions.flush();
        await this.flushAccesses();
        return {};
      },
    };
  }
}
