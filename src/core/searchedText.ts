/**
 * What a search index holds of a memory: the fields it searches (with the
 * boost a match in each gets), how a field's text becomes the terms it
 * counts, and the digest of that text, which tells a saved index whether a
 * file's new version says what was indexed. The index itself (postings,
 * scoring, its saved form) is search.ts.
 */
import { hash } from 'node:crypto';
import { forEachToken, indexTerm } from './analyzer';

export interface SearchableMemory {
  id: string;
  topic: string;
  tags: readonly string[];
  /** Other words a search might use (a memory's `keywords`); archived memories have none. */
  keywords?: readonly string[];
  summary: string;
  content: string;
}

/** Searched fields, with the boost a match in each gets. */
export const FIELDS = [
  { name: 'topic', boost: 3, text: (m: SearchableMemory) => m.topic },
  { name: 'tags', boost: 2, text: (m: SearchableMemory) => m.tags.join(' ') },
  // Written to be searched by: as strong as tags.
  { name: 'keywords', boost: 2, text: (m: SearchableMemory) => (m.keywords ?? []).join(' ') },
  { name: 'summary', boost: 1.5, text: (m: SearchableMemory) => m.summary },
  { name: 'content', boost: 1, text: (m: SearchableMemory) => m.content },
] as const;
export const FIELD_COUNT = FIELDS.length;

/**
 * The digest of what the index holds of `memory` (its searched fields; 48
 * bits of their SHA-1, exact in a double): equal digests, equal entries. It
 * lets a saved index keep the documents of files that are new versions of
 * the same text (a copied or restored project: every inode and time new),
 * which would otherwise all be indexed again. ~2 µs a memory.
 */
export function searchedTextDigest(memory: SearchableMemory): number {
  return digestOfFieldTexts(FIELDS.map((f) => f.text(memory)));
}

/** searchedTextDigest of the fields' texts, in FIELDS' order (upsert has them at hand). */
export function digestOfFieldTexts(texts: readonly string[]): number {
  // Each text after its length: text moved from one field to the next is another digest.
  return hash('sha1', texts.map((text) => `${text.length}:${text}`).join(''), 'buffer').readUIntLE(0, 6);
}

/**
 * A field's text as the index holds it: its length (the number of distinct
 * tokens, as MiniSearch counts it) and how often each indexed term occurs.
 */
export function fieldTerms(text: string): { length: number; termCounts: Map<string, number> } {
  const counts = new Map<string, number>();
  forEachToken(text, (token) => counts.set(token, (counts.get(token) ?? 0) + 1));
  const length = counts.size;
  // The token counts become the term counts in place: most tokens are their own term (lower case, no
  // stop word), and a second map cost a third of building an index. A term added here is visited
  // later by the same loop, and is its own term.
  // forEach rather than for-of: an entry pair a token came to ~120 KB of a store's garbage (its similarity check).
  counts.forEach((count, token) => {
    const term = indexTerm(token);
    if (term === token) return;
    counts.delete(token);
    if (term) counts.set(term, (counts.get(term) ?? 0) + count);
  });
  return { length, termCounts: counts };
}
