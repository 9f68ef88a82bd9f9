/**
 * What session start injects, as one step shared by the SessionStart hook
 * and `ltm context`, so that the preview is exactly what a session gets: the
 * highest-priority memories and those found for the session's situation,
 * ranked together (situation.ts), rendered within the budget (injection.ts).
 * Counts nothing: the hook counts what it injected.
 */
import { buildInjection, type Injection } from './injection';
import { describeSituation, rankForSituation, situationQueries, type SessionSituation } from './situation';
import type { MemoryStore } from './store';

export interface SessionStartContext extends Injection {
  /** The situation the ranking took into account; null when there was none (no git, a detached HEAD). */
  situation: SessionSituation | null;
  /** Why each injected memory relates to the situation, by ID; only those that do. */
  reasons: Map<string, string[]>;
}

/**
 * @param session the number of the session starting (ranked as of it: recency counts from it)
 */
export function sessionStartContext(store: MemoryStore, options: { session: number; situation: SessionSituation | null; budgetTokens: number; toolPrefix?: string }): SessionStartContext {
  const { memories_to_load } = store.config;
  const limit = Math.max(1, memories_to_load);
  const byPriority = store.topForSession(options.session, limit);
  const { situation } = options;
  const candidates = situation ? store.candidatesFor(situationQueries(situation), options.session) : [];
  const chosen = rankForSituation(byPriority.memories, candidates, situation, limit);
  const reasons = new Map<string, string[]>();
  for (const c of chosen) if (c.reasons.length > 0) reasons.set(c.view.id, c.reasons);
  const injection = buildInjection(
    chosen.map((c) => c.view),
    byPriority.total,
    {
      limit: memories_to_load,
      budgetTokens: options.budgetTokens,
      reasons,
      outdated: new Map(chosen.map((c) => [c.view.id, store.outdated(c.view)])),
      ...(situation ? { situation: describeSituation(situation) } : {}),
      ...(options.toolPrefix ? { toolPrefix: options.toolPrefix } : {}),
    },
  );
  for (const id of reasons.keys()) if (!injection.injectedIds.includes(id)) reasons.delete(id);
  return { ...injection, situation, reasons };
}
