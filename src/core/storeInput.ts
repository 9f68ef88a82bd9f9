/**
 * What a caller wants stored, checked and cleaned before the store takes its
 * lock: validation that names the first problem (memory IDs too), and
 * redaction of known secret shapes from every text field. Pure functions of
 * the input, so a rejected request never touches the disk.
 */
import { invalidInput } from './errors';
import { MAX_KEYWORDS, MAX_KEYWORD_LENGTH, deriveSummary, normaliseKeywords, normaliseTags, summaryProblem } from './memoryFile';
import { MEMORY_ID_FORMAT, isMemoryId } from './model';
import { redactSecrets, type Redaction } from './secrets';
import type { StoreInput } from './storeTypes';

/** Throws invalid_input unless `id` is a memory ID: what a caller names is checked before anything is read. */
export function requireMemoryId(id: string): void {
  if (typeof id !== 'string' || !isMemoryId(id)) {
    throw invalidInput(`"${String(id)}" is not a memory ID (expected ${MEMORY_ID_FORMAT})`);
  }
}

/** UTF-8 cannot encode a lone surrogate: saving one would silently change the text. */
export function rejectUnpairedSurrogates(name: string, value: string): void {
  if (/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(value)) {
    throw invalidInput(`${name} contains an unpaired UTF-16 surrogate, which cannot be saved as UTF-8`);
  }
}

/** The longest topic and content the store takes (a person's draft of either is kept up to the same bounds). */
export const MAX_TOPIC_CHARS = 10_000;
export const MAX_CONTENT_CHARS = 1_000_000;

export interface PreparedInput {
  topic: string;
  content: string;
  summary: string;
  tags: string[];
  keywords: string[];
  difficulty: number | undefined;
  redactions: Redaction[];
}

/** Validates and cleans what a caller wants stored; throws naming the first problem. */
export function prepareInput(raw: StoreInput): PreparedInput {
  if (typeof raw.topic !== 'string' || !raw.topic.trim()) throw invalidInput('topic is required and must not be empty');
  if (typeof raw.content !== 'string' || !raw.content.trim()) throw invalidInput('content is required and must not be empty');
  if (raw.topic.length > MAX_TOPIC_CHARS) throw invalidInput(`topic is longer than ${MAX_TOPIC_CHARS.toLocaleString('en-US')} characters`);
  if (raw.content.length > MAX_CONTENT_CHARS) throw invalidInput(`content is longer than ${MAX_CONTENT_CHARS.toLocaleString('en-US')} characters`);
  if (raw.summary !== undefined && typeof raw.summary !== 'string') throw invalidInput('summary must be a string');
  for (const [name, value] of [['topic', raw.topic], ['content', raw.content], ['summary', raw.summary ?? '']] as const) {
    rejectUnpairedSurrogates(name, value);
  }
  if (raw.difficulty !== undefined && (typeof raw.difficulty !== 'number' || !(raw.difficulty >= 0 && raw.difficulty <= 1))) {
    throw invalidInput('difficulty must be a number from 0 to 1');
  }
  if (raw.tags !== undefined && (!Array.isArray(raw.tags) || raw.tags.some((t) => typeof t !== 'string'))) {
    throw invalidInput('tags must be a list of strings');
  }
  for (const tag of raw.tags ?? []) rejectUnpairedSurrogates('a tag', tag);
  if (raw.keywords !== undefined && (!Array.isArray(raw.keywords) || raw.keywords.some((k) => typeof k !== 'string'))) {
    throw invalidInput('keywords must be a list of strings');
  }
  if ((raw.keywords?.length ?? 0) > MAX_KEYWORDS) throw invalidInput(`at most ${MAX_KEYWORDS} keywords`);
  for (const keyword of raw.keywords ?? []) {
    rejectUnpairedSurrogates('a keyword', keyword);
    if (/[\r\n]/.test(keyword) || keyword.length > MAX_KEYWORD_LENGTH) {
      throw invalidInput(`keyword "${keyword.slice(0, 40)}" is not valid (one line, at most ${MAX_KEYWORD_LENGTH} characters)`);
    }
  }
  const { value: input, redactions } = redactTextFields(raw);
  const tags = normaliseTags(input.tags ?? []);
  const badTag = tags.find((t) => /[\r\n]/.test(t) || t.length > 100);
  if (badTag !== undefined) throw invalidInput(`tag "${badTag.slice(0, 40)}" is not valid (one line, at most 100 characters)`);
  const topic = input.topic.trim();
  const content = input.content;
  const summary = input.summary?.trim() ? input.summary.trim() : deriveSummary(content) || topic;
  const problem = summaryProblem(summary);
  if (problem) throw invalidInput(problem);
  return { topic, content, summary, tags, keywords: normaliseKeywords(input.keywords ?? []), difficulty: input.difficulty, redactions };
}

/**
 * Every text of an input, each string field and each string in a list field,
 * with known secret shapes replaced. It walks the fields rather than naming
 * them, so a field added to StoreInput later is redacted too.
 */
export function redactTextFields<T extends object>(input: T): { value: T; redactions: Redaction[] } {
  const counts = new Map<string, number>();
  const clean = (text: string): string => {
    const result = redactSecrets(text);
    for (const r of result.redactions) counts.set(r.kind, (counts.get(r.kind) ?? 0) + r.count);
    return result.text;
  };
  const value = { ...input } as Record<string, unknown>;
  for (const [key, field] of Object.entries(value)) {
    if (typeof field === 'string') value[key] = clean(field);
    else if (Array.isArray(field)) value[key] = field.map((item: unknown) => (typeof item === 'string' ? clean(item) : item));
  }
  return { value: value as T, redactions: [...counts].map(([kind, count]) => ({ kind, count })) };
}

/** Checks and redacts a new Summary (updateSummary); throws invalid_input naming the problem. */
export function prepareSummary(summary: string): string {
  rejectUnpairedSurrogates('summary', summary);
  const redacted = redactSecrets(summary.trim());
  const problem = summaryProblem(redacted.text);
  if (problem) throw invalidInput(problem);
  return redacted.text;
}
