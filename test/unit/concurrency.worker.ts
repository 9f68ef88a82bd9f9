/**
 * A separate process for concurrency.test.ts: one long-lived MemoryStore doing
 * many operations on a store that another process uses at the same time.
 *
 *   node --import tsx concurrency.worker.ts store <project> <count> <label> <barrier>
 *   node --import tsx concurrency.worker.ts get <project> <rounds> <barrier> <id>...
 *   node --import tsx concurrency.worker.ts usage <project> <rounds> <barrier> <firstSession> <id>...
 *
 * <barrier>: a folder the test made for the run; the work starts once both
 * workers have opened the store (see startTogether).
 *
 * Prints one JSON line: the IDs stored, or how often each memory was read, and
 * when the work started and ended (to show that the two processes overlapped).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { MemoryStore } from '../../src/core/store';

/** Workers in a run: the test starts two. */
const WORKERS = 2;

/**
 * Leaves this worker's mark in `barrier` and waits until the other's is there
 * too: both start their work within milliseconds of each other, however long
 * each took to start (a fixed start time was missed by a worker that took
 * longer than it to load on a busy machine, and the two hardly overlapped).
 */
async function startTogether(barrier: string): Promise<void> {
  fs.writeFileSync(path.join(barrier, String(process.pid)), '');
  const giveUpAt = Date.now() + 30_000;
  while (fs.readdirSync(barrier).length < WORKERS) {
    if (Date.now() > giveUpAt) throw new Error(`the other worker never got ready (${barrier})`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

async function main(): Promise<void> {
  const [mode, project, ...rest] = process.argv.slice(2);
  if (!project) throw new Error('usage: concurrency.worker.ts store|get <project> ...');
  const store = MemoryStore.open(project);
  try {
    if (mode === 'store') {
      const [count, label, barrier] = rest;
      await startTogether(barrier!);
      const started = Date.now();
      const ids: string[] = [];
      for (let i = 0; i < Number(count); i++) {
        const { memory } = await store.store({
          topic: `${label} memory ${i}`,
          content: `Stored by ${label} (pid ${process.pid}), number ${i}.\n\nA second paragraph for ${label} ${i}.`,
          tags: [label!],
        });
        ids.push(memory.id);
      }
      process.stdout.write(`${JSON.stringify({ ids, started, ended: Date.now() })}\n`);
    } else if (mode === 'get') {
      const [rounds, barrier, ...ids] = rest;
      await startTogether(barrier!);
      const started = Date.now();
      const reads: Record<string, number> = {};
      for (let r = 0; r < Number(rounds); r++) {
        for (const id of ids) {
          await store.get(id);
          reads[id] = (reads[id] ?? 0) + 1;
        }
      }
      process.stdout.write(`${JSON.stringify({ reads, started, ended: Date.now() })}\n`);
    } else if (mode === 'usage') {
      // Each round: every memory injected (in a session of this worker's own), offered, recalled and read.
      const [rounds, barrier, firstSession, ...ids] = rest;
      await startTogether(barrier!);
      const started = Date.now();
      for (let r = 0; r < Number(rounds); r++) {
        await store.recordUsageBySession(new Map([[Number(firstSession) + r, { injected: ids, offered: ids }]]));
        await store.recordRecalls(ids);
        for (const id of ids) await store.get(id);
      }
      process.stdout.write(`${JSON.stringify({ started, ended: Date.now() })}\n`);
    } else {
      throw new Error(`unknown mode ${mode}`);
    }
  } finally {
    store.dispose();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exitCode = 1;
});
