/** What every benchmark section gets, and what it must provide. */
import type { SectionResult } from './report';

export interface BenchOptions {
  /** Store sizes to benchmark (LTM_BENCH_SIZES, default 1000,10000). */
  sizes: number[];
  /** Timed repetitions of each fast operation (LTM_BENCH_REPS, default 200). */
  reps: number;
  /** Untimed calls before them (LTM_BENCH_WARMUP, default 20). */
  warmup: number;
  /** Fresh-process repetitions (LTM_BENCH_PROCESS_REPS, default 10). */
  processReps: number;
  /** How the bulk of a store is built: 'store', 'files' or 'auto' (LTM_BENCH_BULK). */
  bulk: 'auto' | 'store' | 'files';
}

export interface BenchContext {
  repoRoot: string;
  /** A private temporary directory, removed when the bench ends. */
  tmpRoot: string;
  /** The built CLI, as it ships (node esbuild.mjs --production). */
  cliPath: string;
  options: BenchOptions;
  log(message: string): void;
  /** Bundles a child-process script (path relative to the repository) once; returns the bundle. */
  childScript(entry: string): string;
}

/**
 * One part of the benchmark. Sections run in order and each returns its own
 * tables, targets and raw numbers; the report writer knows nothing about them.
 */
export interface BenchSection {
  id: string;
  title: string;
  run(ctx: BenchContext): Promise<SectionResult>;
}
