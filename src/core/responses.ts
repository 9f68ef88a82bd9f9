/**
 * What the engine answers, in two forms shared by the CLI (`--json` or text)
 * and the MCP tools (structuredContent and text): the response shapes
 * (`{success, id, message}`, `{memories, total, has_more}`, …) and readable
 * text: Markdown for Claude (the default), plain for a terminal (textStyle.ts).
 */
import { countOf } from '../shared/wording';
import { MARKDOWN, type TextStyle } from './textStyle';
import { describeAnchor } from './anchors';
import type { StaleReport } from './staleness';
import type { EvictionResult, FixResult, ForgetResult, ListResult, MemoryView, MergeResult, ReviewResult, SearchResultItem, SimilarMemory, StatusResult, StoreResult, UpdateResult } from './store';
import { PROBLEM_LEVELS, PROBLEM_TITLES, problemCounts, type IntegrityReport, type ProblemKind } from './integrity';
import { PHASE_NAMES, type Phase } from './model';
import { describeRedactions } from './secrets';
import { oneLine, truncate, truncatedLine } from './memoryFile';
import { demotionText, usageText, type MemoryUsage } from './usage';

const fmt = (n: number) => n.toFixed(2);
const phaseName = (phase: number) => PHASE_NAMES[phase as Phase] ?? String(phase);

// --- store -------------------------------------------------------------------

/** What a memory awaiting review is, said as a fact (Claude reads it; no orders). */
const AWAITING_REVIEW =
  'This project reviews new memories: it awaits review by a person, and until it is approved it is not injected into sessions, offered with prompts or returned by recall.';

export function storeResponse(result: StoreResult) {
  const m = result.memory;
  const proposed = m.status === 'proposed';
  return {
    success: true,
    id: m.id,
    message: proposed ? `Memory stored with ID ${m.id}; it awaits review by a person before it is used` : `Memory stored with ID ${m.id}`,
    topic: m.topic,
    tags: m.tags,
    difficulty: m.difficulty,
    summary: m.summary,
    redacted: result.redactions,
    status: statusOf(m),
    similar: (result.similar ?? []).map((s) => ({ id: s.id, topic: s.topic, score: s.score })),
  };
}

export function storeText(result: StoreResult, style: TextStyle = MARKDOWN): string {
  const m = result.memory;
  const lines = [`Stored memory ${style.strong(oneLine(m.topic))} (ID: ${style.code(m.id)})`, `Tags: ${m.tags.join(', ') || '(none)'} | Difficulty: ${fmt(m.difficulty)}`];
  if (m.status === 'proposed') lines.push(AWAITING_REVIEW);
  if (result.redactions.length > 0) {
    lines.push(`Secrets were removed before saving: ${describeRedactions(result.redactions)}.`);
  }
  lines.push(...similarLines(m.id, result.similar ?? [], style));
  return lines.join('\n');
}

/** approved or proposed: what the frontmatter's `status` means (absent: approved). */
function statusOf(m: { status?: string }): 'approved' | 'proposed' {
  return m.status === 'proposed' ? 'proposed' : 'approved';
}

/** What a store answer says about memories that say nearly the same, so that Claude updates one rather than keep both. */
function similarLines(id: string, similar: readonly SimilarMemory[], style: TextStyle): string[] {
  if (similar.length === 0) return [];
  return [
    '',
    `Similar memor${similar.length === 1 ? 'y' : 'ies'} already stored (possible duplicate${similar.length === 1 ? '' : 's'}):`,
    ...similar.map((s) => `- ${style.strong(oneLine(s.topic))} (ID: ${style.code(s.id)}, similarity ${fmt(s.score)})`),
    `If one of them is the same lesson, keep one memory: update it with update_memory (id, and the fields to change) ` +
      `and forget ${style.code(id)}, or merge the two (${style.code(`ltm merge ${id} <id>`)}). Both keep their previous text in archives/.`,
  ];
}

// --- update / merge ------------------------------------------------------------

export function updateResponse(result: UpdateResult) {
  const m = result.memory;
  return {
    success: true,
    id: m.id,
    message: result.changed.length === 0 ? `Memory ${m.id} already says that: nothing changed` : `Memory ${m.id} updated (${result.changed.join(', ')})`,
    changed: result.changed,
    topic: m.topic,
    tags: m.tags,
    summary: m.summary,
    phase: m.phase,
    archived_versions: result.versions,
    redacted: result.redactions,
  };
}

export function updateText(result: UpdateResult, style: TextStyle = MARKDOWN): string {
  const m = result.memory;
  if (result.changed.length === 0) return `${style.strong(oneLine(m.topic))} (ID: ${style.code(m.id)}) already says that: nothing changed.`;
  const lines = [`Updated ${style.strong(oneLine(m.topic))} (ID: ${style.code(m.id)}): ${result.changed.join(', ')}.`];
  lines.push(`The previous text is archived as ${result.versions.map((v) => style.code(v)).join(' and ')} (restorable).`);
  if (result.redactions.length > 0) lines.push(`Secrets were removed before saving: ${describeRedactions(result.redactions)}.`);
  return lines.join('\n');
}

export function mergeResponse(result: MergeResult) {
  return {
    success: true,
    id: result.target.id,
    message: `Memory ${result.source.id} merged into ${result.target.id}`,
    merged: result.source.id,
    topic: result.target.topic,
    tags: result.target.tags,
    archived_versions: result.versions,
  };
}

export function mergeText(result: MergeResult, style: TextStyle = MARKDOWN): string {
  const { source, target } = result;
  return [
    `Merged ${style.strong(oneLine(source.topic))} (${style.code(source.id)}) into ${style.strong(oneLine(target.topic))} (${style.code(target.id)}).`,
    `${style.code(source.id)} is archived (restorable); the previous text of ${style.code(target.id)} is archived as ${result.versions.map((v) => style.code(v)).join(' and ')}.`,
  ].join('\n');
}

// --- recall ------------------------------------------------------------------

export function recallResponse(items: readonly SearchResultItem[]) {
  return {
    memories: items.map((i) => ({
      id: i.id,
      topic: i.topic,
      summary: i.summary,
      priority: i.priority,
      phase: i.phase,
      tags: i.tags,
      archived: i.archived,
      score: Math.round(i.score * 1000) / 1000,
    })),
    total: items.length,
  };
}

export function recallText(query: string, items: readonly SearchResultItem[], style: TextStyle = MARKDOWN): string {
  if (items.length === 0) return `No memories match "${query}".`;
  const lines = [`Found ${items.length} memor${items.length === 1 ? 'y' : 'ies'} matching "${query}":`, ''];
  for (const i of items) {
    lines.push(`${style.strong(oneLine(i.topic))} (ID: ${style.code(i.id)})${i.archived ? ' — archived' : ''}`);
    lines.push(`Tags: ${i.tags.join(', ') || '(none)'} | Priority: ${fmt(i.priority)} | Phase: ${phaseName(i.phase)}`);
    lines.push(`Summary: ${truncatedLine(i.summary, 300)}`, '');
  }
  return lines.join('\n').trimEnd();
}

// --- list --------------------------------------------------------------------

export function listResponse(result: ListResult) {
  return {
    memories: result.memories.map((m) => ({
      id: m.id,
      topic: m.topic,
      phase: m.phase,
      priority: m.priority,
      tags: m.tags,
      created_at: m.created_at,
      accessed_at: m.accessed_at,
      usage: usageJson(m.usage),
      demotion_candidate: m.demotion_candidate,
    })),
    total: result.total,
    has_more: result.has_more,
  };
}

/** The usage counters as the responses give them (a copy: the view's object is the caller's). */
function usageJson(u: MemoryUsage) {
  return {
    injected_sessions: u.injected_sessions,
    offer_count: u.offer_count,
    recall_count: u.recall_count,
    read_count: u.read_count,
    last_used_session: u.last_used_session,
    last_used_at: u.last_used_at,
  };
}

export function listText(result: ListResult, offset = 0, style: TextStyle = MARKDOWN): string {
  if (result.total === 0) return 'No memories found.';
  const lines = [`Showing ${result.memories.length} of ${countOf(result.total, 'memory', 'memories')}:`, ''];
  for (const m of result.memories) {
    lines.push(`- ${style.strong(oneLine(m.topic))} (ID: ${style.code(m.id)})${m.demotion_candidate ? ' ⚠ demotion candidate' : ''}`);
    const used = m.phase === 3 ? '' : ` | Used: ${usageLine(m.usage)}`;
    lines.push(`  Tags: ${m.tags.join(', ') || '(none)'} | Phase: ${phaseName(m.phase)} | Priority: ${fmt(m.priority)}${used}`);
  }
  if (result.has_more) lines.push('', `More: use offset ${offset + result.memories.length}.`);
  const candidates = result.memories.filter((m) => m.demotion_candidate).length;
  if (candidates > 0) lines.push('', `⚠ ${candidates} shown ${candidates === 1 ? 'is a candidate' : 'are candidates'} for demotion: injected at many session starts, never read nor recalled. Nothing is done automatically.`);
  return lines.join('\n');
}

/** The counters in a list's line: "injected 12 sessions, read 3, recalled 5, last used session 40". */
function usageLine(u: MemoryUsage): string {
  const last = u.last_used_session > 0 || u.last_used_at ? `session ${u.last_used_session}` : 'never';
  return `injected ${u.injected_sessions} session${u.injected_sessions === 1 ? '' : 's'}, read ${u.read_count}, recalled ${u.recall_count}, last used ${last}`;
}

// --- get ---------------------------------------------------------------------

/**
 * @param stale how the memory's anchors stand (store.staleness): null when it has none.
 */
export function getResponse(m: MemoryView, stale: StaleReport | null = null) {
  return {
    id: m.id,
    topic: m.topic,
    summary: m.summary,
    content: m.content,
    tags: m.tags,
    phase: m.phase,
    priority: m.priority,
    difficulty: m.difficulty,
    access_count: m.access_count,
    created_at: m.created_at,
    accessed_at: m.accessed_at,
    created_session: m.created_session,
    last_session: m.last_session,
    keywords: m.keywords,
    anchors: m.anchors.map(describeAnchor),
    stale: stale?.stale ?? false,
    stale_reasons: stale?.reasons ?? [],
    status: statusOf(m),
    usage: usageJson(m.usage),
    demotion_candidate: m.demotion_candidate,
  };
}

export function getText(m: MemoryView, stale: StaleReport | null = null, style: TextStyle = MARKDOWN): string {
  const fields: [string, string][] = [
    ['ID', m.id],
    ...(m.status === 'proposed' ? [['Status', 'proposed: awaiting review by a person; until it is approved it is not injected into sessions, offered with prompts or returned by recall.'] as [string, string]] : []),
    ['Tags', m.tags.join(', ') || '(none)'],
    ['Phase', `${m.phase} (${phaseName(m.phase)})`],
    ['Priority', fmt(m.priority)],
    ['Difficulty', fmt(m.difficulty)],
    ['Accesses', String(m.access_count)],
    ['Created', m.created_at],
    ...(m.keywords.length > 0 ? [['Keywords', m.keywords.join(', ')] as [string, string]] : []),
    ...(m.anchors.length > 0 ? [['Anchored to', m.anchors.map(describeAnchor).join(', ')] as [string, string]] : []),
    // Facts, not orders: what changed, for Claude to weigh against the code it reads.
    ...(stale?.stale ? [['Possibly outdated', `the code it is anchored to changed since it was written (${stale.reasons.join('; ')}).`] as [string, string]] : []),
    ['Usage', `${usageText(m.usage)}${m.demotion_candidate ? ` (${demotionText(m.usage)})` : ''}`],
  ];
  // The Summary and the Content are the memory's own text: put in as they are, in either style.
  const lines = [...style.heading(oneLine(m.topic), 1), '', ...style.fields(fields), '', ...style.heading('Summary', 2), m.summary, '', ...style.heading('Content', 2), m.content];
  if (m.phase > 0) lines.push('', style.aside(`Reduced by eviction; the full text is archived (restore with ${style.code(`restore ${m.id}`)}).`));
  return lines.join('\n');
}

// --- review ------------------------------------------------------------------

/** The memories awaiting review (`ltm review`), and whether new ones are held for review. */
export function reviewResponse(memories: readonly MemoryView[], reviewOn: boolean) {
  return {
    review_new_memories: reviewOn,
    memories: memories.map((m) => ({
      id: m.id,
      topic: m.topic,
      summary: m.summary,
      tags: m.tags,
      difficulty: m.difficulty,
      created_at: m.created_at,
      created_session: m.created_session,
    })),
    total: memories.length,
  };
}

export function reviewText(memories: readonly MemoryView[], reviewOn: boolean, style: TextStyle = MARKDOWN): string {
  const setting = `Review of new memories is ${reviewOn ? 'on: memories Claude stores wait here' : 'off: memories Claude stores are used at once'}.`;
  if (memories.length === 0) return `No memories await review. ${setting}`;
  const lines = [`${memories.length} memor${memories.length === 1 ? 'y awaits' : 'ies await'} review (oldest first). ${setting}`, ''];
  for (const m of memories) {
    lines.push(`- ${style.strong(oneLine(m.topic))} (ID: ${style.code(m.id)}, created ${m.created_at.slice(0, 10) || 'at an unknown time'})`);
    lines.push(`  ${truncate(oneLine(m.summary), 300)}`);
  }
  lines.push('', 'Approve with: ltm approve <id>; reject (archived, restorable) with: ltm reject <id>; read in full with: ltm get <id>.');
  return lines.join('\n');
}

export function reviewDecisionResponse(result: ReviewResult) {
  return {
    success: true,
    id: result.id,
    decision: result.decision,
    message:
      result.decision === 'approved'
        ? `Memory ${result.id} approved; it is used from now on`
        : `Memory ${result.id} rejected; its text is kept in archives/ (reason "rejected") and can be restored`,
  };
}

export function reviewDecisionText(result: ReviewResult): string {
  return `${reviewDecisionResponse(result).message}: ${oneLine(result.topic)}`;
}

// --- forget / restore ----------------------------------------------------------

export function forgetResponse(result: ForgetResult) {
  return {
    success: true,
    message: result.purged
      ? `Memory ${result.id} and its archive were deleted for good`
      : `Memory ${result.id} was forgotten; its text is kept in archives/ and can be restored`,
    archived: result.archived,
    purged: result.purged,
  };
}

export function forgetText(result: ForgetResult): string {
  return `${forgetResponse(result).message}.`;
}

export function restoreResponse(m: MemoryView) {
  return { success: true, id: m.id, message: `Memory ${m.id} restored at phase 0`, topic: m.topic, phase: m.phase, tags: m.tags };
}

export function restoreText(m: MemoryView, style: TextStyle = MARKDOWN): string {
  return `Restored ${style.strong(oneLine(m.topic))} (ID: ${style.code(m.id)}) with its full text, at phase 0.`;
}

// --- status ------------------------------------------------------------------

export function statusResponse(s: StatusResult) {
  return {
    total_memories: s.total_memories,
    by_phase: s.by_phase,
    total_archived: s.total_archived,
    session_count: s.session_count,
    last_eviction: s.last_eviction,
    storage_size_bytes: s.storage_size_bytes,
    config: s.config,
    store_path: s.store_path,
    stale_memories: s.stale_memories,
    awaiting_review: s.awaiting_review,
    demotion_candidates: s.demotion_candidates,
  };
}

export function statusText(s: StatusResult, style: TextStyle = MARKDOWN): string {
  if (!s.exists) return `No memory store yet at ${s.store_path}.`;
  const c = s.config;
  const optional = (when: boolean, label: string, value: string): [string, string][] => (when ? [[label, value]] : []);
  return [
    ...style.heading('LTM Status', 1),
    '',
    ...style.fields([
      ['Memories', `${s.total_memories} (Full ${s.by_phase.full}, Hint ${s.by_phase.hint}, Abstract ${s.by_phase.abstract})`],
      ['Archived', String(s.total_archived)],
      ['Sessions', String(s.session_count)],
      ['Last eviction', s.last_eviction ?? 'never'],
      ['Storage', formatBytes(s.storage_size_bytes)],
      ...optional(s.awaiting_review > 0, 'Awaiting review', `${s.awaiting_review} (not used until a person approves them: ltm review)`),
      [
        'Config',
        `max ${c.max_memories} memories, load ${c.memories_to_load} per session, evict ${c.eviction_batch_size} per cycle, review new memories ${c.review_new_memories ? 'on' : 'off'}, stale memories ${c.stale_memories === 'skip' ? 'skipped' : 'labelled'}`,
      ],
      ...optional(s.stale_memories > 0, 'Possibly outdated', `${s.stale_memories} ${s.stale_memories === 1 ? 'memory whose' : 'memories whose'} anchored code changed (ltm stale lists them).`),
      ...optional(s.invalid_files > 0, 'Warning', `${countOf(s.invalid_files, 'unreadable file')} in memories/; run check.`),
      ...optional(s.demotion_candidates > 0, 'Demotion candidates', `${s.demotion_candidates} (injected at many session starts, never read nor recalled; see list --sort used)`),
      ['Store', style.code(s.store_path)],
    ]),
  ].join('\n');
}

/** A size in B, KB or MB, as `ltm status` and the status view say it. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

// --- check / fix ---------------------------------------------------------------

export function checkResponse(report: IntegrityReport) {
  return { healthy: report.healthy, problems: report.problems, counts: report.counts };
}

/** ", with 1 warning" when there are warnings. */
function warningsNote(warnings: number): string {
  return warnings > 0 ? `, with ${countOf(warnings, 'warning')}` : '';
}

export function checkText(report: IntegrityReport, style: TextStyle = MARKDOWN): string {
  const c = report.counts;
  const { error: errors, warning: warnings } = problemCounts(report.problems);
  const lines = [
    ...style.heading('LTM Integrity Check', 1),
    '',
    report.healthy
      ? warnings > 0
        ? `${style.strong('Status: Healthy')}${warningsNote(warnings)}`
        : `${style.strong('Status: Healthy')}: no integrity issues found.`
      : `${style.strong(`Status: ${countOf(errors, 'issue')} found`)}${warningsNote(warnings)}`,
    '',
    `Indexed memories: ${c.indexed_memories} | Memory files: ${c.memory_files} | Stats entries: ${c.stats_entries} | Archive files: ${c.archive_files} | Archived memories: ${c.archived_memories}`,
  ];
  const byKind = new Map<ProblemKind, string[]>();
  for (const p of report.problems) byKind.set(p.kind, [...(byKind.get(p.kind) ?? []), p.detail]);
  for (const [kind, details] of byKind) {
    lines.push('', ...style.heading(`${PROBLEM_LEVELS[kind] === 'warning' ? 'Warning: ' : ''}${PROBLEM_TITLES[kind]}`, 2), ...details.map((d) => `- ${d}`));
  }
  if (!report.healthy) lines.push('', 'Run fix to repair these issues (nothing is deleted: memories are indexed, invalid files quarantined, removed text archived first).');
  if (warnings > 0) lines.push('', 'Warnings are yours to correct in the memory files: fix leaves them as they are.');
  return lines.join('\n');
}

export function fixResponse(result: FixResult) {
  return { success: result.report.healthy, actions: result.actions, healthy: result.report.healthy, problems: result.report.problems };
}

export function fixText(result: FixResult, style: TextStyle = MARKDOWN): string {
  const lines = [...style.heading('LTM Integrity Fix', 1), ''];
  if (result.actions.length === 0) lines.push('Nothing to repair.');
  else lines.push(...result.actions.map((a) => `- ${a}`));
  const { error: errors, warning: warnings } = problemCounts(result.report.problems);
  lines.push('', `${result.report.healthy ? style.strong('The store is healthy.') : style.strong(`${countOf(errors, 'issue')} ${errors === 1 ? 'remains' : 'remain'}.`)}${warnings > 0 ? ` ${countOf(warnings, 'warning')} ${warnings === 1 ? 'is' : 'are'} left for you to correct (check lists them).` : ''}`);
  return lines.join('\n');
}

// --- evict -------------------------------------------------------------------

export function evictResponse(result: EvictionResult) {
  return result;
}

export function evictText(result: EvictionResult): string {
  if (!result.ran) return `No eviction needed: ${result.before} memories, limit ${result.max_memories}.`;
  const lines = [`Eviction cycle: ${countOf(result.steps.length, 'memory', 'memories')} advanced (${result.before} → ${result.after} in memories/, limit ${result.max_memories}).`, ''];
  for (const s of result.steps) lines.push(`- ${s.id} ${phaseName(s.from)} → ${phaseName(s.to)}: ${oneLine(s.topic)}`);
  return lines.join('\n');
}
