/**
 * What Claude Code would be given, without giving it: the session-start
 * injection, and the memories a prompt or a tool failure would bring, each
 * with why. Nothing is counted as an access and no session is started; the
 * `ltm context` command and the editor's preview show it, so that people can
 * see and correct what their agent is told.
 */
import { buildPromptContext, failureText, isSearchablePrompt } from './promptContext';
import { sessionStartContext } from './sessionStartContext';
import type { SessionSituation } from './situation';
import type { MemoryStore } from './store';

export interface ContextPreview {
  session_start: {
    text: string;
    memories: string[];
    estimated_tokens: number;
    /** The situation the ranking took into account (null: none, plain priority), and why each memory relates to it. */
    situation: SessionSituation | null;
    related: { id: string; reasons: string[] }[];
  };
  prompt?: { text: string; memories: { id: string; topic: string; matched: string[] }[]; estimated_tokens: number };
  error?: { text: string; memories: { id: string; topic: string; matched: string[] }[]; estimated_tokens: number };
  /** Before a file tool (Read, Edit…) works on this file; `matched` is how the memory names it. */
  file?: { text: string; memories: { id: string; topic: string; matched: string[] }[]; estimated_tokens: number };
}

export interface ContextPreviewOptions {
  prompt?: string;
  error?: string;
  /** A file a tool is about to read or change (absolute, or relative to the project). */
  file?: string;
  /** The session start's budget (`ltm.injectionTokenBudget`, `--budget`). */
  budgetTokens: number;
  /** The budget of what a prompt, a failure or a file brings (`ltm.promptTokenBudget`); its default when not given. */
  promptBudgetTokens?: number;
  /** The project's situation as a session starting now would see it (the CLI reads it from git); none: ranked by priority alone. */
  situation?: SessionSituation | null;
}

export function previewContext(store: MemoryStore, options: ContextPreviewOptions): ContextPreview {
  // As the next session would see it: its number is one more than the sessions counted so far.
  const injection = sessionStartContext(store, { session: store.sessionCount + 1, situation: options.situation ?? null, budgetTokens: options.budgetTokens });
  const preview: ContextPreview = {
    session_start: {
      text: injection.text,
      memories: injection.injectedIds,
      estimated_tokens: injection.estimatedTokens,
      situation: injection.situation,
      related: [...injection.reasons].map(([id, reasons]) => ({ id, reasons })),
    },
  };
  // What the session was given at its start is not offered again.
  const given = new Set(injection.injectedIds);
  const offer = (text: string, about: string, offers = store.relevantTo(text, { exclude: given })) => {
    const context = buildPromptContext(offers, options.promptBudgetTokens, about);
    const shown = offers.filter((o) => context.offeredIds.includes(o.view.id));
    return { text: context.text, memories: shown.map((o) => ({ id: o.view.id, topic: o.view.topic, matched: o.matched })), estimated_tokens: context.estimatedTokens };
  };
  if (options.prompt !== undefined) {
    preview.prompt = isSearchablePrompt(options.prompt) ? offer(options.prompt, 'this prompt') : { text: '', memories: [], estimated_tokens: 0 };
  }
  if (options.error !== undefined) preview.error = offer(failureText({ error: options.error }), 'this failure');
  if (options.file !== undefined) preview.file = offer(options.file, 'this file', store.aboutFile(options.file, { exclude: given }));
  return preview;
}

/** A list of files as one line: the first few, and how many more. */
function listed(files: readonly string[], shown = 10): string {
  if (files.length === 0) return 'none';
  return files.slice(0, shown).join(', ') + (files.length > shown ? ` and ${files.length - shown} more` : '');
}

export function contextText(preview: ContextPreview): string {
  const part = (title: string, p: { text: string; memories: unknown[]; estimated_tokens: number }) =>
    `== ${title}: ${p.memories.length === 0 ? 'nothing' : `${p.memories.length} ${p.memories.length === 1 ? 'memory' : 'memories'}, ~${p.estimated_tokens} tokens`} ==${p.text ? `\n${p.text}` : ''}`;
  const parts = [part('At session start', preview.session_start)];
  const { situation, related } = preview.session_start;
  // Why the ranking is what it is: the situation it took into account, and what each memory has to do with it.
  parts[0] += situation
    ? `\n-- situation: branch ${situation.branch}; changed: ${listed(situation.changedFiles)}; in recent commits: ${listed(situation.recentFiles)}` +
      (related.length > 0 ? related.map((r) => `\n-- ${r.id} related to ${r.reasons.join('; ')}`).join('') : '\n-- no memory relates to it')
    : '\n-- situation: none (not a git repository, or a detached HEAD): ranked by priority alone';
  if (preview.prompt) parts.push(part('With this prompt', preview.prompt));
  if (preview.error) parts.push(part('With this failure', preview.error));
  if (preview.file) parts.push(part('With this file', preview.file));
  return parts.join('\n\n');
}
