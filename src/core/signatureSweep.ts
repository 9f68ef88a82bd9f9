/**
 * The signatures (size, mtime, inode) of every memory file, taken on a worker
 * thread: a store opening from its record cache must stat each memory file
 * to know which records still describe their file, and at 10,000 memories
 * those ~10,000 stat calls take ~40 ms (~200 ms at 50,000) that the opening
 * thread can spend reading the record cache, stats.json and the search index
 * instead. The worker reads the directory's own signature first, so that the
 * caller can tell whether a file appeared or went away since (then it sweeps
 * again itself, see DiskMirror.refresh).
 */
import { Worker } from 'node:worker_threads';
import { signatureOf, type FileSignature } from './files';
import { firstAnswer } from './workerAnswer';

/** What the worker saw: the directory's signature before listing it, and each `.md` file's. */
export interface SweptSignatures {
  directory: FileSignature;
  /** Per file name: its signature; null when it was gone by its turn; undefined when its stat failed otherwise (stat it again). */
  files: Map<string, FileSignature | null | undefined>;
}

/**
 * The worker's code, evaluated as a CommonJS script (no file to ship or find).
 * It answers with the names joined by "/" (the one character no file name
 * holds) and a transferred Float64Array of size, mtimeMs and ino per name,
 * the directory's first; -1 marks a file gone, NaN a stat that failed.
 */
const WORKER_SOURCE = `
const { parentPort, workerData: dir } = require('node:worker_threads');
const fs = require('node:fs');
const path = require('node:path');
try {
  const directory = fs.statSync(dir);
  const names = fs.readdirSync(dir).filter((name) => name.endsWith('.md'));
  const numbers = new Float64Array(3 * (names.length + 1));
  numbers[0] = directory.size; numbers[1] = directory.mtimeMs; numbers[2] = directory.ino;
  const prefix = dir + path.sep;
  for (let i = 0; i < names.length; i++) {
    const at = 3 * (i + 1);
    try {
      const stat = fs.statSync(prefix + names[i], { throwIfNoEntry: false });
      if (stat) { numbers[at] = stat.size; numbers[at + 1] = stat.mtimeMs; numbers[at + 2] = stat.ino; }
      else numbers[at] = -1;
    } catch {
      numbers[at] = NaN;
    }
  }
  parentPort.postMessage({ names: names.join('/'), numbers }, [numbers.buffer]);
} catch {
  parentPort.postMessage(null);
}
`;

interface WorkerAnswer {
  names: string;
  numbers: Float64Array;
}

/**
 * Starts the sweep of `dir` on a worker thread. Resolves null when there is
 * nothing to use (no directory, a worker that cannot start or fails): the
 * caller then stats the files itself, as it would without a worker.
 */
export function sweepSignatures(dir: string): Promise<SweptSignatures | null> {
  let worker: Worker;
  try {
    worker = new Worker(WORKER_SOURCE, { eval: true, workerData: dir });
  } catch {
    return Promise.resolve(null);
  }
  return firstAnswer(worker, (message) => (message ? signaturesOf(message as WorkerAnswer) : null));
}

function signaturesOf({ names, numbers }: WorkerAnswer): SweptSignatures | null {
  const list = names === '' ? [] : names.split('/');
  if (numbers.length !== 3 * (list.length + 1)) return null;
  const signature = (at: number): FileSignature => signatureOf({ size: numbers[at]!, mtimeMs: numbers[at + 1]!, ino: numbers[at + 2]! });
  const files = new Map<string, FileSignature | null | undefined>();
  for (let i = 0; i < list.length; i++) {
    const at = 3 * (i + 1);
    const size = numbers[at]!;
    files.set(list[i]!, Number.isNaN(size) ? undefined : size === -1 ? null : signature(at));
  }
  return { directory: signature(0), files };
}
