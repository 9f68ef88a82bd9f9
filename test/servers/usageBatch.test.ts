import { strict as assert } from 'node:assert';
import { UsageBatch, type UsesBySession } from '../../src/servers/usageBatch';

describe('UsageBatch (uses written together)', () => {
  it('writes every use added since the last write in one write, by session and kind, and says when a batch starts', async () => {
    const writes: UsesBySession[] = [];
    const started: (() => Promise<void>)[] = [];
    const batch = new UsageBatch(
      async (uses) => {
        writes.push(uses);
      },
      (flush) => started.push(flush),
    );
    for (let i = 0; i < 60; i++) batch.add(i % 2 ? 3 : -1, 'recalled', [`mem_0000000${i % 5}`]);
    batch.add(3, 'offered', ['mem_0000000a']);
    batch.add(3, 'read', []);
    assert.equal(started.length, 1, 'the caller is told once, when the first use comes into an empty batch');
    await started[0]!();
    assert.equal(writes.length, 1, 'sixty recalls, one write');
    assert.deepEqual([...writes[0]!.keys()].sort(), [-1, 3]);
    assert.equal(writes[0]!.get(-1)!.recalled!.length, 30);
    assert.equal(writes[0]!.get(3)!.recalled!.length, 30);
    assert.deepEqual(writes[0]!.get(3)!.offered, ['mem_0000000a']);
    assert.equal(writes[0]!.get(3)!.read, undefined, 'no use, no entry');
    await batch.flush();
    assert.equal(writes.length, 1, 'nothing waiting, nothing written');
    batch.add(-1, 'recalled', ['mem_0000000b']);
    assert.equal(started.length, 2, 'the next use starts the next batch');
    await started[1]!();
    assert.deepEqual(writes[1]!.get(-1), { recalled: ['mem_0000000b'] });
  });

  it('a use added while a batch is being written goes into the next one', async () => {
    const writes: UsesBySession[] = [];
    let release: () => void = () => undefined;
    const batch = new UsageBatch(async (uses) => {
      writes.push(uses);
      await new Promise<void>((resolve) => (release = resolve));
    });
    batch.add(1, 'recalled', ['mem_00000001']);
    const writing = batch.flush();
    batch.add(1, 'recalled', ['mem_00000002']);
    release();
    await writing;
    const second = batch.flush();
    release();
    await second;
    assert.deepEqual(writes.map((w) => w.get(1)!.recalled), [['mem_00000001'], ['mem_00000002']]);
  });
});
