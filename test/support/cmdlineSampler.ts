/**
 * Reads the command line of every process (/proc/<pid>/cmdline) in a tight
 * loop on a worker thread while something runs: how the tests show that a
 * secret (the bearer token) never appears on any command line. A marker that
 * must appear (the hook's curl) proves the sampling was not blind.
 */
import { strict as assert } from 'node:assert';
import { Worker } from 'node:worker_threads';

export interface CmdlineSampling {
  /** Sweeps over /proc/<pid>/cmdline of every process. */
  sweeps: number;
  /** Sweeps that saw a command line holding the marker: the sampling was not blind. */
  markerSweeps: number;
  /** Sweeps in which the secret was on some command line. */
  hitSweeps: number;
  /** Command lines that held the secret (the secret replaced by <SECRET>). */
  hits: string[];
}

const SAMPLER = `
const { parentPort, workerData } = require('node:worker_threads');
const fs = require('node:fs');
const stop = new Int32Array(workerData.stop);
const { secret, marker } = workerData;
let sweeps = 0, markerSweeps = 0, hitSweeps = 0;
const hits = new Set();
parentPort.postMessage('ready');
while (Atomics.load(stop, 0) === 0) {
  sweeps++;
  let seen = false, hit = false;
  for (const pid of fs.readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(pid)) continue;
    let cmdline;
    try { cmdline = fs.readFileSync('/proc/' + pid + '/cmdline', 'latin1'); } catch { continue; }
    if (cmdline.includes(marker)) seen = true;
    if (cmdline.includes(secret)) {
      hit = true;
      hits.add(pid + ': ' + cmdline.split(secret).join('<SECRET>').replace(/\\0/g, ' ').slice(0, 400));
    }
  }
  if (seen) markerSweeps++;
  if (hit) hitSweeps++;
}
parentPort.postMessage({ sweeps, markerSweeps, hitSweeps, hits: [...hits] });
`;

/** Samples every process's command line while `during` runs. */
export async function sampleCmdlines<T>(secret: string, marker: string, during: () => Promise<T>): Promise<{ result: T; sampling: CmdlineSampling }> {
  const stop = new SharedArrayBuffer(4);
  const worker = new Worker(SAMPLER, { eval: true, execArgv: [], workerData: { stop, secret, marker } });
  const messages: unknown[] = [];
  let notify: (() => void) | null = null;
  worker.on('message', (m) => {
    messages.push(m);
    notify?.();
  });
  const next = async (): Promise<unknown> => {
    while (messages.length === 0) await new Promise<void>((r) => (notify = r));
    return messages.shift();
  };
  try {
    assert.equal(await next(), 'ready');
    const result = await during();
    Atomics.store(new Int32Array(stop), 0, 1);
    return { result, sampling: (await next()) as CmdlineSampling };
  } finally {
    Atomics.store(new Int32Array(stop), 0, 1);
    await worker.terminate();
  }
}
