/**
 * index-pending.json: the mark a server leaves while index.json is behind.
 *
 * A server writes index.json after a pause between requests instead of on
 * every store (IndexWriter.deferWrites): rewriting every entry per store made
 * a write's cost grow with the store. Until it does, index.json misses the
 * server's latest changes, which is fine for the memories (the files are the
 * truth) but not for an integrity check in another process, which would
 * report them as not indexed. The mark names the server's process: a check
 * waits while that process lives (it writes within a couple of seconds), and
 * a mark left by a process that died means index.json is behind until the
 * next write or `fix` (which rewrite it whole and remove the mark).
 */
import * as fs from 'node:fs';
import { isNotFound, writeFileAtomic } from './files';
import { asProcessIdentity, currentProcess, isProcessAlive, type ProcessIdentity } from './processIdentity';
import type { StorePaths } from './storeFiles';

/** How long `waitForPendingIndex` waits by default: well past a server's longest deferral (INDEX_FLUSH_MAX_DEFER_MS). */
export const PENDING_INDEX_WAIT_MS = 5_000;
const POLL_MS = 25;

/** Marks index.json as behind this process's changes. The caller holds the lock. */
export function markIndexPending(paths: StorePaths): void {
  writeFileAtomic(paths.indexPending, `${JSON.stringify({ holder: currentProcess(), since: new Date().toISOString() })}\n`, { durable: false });
}

/** The process that marked index.json as behind, or null when there is no (readable) mark. */
export function pendingIndexHolder(paths: StorePaths): ProcessIdentity | null {
  let text: string;
  try {
    text = fs.readFileSync(paths.indexPending, 'utf8');
  } catch (error) {
    if (isNotFound(error)) return null;
    throw error;
  }
  try {
    const parsed: unknown = JSON.parse(text);
    return parsed !== null && typeof parsed === 'object' ? asProcessIdentity((parsed as { holder?: unknown }).holder) : null;
  } catch {
    // A mark cut short by a kill: its writer is gone (a live writer renames whole files).
    return null;
  }
}

/**
 * Removes the mark when it is this process's or its process is gone: after
 * index.json was written whole. A live server's mark stays, as that server
 * may hold changes made after this write and removes its mark itself.
 */
export function clearIndexPending(paths: StorePaths): void {
  if (!fs.existsSync(paths.indexPending)) return;
  const holder = pendingIndexHolder(paths);
  if (holder === null || isThisProcess(holder) || !isProcessAlive(holder)) fs.rmSync(paths.indexPending, { force: true });
}

/** Whether another live process holds changes index.json does not list yet. */
export function indexPendingElsewhere(paths: StorePaths): boolean {
  const holder = pendingIndexHolder(paths);
  return holder !== null && !isThisProcess(holder) && isProcessAlive(holder);
}

function isThisProcess(holder: ProcessIdentity): boolean {
  const here = currentProcess();
  return holder.pid === here.pid && holder.host === here.host && holder.pidNamespace === here.pidNamespace;
}

/**
 * Waits until no other live process holds changes index.json lacks, for at
 * most `timeoutMs`. Returns false when it gave up (the server is still busy).
 */
export async function waitForPendingIndex(paths: StorePaths, timeoutMs = PENDING_INDEX_WAIT_MS): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (indexPendingElsewhere(paths)) {
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  return true;
}
