/**
 * What the store records about the use of its memories, in stats.json
 * through the stats writer (statsWriter.ts, usage.ts): a read counted,
 * accesses and uses by session, and priorities stored again. Each runs under
 * the store's lock after a refresh (MemoryStore takes it); memories no longer
 * active are skipped (a read of one is refused).
 */
import { requireActive, type StoreParts } from './storeParts';
import type { MemoryView } from './storeTypes';
import { USAGE_KINDS, type UsageKind } from './usage';

/** What recording works through. */
export type UsageParts = Pick<StoreParts, 'mirror' | 'stats'>;

/** Memory `id` as read by a caller (get): the read counted as an access and a use (`read`) in the current session. */
export function readMemory({ mirror, stats, queries }: Pick<StoreParts, 'mirror' | 'stats' | 'queries'>, id: string): MemoryView {
  requireActive(mirror, id);
  stats.recordUsage([id], mirror.state.session_count, 'read');
  stats.write();
  return queries.view(id);
}

/** Counts accesses in one write; `bySession` maps a session number (-1: the current one) to the memories accessed in it. */
export async function recordAccesses({ mirror, stats }: UsageParts, bySession: ReadonlyMap<number, readonly string[]>): Promise<void> {
  for (const [session, ids] of bySession) {
    stats.recordAccess(
      ids.filter((id) => mirror.isActive(id)),
      session < 0 ? mirror.state.session_count : session,
    );
  }
  // Session starts record their injected memories here: see updateState.
  await stats.writeAsync();
}

/** Records uses in one write; `bySession` maps a session number (-1: the current one) to what was injected, offered, recalled or read in it. */
export async function recordUses({ mirror, stats }: UsageParts, bySession: ReadonlyMap<number, Partial<Record<UsageKind, readonly string[]>>>): Promise<void> {
  for (const [session, uses] of bySession) {
    for (const kind of USAGE_KINDS) {
      const ids = uses[kind]?.filter((id) => mirror.isActive(id)) ?? [];
      if (ids.length > 0) stats.recordUsage(ids, session < 0 ? mirror.state.session_count : session, kind);
    }
  }
  await stats.writeAsync();
}

/** Recomputes and stores the priority of the given memories. */
export function storePriorities({ mirror, stats }: UsageParts, ids: readonly string[]): void {
  for (const id of ids) if (mirror.isActive(id)) stats.storePriority(id);
  stats.write();
}

/** Stores again the priorities of the memories last accessed in the given (ended) sessions. */
export function storeEndedSessionPriorities({ mirror, stats }: UsageParts, sessionNumbers: readonly number[]): void {
  const ended = new Set(sessionNumbers);
  mirror.stats.forEach((s, id) => {
    if (ended.has(s.last_session) && mirror.isActive(id)) stats.storePriority(id);
  });
  stats.write();
}

/** Active memories whose last access was in the given session. */
export function accessedInSession({ mirror }: Pick<StoreParts, 'mirror'>, sessionNumber: number): string[] {
  const ids: string[] = [];
  mirror.stats.forEach((s, id) => {
    if (s.last_session === sessionNumber && mirror.isActive(id)) ids.push(id);
  });
  return ids;
}
