/**
 * The memory file codec: Markdown with YAML frontmatter.
 *
 * Frontmatter goes through `yaml` documents, never hand-written YAML, so any
 * topic survives a round trip and unknown keys are kept. A memory that is not
 * changed is never re-serialised: its file stays byte-identical.
 */
import YAML, { isMap, isScalar, isSeq } from 'yaml';
import { z } from 'zod';
import { readCanonicalFrontmatter } from './canonicalFrontmatter';
import { InvalidAnchor, MAX_ANCHORS, anchorFromFrontmatterEntry, anchorsToFrontmatter } from './anchors';
import { FRONTMATTER_KEYS, MEMORY_ID_PATTERN, type ActivePhase, type Anchor, type Memory, type MemoryMeta, type MemoryStatus, type UnreadableAnchor } from './model';

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

// Lines end at "\n" only. (JavaScript's multiline ^ and $ also break at "\r", U+2028 and
// U+2029, which may stand unescaped inside quoted YAML strings.)
const OPENING = /^---[ \t]*\r?\n/;
const CLOSING = /(?:^|\n)(?:---|\.\.\.)[ \t]*(?:\r?\n|$)/;

export function splitFrontmatter(text: string): SplitFile {
  const text0 = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const opening = OPENING.exec(text0);
  if (!opening) throw new InvalidMemoryFile('no YAML frontmatter (the file must start with a "---" line)');
  const rest = text0.slice(opening[0].length);
  const closing = CLOSING.exec(rest);
  if (!closing) throw new InvalidMemoryFile('the frontmatter has no closing "---" line');
  const frontmatterEnd = closing.index + (closing[0].startsWith('\n') ? 1 : 0);
  return {
    frontmatter: rest.slice(0, frontmatterEnd),
    body: rest.slice(closing.index + closing[0].length),
  };
}

const YAML_OPTIONS = { version: '1.2', schema: 'core', prettyErrors: false, uniqueKeys: true } as const;
const STRINGIFY_OPTIONS = {
  lineWidth: 0,
  defaultStringType: 'QUOTE_DOUBLE',
  defaultKeyType: 'PLAIN',
  flowCollectionPadding: false,
  // Quoted strings stay on one line with escapes: yaml's folding of long
  // multi-line double-quoted strings does not read back exactly (found by the
  // property tests: a line holding only a space came back as a backslash).
  doubleQuotedMinMultiLineLength: Number.MAX_SAFE_INTEGER,
} as const;

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

const phaseChangeSchema = z.object({
  phase: z.number().int().min(0).max(3),
  at: text,
  event: z.enum(['evicted', 'restored', 'forgotten', 'orphaned', 'recovered', 'legacy', 'rejected', 'updated', 'merged']),
});

/**
 * A frontmatter `anchors` value read entry by entry: the anchors that can be
 * used, and what was left out and why. A hand-edited entry that cannot be read
 * never makes the memory invalid; the file keeps its text (a person's, to
 * correct), and the parsed memory names it (`unreadable_anchors`) so that
 * `ltm check` can say so without reading any file again.
 */
function readAnchorEntries(value: unknown): { anchors: Anchor[]; unreadable: UnreadableAnchor[] } {
  const anchors: Anchor[] = [];
  const unreadable: UnreadableAnchor[] = [];
  // An empty `anchors:` is none, as absent.
  if (value === undefined || value === null) return { anchors, unreadable };
  if (!Array.isArray(value)) return { anchors, unreadable: [{ entry: 'anchors', reason: 'anchors must be a list' }] };
  value.forEach((entry: unknown, i) => {
    const named = entry && typeof entry === 'object' && !Array.isArray(entry) ? (entry as { path?: unknown }).path : undefined;
    const where = { entry: `anchors[${i}]`, ...(typeof named === 'string' && named ? { path: named } : {}) };
    try {
      const anchor = anchorFromFrontmatterEntry(entry, i);
      if (anchors.length < MAX_ANCHORS) anchors.push(anchor);
      else unreadable.push({ ...where, reason: `beyond the ${MAX_ANCHORS} anchors a memory may have` });
    } catch (error) {
      if (!(error instanceof InvalidAnchor)) throw error;
      unreadable.push({ ...where, reason: error.message });
    }
  });
  return { anchors, unreadable };
}

/** At most this many keywords, each at most this long: other words for a search, not a second Content. */
export const MAX_KEYWORDS = 20;
export const MAX_KEYWORD_LENGTH = 100;

/** Keywords as a list of distinct one-line words or phrases (case kept; duplicates by case dropped). */
export function normaliseKeywords(keywords: readonly string[]): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const keyword of keywords) {
    const k = keyword.replace(/\s+/g, ' ').trim();
    if (!k || seen.has(k.toLowerCase())) continue;
    seen.add(k.toLowerCase());
    out.push(k);
  }
  return out;
}

/** The keywords of a frontmatter `keywords` value that can be read; anything else is none. */
function readableKeywords(value: unknown): string[] {
  if (!Array.isArray(value)) return [];
  const words = value.flatMap((k) => (typeof k === 'string' || typeof k === 'number' ? [String(k)] : []));
  return normaliseKeywords(words.filter((k) => k.length <= MAX_KEYWORD_LENGTH)).slice(0, MAX_KEYWORDS);
}

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
  // History is informative: an entry that is not understood is dropped, never a reason to reject the file.
  phase_history: z
    .array(z.unknown())
    .nullish()
    .catch([])
    .transform((entries) => (entries ?? []).flatMap((e) => (phaseChangeSchema.safeParse(e).success ? [phaseChangeSchema.parse(e)] : []))),
  keywords: z.unknown().optional().transform(readableKeywords),
  // Anchors are edited by hand too: one that is not understood is left out (the file keeps its text),
  // never a reason to reject the memory.
  anchors: z.unknown().optional().transform(readAnchorEntries),
  // Only `proposed` holds a memory back; anything else (absent, `approved`, a value a person made up) is approved.
  status: z
    .unknown()
    .optional()
    .transform((s): MemoryStatus | undefined => (s === 'proposed' ? 'proposed' : undefined)),
});

function describeIssue(issue: z.core.$ZodIssue): string {
  const field = issue.path.join('.') || 'frontmatter';
  if (issue.code === 'invalid_type' && issue.input === undefined) return `"${field}" is missing`;
  return `"${field}" ${issue.message}`;
}

/**
 * A frontmatter block's fields as `yaml` reads them, with the text fields
 * (topic, created_at, tags) as they were written.
 */
export function frontmatterFieldsByYaml(frontmatter: string): Record<string, unknown> {
  const doc = parseYamlDocument(frontmatter);
  const data: unknown = doc.toJS();
  if (data === null || typeof data !== 'object' || Array.isArray(data)) {
    throw new InvalidMemoryFile('the frontmatter is not a mapping of keys to values');
  }
  const fields = data as Record<string, unknown>;
  // Text fields keep the text they were written with: an unquoted tag 3.10 is "3.10", not "3.1".
  for (const key of ['topic', 'created_at']) {
    const node = doc.get(key, true);
    if (isScalar(node) && typeof node.value !== 'string' && node.source) fields[key] = node.source;
  }
  const tags = doc.get('tags', true);
  if (isSeq(tags)) {
    fields.tags = tags.items.flatMap((item) => {
      if (!isScalar(item)) return [item === null ? null : (item as { toJSON(): unknown }).toJSON()];
      if (typeof item.value === 'string') return [item.value];
      // An empty item ("- ") is no tag; null, ~ or .inf written as tags are their text.
      return item.source ? [item.source] : [];
    });
  }
  return fields;
}

/** Reads the LTM fields of a frontmatter block. Pure: equal text gives equal meta. */
export function parseFrontmatter(frontmatter: string): MemoryMeta {
  // What LTM wrote is read without `yaml`'s document model, several times faster (see canonicalFrontmatter.ts).
  const fields = readCanonicalFrontmatter(frontmatter) ?? frontmatterFieldsByYaml(frontmatter);
  const parsed = metaSchema.safeParse(fields);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field = String(issue.path[0] ?? '');
    const missing = issue.path.length === 1 && (fields[field] === undefined || fields[field] === null) && field !== '';
    throw new InvalidMemoryFile(`invalid frontmatter: ${missing ? `"${field}" is missing` : describeIssue(issue)}`);
  }
  const { status, anchors, ...meta } = parsed.data;
  return {
    ...meta,
    tags: normaliseTags(meta.tags),
    anchors: anchors.anchors,
    ...(anchors.unreadable.length > 0 ? { unreadable_anchors: anchors.unreadable } : {}),
    ...(status ? { status } : {}),
  };
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
/** The line that ends the Summary section; the same rule validates summaries. */
const CONTENT_HEADING = /(?:^|\n)## Content[ \t]*(?:\r?\n|$)/;

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
  const contentHeadingStart = summaryStart + contentHeading.index + (contentHeading[0].startsWith('\n') ? 1 : 0);
  return { summaryStart, contentHeadingStart, contentStart: summaryStart + contentHeading.index + contentHeading[0].length };
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

/**
 * Reading strips one line ending after each section; a text that itself ends
 * in "\r" is given "\r\n", so the round trip is exact for any text.
 */
function lineEndFor(text: string): string {
  return text.endsWith('\r') ? '\r\n' : '\n';
}

export function renderBody(summary: string, content: string): string {
  return `\n## Summary\n${summary}${lineEndFor(summary)}\n## Content\n${content}${lineEndFor(content)}`;
}

/** Checks a Summary before it is written; returns a message naming the problem, or null. */
export function summaryProblem(summary: string): string | null {
  if (!summary.trim()) return 'the summary is empty';
  if (CONTENT_HEADING.test(summary)) return 'the summary must not contain a "## Content" heading line';
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

/**
 * Text on one line: a topic or summary shown inside Markdown (a list item, a
 * heading) must not start lines of its own, or a stored topic could fake list
 * entries or headings in what Claude and people read.
 */
export function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

export function truncate(text: string, max: number): string {
  if (text.length <= max) return text;
  let cut = text.slice(0, max - 1);
  // Never leave half of a surrogate pair (an emoji) at the cut.
  if (/[\uD800-\uDBFF]$/.test(cut)) cut = cut.slice(0, -1);
  const space = cut.lastIndexOf(' ');
  return `${space > max / 2 ? cut.slice(0, space) : cut}…`;
}

/**
 * `text` on one line (each run of whitespace one space), cut as truncate()
 * cuts it: the same as truncate(text.replace(/\s+/g, ' '), max), without
 * rewriting every text to keep its start (a recall answer does this for each
 * summary it lists: 15 KB of garbage a recall at 10,000 bench memories that
 * way, 6 KB this one).
 */
export function truncatedLine(text: string, max: number): string {
  // A run of whitespace becomes one character, anything else stays: the start of `head` on one line is
  // the start of the whole text on one line, as long as it reaches past `max`.
  const head = text.length > 4 * max ? text.slice(0, 4 * max) : text;
  // Most summaries are one line already: no whitespace but single spaces, nothing to rewrite.
  const line = /[^\S ]| {2}/.test(head) ? head.replace(/\s+/g, ' ') : head;
  return truncate(line.length > max || head === text ? line : text.replace(/\s+/g, ' '), max);
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
  return line || truncatedLine(summary, 200);
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
  const sections = parseBody(body);
  return { memory: memoryOf(meta, sections), frontmatter, body };
}

export interface NewMemoryFields extends Omit<MemoryMeta, 'phase_history' | 'anchors' | 'status' | 'keywords'> {
  keywords?: readonly string[];
  /** Written only when `proposed`: an approved memory's file has no `status`, as in every earlier version. */
  status?: MemoryStatus;
  summary: string;
  content: string;
  anchors?: readonly Anchor[];
}

/** Renders a new memory file; fields are written in FRONTMATTER_KEYS order. */
export function renderNewMemoryFile(fields: NewMemoryFields): string {
  const data: Record<string, unknown> = {};
  for (const key of FRONTMATTER_KEYS) {
    data[key] = fields[key];
    // Beside the tags, and only when there are some: a memory without keywords reads as it always did.
    if (key === 'tags' && fields.keywords && fields.keywords.length > 0) data.keywords = [...fields.keywords];
  }
  if (data.created_session === null) delete data.created_session;
  // Written only when there are some: a memory without anchors reads as it always did.
  if (fields.anchors && fields.anchors.length > 0) data.anchors = anchorsToFrontmatter(fields.anchors);
  if (fields.status === 'proposed') data.status = 'proposed';
  const doc = new YAML.Document(data, YAML_OPTIONS);
  // Tags as a block list, like every existing store, even when empty.
  return `---\n${doc.toString(STRINGIFY_OPTIONS)}---\n${renderBody(fields.summary, fields.content)}`;
}

/**
 * Changes frontmatter fields of an existing file. The YAML document locates
 * each field and renders its new value; every other line (unknown keys,
 * comments, the style of untouched values) keeps its exact text.
 * `undefined` deletes a key; a new key is added at the end.
 */
export function updateFrontmatter(text: string, changes: Record<string, unknown>): string {
  const { frontmatter, body } = splitFrontmatter(text);
  const doc = parseYamlDocument(frontmatter);
  if (!isMap(doc.contents)) throw new InvalidMemoryFile('the frontmatter is not a mapping of keys to values');
  const edits: { start: number; end: number; text: string }[] = [];
  let appended = '';
  for (const [key, value] of Object.entries(changes)) {
    const rendered = value === undefined ? '' : new YAML.Document({ [key]: value }, YAML_OPTIONS).toString(STRINGIFY_OPTIONS);
    const pair = doc.contents.items.find((p) => isScalar(p.key) && p.key.value === key);
    const keyRange = pair && isScalar(pair.key) ? pair.key.range : undefined;
    if (!pair || !keyRange) {
      appended += rendered;
      continue;
    }
    // From the start of the key's line to the end of the line where its value ends.
    const start = frontmatter.lastIndexOf('\n', keyRange[0] - 1) + 1;
    const valueEnd = (pair.value as { range?: [number, number, number] } | null)?.range?.[1] ?? keyRange[1];
    const newline = frontmatter.indexOf('\n', Math.max(valueEnd - 1, start));
    edits.push({ start, end: newline < 0 ? frontmatter.length : newline + 1, text: rendered });
  }
  let result = frontmatter;
  for (const edit of edits.sort((a, b) => b.start - a.start)) {
    result = result.slice(0, edit.start) + edit.text + result.slice(edit.end);
  }
  if (appended) result = `${result}${result === '' || result.endsWith('\n') ? '' : '\n'}${appended}`;
  const opening = text.slice(0, text.indexOf('\n') + 1);
  const closing = text.slice(opening.length + frontmatter.length, text.length - body.length);
  return `${opening}${result}${closing}${body}`;
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
  const separator = lineEndFor(summary) + (spans.contentHeadingStart < body.length ? '\n' : '');
  return (
    text.slice(0, head + spans.summaryStart) + summary + separator + text.slice(head + spans.contentHeadingStart)
  );
}

/**
 * A memory as one object literal with a fixed key order. Spreading meta and
 * body into a fresh object gave nearly every memory its own hidden class, and
 * ranking 10,000 of them then paid for megamorphic property lookups.
 */
export function memoryOf(meta: MemoryMeta, body: MemoryBody): Memory {
  return {
    id: meta.id,
    topic: meta.topic,
    tags: meta.tags,
    phase: meta.phase,
    difficulty: meta.difficulty,
    created_at: meta.created_at,
    created_session: meta.created_session,
    phase_history: meta.phase_history,
    keywords: meta.keywords,
    anchors: meta.anchors,
    ...(meta.unreadable_anchors ? { unreadable_anchors: meta.unreadable_anchors } : {}),
    status: meta.status,
    summary: body.summary,
    content: body.content,
    hasSections: body.hasSections,
  };
}

/** A copy of frontmatter fields (tags copied too), with a fixed shape. */
export function copyMeta(meta: MemoryMeta): MemoryMeta {
  return {
    id: meta.id,
    topic: meta.topic,
    tags: [...meta.tags],
    phase: meta.phase,
    difficulty: meta.difficulty,
    created_at: meta.created_at,
    created_session: meta.created_session,
    phase_history: meta.phase_history,
    keywords: [...meta.keywords],
    anchors: meta.anchors.map((a) => ({ ...a })),
    ...(meta.unreadable_anchors ? { unreadable_anchors: meta.unreadable_anchors } : {}),
    status: meta.status,
  };
}
