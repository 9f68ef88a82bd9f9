/**
 * Memories offered with a prompt (Claude Code's UserPromptSubmit hook): the
 * few that are relevant to what the person just asked, not yet given in this
 * session, said as facts with the reason each is offered, within a small
 * budget. Most prompts get nothing: a memory must match enough of the prompt,
 * strongly enough, to be worth the context it takes.
 */
import { indexTerm, matchesAsPrefix, queryWords, stemOf, tokenize } from './analyzer';
import { contextCharsFor, estimateTokens, outdatedNote } from './injection';
import { developerVocabulary } from './relatedTerms';
import { oneLine, truncate } from './memoryFile';
import type { MemoryView } from './storeTypes';

/** `ltm.promptTokenBudget`'s default and least value (package.json declares the same; a unit test checks): a prompt's context stays small next to the session's. */
export const DEFAULT_PROMPT_BUDGET_TOKENS = 600;
export const MIN_PROMPT_BUDGET_TOKENS = 100;
/** At most this many memories with one prompt. */
export const DEFAULT_PROMPT_MEMORIES = 3;
/**
 * What a subagent starts with: the memories about its task, in a budget of
 * its own. A subagent has a fresh context and one task, so a little more than
 * a prompt gets, and far less than a session's start.
 */
export const DEFAULT_SUBAGENT_BUDGET_TOKENS = 800;
export const DEFAULT_SUBAGENT_MEMORIES = 4;

/**
 * When a search hit is relevant enough to offer unasked. A hit must match at
 * least `minWords` distinct words of the prompt (fewer only when the prompt
 * has fewer), and its BM25+ relevance (`SearchHit.score / words`: the score
 * without the bonus for matching more words; rare words and topic matches
 * weigh most), in units of the IDF of a word only one memory holds (so that
 * it means the same in small and large stores), must reach `minStrength`. Chosen on the tune split of the
 * evaluation set's prompts, tool errors and unrelated prompts (bench/eval/,
 * RESULTS.md there): unrelated prompts mostly match one or two common words,
 * the memories a prompt is about three or more.
 */
export interface RelevanceGate {
  minWords: number;
  minStrength: number;
}

export const DEFAULT_RELEVANCE_GATE: RelevanceGate = { minWords: 3, minStrength: 8 };

/** Prompts with fewer content words than this ("yes", "continue", "go on") get nothing. */
export const MIN_PROMPT_WORDS = 2;

/** Whether a text has enough content words to search with ("yes", "continue", "go on" do not). */
export function hasEnoughWords(text: string): boolean {
  return new Set(queryWords(text)).size >= MIN_PROMPT_WORDS;
}

/** Whether a prompt is worth searching with: slash commands (which do their own work) and short answers are not. */
export function isSearchablePrompt(prompt: string): boolean {
  return !prompt.trim().startsWith('/') && hasEnoughWords(prompt);
}

/** @param idfScale the index's `idfScale()`: the strength is relevance in units of the rarest word's IDF. */
export function passesGate(hit: { score: number; words: number }, promptWords: number, gate: RelevanceGate = DEFAULT_RELEVANCE_GATE, idfScale = 1): boolean {
  if (hit.words < Math.min(gate.minWords, promptWords)) return false;
  return hit.score / hit.words / idfScale >= gate.minStrength;
}

/**
 * The prompt's words a memory holds: as written, as another form of the word,
 * as a longer word it begins, or through a word people use for the same thing
 * (`ram ~ memory`). What the context says to explain an offer.
 */
export function matchedWords(prompt: string, memory: Pick<MemoryView, 'topic' | 'tags' | 'summary' | 'content'> & { keywords?: readonly string[] }): string[] {
  const terms = new Set<string>();
  for (const token of tokenize(`${memory.topic}\n${memory.tags.join(' ')}\n${(memory.keywords ?? []).join(' ')}\n${memory.summary}\n${memory.content}`)) {
    const term = indexTerm(token);
    if (term) terms.add(term);
  }
  const termOfStem = new Map<string, string>();
  for (const term of terms) if (!termOfStem.has(stemOf(term))) termOfStem.set(stemOf(term), term);
  const related = developerVocabulary().expand(prompt);
  const matched: string[] = [];
  for (const w of new Set(queryWords(prompt))) {
    if (terms.has(w) || termOfStem.has(stemOf(w)) || (matchesAsPrefix(w) && [...terms].some((t) => t.startsWith(w)))) {
      matched.push(w);
      continue;
    }
    // Matched through the semantic layer: say which of the memory's words it stood for.
    const stands = [...(related.get(w)?.keys() ?? [])].map((stem) => termOfStem.get(stem)).find((t) => t !== undefined);
    if (stands) matched.push(`${w} ~ ${stands}`);
  }
  return matched;
}

export interface OfferedMemory {
  view: MemoryView;
  /** Why it is offered: the prompt's words it matched. */
  matched: string[];
  /** Why it may be outdated: its anchored code changed (see staleness.ts). */
  outdated?: string[];
}

export interface PromptContext {
  /** Empty when nothing is offered. */
  text: string;
  offeredIds: string[];
  estimatedTokens: number;
}

const CONTENT_CHARS = 400;

function render(o: OfferedMemory, contentChars: number): string {
  const m = o.view;
  const why = o.matched.length > 0 ? ` · matched: ${o.matched.slice(0, 8).join(', ')}` : '';
  const title = `### ${truncate(oneLine(m.topic), 200)}\n_${m.id}${why}${outdatedNote(o.outdated ?? [])}_`;
  const summary = m.summary.trim();
  const content = m.content.trim();
  if (contentChars <= 0 || !content || content === summary) return `${title}\n${truncate(oneLine(summary), 300)}`;
  // A Summary derived from the Content's first sentence would be said twice.
  if (content.startsWith(summary)) return `${title}\n${truncate(content, contentChars)}`;
  return `${title}\n${truncate(oneLine(summary), 300)}\n${truncate(content, contentChars)}`;
}

/** The most of a tool failure's text searched with: its first lines say what went wrong. */
const MAX_FAILURE_CHARS = 2000;

function textOf(value: unknown, depth = 0): string {
  if (typeof value === 'string') return value;
  if (depth > 3 || value === null || typeof value !== 'object') return '';
  if (Array.isArray(value)) return value.map((v) => textOf(v, depth + 1)).join('\n');
  const o = value as Record<string, unknown>;
  return ['error', 'stderr', 'stdout', 'text', 'content', 'message', 'output'].map((k) => textOf(o[k], depth + 1)).filter(Boolean).join('\n');
}

/**
 * What a failed tool call is searched with: what the tool was asked to do
 * (the command, the file, the pattern) and what it answered (the error text),
 * bounded. Claude Code sends `error` with PostToolUseFailure, and the tool's
 * answer as `tool_response` (a string, an object or content blocks).
 */
export function failureText(payload: { tool_input?: unknown; error?: unknown; tool_response?: unknown }): string {
  const input = payload.tool_input && typeof payload.tool_input === 'object' ? (payload.tool_input as Record<string, unknown>) : {};
  const asked = ['command', 'file_path', 'path', 'pattern', 'url', 'query'].map((k) => input[k]).filter((v): v is string => typeof v === 'string');
  const answered = textOf(payload.error) || textOf(payload.tool_response);
  return [...asked, answered].join('\n').slice(0, MAX_FAILURE_CHARS);
}

/** The file a tool call works on (Read, Edit, Write, MultiEdit, NotebookEdit), if any. */
export function fileOfToolCall(toolInput: unknown): string | undefined {
  if (!toolInput || typeof toolInput !== 'object') return undefined;
  const input = toolInput as Record<string, unknown>;
  const file = input.file_path ?? input.notebook_path;
  return typeof file === 'string' && file.length > 0 && file.length <= 4096 ? file : undefined;
}

/** File names too short to be told apart in prose ("a.ts"): only a path names them. */
const MIN_FILE_NAME = 5;

/**
 * Whether a memory names a file: its path within the project
 * (`src/db/pool.ts`), or its file name (`pool.ts`) when that is long enough
 * to mean something, in the topic, tags, Summary or Content.
 */
export function mentionsFile(memory: Pick<MemoryView, 'topic' | 'tags' | 'summary' | 'content'>, relativePath: string, fileName: string): boolean {
  const text = `${memory.topic}\n${memory.tags.join(' ')}\n${memory.summary}\n${memory.content}`.toLowerCase();
  if (relativePath.includes('/') && mentionedAlone(text, relativePath.toLowerCase())) return true;
  if (fileName.length < MIN_FILE_NAME) return false;
  return mentionedAlone(text, fileName.toLowerCase());
}

/** A character that would make a file name part of a longer one ("spool.ts", "pool.tsx", "pool.ts2"). */
const NAME_CHARACTER = /[a-z0-9_-]/;

/**
 * Whether `name` occurs in `text` as a name of its own, at any of its
 * occurrences: "pool.ts" in "db/pool.ts was…" or "(pool.ts)", not in
 * "spool.ts" or "pool.tsx". A sentence's full stop after it still counts.
 */
function mentionedAlone(text: string, name: string): boolean {
  for (let at = text.indexOf(name); at >= 0; at = text.indexOf(name, at + 1)) {
    const before = at === 0 ? '' : text[at - 1]!;
    const after = text[at + name.length] ?? '';
    const afterDot = after === '.' ? (text[at + name.length + 1] ?? '') : '';
    const endsHere = after === '' || (!NAME_CHARACTER.test(after) && (after !== '.' || !NAME_CHARACTER.test(afterDot)));
    if ((before === '' || !NAME_CHARACTER.test(before)) && endsHere) return true;
  }
  return false;
}

/** The context for the offered memories, best first, within `budgetTokens`; empty when none fits. */
export function buildPromptContext(offers: readonly OfferedMemory[], budgetTokens = DEFAULT_PROMPT_BUDGET_TOKENS, about = 'this prompt'): PromptContext {
  const intro = `## Long-term memory (LTM): related to ${about}\nEarlier sessions of this project stored these notes; they may apply here (get_memory has the full text).`;
  // Within Claude Code's limit on hook context too, whatever the budget is set to.
  const budgetChars = contextCharsFor(budgetTokens);
  const blocks: string[] = [];
  const offeredIds: string[] = [];
  let used = intro.length;
  for (const offer of offers) {
    let block = render(offer, CONTENT_CHARS);
    if (used + block.length + 2 > budgetChars) block = render(offer, 0);
    if (used + block.length + 2 > budgetChars) break;
    blocks.push(block);
    offeredIds.push(offer.view.id);
    used += block.length + 2;
  }
  if (blocks.length === 0) return { text: '', offeredIds, estimatedTokens: 0 };
  const text = [intro, ...blocks].join('\n\n');
  return { text, offeredIds, estimatedTokens: estimateTokens(text) };
}
