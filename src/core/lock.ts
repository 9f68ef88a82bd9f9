/**
 * Serialises writers: an in-process queue for this process's own operations and
 * a lock file for every other process (other windows, the CLI, other servers).
 *
 * The lock is the file `.lock`. It holds its holder's record: process ID,
 * start time, host, PID namespace and a token naming this one holding. It is
 * hard-linked into place from a finished temporary file, so it never exists
 * without its record, whenever its creator is killed. Its holder refreshes its
 * mtime every 2 s and deletes it when done (after checking the token).
 *
 * A writer that finds the lock held judges the holder by its record:
 *  - dead (same host and PID namespace, and no process has its ID, or the one
 *    that has started at another time, or it is a zombie): abandoned at once.
 *    This is what lets the next writer in within milliseconds of a crash;
 *  - alive for certain (its ID and start time match a running process): never
 *    abandoned, however old its mtime; the writer gives up after 10 s with
 *    StoreBusyError;
 *  - anything else (no readable record, as in an older LTM's lock directory;
 *    another machine; a platform without start times, where a reused ID would
 *    look alive): abandoned after 10 s without a refresh, as before.
 *
 * Removing an abandoned lock is the dangerous step. Two writers that both saw
 * it abandoned must not both remove "the lock": the second would remove the
 * first one's new lock, and both would write. So a taker first claims the
 * takeover of that very lock by creating `.lock.takeover-<key>.<generation>.ltm-tmp`
 * exclusively, where the key names the lock it saw (its token; for a lock
 * without a record, its inode and mtime). Under the claim it looks again and
 * removes the lock only if it is still the same one and still abandoned.
 *
 * Why this never lets two live writers in: creating `.lock` is exclusive, so
 * two live holders would need a live holder's lock to be removed. Its holder
 * removes only its own. A taker removes it only while holding the claim for
 * its key, having seen under the claim that it is abandoned, and nobody else
 * can remove it between that look and the removal: its holder is gone and any
 * other taker needs the same claim. A claim cannot serve for a later lock,
 * whose token (or inode and mtime) differs. A taker killed mid-takeover leaves
 * its claim behind; the claim is judged like a lock, by its taker's record
 * (dead at once) or else by an age of 2 s, and once it is abandoned the next
 * taker claims the next generation. A generation is only created over
 * abandoned lower ones, so at most one live taker works on a lock. For
 * holders and takers on this host with start times (Linux) this needs no
 * assumption about timing; judging by age assumes, like every mtime lock,
 * that a live holder does not stall 10 s (a live taker, 2 s in the
 * milliseconds a takeover takes).
 *
 * An older LTM (a lock directory) finds the file held and waits for it as for
 * its own. It cannot remove an abandoned lock file itself; a current LTM does.
 *
 * Claims and temporary files end in `.ltm-tmp`, so the store's .gitignore
 * already covers them, and `ltm check` and `ltm fix` treat leftovers of a killed
 * process like any other temporary file. A takeover sweeps the claims of
 * locks that are gone.
 */
import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { LtmError } from './errors';
import { TEMP_SUFFIX } from './files';
import { type ProcessIdentity, asProcessIdentity, currentProcess, holderState } from './processIdentity';

/** Another process held the lock for longer than a writer waits (about 10 s). */
export class StoreBusyError extends LtmError {
  constructor(lockPath: string) {
    super('busy', `the memory store is locked by another process (${lockPath}); try again`);
    this.name = 'StoreBusyError';
  }
}

/** How long a writer waits for a live holder before StoreBusyError. */
const BUSY_AFTER_MS = 10_000;
/** A lock whose holder cannot be judged by its record is abandoned after this long without a refresh. */
const LOCK_STALE_MS = 10_000;
/** How often a holder refreshes the lock's mtime, for those who judge it by age. */
const REFRESH_MS = 2_000;
/** A takeover takes milliseconds: a claim whose taker cannot be judged is abandoned after this. */
const CLAIM_STALE_MS = 2_000;

const TOKEN = /^[0-9a-f]{16}$/;

/** What the lock file and a claim file hold. */
interface HolderRecord extends ProcessIdentity {
  /** Names this one holding or claim: the same process's next one gets another. */
  token: string;
}

function ownRecord(): HolderRecord {
  return { ...currentProcess(), token: randomBytes(8).toString('hex') };
}

function readRecord(file: string): HolderRecord | null {
  try {
    return parseRecord(fs.readFileSync(file, 'utf8'));
  } catch {
    // Missing, a directory (an older LTM's lock) or unreadable: no record.
    return null;
  }
}

function parseRecord(text: string): HolderRecord | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return null;
  }
  const identity = asProcessIdentity(parsed);
  if (!identity) return null;
  const { token } = parsed as Record<string, unknown>;
  if (typeof token !== 'string' || !TOKEN.test(token)) return null;
  return { ...identity, token };
}

type Observation = 'absent' | 'changing' | { key: string; abandoned: boolean };

/** Looks at a lock or claim: which one it is (its key) and whether its holder abandoned it. */
function observe(file: string, staleMs: number): Observation {
  const before = statOrNull(file);
  if (!before) return 'absent';
  const record = readRecord(file);
  const after = statOrNull(file);
  if (!after) return 'absent';
  // Refreshed or replaced while we read: in use, and the record may not be this file's.
  if (after.ino !== before.ino || after.mtimeMs !== before.mtimeMs) return 'changing';
  const key = record?.token ?? createHash('sha256').update(`${after.dev}:${after.ino}:${after.mtimeMs}`).digest('hex').slice(0, 16);
  const state = record ? holderState(record) : 'unknown';
  return { key, abandoned: state === 'dead' || (state === 'unknown' && Date.now() - after.mtimeMs > staleMs) };
}

function statOrNull(file: string): fs.Stats | null {
  try {
    return fs.lstatSync(file);
  } catch {
    return null;
  }
}

/** File systems that refuse hard links (FAT, some network shares) say so with one of these. */
const NO_HARD_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS']);

export class StoreLock {
  private tail: Promise<unknown> = Promise.resolve();
  private readonly claimName: RegExp;

  /**
   * @param directory the directory the lock protects (must exist while locked);
   *   the takeover claims and temporary files are made in it, next to the lock
   * @param lockPath the lock file, directly in `directory` (hard links do not cross file systems)
   */
  constructor(
    private readonly directory: string,
    private readonly lockPath: string,
  ) {
    this.claimName = new RegExp(`^${escapeRegExp(path.basename(lockPath))}\\.takeover-([0-9a-f]{16})\\.\\d+${escapeRegExp(TEMP_SUFFIX)}$`);
  }

  /** Resolves when all work queued so far has run. */
  settled(): Promise<void> {
    return this.tail.then(() => undefined);
  }

  /** Runs `work` while holding both locks; waits up to about 10 s for other processes. */
  run<T>(work: () => T | Promise<T>): Promise<T> {
    const result = this.tail.then(() => this.withFileLock(work));
    this.tail = result.catch(() => undefined);
    return result;
  }

  private async withFileLock<T>(work: () => T | Promise<T>): Promise<T> {
    const holding = await this.acquire();
    try {
      return await work();
    } finally {
      holding.release();
    }
  }

  private async acquire(): Promise<Holding> {
    const giveUpAt = Date.now() + BUSY_AFTER_MS;
    for (let attempt = 0; ; attempt++) {
      const holding = this.tryAcquire();
      if (holding) return holding;
      if (Date.now() >= giveUpAt) throw new StoreBusyError(this.lockPath);
      const delay = Math.min(50, 2 * 1.2 ** attempt) * (1 + Math.random());
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }

  /**
   * One attempt. Synchronous throughout, so that no other lock of this process
   * acts between a takeover's look under its claim and its removal.
   */
  private tryAcquire(): Holding | null {
    const record = ownRecord();
    const content = JSON.stringify(record);
    if (this.createExclusive(this.lockPath, content)) return new Holding(this.lockPath, record.token);
    const found = observe(this.lockPath, LOCK_STALE_MS);
    if (found === 'changing') return null;
    if (found !== 'absent' && !(found.abandoned && this.takeOver(found.key))) return null;
    // The lock went away, or we removed an abandoned one: one more try at once.
    return this.createExclusive(this.lockPath, content) ? new Holding(this.lockPath, record.token) : null;
  }

  /** Removes the lock `key` names if it is still there and still abandoned; true when it did. */
  private takeOver(key: string): boolean {
    for (let generation = 0; ; generation++) {
      const claim = path.join(this.directory, `${path.basename(this.lockPath)}.takeover-${key}.${generation}${TEMP_SUFFIX}`);
      if (!this.createExclusive(claim, JSON.stringify(ownRecord()))) {
        const previous = observe(claim, CLAIM_STALE_MS);
        // Gone (that takeover is over) or in a live taker's hands: look at the lock again later.
        if (previous === 'absent' || previous === 'changing' || !previous.abandoned) return false;
        // Its taker died mid-takeover: the claim passes to the next generation.
        continue;
      }
      try {
        const now = observe(this.lockPath, LOCK_STALE_MS);
        if (now === 'absent' || now === 'changing' || now.key !== key || !now.abandoned) return false;
        // `recursive` for the lock directory of an older LTM.
        fs.rmSync(this.lockPath, { recursive: true, force: true });
      } finally {
        fs.rmSync(claim, { force: true });
      }
      this.sweepClaims();
      return true;
    }
  }

  /**
   * Removes the claims of locks that are gone: lower generations of a takeover,
   * and claims left by takers killed mid-takeover.
   */
  private sweepClaims(): void {
    let names: string[];
    try {
      names = fs.readdirSync(this.directory);
    } catch {
      return;
    }
    // Listed before the lock is looked at: each listed claim was made for a lock
    // that existed before this look, so if that lock is not the current one it
    // is gone for good, and its claims can authorise nothing any more.
    const current = observe(this.lockPath, LOCK_STALE_MS);
    if (current === 'changing') return;
    for (const name of names) {
      const key = this.claimName.exec(name)?.[1];
      if (key === undefined || (current !== 'absent' && key === current.key)) continue;
      try {
        fs.rmSync(path.join(this.directory, name), { force: true });
      } catch {
        // Tidying only: a claim that stays is removed by a later takeover or `ltm fix`.
      }
    }
  }

  /**
   * Creates `file` holding `content` unless something has that name. The
   * content goes to a temporary file first, which is hard-linked into place:
   * the name never exists without its whole content, whenever this process is
   * killed (a stray temporary file at worst, which `ltm fix` removes).
   */
  private createExclusive(file: string, content: string): boolean {
    const temp = path.join(this.directory, `${path.basename(this.lockPath)}.${randomBytes(4).toString('hex')}${TEMP_SUFFIX}`);
    fs.writeFileSync(temp, content, { flag: 'wx' });
    try {
      fs.linkSync(temp, file);
      return true;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EEXIST') return false;
      if (!NO_HARD_LINKS.has(code ?? '')) throw error;
    } finally {
      try {
        fs.unlinkSync(temp);
      } catch {
        // A stray temporary file; `ltm fix` removes it. The lock is taken or not regardless.
      }
    }
    // Without hard links the file exists empty for an instant before its content:
    // its creator killed in that instant leaves a file without a record, which is
    // judged by its age like an older LTM's lock.
    try {
      fs.writeFileSync(file, content, { flag: 'wx' });
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw error;
    }
  }
}

/** This process's hold of the lock file: refreshes it, and deletes it when done. */
class Holding {
  private readonly refresher: NodeJS.Timeout;

  constructor(
    private readonly lockPath: string,
    private readonly token: string,
  ) {
    this.refresher = setInterval(() => this.refresh(), REFRESH_MS);
    this.refresher.unref();
  }

  /** Throws when the lock file cannot be read, unless it is gone: a lock left behind would bar every writer. */
  private isStillOurs(): boolean {
    let text: string;
    try {
      text = fs.readFileSync(this.lockPath, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
      throw error;
    }
    return parseRecord(text)?.token === this.token;
  }

  /** Never throws: it runs from a timer, where an exception would crash the host. */
  private refresh(): void {
    try {
      if (this.isStillOurs()) {
        const now = new Date();
        fs.utimesSync(this.lockPath, now, now);
      } else {
        // Taken over by age (by another machine or an older LTM) after this process
        // stalled for 10 s. The operation's writes are still each atomic; there is
        // nothing to keep fresh any more.
        clearInterval(this.refresher);
      }
    } catch {
      // Tried again at the next tick.
    }
  }

  release(): void {
    clearInterval(this.refresher);
    try {
      if (this.isStillOurs()) fs.rmSync(this.lockPath, { force: true });
    } catch {
      // Left in place, the lock of a live process would bar every writer until it
      // exits (Windows refuses for a moment to delete a file another program has
      // open): retry.
      setTimeout(() => this.release(), 100).unref();
    }
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
