/**
 * How many times the code under test calls `fs.statSync` while `work` runs:
 * for tests that hold a cost (looks at the disk per request) to what it
 * should be. The calls still go to the real function.
 */
// The module object itself (not a namespace copy): what the code under test calls through.
import fs from 'node:fs';

export function statCallsDuring(work: () => unknown): number {
  const functions = fs as { statSync: (...args: unknown[]) => unknown };
  const real = functions.statSync;
  let calls = 0;
  functions.statSync = (...args: unknown[]) => {
    calls += 1;
    return real(...args);
  };
  try {
    work();
  } finally {
    functions.statSync = real;
  }
  return calls;
}
