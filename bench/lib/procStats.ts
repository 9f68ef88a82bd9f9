/**
 * What Linux says about a process: its peak resident memory and the bytes it
 * has written. null where there is no /proc (macOS, Windows): the rows that use
 * them then say "not measured".
 */
import * as fs from 'node:fs';

/** VmHWM of /proc/<pid>/status in MB: the highest resident set size the process has had. */
export function peakRssMb(pid: number): number | null {
  try {
    const line = fs
      .readFileSync(`/proc/${pid}/status`, 'utf8')
      .split('\n')
      .find((l) => l.startsWith('VmHWM:'));
    const kb = line ? Number(/(\d+)/.exec(line)?.[1]) : NaN;
    return Number.isFinite(kb) ? kb / 1024 : null;
  } catch {
    return null;
  }
}

/**
 * `wchar` of /proc/<pid>/io: every byte the process passed to write() and
 * similar calls, to files and sockets alike, whether or not it reached the disk.
 */
export function bytesWritten(pid: number): number | null {
  try {
    const line = fs
      .readFileSync(`/proc/${pid}/io`, 'utf8')
      .split('\n')
      .find((l) => l.startsWith('wchar:'));
    const n = line ? Number(/(\d+)/.exec(line)?.[1]) : NaN;
    return Number.isFinite(n) ? n : null;
  } catch {
    return null;
  }
}
