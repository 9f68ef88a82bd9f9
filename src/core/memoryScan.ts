/**
 * memories/ listed and every memory file stat'ed on another thread: what
 * DiskMirror's first full look at memories/ does (~45 ms for 10,000 files,
 * most of it Node building a Stats object per file), done while this thread
 * starts a server and loads the record cache. A server's store starts one
 * when it is prepared (MemoryStore.prepare with `watch`), after its watcher:
 * whatever changes after the scan is reported by the watcher, and the mirror
 * uses the scan only while memories/ still has the signature the scan saw
 * (no file added, removed or renamed since). See docs/design.md.
 */
import { Worker } from 'node:worker_threads';
import type { FileSignature } from './files';

/** memories/ as one moment saw it: the directory's signature and each *.md file's. */
export interface MemoryDirScan {
  dir: FileSignature | null;
  /** By file name; a file that went away between the listing and its stat is not here. */
  files: Map<string, FileSignature>;
}

/** What the worker posts: signatures as [size, mtimeMs, ino] triples, NaN for a file gone. */
interface ScanMessage {
  dir: [number, number, number] | null;
  names: string[];
  signatures: Float64Array;
}

/**
 * The worker's code, in the same order as DiskMirror.refreshMemoryFiles: the
 * directory first, then its listing, then each file (plain JavaScript, as the
 * bundle holds no separate file to start a worker from).
 */
const SCAN_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const fs = require('node:fs');
const dirStat = fs.statSync(workerData, { throwIfNoEntry: false });
let names = [];
if (dirStat) {
  try {
    names = fs.readdirSync(workerData).filter((n) => n.endsWith('.md'));
  } catch (error) {
    if (error.code !== 'ENOENT') throw error;
  }
}
const signatures = new Float64Array(names.length * 3).fill(NaN);
const prefix = workerData + require('node:path').sep;
for (let i = 0; i < names.length; i++) {
  const s = fs.statSync(prefix + names[i], { throwIfNoEntry: false });
  if (s) signatures.set([s.size, s.mtimeMs, s.ino], i * 3);
}
parentPort.postMessage({ dir: dirStat ? [dirStat.size, dirStat.mtimeMs, dirStat.ino] : null, names, signatures }, [signatures.buffer]);
`;

/** A scan under way; `done` is null when it could not be made (the caller stats the files itself). */
export interface RunningScan {
  done: Promise<MemoryDirScan | null>;
  stop(): void;
}

export function scanMemoryDir(dir: string): RunningScan {
  let worker: Worker;
  try {
    worker = new Worker(SCAN_SOURCE, { eval: true, workerData: dir });
  } catch {
    return { done: Promise.resolve(null), stop: () => undefined };
  }
  // Never what keeps a process alive: a server stopped at once does not wait for it.
  worker.unref();
  const done = new Promise<MemoryDirScan | null>((resolve) => {
    worker.once('message', (message: ScanMessage) => {
      resolve(scanOf(message));
      void worker.terminate();
    });
    worker.once('error', () => resolve(null));
    worker.once('exit', () => resolve(null));
  });
  return { done, stop: () => void worker.terminate() };
}

function scanOf({ dir, names, signatures }: ScanMessage): MemoryDirScan {
  const files = new Map<string, FileSignature>();
  for (let i = 0; i < names.length; i++) {
    const size = signatures[i * 3]!;
    if (Number.isNaN(size)) continue;
    files.set(names[i]!, { size, mtimeMs: signatures[i * 3 + 1]!, ino: signatures[i * 3 + 2]! });
  }
  return { dir: dir ? { size: dir[0], mtimeMs: dir[1], ino: dir[2] } : null, files };
}
