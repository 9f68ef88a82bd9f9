/**
 * The tasks a session hands to subagents, kept from the parent's PreToolUse
 * of the Agent tool until the subagent's SubagentStart.
 *
 * Claude Code's SubagentStart payload names the subagent (`agent_id`,
 * `agent_type`) and its parent's `session_id`, but not its task (checked in
 * Claude Code 2.1.197: `{...common fields, hook_event_name, agent_id,
 * agent_type}`). The task is the `prompt` (and `description`) of the Agent
 * tool call that starts it, which the parent's PreToolUse hook sees just
 * before. So a PreToolUse on Agent (or Task, its older name) leaves the task
 * here, and the SubagentStart that follows in the same session takes the
 * oldest one of its type. Subagents of one type started at once in one
 * session may swap tasks (they start in the order they were called, as far
 * as the payloads tell); a task no subagent took (the call was refused) is
 * dropped after a few minutes.
 */
import { sessionKey } from '../core/sessions';

/** Claude Code's subagent tool: `Agent`, formerly `Task` (2.1.197 accepts both). */
export const SUBAGENT_TOOLS: readonly string[] = ['Agent', 'Task'];
/** The subagent type Claude Code starts when the call names none. */
const DEFAULT_SUBAGENT_TYPE = 'general-purpose';
/** A task no subagent took within this long is dropped. */
const TASK_TTL_MS = 5 * 60_000;
/** The most tasks kept waiting, over all sessions. */
const MAX_WAITING = 200;
/** The most of a task's text kept: its first part says what it is about, and bounds the search. */
const MAX_TASK_CHARS = 4000;

interface WaitingTask {
  session: string;
  agentType: string;
  text: string;
  at: number;
}

/** The task of an Agent tool call (`description` and `prompt`) and the subagent type it asks for, or null for any other call. */
export function subagentTaskOf(toolName: unknown, toolInput: unknown): { agentType: string; text: string } | null {
  if (typeof toolName !== 'string' || !SUBAGENT_TOOLS.includes(toolName)) return null;
  if (!toolInput || typeof toolInput !== 'object') return null;
  const input = toolInput as Record<string, unknown>;
  const text = [input.description, input.prompt].filter((v): v is string => typeof v === 'string' && v.trim().length > 0).join('\n');
  if (!text) return null;
  const agentType = typeof input.subagent_type === 'string' && input.subagent_type ? input.subagent_type : DEFAULT_SUBAGENT_TYPE;
  return { agentType, text: text.slice(0, MAX_TASK_CHARS) };
}

export class SubagentTasks {
  private waiting: WaitingTask[] = [];

  constructor(private readonly now: () => number = Date.now) {}

  /** A session is about to start a subagent of `agentType` for `text`. */
  add(sessionId: string, agentType: string, text: string): void {
    this.expire();
    this.waiting.push({ session: sessionKey(sessionId), agentType, text, at: this.now() });
    if (this.waiting.length > MAX_WAITING) this.waiting.shift();
  }

  /** The task of a subagent of `agentType` starting in the session (the oldest waiting), taken; null when none waits. */
  take(sessionId: string, agentType: string | undefined): string | null {
    this.expire();
    const session = sessionKey(sessionId);
    const at = this.waiting.findIndex((t) => t.session === session && (agentType === undefined || t.agentType === agentType));
    if (at < 0) return null;
    const [task] = this.waiting.splice(at, 1);
    return task!.text;
  }

  private expire(): void {
    const oldest = this.now() - TASK_TTL_MS;
    if (this.waiting.length > 0 && this.waiting[0]!.at < oldest) this.waiting = this.waiting.filter((t) => t.at >= oldest);
  }
}
