/**
 * What session start and the offers give Claude: the first memories by
 * priority, the candidates weighed against a session's situation, the
 * memories relevant to a text or about a file; with stale memories (their
 * anchored code changed) labelled or left out as the project says
 * (state.json `stale_memories`). Reads only: nothing here counts a use. The
 * caller (MemoryStore) refreshed the store first.
 */
import * as path from 'node:path';
import { invalidInput } from './errors';
import {
  DEFAULT_PROMPT_MEMORIES,
  DEFAULT_RELEVANCE_GATE,
  hasEnoughWords,
  matchedWords,
  mentionsFile,
  type OfferedMemory,
  type RelevanceGate,
} from './promptContext';
import type { StoreParts } from './storeParts';
import type { ListResult, MemoryView, StaleMemory } from './storeTypes';

/** How many search hits for a file name are checked for a mention of the file. */
const FILE_CANDIDATES = 30;
/** How many search hits for each of a session's files and its branch are weighed at session start. */
const SITUATION_CANDIDATES = 8;

/** What the offers read. */
export type OfferParts = Pick<StoreParts, 'paths' | 'mirror' | 'queries' | 'anchoring'>;

/** Why a memory (as listed or offered) may be outdated: its anchored code changed; [] when it holds. */
export function outdated({ anchoring }: Pick<StoreParts, 'anchoring'>, memory: Pick<MemoryView, 'anchors'>): string[] {
  return anchoring.report(memory.anchors)?.reasons ?? [];
}

/**
 * What session start and the offers leave out: nothing when the project
 * labels stale memories (the default; then no anchored file is even
 * stat()ed for it), else whether a memory is stale. recall and get never ask.
 */
function staleSkip({ mirror, anchoring }: Pick<StoreParts, 'mirror' | 'anchoring'>): ((memory: Pick<MemoryView, 'anchors'>) => boolean) | null {
  if (mirror.state.config.stale_memories !== 'skip') return null;
  return (memory) => anchoring.report(memory.anchors)?.stale === true;
}

/** The active memories whose anchored code changed or is gone, by ID. */
export function staleMemories(parts: OfferParts): StaleMemory[] {
  const { mirror, anchoring } = parts;
  const stale: StaleMemory[] = [];
  anchoring.pass(() => {
    for (const id of [...mirror.files.keys()]) {
      const { memory } = mirror.files.get(id)!;
      const report = anchoring.report(memory.anchors);
      if (report?.stale) stale.push({ id, topic: memory.topic, reasons: report.reasons });
    }
  });
  return stale.sort((a, b) => (a.id < b.id ? -1 : 1));
}

/**
 * The first `limit` memories by priority as session number `session` sees
 * them: what a session start injects, ranked before its count is written.
 */
export function topForSession(parts: OfferParts, session: number, limit: number): ListResult {
  const { mirror, queries, anchoring } = parts;
  if (!Number.isInteger(limit) || limit < 1) throw invalidInput('limit must be a whole number ≥ 1');
  const sessionCount = Math.max(session, mirror.state.session_count);
  const skip = staleSkip(parts);
  if (!skip) return queries.rankedPage(0, limit, sessionCount);
  // Stale memories are left out and the next ones take their places: looked for deeper until `limit`
  // hold or none are left. `total` stays every memory in use: recall still finds the stale ones.
  return anchoring.pass(() => {
    for (let depth = limit * 2; ; depth *= 2) {
      const page = queries.rankedPage(0, depth, sessionCount);
      const kept = page.memories.filter((m) => !skip(m));
      if (kept.length >= limit || !page.has_more) return { memories: kept.slice(0, limit), total: page.total, has_more: kept.length > limit || page.has_more };
    }
  });
}

/**
 * Active memories the search index finds for each query (at most
 * `perQuery` each, in no particular order), as session number `session`
 * sees them: the candidates session start weighs against its situation
 * (see situation.ts), which decides what each has to do with it. Counts nothing.
 */
export function candidatesFor(parts: OfferParts, queries: readonly string[], session: number, perQuery = SITUATION_CANDIDATES): MemoryView[] {
  const { mirror, anchoring } = parts;
  const sessionCount = Math.max(session, mirror.state.session_count);
  const ids = new Set<string>();
  for (const query of queries) {
    if (!query.trim()) continue;
    for (const hit of parts.queries.search(query, perQuery, 'active', undefined)) ids.add(hit.id);
  }
  const skip = staleSkip(parts);
  const views = [...ids].map((id) => parts.queries.view(id, sessionCount));
  return skip ? anchoring.pass(() => views.filter((v) => !skip(v))) : views;
}

/**
 * The memories worth offering with a text (a person's prompt, a tool's
 * error), most relevant first, leaving out `exclude` (already offered in the
 * session): none when the text is too short or nothing matches it enough.
 * Reading them does not count as an access; the caller counts what it offers.
 */
export function relevantTo(parts: OfferParts, text: string, options: { limit?: number; exclude?: ReadonlySet<string>; gate?: RelevanceGate } = {}): OfferedMemory[] {
  const { mirror, queries, anchoring } = parts;
  if (!hasEnoughWords(text)) return [];
  const skip = staleSkip(parts);
  // A stale memory left out is passed over there, so that the next relevant one fills its place.
  const leaveOut = skip && ((id: string) => skip(mirror.files.get(id)!.memory));
  const limit = options.limit ?? DEFAULT_PROMPT_MEMORIES;
  const ids = anchoring.pass(() => queries.relevantTo(text, limit, options.exclude ?? new Set(), options.gate ?? DEFAULT_RELEVANCE_GATE, leaveOut ?? undefined));
  return ids.map((id) => {
    const view = queries.view(id);
    return { view, matched: matchedWords(text, view), outdated: outdated(parts, view) };
  });
}

/**
 * The memories that name a file (its path in the project, or its file
 * name), best match first, leaving out `exclude`. What a tool about to read
 * or change that file is offered. Counts nothing.
 */
export function aboutFile(parts: OfferParts, file: string, options: { limit?: number; exclude?: ReadonlySet<string> } = {}): OfferedMemory[] {
  const { paths, queries } = parts;
  const relative = path.relative(paths.project, path.resolve(paths.project, file)).split(path.sep).join('/');
  const fileName = path.basename(file);
  // Candidates from the index (the file name's words), then the exact mention checked in their text.
  const candidates = queries.search(fileName, FILE_CANDIDATES, 'active', undefined, false);
  const skip = staleSkip(parts);
  const offers: OfferedMemory[] = [];
  for (const c of candidates) {
    if (options.exclude?.has(c.id)) continue;
    const view = queries.view(c.id);
    if (!mentionsFile(view, relative.startsWith('..') ? '' : relative, fileName)) continue;
    if (skip?.(view)) continue;
    offers.push({ view, matched: [relative.startsWith('..') ? fileName : relative], outdated: outdated(parts, view) });
    if (offers.length >= (options.limit ?? DEFAULT_PROMPT_MEMORIES)) break;
  }
  return offers;
}
