/**
 * The preview of injected context as a Markdown document (the editor's
 * "LTM: Preview injected context"): the same preview as `ltm context`
 * (contextPreview.ts), laid out for reading. Each injection is quoted exactly,
 * in a code fence no memory text can close, and next to it why each memory
 * was chosen. Everything taken from memories or typed by the person is
 * escaped where it is not fenced, so rendering the document (Markdown
 * preview) shows it as text. Building it counts nothing and writes nothing.
 */
import { previewContext, type ContextPreview } from './contextPreview';
import { oneLine, truncate } from './memoryFile';
import { PHASE_NAMES, type Phase } from './model';
import { DEFAULT_PROMPT_MEMORIES, DEFAULT_RELEVANCE_GATE, isSearchablePrompt } from './promptContext';
import type { SessionSituation } from './situation';
import type { MemoryStore, MemoryView } from './store';

/** What the person asked to preview; the session start is always shown. */
export interface ContextQuestion {
  prompt?: string;
  error?: string;
  /** A file a tool would read or change: absolute, or relative to the project. */
  file?: string;
}

export interface ContextDocumentOptions {
  /** The project's name as people know it (a workspace folder's name). */
  projectName: string;
  question: ContextQuestion;
  /** The budgets the server injects with: `ltm.injectionTokenBudget` and `ltm.promptTokenBudget`. */
  budgets: { sessionStart: number; prompt: number };
  /** Said under the title (another process serves the project, with budgets of its own). */
  note?: string;
  /** The git situation a session starting now would be ranked by (gitSituation.ts); none: priority alone. */
  situation?: SessionSituation | null;
}

/**
 * Text as one line of Markdown that renders as itself: no emphasis, code,
 * links, images, HTML, entities or table cells. It is never at the start of a
 * line, so what only matters there (`#`, `-`, `1.`) is left as written.
 */
export function markdownText(text: string, max = 200): string {
  return truncate(oneLine(text), max).replace(/[\\`*_[\]<>&|~]/g, '\\$&');
}

/**
 * A fenced code block holding `text` exactly: the fence is longer than any
 * run of backticks inside, so no line of the text can close it.
 */
export function fenced(text: string, info = ''): string {
  const longest = Math.max(0, ...(text.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(Math.max(3, longest + 1));
  return `${fence}${info}\n${text}\n${fence}`;
}

function lowerFirst(text: string): string {
  return text.charAt(0).toLowerCase() + text.slice(1);
}

function count(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

function headline(title: string, part: { memories: unknown[]; estimated_tokens: number }): string {
  return `## ${title}: ${part.memories.length === 0 ? 'nothing' : `${count(part.memories.length, 'memory', 'memories')}, ~${part.estimated_tokens} tokens`}`;
}

type Offer = NonNullable<ContextPreview['prompt']>;

function offerTable(offer: Offer, whyHeader: string): string {
  const rows = offer.memories.map((m) => `| \`${m.id}\` | ${markdownText(m.topic)} | ${markdownText(m.matched.join(', '), 300) || '—'} |`);
  return ['| Memory | Topic | ' + whyHeader + ' |', '| --- | --- | --- |', ...rows].join('\n');
}

function offerSection(title: string, hook: string, offer: Offer, asked: { label: string; text: string }, why: string, whyHeader: string, nothing: string): string {
  const lines = [headline(title, offer), '', `${asked.label}:`, '', fenced(asked.text, 'text'), ''];
  if (offer.memories.length === 0) {
    lines.push(`Nothing would be injected: ${lowerFirst(nothing)}`);
  } else {
    lines.push(`Why: ${lowerFirst(why)}`, '', offerTable(offer, whyHeader), '', `What ${hook} would inject, exactly:`, '', fenced(offer.text, 'markdown'));
  }
  return lines.join('\n');
}

function sessionStartSection(store: MemoryStore, preview: ContextPreview, budget: number): string {
  const part = preview.session_start;
  const { memories_to_load } = store.config;
  // Ranked as contextPreview ranks them (as the next session sees them), for the priorities the text shows.
  const ranked = store.topForSession(store.sessionCount + 1, Math.max(1, memories_to_load));
  const byId = new Map(ranked.memories.map((m) => [m.id, m]));
  const view = (id: string): MemoryView | undefined => {
    if (byId.has(id)) return byId.get(id);
    try {
      return store.peek(id);
    } catch {
      return undefined;
    }
  };
  const related = new Map(part.related.map((r) => [r.id, r.reasons]));
  const rows = part.memories.map((id, i) => {
    const m = view(id);
    const why = markdownText((related.get(id) ?? []).join('; '), 300) || '—';
    if (!m) return `| ${i + 1} | \`${id}\` | | | | ${why} |`;
    return `| ${i + 1} | \`${m.id}\` | ${markdownText(m.topic)} | ${PHASE_NAMES[m.phase as Phase] ?? m.phase} | ${m.priority.toFixed(2)} | ${why} |`;
  });
  const situation = part.situation
    ? `ranked by priority blended with the git situation: branch ${markdownText(part.situation.branch)}, ` +
      `${count(part.situation.changedFiles.length, 'changed file', 'changed files')}, ${count(part.situation.recentFiles.length, 'file', 'files')} in recent commits`
    : 'ranked by priority alone (not a git repository, or a detached HEAD)';
  const lines = [
    headline('At session start', part),
    '',
    `Why: the highest-ranked memories, at most ${memories_to_load} (\`memories_to_load\`), as many as fit in ${budget} tokens, ${situation}; ` +
      `${count(ranked.total, 'active memory', 'active memories')} in all. A session is given these once; a prompt, a failure or a file never brings them again.`,
  ];
  if (part.memories.length > 0) lines.push('', '| # | Memory | Topic | Phase | Priority | Related to the situation |', '| --- | --- | --- | --- | --- | --- |', ...rows);
  lines.push('', 'What the SessionStart hook would inject, exactly:', '', fenced(part.text, 'markdown'));
  return lines.join('\n');
}

/** The preview of what Claude Code would be given, as a Markdown document. Counts nothing, writes nothing. */
export function contextDocument(store: MemoryStore, options: ContextDocumentOptions): string {
  const { question, budgets } = options;
  const preview = previewContext(store, { ...question, budgetTokens: budgets.sessionStart, promptBudgetTokens: budgets.prompt, situation: options.situation ?? null });
  const gate = (what: string) =>
    `A memory is offered when it matches at least ${DEFAULT_RELEVANCE_GATE.minWords} distinct words of the ${what} (fewer only when it has fewer), ` +
    'strongly enough: rare words and matches in the topic weigh most.';
  const limits = `At most ${DEFAULT_PROMPT_MEMORIES}, within ${budgets.prompt} tokens (\`ltm.promptTokenBudget\`).`;
  const sections: string[] = [];
  if (preview.prompt && question.prompt !== undefined) {
    const searched = isSearchablePrompt(question.prompt);
    sections.push(
      offerSection(
        'With this prompt',
        'the UserPromptSubmit hook',
        preview.prompt,
        { label: 'The prompt', text: question.prompt },
        `${gate('prompt')} ${limits}`,
        'Matched words',
        searched
          ? `No memory that the session start does not already give matches enough of the prompt. ${gate('prompt')}`
          : 'Short answers ("yes", "continue") and slash commands are not searched.',
      ),
    );
  }
  if (preview.error && question.error !== undefined) {
    sections.push(
      offerSection(
        'With this failure',
        'the PostToolUseFailure hook',
        preview.error,
        { label: 'The error', text: question.error },
        `${gate('error')} ${limits}`,
        'Matched words',
        `No memory that the session start does not already give matches enough of the error. ${gate('error')}`,
      ),
    );
  }
  if (preview.file && question.file !== undefined) {
    sections.push(
      offerSection(
        'With this file',
        'the PreToolUse hook (Read, Edit, Write…)',
        preview.file,
        { label: 'The file', text: question.file },
        `A memory is offered when it names the file: its path in the project, or its file name when that is long enough to mean something. ${limits}`,
        'Names it as',
        'No memory that the session start does not already give names this file (its path in the project, or its file name when that is long enough to mean something).',
      ),
    );
  }
  sections.push(sessionStartSection(store, preview, budgets.sessionStart));
  const intro = [
    `# What Claude Code would be given: ${markdownText(options.projectName)}`,
    '',
    '_A preview: no access was counted and nothing in the store changed. ' +
      `Budgets: ${budgets.sessionStart} tokens at session start (\`ltm.injectionTokenBudget\`), ${budgets.prompt} with a prompt, a failure or a file (\`ltm.promptTokenBudget\`); ` +
      'tokens are estimated as characters / 4. The same as `ltm context`._',
  ];
  if (options.note) intro.push('', `_${markdownText(options.note, 500)}_`);
  return `${[intro.join('\n'), ...sections].join('\n\n')}\n`;
}
