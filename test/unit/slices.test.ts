import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { giveWay, OvertakenError, runInSlices, writeFileAtomicInSlices } from '../../src/core/slices';
import { makeTempProject, removeDir } from '../support/storeKit';

/** Steps that each take `ms` of busy time, counting how many ran and whether the generator was closed. */
function busySteps(count: number, ms: number) {
  const state = { ran: 0, closed: false };
  function* steps(): Generator<void> {
    try {
      for (let n = 0; n < count; n++) {
        const until = performance.now() + ms;
        while (performance.now() < until);
        state.ran++;
        yield;
      }
    } finally {
      state.closed = true;
    }
  }
  return { state, steps: steps() };
}

describe('slices: long work a slice at a time', () => {
  it('giveWay lets what waits on the event loop run first', async () => {
    const order: string[] = [];
    setImmediate(() => order.push('waiting'));
    await giveWay();
    order.push('after');
    assert.deepEqual(order, ['waiting', 'after']);
  });

  it('runs every step, giving way once a slice ran its time, and not in between', async () => {
    const { state, steps } = busySteps(40, 1);
    let pauses = 0;
    await runInSlices('work', steps, () => true, { sliceMs: 8, pause: async () => void pauses++ });
    assert.equal(state.ran, 40);
    // Steps of 1 ms in slices of 8 ms: a pause every eighth step or so (sooner on a busy machine).
    assert.ok(pauses >= 2 && pauses <= 20, `${pauses} pauses`);
  });

  it('other callbacks run between slices with the default pause', async () => {
    const { steps } = busySteps(10, 3);
    let ticks = 0;
    const timer = setInterval(() => ticks++, 0);
    try {
      await runInSlices('work', steps, () => true, { sliceMs: 4 });
    } finally {
      clearInterval(timer);
    }
    assert.ok(ticks >= 2, `${ticks} timer callbacks ran meanwhile`);
  });

  it('stops and closes the steps when what they read changed during a pause, naming the work', async () => {
    const { state, steps } = busySteps(20, 1);
    let version = 0;
    await assert.rejects(
      runInSlices('the record cache', steps, () => version === 0, { sliceMs: 0, pause: async () => void (state.ran === 3 && version++) }),
      (error: unknown) => error instanceof OvertakenError && /the record cache changed/.test(error.message),
    );
    assert.equal(state.ran, 3, 'no step after the change');
    assert.equal(state.closed, true, 'the generator was closed');
  });
  describe('writeFileAtomicInSlices', () => {
    let dir: string;
    beforeEach(() => (dir = makeTempProject('ltm-slices-')));
    afterEach(() => removeDir(dir));
    const pieces = (texts: string[]) =>
      function* (out: { writeText(text: string): void }): Generator<void> {
        for (const text of texts) {
          out.writeText(text);
          yield;
        }
      };

    it('replaces the file with the pieces written, giving way between them', async () => {
      const file = path.join(dir, 'cache.json');
      fs.writeFileSync(file, 'old');
      let pauses = 0;
      assert.equal(await writeFileAtomicInSlices(file, 'the cache', pieces(['[1', ',2', ']']), () => true, { sliceMs: 0, pause: async () => void pauses++ }), true);
      assert.equal(fs.readFileSync(file, 'utf8'), '[1,2]');
      assert.equal(pauses, 3);
    });

    it('leaves the file as it was, and no temporary file, when overtaken between two pieces or after the last', async () => {
      const file = path.join(dir, 'cache.json');
      fs.writeFileSync(file, 'old');
      let checks = 0;
      // Unchanged through every pause, changed when the file is about to be replaced.
      const changedAtTheEnd = () => ++checks <= 3;
      assert.equal(await writeFileAtomicInSlices(file, 'the cache', pieces(['a', 'b', 'c']), changedAtTheEnd, { sliceMs: 0, pause: async () => undefined }), false);
      assert.equal(await writeFileAtomicInSlices(file, 'the cache', pieces(['a', 'b', 'c']), () => false, { sliceMs: 0, pause: async () => undefined }), false);
      assert.equal(fs.readFileSync(file, 'utf8'), 'old');
      assert.deepEqual(fs.readdirSync(dir), ['cache.json']);
    });

    it('writes nothing where the folder is gone (false, no throw)', async () => {
      assert.equal(await writeFileAtomicInSlices(path.join(dir, 'gone', 'cache.json'), 'the cache', pieces(['x']), () => true), false);
    });
  });
});
