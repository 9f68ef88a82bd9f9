/**
 * How text becomes search terms, the same for memories and for queries.
 *
 * - Tokens: MiniSearch's tokenizer splits on whitespace and punctuation, so
 *   `retry_after_ms`, `src/db/pool.ts` and `ERR_SSL_PROTOCOL` already come
 *   apart at `_`, `/` and `.`. An identifier written in camel or Pascal case,
 *   or mixing letters and digits, is kept whole and also split into its parts:
 *   `TestQueryClient` → testqueryclient, test, query, client; `useAuthStore` →
 *   …, use, auth, store; `TS2339` → ts2339, ts, 2339. A query for `QueryClient`
 *   or `retryAfterMs` then meets the memory's parts.
 * - Terms: lower case; stop words and overlong tokens dropped.
 * - Word forms: the index keeps terms as written (prefix and typo lookups work
 *   on them), and a query word also reaches the other forms of the same stem
 *   (Porter stemmer: `deadlocks` → deadlock, deadlocked, deadlocking) at a
 *   lower weight; see MemorySearchIndex.
 */
import { stemmer } from 'stemmer';

/** Typos are tolerated in longer words only: a fuzzy "go" would match half the vocabulary. */
export function typosAllowed(word: string): number {
  return word.length > 3 ? Math.min(MAX_TYPOS, Math.round(word.length * 0.2)) : 0;
}

/**
 * At most two typos per word: enough for "postgress" or "deadlok", and it
 * bounds the work of a fuzzy lookup in a large vocabulary.
 */
const MAX_TYPOS = 2;

/** Prefixes of one or two letters match too much to mean anything. */
export function matchesAsPrefix(word: string): boolean {
  return word.length >= 3;
}

/**
 * Words too common to tell memories apart. Leaving them out of the index makes
 * it smaller and faster to build, and keeps them from diluting relevance.
 */
const STOP_WORDS = new Set(
  ('a an and are as at be been but by can did do does for from had has have he her his how i if in into is it its ' +
    'just may me more most my no not of on or our she so than that the their them then there these they this those ' +
    'to too was we were what when where which while who why will with would you your')
    .split(' '),
);

/** Tokens longer than this are not indexed (hashes, base64, minified code). */
const MAX_TERM_LENGTH = 64;

/** The indexed form of a token, or null when it is not indexed (stop word, overlong, empty). */
export function indexTerm(token: string): string | null {
  const lower = token.toLowerCase();
  return lower.length === 0 || lower.length > MAX_TERM_LENGTH || STOP_WORDS.has(lower) ? null : lower;
}

/** MiniSearch's token separator: a line break, or any Unicode space or punctuation character. */
const SEPARATOR = /[\n\r\p{Z}\p{P}]/u;
/** SEPARATOR for each ASCII character, looked up rather than matched: most text is ASCII. */
const ASCII_SEPARATOR = Uint8Array.from({ length: 128 }, (_, c) => (SEPARATOR.test(String.fromCharCode(c)) ? 1 : 0));

/** The length in code units of the separator at `i`, or 0 when there is none. */
function separatorAt(text: string, i: number): number {
  const c = text.charCodeAt(i);
  if (c < 128) return ASCII_SEPARATOR[c]!;
  const point = text.codePointAt(i)!;
  return SEPARATOR.test(String.fromCodePoint(point)) ? (point > 0xffff ? 2 : 1) : 0;
}

/**
 * Splits text exactly where MiniSearch's default tokenizer does
 * (`text.split(/[\n\r\p{Z}\p{P}]+/u)`, with its empty tokens at either end),
 * in half the time: a character at a time, ASCII by table. Building the search
 * index of a store without its cache spends a third of its time here.
 */
function splitOnPunctuation(text: string, visit: (token: string) => void): void {
  let start = 0;
  let i = 0;
  while (i < text.length) {
    let width = separatorAt(text, i);
    if (width === 0) {
      // A low surrogate alone is no separator: stepping one code unit is safe.
      i++;
      continue;
    }
    visit(text.slice(start, i));
    i += width;
    while (i < text.length && (width = separatorAt(text, i)) > 0) i += width;
    start = i;
  }
  visit(text.slice(start));
}

/** A case change inside a word, or letters next to digits. */
const IDENTIFIER_BOUNDARY = /[a-z][A-Z]|[A-Z]{2}[a-z]|[A-Za-z]\d|\d[A-Za-z]/;
/** An identifier's parts: runs of capitals (an acronym), capitalised or lower-case words, numbers. */
const IDENTIFIER_PART = /[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+/g;

/** Whether `token` has an ASCII capital or digit: every identifier boundary does, and most words have neither (a loop is cheaper than the regex). */
function hasCapitalOrDigit(token: string): boolean {
  for (let i = 0; i < token.length; i++) {
    const c = token.charCodeAt(i);
    if ((c >= 0x41 && c <= 0x5a) || (c >= 0x30 && c <= 0x39)) return true;
  }
  return false;
}

/** The parts of an identifier (`HTTPServer` → HTTP, Server), or [] when it has no inner boundary. */
export function identifierParts(token: string): string[] {
  if (token.length > MAX_TERM_LENGTH || !hasCapitalOrDigit(token) || !IDENTIFIER_BOUNDARY.test(token)) return [];
  const parts = token.match(IDENTIFIER_PART) ?? [];
  return parts.length > 1 ? parts : [];
}

/** Splits text into tokens: on whitespace and punctuation, then identifiers into their parts too. */
export function tokenize(text: string): string[] {
  const out: string[] = [];
  forEachToken(text, (token) => out.push(token));
  return out;
}

/** tokenize(), a token at a time, without the array: what building an index needs. */
export function forEachToken(text: string, visit: (token: string) => void): void {
  splitOnPunctuation(text, (token) => {
    visit(token);
    for (const part of identifierParts(token)) visit(part);
  });
}

/** The query's words as the index sees them (lower case, stop words dropped). */
export function queryWords(query: string): string[] {
  return tokenize(query).flatMap((t) => {
    const term = indexTerm(t);
    return term ? [term] : [];
  });
}

/** Stems by term: the vocabulary repeats, and the stemmer costs about half a microsecond a word. */
const stems = new Map<string, string>();
const MAX_CACHED_STEMS = 200_000;

/** The stem that groups a term with its other forms; the term itself when it is not a plain word. */
export function stemOf(term: string): string {
  if (term.length <= 3 || !/^[a-z]+$/.test(term)) return term;
  let stem = stems.get(term);
  if (stem === undefined) {
    stem = stemmer(term);
    if (stems.size >= MAX_CACHED_STEMS) stems.clear();
    stems.set(term, stem);
  }
  return stem;
}
