/**
 * Turns what the store holds into the plain views the webview shows.
 */
import { PROBLEM_TITLES, type IntegrityReport } from '../core/integrity';
import { PHASE_NAMES } from '../core/model';
import { DEFAULT_IMPORTANCE, IMPORTANCE_LEVELS, IMPORTANCE_TAG_PREFIX, PRIORITY_WEIGHTS } from '../core/priority';
import type { FixResult, MemoryStore, SearchResultItem } from '../core/store';
import { demotionText, usageText, type MemoryUsage } from '../core/usage';
import { anchorsView } from './anchorDetails';
import { fieldsOf } from './memoryEdit';
import type { ArchivedItemView, FixView, IntegrityView, MemoryDetails, MemoryPanelConstants, UsageView } from '../shared/protocol';

/** Sent with every memory, so the panel explains it with the engine's own numbers. */
export const MEMORY_PANEL_CONSTANTS: MemoryPanelConstants = {
  phaseNames: PHASE_NAMES,
  priorityWeights: PRIORITY_WEIGHTS,
  importanceTagPrefix: IMPORTANCE_TAG_PREFIX,
  defaultImportance: DEFAULT_IMPORTANCE,
  importanceLevels: IMPORTANCE_LEVELS,
};

/** Details of an active memory, or of an archived one; null when the ID is unknown. */
export function memoryDetails(store: MemoryStore, id: string, folder: string): MemoryDetails | null {
  let active;
  try {
    active = store.peek(id);
  } catch {
    active = null;
  }
  if (active) {
    const p = store.priorityOf(id);
    let archivedContent: string | null = null;
    if (active.phase > 0) {
      try {
        archivedContent = store.getArchived(id).content;
      } catch {
        archivedContent = null;
      }
    }
    return {
      id,
      topic: active.topic,
      tags: active.tags,
      phase: active.phase,
      summary: active.summary,
      content: active.content,
      difficulty: active.difficulty,
      accessCount: active.access_count,
      createdAt: active.created_at,
      accessedAt: active.accessed_at,
      createdSession: active.created_session,
      priority: {
        total: p.priority,
        difficulty: p.difficulty,
        recency: p.recency,
        frequency: p.frequency,
        importance: p.importance,
        importanceBoost: p.importanceBoost,
      },
      usage: usageView(active.usage, active.demotion_candidate),
      history: active.phase_history,
      archivedContent,
      archivedReason: null,
      archivedAt: null,
      folder,
      anchors: anchorsView(store, id),
      fields: fieldsOf(active),
    };
  }
  let archived;
  try {
    archived = store.getArchived(id);
  } catch {
    return null;
  }
  return {
    id,
    topic: archived.topic,
    tags: archived.tags,
    phase: 3,
    summary: archived.summary,
    content: archived.content,
    difficulty: archived.difficulty,
    accessCount: 0,
    createdAt: archived.created_at,
    accessedAt: '',
    createdSession: archived.created_session,
    priority: null,
    usage: null,
    history: [
      ...archived.phase_history,
      ...(archived.entry ? [{ phase: 3, at: archived.entry.archived_at, event: archived.entry.reason }] : []),
    ],
    archivedContent: archived.content,
    archivedReason: archived.entry?.reason ?? null,
    archivedAt: archived.entry?.archived_at ?? null,
    folder,
    anchors: null,
    fields: null,
  };
}

/** The usage counters as the panel shows them, with the words the tooltip uses. */
export function usageView(usage: MemoryUsage, demotionCandidate: boolean, now: number = Date.now()): UsageView {
  return {
    injectedSessions: usage.injected_sessions,
    offerCount: usage.offer_count,
    recallCount: usage.recall_count,
    readCount: usage.read_count,
    lastUsedSession: usage.last_used_session,
    lastUsedAt: usage.last_used_at,
    text: usageText(usage, now),
    demotionCandidate,
    demotionText: demotionCandidate ? demotionText(usage) : '',
  };
}

export function integrityView(report: IntegrityReport, folder: string): IntegrityView {
  return {
    healthy: report.healthy,
    problems: report.problems.map((p) => ({ kind: p.kind, level: p.level, title: PROBLEM_TITLES[p.kind], detail: p.detail })),
    counts: { ...report.counts },
    folder,
  };
}

export function fixView(result: FixResult): FixView {
  return { actions: result.actions, healthy: result.report.healthy };
}

export function archivedItemView(store: MemoryStore, item: SearchResultItem, folder: string): ArchivedItemView {
  let archivedAt = '';
  let summary = item.summary;
  try {
    const archived = store.getArchived(item.id);
    archivedAt = archived.entry?.archived_at ?? '';
    summary ||= archived.summary;
  } catch {
    archivedAt = '';
  }
  return { id: item.id, topic: item.topic, summary, tags: item.tags, archivedAt, folder };
}
