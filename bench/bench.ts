/**
 * LTM benchmark: `npm run bench` (builds dist/ as it ships, minified: a server holds its bundle's
 * source, and what users run is what is measured; then runs this with --expose-gc).
 *
 * Writes bench/RESULTS.md (tables, targets, machine; committed) and
 * bench/results.json (every sample; git-ignored, rewritten by each run).
 * Sections run in order; to add one (e.g. the hook endpoints), write a
 * `BenchSection` in bench/sections/ and list it in SECTIONS below: the report
 * writer renders whatever tables, targets and notes it returns.
 *
 * Environment (all optional, for quicker local runs):
 *   LTM_BENCH_SECTIONS=engine        only these sections (comma-separated ids)
 *   LTM_BENCH_SIZES=1000,10000       store sizes
 *   LTM_BENCH_REPS=200               timed repetitions of fast operations (hooks: 5× as many session rounds)
 *   LTM_BENCH_WARMUP=20              untimed calls before them (hooks: untimed session rounds)
 *   LTM_BENCH_PROCESS_REPS=10        fresh-process repetitions (hooks: 5× as many hook-script runs)
 *   LTM_BENCH_BULK=auto|store|files  how the bulk of a store is built (auto: store() up to 2,000 memories, files above)
 *   LTM_BENCH_OUT=bench              where RESULTS.md and results.json go
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { bundleChildScript } from './lib/child';
import type { BenchContext, BenchOptions, BenchSection } from './lib/context';
import { machineInfo, probeText } from './lib/machine';
import { printTargets, writeReport, type BenchReport, type SectionResult } from './lib/report';
import { anchorsSection } from './sections/anchors';
import { engineSection } from './sections/engine';
import { hooksSection } from './sections/hooks';
import { mcpSection } from './sections/mcp';

/** Every section, in the order they run. */
export const SECTIONS: readonly BenchSection[] = [engineSection, hooksSection, mcpSection, anchorsSection];

function intList(value: string | undefined, fallback: number[]): number[] {
  if (!value) return fallback;
  const list = value.split(',').map((s) => Number(s.trim()));
  if (list.some((n) => !Number.isInteger(n) || n <= 0)) throw new Error(`not a list of whole numbers: "${value}"`);
  return list;
}

function int(value: string | undefined, fallback: number): number {
  return intList(value, [fallback])[0]!;
}

export function optionsFromEnv(env: NodeJS.ProcessEnv = process.env): BenchOptions {
  const bulk = env.LTM_BENCH_BULK ?? 'auto';
  if (bulk !== 'auto' && bulk !== 'store' && bulk !== 'files') throw new Error(`LTM_BENCH_BULK must be auto, store or files (got "${bulk}")`);
  const options: BenchOptions = {
    sizes: intList(env.LTM_BENCH_SIZES, [1000, 10_000]),
    reps: int(env.LTM_BENCH_REPS, 200),
    warmup: int(env.LTM_BENCH_WARMUP, 20),
    processReps: int(env.LTM_BENCH_PROCESS_REPS, 10),
    bulk,
  };
  const tooSmall = options.sizes.find((s) => s < options.reps + 110);
  if (tooSmall !== undefined) throw new Error(`size ${tooSmall} is too small for ${options.reps} timed store() calls and max_memories = size − 100`);
  return options;
}

export async function runBench(sections: readonly BenchSection[] = SECTIONS): Promise<BenchReport> {
  const repoRoot = path.resolve(__dirname, '..');
  const started = new Date();
  const t0 = performance.now();
  const options = optionsFromEnv();
  const only = process.env.LTM_BENCH_SECTIONS?.split(',').map((s) => s.trim());
  const selected = only ? sections.filter((s) => only.includes(s.id)) : sections;
  const cliPath = path.join(repoRoot, 'dist', 'cli.js');
  if (!fs.existsSync(cliPath)) throw new Error(`${cliPath} is missing: run "node esbuild.mjs --production" first (npm run bench does)`);
  if (typeof (globalThis as { gc?: unknown }).gc !== 'function') {
    console.warn('warning: run with --expose-gc (npm run bench does) for meaningful memory numbers');
  }

  const tmpRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'ltm-bench-'));
  const removeTmp = () => fs.rmSync(tmpRoot, { recursive: true, force: true });
  const onSignal = () => {
    removeTmp();
    process.exit(130);
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const bundles = new Map<string, string>();
  const ctx: BenchContext = {
    repoRoot,
    tmpRoot,
    cliPath,
    options,
    log: (message) => console.log(`[${((performance.now() - t0) / 1000).toFixed(0).padStart(4)} s] ${message}`),
    childScript(entry) {
      let bundle = bundles.get(entry);
      if (!bundle) {
        bundle = bundleChildScript(repoRoot, entry, path.join(tmpRoot, 'child'));
        bundles.set(entry, bundle);
      }
      return bundle;
    },
  };

  try {
    ctx.log(`LTM bench: sections ${selected.map((s) => s.id).join(', ')}; sizes ${options.sizes.join(', ')}; ${options.reps} reps`);
    const machine = machineInfo(tmpRoot);
    ctx.log(`${machine.cpuModel}, ${machine.cores} cores, Node ${machine.node}; fsync'd 1 KB write ${machine.smallWriteMs?.toFixed(2)} ms; probes: ${machine.probeMs ? probeText(machine.probeMs) : '–'}`);
    const results: SectionResult[] = [];
    for (const section of selected) {
      ctx.log(`section: ${section.title}`);
      results.push(await section.run(ctx));
    }
    const report: BenchReport = {
      title: 'LTM benchmark results',
      startedAt: started.toISOString(),
      finishedAt: new Date().toISOString(),
      durationSec: (performance.now() - t0) / 1000,
      command: 'npm run bench',
      machine: { ...machine, loadAverage: { ...machine.loadAverage, end: os.loadavg()[0]! } },
      sections: results,
    };
    const outDir = path.resolve(repoRoot, process.env.LTM_BENCH_OUT ?? 'bench');
    const written = writeReport(report, outDir);
    printTargets(report);
    ctx.log(`wrote ${path.relative(repoRoot, written.markdown)} and ${path.relative(repoRoot, written.json)}`);
    return report;
  } finally {
    removeTmp();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

if (require.main === module) {
  runBench().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
