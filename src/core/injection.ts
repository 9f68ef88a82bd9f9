/**
 * The context injected at session start: the memories ranked first (by
 * priority, blended with relevance to the session's situation when there is
 * one: see situation.ts), each rendered as what its phase keeps, within a
 * token budget and Claude Code's limit on hook context, saying how many more
 * exist and how to reach them.
 */
import { oneLine, truncate } from './memoryFile';
import type { MemoryView } from './storeTypes';
import { PROJECT_TOOL_PREFIX } from '../shared/toolNames';

export interface InjectionOptions {
  /** The most memories to inject (state.json `memories_to_load`). */
  limit: number;
  /** Token budget for the whole text; tokens are estimated as characters / 4. */
  budgetTokens: number;
  /** How much of a full memory's Content to include. */
  contentChars?: number;
  /** The session's situation in one line (describeSituation), when the ranking took it into account. */
  situation?: string;
  /** Why a memory relates to the situation, by ID (see situation.ts); said in its header. */
  reasons?: ReadonlyMap<string, readonly string[]>;
  /** Why a memory may be outdated (its anchored code changed: store.outdated), by ID; said in its header. */
  outdated?: ReadonlyMap<string, readonly string[]>;
  /** How the session's Claude Code names LTM's tools (see toolNames.ts); the project's .mcp.json server by default. */
  toolPrefix?: string;
}

export interface Injection {
  text: string;
  injectedIds: string[];
  /** Memories that exist but were not injected. */
  omitted: number;
  estimatedTokens: number;
}

/**
 * The token budget when none is set (`ltm.injectionTokenBudget`, `ltm serve --budget`), and the least
 * one may set; package.json's setting declares the same default and minimum (a unit test checks).
 */
export const DEFAULT_INJECTION_BUDGET_TOKENS = 2000;
export const MIN_INJECTION_BUDGET_TOKENS = 100;
const DEFAULT_CONTENT_CHARS = 600;

/**
 * Claude Code keeps a hook's additionalContext only up to 10,000 characters;
 * a longer one is saved to a file and the model gets a preview and its path
 * instead. So every context LTM gives stays below this, whatever its token
 * budget is set to, and is cut between memories, never inside one.
 */
export const MAX_HOOK_CONTEXT_CHARS = 9_900;

/** A token budget as characters, within what Claude Code passes on whole. */
export function contextCharsFor(budgetTokens: number): number {
  return Math.min(budgetTokens * 4, MAX_HOOK_CONTEXT_CHARS);
}

export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** What a memory's header says when its anchored code changed: a fact for Claude to weigh, not an order. */
export function outdatedNote(outdated: readonly string[]): string {
  return outdated.length > 0 ? ` · possibly outdated, its code changed: ${truncate(outdated.join('; '), 300)}` : '';
}

function header(m: MemoryView, label: string, reasons: readonly string[], outdated: readonly string[]): string {
  // Topics and tags may be 10,000 characters: whole, they would keep this memory (and all after it) out of the budget.
  const tags = m.tags.length > 0 ? ` · tags: ${truncate(m.tags.join(', '), 300)}` : '';
  const related = reasons.length > 0 ? ` · related to ${truncate(reasons.join('; '), 300)}` : '';
  return `### ${truncate(oneLine(m.topic), 200)}\n_${label} · ${m.id}${tags} · priority ${m.priority.toFixed(2)}${related}${outdatedNote(outdated)}_`;
}

/** A Markdown code fence: three or more backticks or tildes, at most three spaces in. */
const FENCE_LINE = /^ {0,3}(`{3,}|~{3,})/;
const FENCE_LINES = new RegExp(FENCE_LINE.source, 'gm');

/**
 * Content cut to `max` characters, with a code fence the cut left open closed
 * again: otherwise every memory after it, and the closing line, would be read
 * as part of that code block.
 */
function cutContent(content: string, max: number): string {
  const cut = truncate(content, max);
  const fences = cut.match(FENCE_LINES) ?? [];
  return fences.length % 2 === 1 ? `${cut}\n${fences.at(-1)!.trim()}` : cut;
}

/** A memory as its phase keeps it: full text (bounded), hint, or abstract. */
function renderMemory(m: MemoryView, contentChars: number, reasons: readonly string[], outdated: readonly string[]): string {
  if (m.phase === 0) {
    const summary = m.summary.trim();
    const full = m.content.trim();
    // A Summary derived from the Content's first sentence would be said twice: the Content says it.
    if (summary && full.length > summary.length && full.startsWith(summary)) {
      return `${header(m, 'memory', reasons, outdated)}\n${cutContent(full, Math.max(contentChars, summary.length))}`;
    }
    const content = full && full !== summary ? `\n${cutContent(full, contentChars)}` : '';
    return `${header(m, 'memory', reasons, outdated)}\n${summary}${content}`;
  }
  if (m.phase === 1) {
    const point = cutContent(m.content.trim(), contentChars);
    // A fence opens a code block only at the start of a line.
    return `${header(m, 'hint', reasons, outdated)}\n${m.summary.trim()}\nKey point:${FENCE_LINE.test(point) ? '\n' : ' '}${point}`;
  }
  return `${header(m, 'abstract', reasons, outdated)}\n${truncate(oneLine(m.summary), 200)}${m.content.trim() ? ` (${truncate(oneLine(m.content), 200)})` : ''}`;
}

/** The same memory in as few words as possible, used when its full rendering does not fit. */
function renderSummaryOnly(m: MemoryView, reasons: readonly string[], outdated: readonly string[]): string {
  return `${header(m, m.phase === 0 ? 'memory' : m.phase === 1 ? 'hint' : 'abstract', reasons, outdated)}\n${truncate(oneLine(m.summary), 200)}`;
}

/**
 * @param ranked active memories, highest priority first (at least `limit` of them when there are)
 * @param totalActive how many active memories the store holds
 */
export function buildInjection(ranked: readonly MemoryView[], totalActive: number, options: InjectionOptions): Injection {
  const contentChars = options.contentChars ?? DEFAULT_CONTENT_CHARS;
  const order = options.situation
    ? `ranked by priority and by relevance to the current work (${options.situation})`
    : 'highest priority first';
  const intro =
    '## Long-term memory (LTM)\n' +
    `What earlier sessions of this project learned, ${order}. ` +
    'Hints and abstracts are reduced memories: get_memory or restore_memory brings back detail.';
  const budgetChars = contextCharsFor(options.budgetTokens);
  const blocks: string[] = [];
  const injectedIds: string[] = [];
  // Reserve room for the closing line so the budget holds for the whole text.
  let used = intro.length + 200;
  for (const m of ranked.slice(0, options.limit)) {
    const reasons = options.reasons?.get(m.id) ?? [];
    const outdated = options.outdated?.get(m.id) ?? [];
    let block = renderMemory(m, contentChars, reasons, outdated);
    if (used + block.length + 2 > budgetChars) block = renderSummaryOnly(m, reasons, outdated);
    if (used + block.length + 2 > budgetChars) break;
    blocks.push(block);
    injectedIds.push(m.id);
    used += block.length + 2;
  }
  const omitted = totalActive - injectedIds.length;
  const tools = options.toolPrefix ?? PROJECT_TOOL_PREFIX;
  const closing =
    omitted > 0
      ? `${omitted} more memor${omitted === 1 ? 'y is' : 'ies are'} stored. Search them with the recall tool (${tools}recall) or /recall <query>; archived ones with search_archives.`
      : `Store new lessons with the store_memory tool (${tools}store_memory) or /remember.`;
  if (totalActive === 0) {
    const text = `${intro}\n\nNo memories yet. ${closing}`;
    return { text, injectedIds, omitted: 0, estimatedTokens: estimateTokens(text) };
  }
  const text = [intro, ...blocks, closing].join('\n\n');
  return { text, injectedIds, omitted, estimatedTokens: estimateTokens(text) };
}
