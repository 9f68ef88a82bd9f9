/**
 * Long work done a slice at a time, so that the thread it runs on keeps
 * answering: a server's requests between two slices, every other extension
 * of an editor's extension host.
 */
import * as fs from 'node:fs';
import { replaceWithTemp, writeTempFileFromAsync, type PieceWriter, type WriteOptions } from './files';

/** Settles after the event loop has run what was waiting (I/O, timers, requests): where a slice ends. */
export function giveWay(): Promise<void> {
  return new Promise<void>((resolve) => setImmediate(resolve));
}

/** How long a slice of work done in a pause between requests runs (runInSlices): a request that comes meanwhile waits for one. */
export const PAUSE_SLICE_MS = 10;

/** How work in slices gives way: `pause` between slices (default giveWay), a slice ending once it ran `sliceMs` (default PAUSE_SLICE_MS). */
export interface SliceOptions {
  pause?: () => Promise<void>;
  sliceMs?: number;
}

/** Thrown by runInSlices when what its steps do was overtaken by a change made between two slices. */
export class OvertakenError extends Error {
  constructor(what: string) {
    super(`${what} changed while it was being written`);
  }
}

/**
 * Runs `steps` to their end, giving way (`pause`) whenever a slice has run
 * `sliceMs`. After each pause, `unchanged` says whether what the steps read
 * is still as it was: when it is not, the rest is not run and OvertakenError
 * is thrown (naming `what`), for the caller to drop what was done.
 */
export async function runInSlices(what: string, steps: Iterator<unknown>, unchanged: () => boolean, { pause = giveWay, sliceMs = PAUSE_SLICE_MS }: SliceOptions = {}): Promise<void> {
  let sliceStart = performance.now();
  while (!steps.next().done) {
    if (performance.now() - sliceStart < sliceMs) continue;
    await pause();
    if (!unchanged()) {
      steps.return?.();
      throw new OvertakenError(what);
    }
    sliceStart = performance.now();
  }
}

/**
 * writeFileAtomicFrom, in slices (runInSlices): `steps` write the file's
 * pieces to `out`, and the file is replaced only if `unchanged` still holds
 * once they all are (true). Else, or if writing fails, the file is left as it
 * was, no temporary file remains, and false is returned.
 */
export async function writeFileAtomicInSlices(
  file: string,
  what: string,
  steps: (out: PieceWriter) => Iterator<unknown>,
  unchanged: () => boolean,
  slices: SliceOptions = {},
  options: WriteOptions = {},
): Promise<boolean> {
  try {
    const written = await writeTempFileFromAsync(file, (out) => runInSlices(what, steps(out), unchanged, slices), options);
    if (!unchanged()) {
      fs.rmSync(written.temp, { force: true });
      return false;
    }
    replaceWithTemp(written, file);
    return true;
  } catch {
    return false;
  }
}
