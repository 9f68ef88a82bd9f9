/**
 * Who holds something (the store's lock, the project's server): a process ID
 * is not enough, because IDs are reused, so a holder is recorded with the
 * time its process started, the machine and the PID namespace it runs in.
 * A holder is dead when its process is gone, or the process now under its ID
 * started at another time, or it is a zombie.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';

export interface ProcessIdentity {
  pid: number;
  /** Opaque start time of the process (Linux: clock ticks after boot); null where the platform does not say. */
  started: string | null;
  host: string;
  /**
   * The PID namespace (Linux). Containers sharing the project folder may share
   * the host name (host networking) yet not PIDs: a holder in another
   * namespace cannot be seen from here, so it is never judged dead.
   * Null where the platform does not say.
   */
  pidNamespace: string | null;
}

/**
 * Fields of /proc/<pid>/stat. The command name (field 2) is in parentheses
 * and may itself hold spaces and parentheses, so fields are counted after the
 * last ')'. Null where there is no /proc or the process is gone.
 */
function procStat(pid: number): { state: string; started: string | null } | null {
  let stat: string;
  try {
    stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // After the command name come state (field 3) ... starttime (field 22): index 22 - 3.
  const started = fields[19];
  return { state: fields[0] ?? '', started: started && /^\d+$/.test(started) ? started : null };
}

/** Field 22 of /proc/<pid>/stat, the process's start time. */
export function processStartTime(pid: number): string | null {
  return procStat(pid)?.started ?? null;
}

function ownPidNamespace(): string | null {
  try {
    return fs.readlinkSync('/proc/self/ns/pid');
  } catch {
    return null;
  }
}

let self: ProcessIdentity | null = null;

export function currentProcess(): ProcessIdentity {
  self ??= { pid: process.pid, started: processStartTime(process.pid), host: os.hostname(), pidNamespace: ownPidNamespace() };
  return { ...self };
}

/** Whether some process on this machine has this ID (which may have been reused). */
export function pidExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Whether this process can see the holder's process: same machine, same PID namespace. */
function visibleFromHere(holder: ProcessIdentity): boolean {
  const here = currentProcess();
  return holder.host === here.host && holder.pidNamespace === here.pidNamespace;
}

/**
 * One look at the process that has an ID now: it runs (with its start time),
 * it has exited and waits for its parent to collect it (a zombie), no process
 * has the ID, or it exists but this platform says no more (no /proc, as on
 * macOS and Windows, or /proc hides other users' processes).
 *
 * /proc is read before the ID is tried, not after: tried first, a process
 * collected between the two looks would exist for the first and have no /proc
 * entry for the second, and read as alive after it had read as dead. A
 * sibling writer judging a killed lock holder at the moment its parent
 * collects it saw exactly that.
 */
type Sighting = { state: 'running'; started: string | null } | { state: 'exited' | 'gone' | 'exists' };

function sight(pid: number): Sighting {
  const stat = procStat(pid);
  if (stat !== null) {
    // A zombie (killed or exited, not yet collected by its parent) still has its
    // ID and start time but runs no more code: what it held is as dead as it is.
    // Its first thread is a zombie as soon as that thread ends, though, while
    // the others may still be finishing a system call (a killed process's
    // rename or fsync on libuv's thread pool): it has exited once they are gone.
    const exited = (stat.state === 'Z' || stat.state === 'X') && threadCount(pid) <= 1;
    return exited ? { state: 'exited' } : { state: 'running', started: stat.started };
  }
  return pidExists(pid) ? { state: 'exists' } : { state: 'gone' };
}

/** The threads /proc lists for a process; 0 once it is gone. */
function threadCount(pid: number): number {
  try {
    return fs.readdirSync(`/proc/${pid}/task`).length;
  } catch {
    return 0;
  }
}

/**
 * 'dead' and 'alive' are certain; 'unknown' (another machine or namespace, or
 * no start times, as on macOS and Windows, where a process that reused the ID
 * looks alive) leaves the judgement to something else: a lock's age, a
 * server's answer. Dead means visible from here, and no process has its ID,
 * the process with its ID started at another time, or it is a zombie. A holder
 * on another machine (a shared network folder) or in another PID namespace
 * (another container) is never declared dead here.
 */
export function holderState(holder: ProcessIdentity): 'dead' | 'alive' | 'unknown' {
  if (!visibleFromHere(holder)) return 'unknown';
  if (!Number.isInteger(holder.pid) || holder.pid <= 0) return 'dead';
  const seen = sight(holder.pid);
  if (seen.state !== 'running') return seen.state === 'exists' ? 'unknown' : 'dead';
  if (holder.started === null || seen.started === null) return 'unknown';
  return seen.started === holder.started ? 'alive' : 'dead';
}

/** False only when the holder is certainly gone (holderState 'dead'). */
export function isProcessAlive(holder: ProcessIdentity): boolean {
  return holderState(holder) !== 'dead';
}

/** Reads a ProcessIdentity out of parsed JSON, or null when it is not one. */
export function asProcessIdentity(value: unknown): ProcessIdentity | null {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return null;
  const { pid, started, host, pidNamespace = null } = value as Record<string, unknown>;
  if (typeof pid !== 'number' || !Number.isInteger(pid) || pid <= 0) return null;
  if (started !== null && typeof started !== 'string') return null;
  if (typeof host !== 'string') return null;
  if (pidNamespace !== null && typeof pidNamespace !== 'string') return null;
  return { pid, started, host, pidNamespace };
}
