/**
 * Anchors seen from the code (anchors.ts sees them from the memory): which
 * memories are anchored in a file, where their lines are now, how an editor
 * labels them, and how a selection in an editor becomes an anchor.
 *
 * Pure: the editor side (src/vscode/anchorLenses.ts) gives the text and the
 * positions, so these rules are tested on strings.
 */
import * as path from 'node:path';
import { InvalidAnchor, type Anchor, type AnchorCheck } from './anchors';

/** What the index needs of a memory: its ID, its topic and its anchors (no file is read to build it). */
export interface AnchoredMemory {
  id: string;
  topic: string;
  anchors: readonly Anchor[];
}

/**
 * Anchored files → the memories anchored in them, each once per file, in the
 * order given (the store lists by priority, so the most important comes first).
 */
export function anchorIndex(memories: Iterable<AnchoredMemory>): Map<string, AnchoredMemory[]> {
  const index = new Map<string, AnchoredMemory[]>();
  for (const memory of memories) {
    for (const file of new Set(memory.anchors.map((a) => a.path))) {
      const list = index.get(file);
      if (list) list.push(memory);
      else index.set(file, [memory]);
    }
  }
  return index;
}

/** One anchored range of a file, where it is now. */
export interface AnchoredRange {
  id: string;
  topic: string;
  /** 1-based, inclusive; null for a whole-file anchor. */
  lines: [number, number] | null;
  /** The text under the anchor changed (or the file is gone). */
  stale: boolean;
}

/**
 * The ranges of `file` that `memories` are anchored to, at the lines their
 * text is now: `check` says how each anchor stands (a moved range is shown
 * where it moved to; a changed one where it was).
 */
export function anchoredRanges(file: string, memories: readonly AnchoredMemory[], check: (anchor: Anchor, memory: AnchoredMemory) => AnchorCheck): AnchoredRange[] {
  const ranges: AnchoredRange[] = [];
  for (const memory of memories) {
    for (const anchor of memory.anchors) {
      if (anchor.path !== file) continue;
      const state = check(anchor, memory);
      const lines = state.state === 'moved' ? state.lines : anchor.lines ? ([anchor.lines[0], anchor.lines[1]] as [number, number]) : null;
      ranges.push({ id: memory.id, topic: memory.topic, lines, stale: state.state === 'changed' || state.state === 'missing' });
    }
  }
  return ranges;
}

/** The memories whose anchored ranges start on one line: one CodeLens. */
export interface LensGroup {
  /** 1-based: the first line of the ranges (1 for whole-file anchors), within the file. */
  line: number;
  /** Each memory once, stale when any of its ranges starting here is. */
  memories: { id: string; topic: string; stale: boolean }[];
  title: string;
}

/** "LTM: 2 memories · 1 possibly outdated", "LTM: 1 memory · possibly outdated". */
export function lensTitle(count: number, stale: number): string {
  const memories = `LTM: ${count} ${count === 1 ? 'memory' : 'memories'}`;
  if (stale === 0) return memories;
  return `${memories} · ${count === 1 ? '' : `${stale} `}possibly outdated`;
}

/**
 * Ranges grouped by their first line, in line order. A range past the end of
 * a file that shrank is shown on its last line.
 */
export function lensGroups(ranges: readonly AnchoredRange[], lineCount: number): LensGroup[] {
  const byLine = new Map<number, Map<string, { id: string; topic: string; stale: boolean }>>();
  for (const range of ranges) {
    const line = Math.max(1, Math.min(range.lines ? range.lines[0] : 1, Math.max(1, lineCount)));
    let group = byLine.get(line);
    if (!group) byLine.set(line, (group = new Map()));
    const seen = group.get(range.id);
    if (seen) seen.stale ||= range.stale;
    else group.set(range.id, { id: range.id, topic: range.topic, stale: range.stale });
  }
  return [...byLine]
    .sort((a, b) => a[0] - b[0])
    .map(([line, group]) => {
      const memories = [...group.values()];
      return { line, memories, title: lensTitle(memories.length, memories.filter((m) => m.stale).length) };
    });
}

// ---------------------------------------------------------------------------
// From a selection

/** A position as editors give it: 0-based line and character. */
export interface TextPosition {
  line: number;
  character: number;
}

/**
 * The 1-based lines a selection covers, or null for an empty selection (the
 * whole file). A selection ending at the start of a line (a whole-line
 * selection made with Shift+Down) does not take that line.
 */
export function selectionLines(start: TextPosition, end: TextPosition): [number, number] | null {
  if (start.line === end.line && start.character === end.character) return null;
  const last = end.character === 0 && end.line > start.line ? end.line - 1 : end.line;
  return [start.line + 1, last + 1];
}

/**
 * The anchor spec (`src/db/pool.ts#L10-24`, or the path alone) of lines of a
 * file, relative to the project; InvalidAnchor for a file outside it.
 */
export function selectionAnchorSpec(projectRoot: string, file: string, lines: readonly [number, number] | null): string {
  const relative = path.relative(projectRoot, file);
  if (!relative || relative.startsWith('..') || path.isAbsolute(relative)) {
    throw new InvalidAnchor(`${file} is not inside ${projectRoot}: a memory can be anchored only to its own project's files`);
  }
  const posix = relative.split(path.sep).join('/');
  if (!lines) return posix;
  return lines[0] === lines[1] ? `${posix}#L${lines[0]}` : `${posix}#L${lines[0]}-${lines[1]}`;
}

/** A memory keeps at most this many lines of the code it is anchored to: the anchor points at the rest. */
export const MAX_FENCED_LINES = 60;

/**
 * Code as a Markdown fence, captioned with where it is from, cut to
 * MAX_FENCED_LINES. The fence is longer than any run of backticks in the
 * code, so the code cannot close it.
 */
export function fencedCode(code: string, language: string, caption: string): string {
  const lines = code.replace(/\s+$/, '').split(/\r\n|\r|\n/);
  const kept = lines.slice(0, MAX_FENCED_LINES).join('\n');
  const longest = Math.max(0, ...(kept.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(Math.max(3, longest + 1));
  const info = /^[\w+#.-]{1,40}$/.test(language) ? language : '';
  const cut = lines.length > MAX_FENCED_LINES ? `\n\n(The first ${MAX_FENCED_LINES} of ${lines.length} lines.)` : '';
  return `${caption}:\n\n${fence}${info}\n${kept}\n${fence}${cut}`;
}

/** A topic from the first line of text that says something: at most 80 characters, trimmed. */
export function topicFrom(text: string): string {
  const line = text.split(/\r\n|\r|\n/).map((l) => l.trim()).find((l) => /[\p{L}\p{N}]/u.test(l)) ?? '';
  return line.length > 80 ? `${line.slice(0, 79).trimEnd()}…` : line;
}
