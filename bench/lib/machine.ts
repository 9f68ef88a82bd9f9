/** What the numbers were measured on. */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { writeFileAtomic } from '../../src/core/files';
import { summarise } from './stats';

export interface MachineInfo {
  cpuModel: string;
  cores: number;
  totalMemoryBytes: number;
  node: string;
  os: string;
  tmpdir: string;
  tmpFilesystem: string;
  /** Median time of an fsync'd atomic write of 1 KB in the temp directory: the floor under every store write. */
  smallWriteMs: number | null;
  /**
   * Medians of two fixed pieces of single-threaded work, to compare runs of different days: integer
   * additions in a register (`cpu`), and objects made and sent through JSON (`allocation`: fresh memory,
   * collections). On 2026-12-02, while every timing of the bench ran 2–5 times slower than on
   * 2026-11-28, this kind of machine gave ~85 ms for the additions and 550–950 ms for the objects; there
   * is no figure of a faster day yet. Absent from runs before it was measured.
   */
  probeMs?: { cpu: number; allocation: number };
  /** 1-minute load average when the run started and ended: other work on the machine skews every number. */
  loadAverage: { start: number; end: number | null };
}

/**
 * Writes out what the page cache holds dirty (sync(1)) before a timed series.
 * A store's fsync commits the file system's journal, and with it whatever is
 * waiting: right after the bench's own setup (a store built, a project copied
 * three times and committed to git: ~200 MB dirty at 10,000 memories) that
 * was the setup's writes, which no user's store write waits for. Measured:
 * 300 store_memory calls at 10,000 memories with 200 MB dirty, median 6.12 and
 * 5.76 ms; after a sync, 5.20 and 5.25 ms. Nothing where there is no sync.
 */
export function settleDisk(): void {
  spawnSync('sync', { stdio: 'ignore' });
}

function readOr(file: string, fallback: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return fallback;
  }
}

function cpuModel(): string {
  const match = /^model name\s*:\s*(.+)$/m.exec(readOr('/proc/cpuinfo', ''));
  return match?.[1]?.trim() ?? os.cpus()[0]?.model ?? 'unknown';
}

function osName(): string {
  const pretty = /^PRETTY_NAME="?([^"\n]+)"?$/m.exec(readOr('/etc/os-release', ''))?.[1];
  return `${pretty ?? os.type()} (kernel ${os.release()}, ${os.arch()})`;
}

/** The filesystem type of the mount that holds `dir`, from /proc/mounts. */
function filesystemOf(dir: string): string {
  let best: { mount: string; type: string; device: string } | null = null;
  for (const line of readOr('/proc/mounts', '').split('\n')) {
    const [device, mount, type] = line.split(' ');
    if (!device || !mount || !type) continue;
    if ((dir === mount || dir.startsWith(mount.endsWith('/') ? mount : `${mount}/`)) && (!best || mount.length > best.mount.length)) {
      best = { mount, type, device };
    }
  }
  return best ? `${best.type} on ${best.device}, mounted at ${best.mount}` : 'unknown filesystem';
}

function smallWriteMs(tmpRoot: string): number | null {
  const dir = fs.mkdtempSync(path.join(tmpRoot, 'fsync-'));
  try {
    const data = 'x'.repeat(1024);
    const samples: number[] = [];
    for (let i = 0; i < 40; i++) {
      const t0 = performance.now();
      writeFileAtomic(path.join(dir, 'probe.json'), data);
      samples.push(performance.now() - t0);
    }
    return summarise(samples.slice(5)).median;
  } catch {
    return null;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** The work of the probes (probeMs): integer additions, and small objects made and sent through JSON. */
export const PROBE_ADDITIONS = 100_000_000;
export const PROBE_OBJECTS = 300_000;

function probeMs(): { cpu: number; allocation: number } {
  const cpu: number[] = [];
  const allocation: number[] = [];
  let results = 0;
  for (let run = 0; run < 5; run++) {
    let t0 = performance.now();
    results += additions();
    cpu.push(performance.now() - t0);
    t0 = performance.now();
    const objects: { id: string; n: number; tags: string[] }[] = [];
    for (let i = 0; i < PROBE_OBJECTS; i++) objects.push({ id: `mem_${i}`, n: i, tags: ['a', 'b'] });
    results += (JSON.parse(JSON.stringify(objects)) as unknown[]).length;
    allocation.push(performance.now() - t0);
  }
  // Used, so that the work is not optimised away.
  if (results < 0) throw new Error('unreachable');
  return { cpu: summarise(cpu).median, allocation: summarise(allocation).median };
}

function additions(): number {
  let sum = 0;
  for (let i = 0; i < PROBE_ADDITIONS; i++) sum += i;
  return sum;
}

export function machineInfo(tmpRoot: string): MachineInfo {
  const tmp = fs.realpathSync(os.tmpdir());
  return {
    cpuModel: cpuModel(),
    cores: os.cpus().length,
    totalMemoryBytes: os.totalmem(),
    node: process.version,
    os: osName(),
    tmpdir: tmp,
    tmpFilesystem: filesystemOf(tmp),
    smallWriteMs: smallWriteMs(tmpRoot),
    probeMs: probeMs(),
    loadAverage: { start: os.loadavg()[0]!, end: null },
  };
}

/** The probes as a person reads them. */
export function probeText(probe: { cpu: number; allocation: number }): string {
  const n = (x: number) => x.toLocaleString('en-US');
  return `${probe.cpu.toFixed(0)} ms for ${n(PROBE_ADDITIONS)} integer additions, ${probe.allocation.toFixed(0)} ms for ${n(PROBE_OBJECTS)} objects made and sent through JSON`;
}
