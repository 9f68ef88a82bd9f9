/**
 * What Claude Code would be given, without giving it: the session-start
 * injection, and the memories a prompt or a tool failure would bring, each
 * with why. Nothing is counted as an access and no session is started; the
 * `ltm context` command and the editor's preview show it, so that people can
 * see and correct what their agent is told.
 */
import { buildInjection } from './injection';
import { buildPromptContext, failureText, isSearchablePrompt } from './promptContext';
import type { MemoryStore } from './store';

export interface ContextPreview {
  session_start: { text: string; memories: string[]; estimated_tokens: number };
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
}

export function previewContext(store: MemoryStore, options: ContextPreviewOptions): ContextPreview {
  const { memories_to_load } = store.config;
  // As the next session would see it: its number is one more than the sessions counted so far.
  const ranked = store.topForSession(store.sessionCount + 1, Math.max(1, memories_to_load));
  const injection = buildInjection(ranked.memories, ranked.total, { limit: memories_to_load, budgetTokens: options.budgetTokens });
  const preview: ContextPreview = {
    session_start: { text: injection.text, memories: injection.injectedIds, estimated_tokens: injection.estimatedTokens },
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

export function contextText(preview: ContextPreview): string {
  const part = (title: string, p: { text: string; memories: unknown[]; estimated_tokens: number }) =>
    `== ${title}: ${p.memories.length === 0 ? 'nothing' : `${p.memories.length} ${p.memories.length === 1 ? 'memory' : 'memories'}, ~${p.estimated_tokens} tokens`} ==${p.text ? `\n${p.text}` : ''}`;
  const parts = [part('At session start', { ...preview.session_start, memories: preview.session_start.memories })];
  if (preview.prompt) parts.push(part('With this prompt', preview.prompt));
  if (preview.error) parts.push(part('With this failure', preview.error));
  if (preview.file) parts.push(part('With this file', preview.file));
  return parts.join('\n\n');
}
