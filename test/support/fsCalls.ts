/**
 * How many times the code under test calls one synchronous `node:fs`
 * function while `work` runs: for tests that hold a cost (stat calls per
 * request) to what it should be. The calls still go to the real function.
 */
// The module object itself (not a namespace copy): what the code under test calls through.
import fs from 'node:fs';

type SyncFunctionName = 'statSync' | 'readFileSync' | 'readdirSync';

export function fsCallsDuring(name: SyncFunctionName, work: () => unknown): number {
  const functions = fs as unknown as Record<SyncFunctionName, (...args: unknown[]) => unknown>;
  const real = functions[name];
  let calls = 0;
  functions[name] = (...args: unknown[]) => {
    calls += 1;
    return real(...args);
  };
  try {
    work();
  } finally {
    functions[name] = real;
  }
  return calls;
}
