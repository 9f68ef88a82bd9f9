import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import lockfile from 'proper-lockfile';
import { SessionTracker, sessionKey } from '../../src/core/sessions';
import { statCallsDuring } from '../support/fsCalls';
import { readJson, useProject } from '../support/storeKit';

interface StateFile {
  session_count: number;
  sessions: Record<string, { number: number; tool_successes: number; tool_failures: number }>;
}

/** A tracker that writes only when the test calls flush(). */
const manualTracker = (store: ConstructorParameters<typeof SessionTracker>[0]) => new SessionTracker(store, () => undefined);

describe('session tracker', () => {
  const ctx = useProject('ltm-sessions-');
  const stateFile = () => path.join(ctx.root, 'state.json');

  it('numbers sessions at once and writes them with the next flush', async () => {
    const tracker = manualTracker(ctx.open());
    assert.deepEqual(await tracker.start('a', 'startup'), { number: 1, counted: true });
    assert.deepEqual(await tracker.start('b', 'startup'), { number: 2, counted: true });
    assert.deepEqual(await tracker.start('a', 'resume'), { number: 1, counted: false }, 'a known session is not counted again');
    assert.deepEqual(await tracker.start('c', 'compact'), { number: 2, counted: false }, 'a start after compaction is not a new session');
    tracker.recordToolCall('b', true);
    assert.equal(tracker.sessionNumber('b'), 2);
    assert.equal(fs.existsSync(stateFile()), false, 'nothing written before the flush');
    await tracker.flush();
    const state = readJson<StateFile>(stateFile());
    assert.equal(state.session_count, 2);
    assert.deepEqual(
      Object.entries(state.sessions).map(([id, s]) => [id, s.number]),
      [
        ['a', 1],
        ['b', 2],
        ['c', 2],
      ],
    );
    assert.equal(state.sessions.b!.tool_failures, 1);
    assert.deepEqual(await tracker.start('d', 'startup'), { number: 3, counted: true }, 'numbering goes on from the written count');
  });

  it('flush() resolves only once a write another flush already took is on disk', async () => {
    // A session start's follow-up waits for its count; the flush the quiet moment started may hold the count.
    const store = ctx.open();
    store.init();
    const tracker = manualTracker(store);
    await tracker.start('a', 'startup');
    const underWay = tracker.flush();
    await tracker.flush();
    assert.equal(readJson<StateFile>(stateFile()).session_count, 1, 'written when the second flush resolves');
    await underWay;
  });

  it('counts a session that started and ended before any flush, and starts a resumed session anew', async () => {
    const tracker = manualTracker(ctx.open());
    await tracker.start('short', 'startup');
    assert.equal(tracker.close('short').number, 1);
    assert.deepEqual(await tracker.start('short', 'resume'), { number: 2, counted: true }, 'its end is written first');
    await tracker.flush();
    const state = readJson<StateFile>(stateFile());
    assert.equal(state.session_count, 2);
    assert.equal(state.sessions.short!.number, 2);
  });

  it('loses no session when two processes count sessions at once', async () => {
    const first = manualTracker(ctx.open());
    const second = manualTracker(ctx.open());
    // Neither has seen the other's start: both give out number 1 ...
    assert.equal((await first.start('one', 'startup')).number, 1);
    assert.equal((await second.start('two', 'startup')).number, 1);
    await second.flush();
    await first.flush();
    // ... and under the lock both are counted, each with its own number.
    const state = readJson<StateFile>(stateFile());
    assert.equal(state.session_count, 2);
    assert.deepEqual([state.sessions.one!.number, state.sessions.two!.number], [2, 1]);
    assert.equal((await first.start('three', 'startup')).number, 3, 'the next start sees both');
  });

  it('keeps sessions named like prototype keys as ordinary sessions, and pollutes nothing', async () => {
    const names = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', '__defineGetter__'];
    const tracker = manualTracker(ctx.open());
    for (const [i, name] of names.entries()) {
      assert.deepEqual(await tracker.start(name, 'startup'), { number: i + 1, counted: true }, name);
      void tracker.recordToolCall(name, i % 2 === 0);
      void tracker.markCompacted(name);
    }
    await tracker.flush();
    for (const key of ['number', 'tool_successes', 'tool_failures', 'compacted', 'last_activity']) {
      assert.equal(key in Object.prototype, false, `Object.prototype.${key} was written`);
    }
    const state = JSON.parse(fs.readFileSync(stateFile(), 'utf8'), (k, v: unknown) => v) as StateFile;
    assert.equal(state.session_count, names.length);
    assert.deepEqual(Object.getOwnPropertyNames(state.sessions).sort(), [...names].sort());
    // Read back by another tracker: every session is known with its own counters.
    const again = manualTracker(ctx.open());
    for (const [i, name] of names.entries()) {
      assert.deepEqual(await again.start(name, 'resume'), { number: i + 1, counted: false }, name);
      assert.equal(again.sessionNumber(name), i + 1);
    }
    assert.equal(again.sessionNumber('valueOf'), undefined, 'an unknown name is not found on the prototype');
  });

  it('keeps a huge, odd or secret-shaped session ID by a digest: the same session, and neither the ID nor a secret on disk', async () => {
    const huge = 'x'.repeat(200_000);
    const secret = 'AKIA' + 'IOSFODNN7EXAMPLE';
    const odd = 'line\nbreak "quoted" \u0000 \ud83d\ude00';
    const tracker = manualTracker(ctx.open());
    for (const [i, id] of [huge, secret, odd].entries()) {
      assert.deepEqual(await tracker.start(id, 'startup'), { number: i + 1, counted: true });
      void tracker.recordToolCall(id, true);
    }
    await tracker.flush();
    const text = fs.readFileSync(stateFile(), 'utf8');
    assert.ok(text.length < 5_000, `state.json is ${text.length} bytes`);
    assert.ok(!text.includes(secret) && !text.includes('xxxxxxxxxx') && !text.includes('quoted'), text);
    const again = manualTracker(ctx.open());
    for (const [i, id] of [huge, secret, odd].entries()) {
      assert.equal(again.sessionNumber(id), i + 1);
      assert.equal(again.close(id).difficulty > 0, true, 'its failure was counted for it');
    }
  });

  it("keeps Claude Code's UUID session IDs and other plain IDs as they are", () => {
    for (const id of ['3f1c2a9e-8b7d-4c6e-9f0a-1b2c3d4e5f60', '3F1C2A9E-8B7D-4C6E-9F0A-1B2C3D4E5F60', 's-1', 'conc.S:2']) {
      assert.equal(sessionKey(id), id);
    }
    assert.match(sessionKey('AKIA' + 'IOSFODNN7EXAMPLE'), /^sha256-[0-9a-f]{32}$/, 'a plain ID that is a secret is not');
  });

  it('knows a session while its start is being written', async () => {
    const store = ctx.open();
    store.init();
    const tracker = manualTracker(store);
    await tracker.start('busy', 'startup');
    tracker.recordToolCall('busy', false);
    // The flush waits for the lock another process holds: its batch is in flight.
    const release = await lockfile.lock(ctx.root, { lockfilePath: store.paths.lock, realpath: false });
    const flushed = tracker.flush();
    try {
      assert.deepEqual(await tracker.start('busy', 'resume'), { number: 1, counted: false });
      assert.equal(tracker.sessionNumber('busy'), 1);
      tracker.recordToolCall('busy', true);
      // One success in flight, one failure pending: failure rate 0.5·0.5 + (2 calls / 50)·0.3.
      assert.deepEqual(tracker.close('busy'), { number: 1, difficulty: 0.262 });
    } finally {
      await release();
    }
    await flushed;
    await tracker.flush();
    const state = readJson<StateFile>(stateFile());
    assert.equal(state.session_count, 1);
    assert.deepEqual(state.sessions, {}, 'the end is written after the start');
  });

  it('looks at the store on disk once for the difficulty of a memory stored outside any known session, however many sessions there are', async () => {
    // It did once per session in state.json: at 180 sessions, ~1,400 stat calls per store_memory.
    const store = ctx.open();
    store.init();
    const tracker = manualTracker(store);
    for (let i = 0; i < 40; i++) await tracker.start(`s${i}`, 'startup');
    tracker.recordToolCall('s7', true);
    await tracker.flush();
    const oneLook = statCallsDuring(() => store.currentState);
    assert.ok(oneLook > 0, 'a look at the state checks the files');
    let difficulty = 0;
    assert.equal(statCallsDuring(() => (difficulty = tracker.difficultyFor(undefined))), oneLook);
    assert.equal(statCallsDuring(() => tracker.difficultyFor('s7')), oneLook);
    assert.ok(difficulty > 0);
  });
});
