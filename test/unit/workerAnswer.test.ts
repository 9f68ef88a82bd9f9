/** A worker thread's one answer (src/core/workerAnswer.ts), with real workers. */
import { strict as assert } from 'node:assert';
import { Worker } from 'node:worker_threads';
import { firstAnswer } from '../../src/core/workerAnswer';

const worker = (source: string) => new Worker(source, { eval: true });
const number = (message: unknown) => (typeof message === 'number' ? message : null);

describe('workerAnswer: the one answer of a worker thread', () => {
  it('is the first message as read, and the worker is stopped once it answered', async () => {
    // It would post forever: terminated after its first message, it ends.
    const w = worker("const { parentPort } = require('node:worker_threads'); parentPort.postMessage(42); setInterval(() => parentPort.postMessage(7), 5);");
    const exited = new Promise<number>((resolve) => w.once('exit', resolve));
    assert.equal(await firstAnswer(w, number), 42);
    await exited;
  });

  it('is null for a message read as none, a reader that throws, a worker that throws or one that exits without a word', async () => {
    assert.equal(await firstAnswer(worker("require('node:worker_threads').parentPort.postMessage('text')"), number), null);
    assert.equal(
      await firstAnswer(worker("require('node:worker_threads').parentPort.postMessage(1)"), () => {
        throw new Error('unreadable');
      }),
      null,
    );
    assert.equal(await firstAnswer(worker("throw new Error('broken')"), number), null);
    assert.equal(await firstAnswer(worker('process.exit(0)'), number), null);
  });
});
