/**
 * The situation a session starts in (the git branch, the files changed in
 * the working tree and by the last few commits) and how much a memory is
 * about it. Session start ranks by priority blended with this relevance, so a
 * memory about the file being changed, or about what the branch is named
 * for, comes first although it is not the most important overall.
 *
 * Pure: reading the situation from git is src/servers/gitSituation.ts's job;
 * here it is data, so that the ranking is tested without a repository.
 */
import { indexTerm, queryWords, stemOf, tokenize } from './analyzer';
import { truncate } from './memoryFile';
import { mentionsFile } from './promptContext';
import type { MemoryView } from './storeTypes';

export interface SessionSituation {
  /** The branch checked out (never null: a detached HEAD gives no situation at all, see gitSituation.ts). */
  branch: string;
  /** Files changed in the working tree (staged, unstaged, untracked), relative to the project, '/'-separated. */
  changedFiles: readonly string[];
  /** Files the last few commits changed that are not changed in the working tree now. */
  recentFiles: readonly string[];
}

/**
 * Words that name a kind of branch or a default branch rather than what it is
 * about: `fix/pool-timeout` is about the pool and the timeout, not about fixing.
 */
const GENERIC_BRANCH_WORDS = new Set([
  'main', 'master', 'trunk', 'develop', 'development', 'dev', 'default', 'head', 'release', 'releases', 'hotfix', 'bugfix',
  'fix', 'fixes', 'feature', 'features', 'feat', 'chore', 'refactor', 'wip', 'test', 'tests', 'tmp', 'temp', 'topic', 'branch',
  'update', 'updates', 'patch', 'change', 'changes', 'new', 'add', 'experiment', 'spike', 'draft', 'pr', 'mr', 'issue', 'issues',
]);

/** What a branch name is about: its content words, without kinds of branch and without bare numbers (ticket numbers match dates and versions). */
export function branchWords(branch: string): string[] {
  const words = queryWords(branch.replace(/[/_.-]+/g, ' '));
  return [...new Set(words)].filter((w) => !GENERIC_BRANCH_WORDS.has(w) && !/^\d+$/.test(w));
}

/**
 * The branch's words a memory holds, as written or in another form of the
 * word, in its topic, Summary, Content or tags, `importance:` tags aside
 * (they say how much a memory matters, not what it is about). Not as a
 * prefix, as a prompt's words may match: a branch named `pool` is not about
 * pooling.
 */
export function branchWordsIn(words: readonly string[], memory: Pick<MemoryView, 'topic' | 'tags' | 'summary' | 'content'>): string[] {
  const tags = memory.tags.filter((t) => !t.startsWith('importance:'));
  const stems = new Set<string>();
  for (const token of tokenize(`${memory.topic}\n${tags.join(' ')}\n${memory.summary}\n${memory.content}`)) {
    const term = indexTerm(token);
    if (term) stems.add(stemOf(term));
  }
  return words.filter((w) => stems.has(stemOf(w)));
}

/** How strongly each kind of link ties a memory to the situation (0..1). */
const CHANGED_FILE_WEIGHT = 1;
const RECENT_FILE_WEIGHT = 0.7;
/** A memory holding every word of the branch name; fewer words weigh proportionally less. */
const BRANCH_WEIGHT = 0.8;

/** How much priority and situation each count in the session-start ranking: equally. */
export const SITUATION_WEIGHT = 0.5;

export interface SituationRelevance {
  /** 0 (nothing to do with the situation) .. 1 (names a file changed in the working tree). */
  score: number;
  /** Why, for the injection and `ltm context`: "changed file src/db/pool.ts", "branch words: pool, timeout". */
  reasons: string[];
}

/** The file name of a '/'-separated path. */
function fileNameOf(file: string): string {
  return file.slice(file.lastIndexOf('/') + 1);
}

/**
 * The strongest link between a memory and the situation, and every link it has (at most one of each kind, said once).
 * `words`: the branch's words (branchWords), when the caller weighs many memories against one situation.
 */
export function situationRelevance(memory: Pick<MemoryView, 'topic' | 'tags' | 'summary' | 'content'>, situation: SessionSituation, words = branchWords(situation.branch)): SituationRelevance {
  let score = 0;
  const reasons: string[] = [];
  const changed = situation.changedFiles.find((f) => mentionsFile(memory, f, fileNameOf(f)));
  if (changed) {
    score = CHANGED_FILE_WEIGHT;
    reasons.push(`changed file ${changed}`);
  }
  const recent = changed ? undefined : situation.recentFiles.find((f) => mentionsFile(memory, f, fileNameOf(f)));
  if (recent) {
    score = Math.max(score, RECENT_FILE_WEIGHT);
    reasons.push(`recently committed file ${recent}`);
  }
  if (words.length > 0) {
    const matched = branchWordsIn(words, memory);
    if (matched.length > 0) {
      score = Math.max(score, (BRANCH_WEIGHT * matched.length) / words.length);
      reasons.push(`branch ${truncate(situation.branch, 80)} (${matched.join(', ')})`);
    }
  }
  return { score, reasons };
}

/** The score session start ranks by: priority and relevance to the situation, blended. */
export function situationScore(priority: number, relevance: number): number {
  return priority * (1 - SITUATION_WEIGHT) + relevance * SITUATION_WEIGHT;
}

export interface SituatedMemory {
  view: MemoryView;
  /** Why it relates to the situation; empty when it is there for its priority alone. */
  reasons: string[];
}

/**
 * The `limit` memories session start injects: the highest-priority ones and
 * the ones found for the situation, ranked by priority blended with
 * relevance. Memories unrelated to the situation keep their priority order;
 * ties go to the higher priority, then keep the order given.
 * @param byPriority active memories, highest priority first (at least `limit` when there are)
 * @param candidates memories found for the situation's files and branch words (any order; may repeat byPriority)
 */
export function rankForSituation(byPriority: readonly MemoryView[], candidates: readonly MemoryView[], situation: SessionSituation | null, limit: number): SituatedMemory[] {
  if (!situation) return byPriority.slice(0, limit).map((view) => ({ view, reasons: [] }));
  const seen = new Set<string>();
  const scored: { view: MemoryView; reasons: string[]; score: number }[] = [];
  const words = branchWords(situation.branch);
  for (const view of [...byPriority, ...candidates]) {
    if (seen.has(view.id)) continue;
    seen.add(view.id);
    const relevance = situationRelevance(view, situation, words);
    scored.push({ view, reasons: relevance.reasons, score: situationScore(view.priority, relevance.score) });
  }
  // A stable sort: ties keep the priority ranking's order (which has its own tie-breaks), candidates after.
  scored.sort((a, b) => b.score - a.score || b.view.priority - a.view.priority);
  return scored.slice(0, limit).map(({ view, reasons }) => ({ view, reasons }));
}

/** The most files of a situation looked up in the search index: a branch rewriting 2,000 files names no one file. */
export const MAX_SITUATION_LOOKUPS = 20;

/**
 * What to look memories up with in the search index: the files' names
 * (changed ones first) and the branch's words. Each is one query; memories
 * found are then judged by situationRelevance.
 */
export function situationQueries(situation: SessionSituation): string[] {
  const files = [...situation.changedFiles, ...situation.recentFiles].slice(0, MAX_SITUATION_LOOKUPS).map(fileNameOf);
  const words = branchWords(situation.branch);
  return [...new Set(files), ...(words.length > 0 ? [words.join(' ')] : [])];
}

/** The situation in one line, for the injection's introduction and `ltm context`. */
export function describeSituation(situation: SessionSituation): string {
  const parts = [`branch ${truncate(situation.branch, 80)}`];
  if (situation.changedFiles.length > 0) parts.push(`${situation.changedFiles.length} changed file${situation.changedFiles.length === 1 ? '' : 's'}`);
  if (situation.recentFiles.length > 0) parts.push(`${situation.recentFiles.length} more in recent commits`);
  return parts.join(', ');
}
