/**
 * What the code under test asks `fs.statSync` on this thread while `work`
 * runs: for tests that hold a cost (looks at the disk per request) to what it
 * should be, or that check which thread looks. The calls still go to the real
 * function; a worker thread's fs is its own and is not counted.
 */
// The module object itself (not a namespace copy): what the code under test calls through.
import fs from 'node:fs';

type StatSync = (...args: unknown[]) => unknown;

/** Records the path of every statSync call until the returned function is called. */
function recordStatPaths(): { paths: string[]; stop: () => void } {
  const functions = fs as { statSync: StatSync };
  const real = functions.statSync;
  const paths: string[] = [];
  functions.statSync = (...args: unknown[]) => {
    paths.push(String(args[0]));
    return real(...args);
  };
  return { paths, stop: () => (functions.statSync = real) };
}

export function statCallsDuring(work: () => unknown): number {
  const recording = recordStatPaths();
  try {
    work();
  } finally {
    recording.stop();
  }
  return recording.paths.length;
}

/** The paths statted on this thread until `work` settles. */
export async function statPathsDuring(work: () => Promise<unknown>): Promise<string[]> {
  const recording = recordStatPaths();
  try {
    await work();
  } finally {
    recording.stop();
  }
  return recording.paths;
}
