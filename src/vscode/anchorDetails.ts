/**
 * The memory panel's Anchors section: each anchor of a memory, where its text
 * is now, what became of it, and for changed lines the text there now. The
 * engine keeps a hash of the anchored text, never the text itself, so the
 * panel can show the code as it is, not a diff against what the memory was
 * written about; it says so.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { anchorLines, describeAnchor } from '../core/anchors';
import type { AnchorStatus } from '../core/staleness';
import type { MemoryStore } from '../core/store';
import type { AnchorView, AnchorsView } from '../shared/protocol';

/** At most this much of a changed range is shown in the panel. */
const MAX_SHOWN_LINES = 40;
const MAX_SHOWN_CHARS = 8_000;
/** Larger files are not read for the panel (the engine refuses to anchor them anyway). */
const MAX_READ_BYTES = 5 * 1024 * 1024;

/** How a memory's anchors stand, for the panel; null for a memory without anchors or that is not active. */
export function anchorsView(store: MemoryStore, id: string): AnchorsView | null {
  let report;
  try {
    report = store.staleness(id);
  } catch {
    return null;
  }
  if (!report) return null;
  return { stale: report.stale, reasons: report.reasons, items: report.anchors.map((status) => anchorView(store.paths.project, status)) };
}

function anchorView(projectRoot: string, status: AnchorStatus): AnchorView {
  const { anchor, check, renamedTo } = status;
  const where = renamedTo ?? anchor.path;
  const lines = check.state === 'moved' ? check.lines : anchor.lines ? ([anchor.lines[0], anchor.lines[1]] as [number, number]) : null;
  const renamed = renamedTo ? `${anchor.path} was renamed to ${renamedTo}` : null;
  let reason: string | null;
  switch (check.state) {
    case 'fresh':
      reason = renamed ? `${renamed}; the text is unchanged` : null;
      break;
    case 'moved':
      reason = `${renamed ? `${renamed}; ` : ''}the same text is now at lines ${check.lines[0]}–${check.lines[1]} (the anchor follows it when the file is saved)`;
      break;
    case 'changed':
      reason = `${renamed ? `${renamed}, and ` : ''}the text ${anchor.lines ? 'at these lines' : 'of the file'} changed since the memory was written`;
      break;
    case 'missing':
      reason = 'the file is gone';
      break;
  }
  const shown = check.state === 'changed' && lines ? currentText(projectRoot, where, lines) : null;
  return {
    spec: describeAnchor(anchor),
    path: where,
    lines,
    state: check.state,
    reason,
    currentText: shown?.text ?? null,
    currentTextCut: shown?.cut ?? false,
  };
}

/** The lines of a project file as they are now (those that still exist), cut to what a panel shows. */
function currentText(projectRoot: string, relative: string, [start, end]: [number, number]): { text: string; cut: boolean } | null {
  const file = path.join(projectRoot, ...relative.split('/'));
  try {
    if (fs.statSync(file).size > MAX_READ_BYTES) return null;
    const all = anchorLines(fs.readFileSync(file, 'utf8'));
    const wanted = all.slice(start - 1, end);
    let text = wanted.slice(0, MAX_SHOWN_LINES).join('\n');
    let cut = wanted.length > MAX_SHOWN_LINES;
    if (text.length > MAX_SHOWN_CHARS) {
      text = text.slice(0, MAX_SHOWN_CHARS);
      cut = true;
    }
    return { text, cut };
  } catch {
    return null;
  }
}

/** The absolute path and lines to open for a memory's anchor at `index`, or null when there is none. */
export function anchorTarget(store: MemoryStore, id: string, index: number): { file: string; lines: [number, number] | null; state: AnchorView['state'] } | null {
  const item = anchorsView(store, id)?.items[index];
  if (!item) return null;
  return { file: path.join(store.paths.project, ...item.path.split('/')), lines: item.lines, state: item.state };
}
