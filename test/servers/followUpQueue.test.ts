import { strict as assert } from 'node:assert';
import { FollowUpQueue, MAINTENANCE_PAUSE_FACTOR, type FollowUpQueueOptions } from '../../src/servers/followUpQueue';

// Real timers, short quiet times: every bound below leaves tens of milliseconds of slack for a busy machine.

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Calls noteRequest() every `everyMs` until stopped, as a burst of hooks would. */
function requests(queue: FollowUpQueue, everyMs: number): { stop: () => void } {
  queue.noteRequest();
  const timer = setInterval(() => queue.noteRequest(), everyMs);
  return { stop: () => clearInterval(timer) };
}

describe('FollowUpQueue', function () {
  this.timeout(10_000);
  let started: number;
  let log: string[];
  /** When each piece of work started, in ms since the test began. */
  let ran: Map<string, number>;
  let queues: FollowUpQueue[];

  beforeEach(() => {
    started = Date.now();
    log = [];
    ran = new Map();
    queues = [];
  });
  afterEach(async () => {
    for (const q of queues) await q.drain();
  });

  const makeQueue = (options: FollowUpQueueOptions) => {
    const queue = new FollowUpQueue({ log: (m) => log.push(m), ...options });
    queues.push(queue);
    return queue;
  };
  const record = (what: string) => async () => {
    ran.set(what, Date.now() - started);
  };
  async function until(condition: () => boolean, withinMs: number, what: string): Promise<void> {
    const deadline = Date.now() + withinMs;
    while (!condition()) {
      assert.ok(Date.now() < deadline, `${what} within ${withinMs} ms (log: ${log.join('; ')})`);
      await sleep(2);
    }
  }

  it('runs work once no request has come for the quiet time', async () => {
    const queue = makeQueue({ quietMs: 40 });
    queue.queue('write', record('write'));
    assert.equal(ran.has('write'), false, 'not while answering');
    await sleep(10);
    assert.equal(ran.has('write'), false, 'not before the quiet time');
    await until(() => ran.has('write'), 1_000, 'the work ran');
    assert.ok(ran.get('write')! >= 39, `ran after ${ran.get('write')} ms, before the quiet time`);
  });

  it('defers work while requests come, and runs it once they pause', async () => {
    const queue = makeQueue({ quietMs: 50 });
    queue.queue('write', record('write'));
    await sleep(30);
    queue.noteRequest();
    const requestAt = Date.now() - started;
    await sleep(35);
    assert.equal(ran.has('write'), false, 'the request restarted the quiet time');
    await until(() => ran.has('write'), 1_000, 'the work ran in the pause');
    assert.ok(ran.get('write')! - requestAt >= 49, `ran ${ran.get('write')! - requestAt} ms after the last request`);
  });

  it('holds work back while a request is being answered, and counts the quiet time from its answer', async () => {
    const queue = makeQueue({ quietMs: 30 });
    const answered = queue.beginRequest();
    queue.queue('write', record('write'));
    await sleep(100);
    assert.equal(ran.has('write'), false, 'a request being answered is no pause, however long it takes');
    answered();
    answered(); // twice is once
    const answeredAt = Date.now() - started;
    await until(() => ran.has('write'), 1_000, 'the work ran after the answer');
    assert.ok(ran.get('write')! - answeredAt >= 29, `ran ${ran.get('write')! - answeredAt} ms after the answer`);
    // With nothing in flight (the second call changed nothing), the next work waits the quiet time only.
    queue.queue('next', record('next'));
    await until(() => ran.has('next'), 1_000, 'the next work ran in the next pause');
  });

  it('requestsAnswered resolves at once when no request is in flight, else once the last one in flight is answered', async () => {
    const queue = makeQueue({});
    await queue.requestsAnswered();
    const first = queue.beginRequest();
    const second = queue.beginRequest();
    let resolved = false;
    const waiting = queue.requestsAnswered().then(() => (resolved = true));
    first();
    await sleep(5);
    assert.equal(resolved, false, 'one request is still being answered');
    second();
    second(); // twice is once
    await waiting;
    assert.equal(resolved, true);
    await queue.requestsAnswered();
  });

  it('runs work at its deadline while a request is never answered', async () => {
    const queue = makeQueue({ quietMs: 20, maxDeferMs: 150 });
    queue.beginRequest();
    queue.queue('write', record('write'));
    await until(() => ran.has('write'), 1_000, 'the work ran at its deadline');
    assert.ok(ran.get('write')! >= 149 && ran.get('write')! < 270, `ran at ${ran.get('write')} ms, the deadline is 150 ms`);
    assert.ok(Date.now() - queue.lastRequestAt < 5, 'a request in flight reads as one arriving now');
  });

  it('runs work at its deadline when requests never pause', async () => {
    const queue = makeQueue({ quietMs: 60, maxDeferMs: 200 });
    const burst = requests(queue, 10);
    try {
      queue.queue('write', record('write'));
      await sleep(150);
      assert.equal(ran.has('write'), false, 'not before the deadline while requests come');
      await until(() => ran.has('write'), 1_000, 'the work ran at its deadline');
      assert.ok(ran.get('write')! >= 199 && ran.get('write')! < 320, `ran at ${ran.get('write')} ms, the deadline is 200 ms`);
    } finally {
      burst.stop();
    }
  });

  it('once one entry of a kind is due, runs every entry of that kind, and only that kind', async () => {
    const queue = makeQueue({ quietMs: 60, maxDeferMs: 200, maintenanceMaxDeferMs: 5_000 });
    const burst = requests(queue, 10);
    try {
      queue.queue('first', record('first'));
      queue.queue('maintenance', record('maintenance'), { maintenance: true });
      await sleep(80);
      queue.queue('second', record('second'));
      await sleep(50);
      queue.queue('third', record('third'));
      await until(() => ran.has('first'), 1_000, 'the first entry ran at its deadline');
      await sleep(5);
      assert.ok(ran.has('second') && ran.has('third'), 'the later entries ran with the first, long before their own deadlines');
      assert.ok(Math.abs(ran.get('third')! - ran.get('first')!) <= 5, `ran at ${[...ran.entries()].map(([k, v]) => `${k} ${v}`).join(', ')}`);
      assert.equal(ran.has('maintenance'), false, 'maintenance is another kind and waits');
    } finally {
      burst.stop();
    }
  });

  it('keeps maintenance for a longer pause: short pauses run other work only', async () => {
    const quietMs = 20;
    const queue = makeQueue({ quietMs, maintenanceMaxDeferMs: 5_000 });
    queue.noteRequest();
    queue.queue('maintenance', record('maintenance'), { maintenance: true });
    // Requests every 60 ms: each gap is a pause for other work (20 ms), none for maintenance (200 ms).
    for (let i = 0; i < 8; i++) {
      queue.queue(`write ${i}`, record(`write ${i}`));
      await sleep(60);
      assert.ok(ran.has(`write ${i}`), `write ${i} ran in a short pause`);
      queue.noteRequest();
    }
    assert.equal(ran.has('maintenance'), false, 'no maintenance in short pauses');
    const lastRequest = Date.now() - started;
    await until(() => ran.has('maintenance'), 2_000, 'maintenance ran in the long pause');
    const pause = ran.get('maintenance')! - lastRequest;
    assert.ok(pause >= MAINTENANCE_PAUSE_FACTOR * quietMs - 1, `maintenance ran ${pause} ms after the last request`);
  });

  it('runs maintenance at its own deadline when requests never pause', async () => {
    const queue = makeQueue({ quietMs: 30, maxDeferMs: 100, maintenanceMaxDeferMs: 400 });
    const burst = requests(queue, 10);
    try {
      queue.queue('maintenance', record('maintenance'), { maintenance: true });
      queue.queue('write', record('write'));
      await until(() => ran.has('write'), 1_000, 'other work ran at its deadline');
      assert.equal(ran.has('maintenance'), false, 'maintenance waits longer');
      await until(() => ran.has('maintenance'), 1_000, 'maintenance ran at its deadline');
      assert.ok(ran.get('maintenance')! >= 399 && ran.get('maintenance')! < 550, `maintenance ran at ${ran.get('maintenance')} ms, its deadline is 400 ms`);
    } finally {
      burst.stop();
    }
  });

  it('runAllNow starts everything queued at once, maintenance too', async () => {
    const queue = makeQueue({ quietMs: 1_000 });
    queue.noteRequest();
    queue.queue('write', record('write'));
    queue.queue('maintenance', record('maintenance'), { maintenance: true });
    queue.runAllNow();
    assert.deepEqual([...ran.keys()], ['write', 'maintenance']);
  });

  it('drain starts queued work and waits for it, and for work already running', async () => {
    const queue = makeQueue({ quietMs: 10 });
    let slowDone = false;
    queue.queue('slow', async () => {
      await sleep(150);
      slowDone = true;
    });
    await sleep(40); // 'slow' is under way now
    let queuedDone = false;
    queue.queue('queued', async () => {
      await sleep(50);
      queuedDone = true;
    });
    await queue.drain();
    assert.equal(slowDone, true, 'drain waited for the work already running');
    assert.equal(queuedDone, true, 'drain ran the queued work and waited for it');
    await queue.drain(); // nothing left: resolves at once
  });

  it('logs the errors of work and goes on with the rest', async () => {
    const queue = makeQueue({ quietMs: 10 });
    queue.queue('rejects', async () => {
      throw new Error('disk full');
    });
    queue.queue('throws at once', () => {
      throw new Error('not even started');
    });
    queue.queue('after', record('after'));
    await until(() => ran.has('after'), 1_000, 'work queued after the failures ran');
    await queue.drain();
    assert.equal(log.length, 2, log.join('\n'));
    assert.match(log[0]!, /^rejects failed: Error: disk full/);
    assert.match(log[1]!, /^throws at once failed: Error: not even started/);
    queue.queue('later', record('later'));
    await until(() => ran.has('later'), 1_000, 'work queued later ran too');
  });
});
