/**
 * The median of several `npm run bench` runs, target by target: one run on a
 * shared machine can be off by a lot, so the committed verdicts are the
 * medians of three. Each argument is a run's output directory
 * (LTM_BENCH_OUT), holding its results.json.
 *
 *   npm run bench:medians -- /tmp/run1 /tmp/run2 /tmp/run3    (writes bench/MEDIANS.md)
 *   LTM_BENCH_MEDIANS_OUT=/tmp/m.md npm run bench:medians -- ...
 *
 * "Before" is what issue 13 measured of LTM's first version on the same kind
 * of machine (10,000 and 50,000 memories), where it measured that figure.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { PROBE_ADDITIONS, PROBE_OBJECTS, type MachineInfo } from './lib/machine';
import { renderTable, type Target } from './lib/report';

interface RunFile {
  startedAt: string;
  durationSec: number;
  machine: MachineInfo;
  sections: { id: string; targets: Target[] }[];
}

/** Issue 13's measurements of the first version, by target name. */
const BEFORE: Record<string, string> = {
  'Fresh CLI process, first recall at 10,000': '1,714 ms',
  'Serve start → first recall at 10,000': '1,653 ms',
  'Serve start → first session_start at 10,000': '662 ms',
  'Server peak RSS at 10,000': '249 MB',
  'MCP recall p99 at 10,000': '12.9 ms',
  'MCP store_memory p99 at 10,000': '28 ms',
  'Fresh CLI process, first recall at 50,000': '6,700 ms',
  'Hook session_start p99 at 50,000': '18.7 ms',
  'Eviction cycle (server) at 50,000': '1,100 ms (first cycle)',
  'Server peak RSS at 50,000': '739 MB',
};

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function fmt(value: number, unit: string): string {
  const digits = Math.abs(value) >= 100 ? 0 : Math.abs(value) >= 10 ? 1 : 2;
  return `${value.toFixed(digits)}${unit === '×' ? ' ×' : ` ${unit}`}`;
}

function main(dirs: string[]): void {
  if (dirs.length === 0) throw new Error('usage: npm run bench:medians -- <run dir> [<run dir> ...] (each holding results.json)');
  const runs = dirs.map((dir) => JSON.parse(fs.readFileSync(path.join(dir, 'results.json'), 'utf8')) as RunFile);
  const byName = new Map<string, Target[]>();
  for (const run of runs) {
    for (const section of run.sections) {
      for (const t of section.targets) {
        if (t.informational) continue;
        const list = byName.get(t.name) ?? [];
        list.push(t);
        byName.set(t.name, list);
      }
    }
  }
  const rows = [...byName].map(([name, targets]) => {
    const { unit, limit } = targets[0]!;
    const value = median(targets.map((t) => t.measured));
    return [
      name,
      BEFORE[name] ?? '–',
      targets.map((t) => fmt(t.measured, unit)).join(', '),
      `**${fmt(value, unit)}**`,
      `≤ ${fmt(limit, unit)}`,
      value <= limit ? 'PASS' : '**FAIL**',
    ];
  });
  const machine = runs[0]!.machine;
  const loads = runs.map((r) => `${r.machine.loadAverage.start.toFixed(2)} → ${r.machine.loadAverage.end?.toFixed(2) ?? '?'}`).join(', ');
  const probes = runs.map((r) => (r.machine.probeMs ? `${r.machine.probeMs.cpu.toFixed(0)} / ${r.machine.probeMs.allocation.toFixed(0)} ms` : '–')).join(', ');
  const lines = [
    '# Benchmark medians',
    '',
    `The median of ${runs.length} runs of \`npm run bench\` (${runs.map((r) => `${r.startedAt.slice(0, 16).replace('T', ' ')} UTC, ${Math.round(r.durationSec)} s`).join('; ')}), ` +
      'written by `npm run bench:medians`. Each run\'s own tables are in its RESULTS.md; bench/RESULTS.md is the last run. ' +
      '"Before" is issue 13\'s measurement of the first version where it gave one.',
    '',
    `Machine: ${machine.cpuModel}, ${machine.cores} cores, ${(machine.totalMemoryBytes / 2 ** 30).toFixed(1)} GiB, Node ${machine.node}, ${machine.os}. ` +
      `Load average (1 min) at the start and end of each run: ${loads} (the bench keeps about one core busy). ` +
      `Probes of each run (${PROBE_ADDITIONS.toLocaleString('en-US')} integer additions / ${PROBE_OBJECTS.toLocaleString('en-US')} objects made and sent through JSON, medians): ${probes}.`,
    '',
    renderTable({
      title: 'Targets',
      columns: ['Target', 'Before', 'Runs', 'Median', 'Limit', 'Result'],
      align: ['l', 'r', 'r', 'r', 'r', 'l'],
      rows,
    }),
    '',
  ];
  const out = process.env.LTM_BENCH_MEDIANS_OUT ?? path.join(__dirname, 'MEDIANS.md');
  fs.writeFileSync(out, lines.join('\n'));
  console.log(`wrote ${out}: ${rows.filter((r) => r[5] === 'PASS').length} of ${rows.length} targets met by the median`);
}

main(process.argv.slice(2));
