/**
 * A worker thread that judges one recorded holder over and over (holderState)
 * until told to stop, while the thread that started it kills and collects the
 * holder's process: the judgements interleave with the collection as a
 * sibling writer's do with a parent's. Reports whether a holder once judged
 * dead was later judged anything else.
 *
 * Message in: { holder, stop } where stop is an Int32Array on a
 * SharedArrayBuffer that the starter sets to 1 once it has collected the
 * process; the watcher stops at its next 'dead'. Messages out: 'watching'
 * once it has judged the holder once, then a WatchReport.
 */
import { parentPort } from 'node:worker_threads';
import { holderState, type ProcessIdentity } from '../../src/core/processIdentity';

export interface WatchReport {
  looks: number;
  /** Judged dead at least once. */
  sawDead: boolean;
  /** Judgements other than 'dead' after a 'dead' one, with what they were. */
  afterDead: string[];
}

parentPort?.on('message', ({ holder, stop }: { holder: ProcessIdentity; stop: Int32Array }) => {
  const report: WatchReport = { looks: 0, sawDead: false, afterDead: [] };
  for (let state = holderState(holder); ; state = holderState(holder)) {
    report.looks++;
    if (state === 'dead') report.sawDead = true;
    else if (report.sawDead) report.afterDead.push(state);
    if (report.looks === 1) parentPort!.postMessage('watching');
    // Collected by then, so dead: one more look after the stop makes sure of a last judgement
    // made after the collection, whenever this thread was given a core.
    if (state === 'dead' && Atomics.load(stop, 0) !== 0) break;
  }
  parentPort!.postMessage(report);
});
