/**
 * The memory file codec: Markdown with YAML frontmatter.
 *
 * Frontmatter goes through `yaml` documents, never hand-written YAML, so any
 * topic survives a round trip and unknown keys are kept. A memory that is not
 * changed is never re-serialised: its file stays byte-identical.
 */
import YAML from 'yaml';
import { z } from 'zod';
import { FRONTMATTER_KEYS, MEMORY_ID_PATTERN, type ActivePhase, type Memory, type MemoryMeta } from './model';

/** A file that cannot be read as a memory, and why. */
export class InvalidMemoryFile extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'InvalidMemoryFile';
  }
}

export interface SplitFile {
  /** The YAML text between the delimiters, including its last newline. */
  frontmatter: string;
  /** Everything after the closing delimiter line. */
  body: string;
}

const OPENING = /^---[ \t]*\r?\n/;
const CLOSING = /^(?:---|\.\.\.)[ \t]*(?:\r?\n|$)/m;

export function splitFrontmatter(text: string): SplitFile {
  const text0 = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const opening = OPENING.exec(text0);
  if (!opening) throw new InvalidMemoryFile('no YAML frontmatter (the file must start with a "---" line)');
  const rest = text0.slice(opening[0].length);
  const closing = CLOSING.exec(rest);
  if (!closing) throw new InvalidMemoryFile('the frontmatter has no closing "---" line');
  return {
    frontmatter: rest.slice(0, closing.index),
    body: rest.slice(closing.index + closing[0].length),
  };
}

const YAML_OPTIONS = { version: '1.2', schema: 'core', prettyErrors: false, uniqueKeys: true } as const;
const STRINGIFY_OPTIONS = { lineWidth: 0, defaultStringType: 'QUOTE_DOUBLE', defaultKeyType: 'PLAIN' } as const;

function parseYamlDocument(frontmatter: string): YAML.Document {
  const doc = YAML.parseDocument(frontmatter, YAML_OPTIONS);
  if (doc.errors.length > 0) {
    const first = doc.errors[0]!;
    throw new InvalidMemoryFile(`invalid YAML in frontmatter: ${first.message.split('\n')[0]}`);
  }
  return doc;
}

/** Scalars that YAML may have typed as numbers or booleans but that we keep as text. */
const text = z.union([z.string(), z.number(), z.boolean()]).transform(String);

const metaSchema = z.object({
  id: z.string().regex(MEMORY_ID_PATTERN, 'must be "mem_" followed by 8 lowercase hex characters'),
  topic: text.pipe(z.string().trim().min(1, 'must not be empty')),
  tags: z.array(text).nullish().transform((tags) => tags ?? []),
  phase: z
    .number()
    .int()
    .min(0)
    .max(2, 'must be 0, 1 or 2 for a file in memories/')
    .nullish()
    .transform((p) => (p ?? 0) as ActivePhase),
  difficulty: z.number().min(0).max(1).nullish().transform((d) => d ?? 0.5),
  created_at: text.nullish().transform((c) => c ?? ''),
  created_session: z.number().int().min(0).nullish().transform((s) => s ?? null),
});

function describeIssue(issue: z.core.$ZodIssue): string {
  const field = issue.path.join('.') || 'frontmatter';
  if (issue.code === 'invalid_type' && issue.input === undefined) return `"${field}" is missing`;
  return `"${field}" ${issue.message}`;
}

/** Reads the LTM fields of a frontmatter block. Pure: equal text gives equal meta. */
export function parseFrontmatter(frontmatter: string): MemoryMeta {
  const doc = parseYamlDocument(frontmatter);
  const data: unknown = doc.toJS();
  if (data === null || typeof data !== 'object' || Array.isArray(data)) {
    throw new InvalidMemoryFile('the frontmatter is not a mapping of keys to values');
  }
  const parsed = metaSchema.safeParse(data);
  if (!parsed.success) throw new InvalidMemoryFile(`invalid frontmatter: ${describeIssue(parsed.error.issues[0]!)}`);
  return { ...parsed.data, tags: normaliseTags(parsed.data.tags) };
}

/** Tags are trimmed, lower-case and unique; their order is kept. */
export function normaliseTags(tags: readonly string[]): string[] {
  const seen = new Set<string>();
  for (const tag of tags) {
    const t = tag.trim().toLowerCase();
    if (t) seen.add(t);
  }
  return [...seen];
}

// ---------------------------------------------------------------------------
// Body sections

export interface MemoryBody {
  summary: string;
  content: string;
  hasSections: boolean;
}

const SUMMARY_HEADING = /^## Summary[ \t]*(?:\r?\n|$)/;
const CONTENT_HEADING = /^## Content[ \t]*(?:\r?\n|$)/m;
/** A line that would end the Summary section if written inside it. */
const CONTENT_HEADING_LINE = /(?:^|\n)## Content[ \t]*(?:\r?\n|$)/;

interface SectionSpans {
  /** Offsets into the body of the summary text (after its heading line). */
  summaryStart: number;
  /** Where the `## Content` heading line starts, or the body's end. */
  contentHeadingStart: number;
  contentStart: number;
}

function findSections(body: string): SectionSpans | null {
  const leading = /^(?:[ \t]*\r?\n)*/.exec(body)![0].length;
  const heading = SUMMARY_HEADING.exec(body.slice(leading));
  if (!heading) return null;
  const summaryStart = leading + heading[0].length;
  const contentHeading = CONTENT_HEADING.exec(body.slice(summaryStart));
  if (!contentHeading) return { summaryStart, contentHeadingStart: body.length, contentStart: body.length };
  const contentHeadingStart = summaryStart + contentHeading.index;
  return { summaryStart, contentHeadingStart, contentStart: contentHeadingStart + contentHeading[0].length };
}

function stripOneNewline(s: string): string {
  return s.replace(/\r?\n$/, '');
}

export function parseBody(body: string): MemoryBody {
  const spans = findSections(body);
  if (!spans) {
    const content = stripOneNewline(body.replace(/^(?:[ \t]*\r?\n)+/, ''));
    return { summary: deriveSummary(content), content, hasSections: false };
  }
  // We write "S\n\n## Content": the summary region ends with its own newline and one blank line.
  const region = body.slice(spans.summaryStart, spans.contentHeadingStart);
  const summary = region.replace(/\r?\n(?:\r?\n)?$/, '');
  const content = stripOneNewline(body.slice(spans.contentStart));
  return { summary, content, hasSections: true };
}

export function renderBody(summary: string, content: string): string {
  return `\n## Summary\n${summary}\n\n## Content\n${content}\n`;
}

/** Checks a Summary before it is written; returns a message naming the problem, or null. */
export function summaryProblem(summary: string): string | null {
  if (!summary.trim()) return 'the summary is empty';
  if (CONTENT_HEADING_LINE.test(summary)) return 'the summary must not contain a "## Content" heading line';
  return null;
}

/**
 * The first sentence of the first paragraph that is not a heading, at most
 * 200 characters: a readable one-line description of free text.
 */
export function deriveSummary(content: string): string {
  const paragraph = firstTextParagraph(content).replace(/\s+/g, ' ').trim();
  return truncate(firstSentence(paragraph), 200);
}

function firstSentence(text: string): string {
  const match = /^(.+?[.!?])(?=\s|$)/.exec(text);
  return match ? match[1]! : text;
}

export function truncate(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max - 1);
  const space = cut.lastIndexOf(' ');
  return `${space > max / 2 ? cut.slice(0, space) : cut}…`;
}

function paragraphs(content: string): string[] {
  return content
    .split(/\r?\n[ \t]*\r?\n/)
    .map((p) => p.replace(/^\s*\n|\s+$/g, ''))
    .filter((p) => p.trim().length > 0);
}

function isHeadingOnly(paragraph: string): boolean {
  return paragraph.split(/\r?\n/).every((line) => /^\s*#{1,6}\s/.test(line) || !line.trim());
}

function firstTextParagraph(content: string): string {
  for (const p of paragraphs(content)) {
    const lines = p.split(/\r?\n/).filter((line) => !/^\s*#{1,6}\s/.test(line));
    if (lines.join('').trim()) return lines.join('\n');
  }
  return content;
}

/** Phase 1 (hint): the first paragraph of the content, with its heading if it has one. */
export function reduceToHint(content: string): string {
  const ps = paragraphs(content);
  if (ps.length === 0) return '';
  let hint = ps[0]!;
  if (isHeadingOnly(hint) && ps.length > 1) hint = `${hint}\n\n${ps[1]!}`;
  return truncate(hint, 1000);
}

/** Phase 2 (abstract): one line. */
export function reduceToAbstract(content: string, summary: string): string {
  const line = deriveSummary(content);
  return line || truncate(summary.replace(/\s+/g, ' '), 200);
}

// ---------------------------------------------------------------------------
// Whole files

export interface ParsedMemoryFile {
  memory: Memory;
  frontmatter: string;
  body: string;
}

export type FrontmatterParser = (frontmatter: string) => MemoryMeta;

export function parseMemoryFile(text: string, parse: FrontmatterParser = parseFrontmatter): ParsedMemoryFile {
  const { frontmatter, body } = splitFrontmatter(text);
  const meta = parse(frontmatter);
  return { memory: { ...meta, ...parseBody(body) }, frontmatter, body };
}

export interface NewMemoryFields extends MemoryMeta {
  summary: string;
  content: string;
}

/** Renders a new memory file; fields are written in FRONTMATTER_KEYS order. */
export function renderNewMemoryFile(fields: NewMemoryFields): string {
  const data: Record<string, unknown> = {};
  for (const key of FRONTMATTER_KEYS) data[key] = fields[key];
  if (data.created_session === null) delete data.created_session;
  const doc = new YAML.Document(data, YAML_OPTIONS);
  // Tags as a block list, like every existing store, even when empty.
  return `---\n${doc.toString(STRINGIFY_OPTIONS)}---\n${renderBody(fields.summary, fields.content)}`;
}

/**
 * Changes frontmatter fields of an existing file through its YAML document,
 * keeping unknown keys, comments and the style of untouched values.
 * `undefined` deletes a key.
 */
export function updateFrontmatter(text: string, changes: Record<string, unknown>): string {
  const { frontmatter, body } = splitFrontmatter(text);
  const doc = parseYamlDocument(frontmatter);
  for (const [key, value] of Object.entries(changes)) {
    if (value === undefined) doc.delete(key);
    else doc.set(key, doc.createNode(value));
  }
  const opening = /^\uFEFF?---[ \t]*\r?\n/.exec(text)![0];
  return `${opening}${doc.toString(STRINGIFY_OPTIONS)}---\n${body}`;
}

/** Replaces the body, keeping the frontmatter text as it is. */
export function replaceBody(text: string, body: string): string {
  const { body: oldBody } = splitFrontmatter(text);
  return text.slice(0, text.length - oldBody.length) + body;
}

/**
 * Rewrites only the Summary section; every other byte of a sectioned file is
 * kept. A body without sections gains them, its whole text becoming Content.
 */
export function replaceSummary(text: string, summary: string): string {
  const { body } = splitFrontmatter(text);
  const spans = findSections(body);
  if (!spans) {
    return replaceBody(text, renderBody(summary, parseBody(body).content));
  }
  const head = text.length - body.length;
  const separator = spans.contentHeadingStart < body.length ? '\n\n' : '\n';
  return (
    text.slice(0, head + spans.summaryStart) + summary + separator + text.slice(head + spans.contentHeadingStart)
  );
}

export function memoryMetaOf(memory: Memory): MemoryMeta {
  const { id, topic, tags, phase, difficulty, created_at, created_session } = memory;
  return { id, topic, tags, phase, difficulty, created_at, created_session };
}
