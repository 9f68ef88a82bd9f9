/** Timing helpers and summaries of samples (milliseconds). */

export interface Summary {
  n: number;
  min: number;
  median: number;
  mean: number;
  p99: number;
  max: number;
}

/** Nearest-rank percentile of sorted samples. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

export function summarise(samples: readonly number[]): Summary {
  const sorted = [...samples].sort((a, b) => a - b);
  const n = sorted.length;
  const mid = Math.floor(n / 2);
  const median = n === 0 ? NaN : n % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  return {
    n,
    min: sorted[0] ?? NaN,
    median,
    mean: n === 0 ? NaN : sorted.reduce((a, b) => a + b, 0) / n,
    p99: percentile(sorted, 99),
    max: sorted[n - 1] ?? NaN,
  };
}

export interface Measured<T = unknown> {
  samples: number[];
  summary: Summary;
  /** What the last call returned (for sanity checks). */
  results: T[];
}

/**
 * Calls `fn(i)` `warmup` times untimed, then `reps` times timed one by one.
 * Results are kept so callers can check the work was real.
 */
export async function measure<T>(
  reps: number,
  warmup: number,
  fn: (i: number) => T | Promise<T>,
): Promise<Measured<Awaited<T>>> {
  for (let i = 0; i < warmup; i++) await fn(i);
  const samples: number[] = [];
  const results: Awaited<T>[] = [];
  for (let i = 0; i < reps; i++) {
    const t0 = performance.now();
    const result = await fn(warmup + i);
    samples.push(performance.now() - t0);
    results.push(result);
  }
  return { samples, summary: summarise(samples), results };
}

export async function timeOnce<T>(fn: () => T | Promise<T>): Promise<{ ms: number; result: Awaited<T> }> {
  const t0 = performance.now();
  const result = await fn();
  return { ms: performance.now() - t0, result };
}

/** Runs the garbage collector when the process was started with --expose-gc. */
export function collectGarbage(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  gc?.();
}

export function memoryNow(): { rssMB: number; heapUsedMB: number } {
  const m = process.memoryUsage();
  return { rssMB: m.rss / 2 ** 20, heapUsedMB: m.heapUsed / 2 ** 20 };
}
