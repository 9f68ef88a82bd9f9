/**
 * Guards against: a process killed with -9 at a bad moment losing or corrupting
 * memories, or leaving a lock that blocks the next writer. (a) `ltm store`
 * writers killed mid-flight, and a writer killed while it holds the lock;
 * (b) `ltm serve` killed under store load, then restarted; (c) eviction
 * (`ltm evict`, and session-end maintenance in `ltm serve`) killed mid-cycle;
 * (d) `ltm serve` killed while reads append to the stats journal and compact
 * it: every answered access counted, none counted twice; (e) `ltm serve`
 * killed while index.json is behind its latest stores (written in pauses).
 * Afterwards `ltm fix` then `ltm check` must be healthy, every acknowledged
 * memory intact (Summary and Content as stored, or for a memory eviction
 * reduced, its full original text in archives/ and back through `ltm restore`),
 * and the next CLI command must not wait for a dead lock holder (< 3 s, or
 * 2.5 times an uncontended command when the machine is slower than that).
 */
import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { MemoryStore } from '../../src/core/store';
import { mcpClient, postHook, setConfig, waitFor } from '../support/serverKit';
import { ensureCliBuilt, ltmRoot } from '../support/storeKit';
import { Processes, TempDirs, exists, fileSections, ltmJsonAsync, median, nonceWord, prng, runLtm, sleep, startServe, type CliRun } from './kit';

const LOCK_HOLDER = path.join(__dirname, 'lockHolder.worker.ts');

interface Stored {
  id: string;
  topic: string;
  summary: string;
  content: string;
}

describe('adversarial: kill -9 at random moments (writers, server, eviction)', function () {
  this.timeout(150_000);
  const procs = new Processes();
  const dirs = new TempDirs();
  /** How long the next CLI command may take after a kill. */
  let limitMs = 3_000;
  /** An uncontended `ltm store` on this machine now: kills are timed around it. */
  let baseMs = 500;
  /** A moment to kill a CLI command: from its start-up to just after it would have finished. */
  const killMoment = (rand: ReturnType<typeof prng>) => rand.int(Math.round(0.4 * baseMs), Math.round(1.2 * baseMs));

  before(async () => {
    ensureCliBuilt();
    // An uncontended command on this machine as it is now: a loaded machine gets more time, a lock wait does not fit.
    const project = dirs.make('ltm-adv-kill-base-');
    const times: number[] = [];
    for (let i = 0; i < 2; i++) {
      const r = await runLtm(procs, ['store', '--project', project, '--topic', `baseline ${i}`, '--content', 'baseline']);
      assert.equal(r.status, 0, r.stderr);
      times.push(r.ms);
    }
    baseMs = Math.max(...times);
    limitMs = Math.max(3_000, Math.round(2.5 * median(times)));
    console.log(`      kills: an uncontended ltm store takes ${median(times).toFixed(0)} ms; the next command after a kill may take ${limitMs} ms`);
  });
  after(async () => {
    await procs.killAll();
    dirs.removeAll();
  });

  function storeArgs(project: string, m: Omit<Stored, 'id'>): string[] {
    return ['store', '--project', project, '--topic', m.topic, '--content', m.content, '--summary', m.summary, '--json'];
  }

  function newMemory(rand: ReturnType<typeof prng>, label: string): Omit<Stored, 'id'> {
    const word = nonceWord(rand, 10);
    return {
      topic: `${label} ${word}`,
      summary: `Summary of ${label}: ${word}.`,
      content: `First paragraph of ${label} (${word}).\n\nSecond paragraph with details ${word}.\n\nThird paragraph ${word}.`,
    };
  }

  function ackOf(r: CliRun, m: Omit<Stored, 'id'>): Stored | null {
    if (r.status !== 0) return null;
    return { ...m, id: (JSON.parse(r.stdout) as { id: string }).id };
  }

  /** `ltm fix` then `ltm check`: healthy, exit 0. */
  async function fixAndCheck(project: string): Promise<void> {
    const fix = await runLtm(procs, ['fix', '--project', project], { timeoutMs: 30_000 });
    assert.equal(fix.status, 0, `ltm fix exited ${fix.status}: ${fix.stdout}${fix.stderr}`);
    const check = await runLtm(procs, ['check', '--project', project], { timeoutMs: 30_000 });
    assert.equal(check.status, 0, `ltm check after fix exited ${check.status}:\n${check.stdout}${check.stderr}`);
    assert.match(check.stdout, /Healthy/);
  }

  /** Every acknowledged memory has exactly the stored Summary and Content, read from its file. */
  function assertIntact(project: string, acked: readonly Stored[]): number {
    let found = 0;
    for (const m of acked) {
      const file = path.join(ltmRoot(project), 'memories', `${m.id}.md`);
      assert.ok(fs.existsSync(file), `acknowledged memory ${m.id} (${m.topic}) has no file`);
      const raw = fs.readFileSync(file, 'utf8');
      const sections = fileSections(raw);
      assert.equal(sections.summary, m.summary, `${m.id}: Summary`);
      assert.equal(sections.content, m.content, `${m.id}: Content`);
      assert.ok(raw.includes(`topic: ${JSON.stringify(m.topic)}`), `${m.id}: topic`);
      found++;
    }
    return found;
  }

  /** The next writer after a kill: it must not wait long for a dead lock holder. */
  async function nextCommand(project: string, rand: ReturnType<typeof prng>, label: string): Promise<{ run: CliRun; memory: Omit<Stored, 'id'> }> {
    const memory = newMemory(rand, label);
    const run = await runLtm(procs, storeArgs(project, memory), { timeoutMs: 25_000 });
    return { run, memory };
  }

  it('(a) writers: ltm store killed at random moments, two at a time; then a writer killed while holding the lock', async () => {
    const project = dirs.make('ltm-adv-kill-cli-');
    const rand = prng('kills-cli');
    const acked: Stored[] = [];
    let kills = 0;
    let locksLeft = 0;
    const slow: string[] = [];
    const nextTimes: number[] = [];
    const first = newMemory(rand, 'first');
    acked.push(ackOf(await runLtm(procs, storeArgs(project, first)), first)!);

    for (let round = 0; round < 6 && slow.length === 0; round++) {
      const pair = [newMemory(rand, `r${round}a`), newMemory(rand, `r${round}b`)];
      const runs = await Promise.all(pair.map((m) => runLtm(procs, storeArgs(project, m), { killAfterMs: killMoment(rand) })));
      runs.forEach((r, i) => {
        if (r.signal === 'SIGKILL') kills++;
        const ack = ackOf(r, pair[i]!);
        if (ack) acked.push(ack);
        else assert.equal(r.signal, 'SIGKILL', `a writer that was not killed failed: ${r.stderr}`);
      });
      if (exists(path.join(ltmRoot(project), '.lock'))) locksLeft++;
      const next = await nextCommand(project, rand, `next${round}`);
      nextTimes.push(next.run.ms);
      assert.equal(next.run.status, 0, `the writer after round ${round}'s kills failed (${next.run.ms.toFixed(0)} ms): ${next.run.stderr}`);
      acked.push(ackOf(next.run, next.memory)!);
      if (next.run.ms > limitMs) slow.push(`round ${round}: ${next.run.ms.toFixed(0)} ms`);
    }

    // A writer killed while it certainly holds the lock (fresh, so no staleness rule can take it over).
    const holder = procs.track(spawn(process.execPath, ['--import', 'tsx', LOCK_HOLDER, project], { stdio: ['ignore', 'pipe', 'pipe'] }));
    let holderOut = '';
    holder.stdout!.on('data', (d: Buffer) => (holderOut += d.toString()));
    holder.stderr!.on('data', (d: Buffer) => (holderOut += d.toString()));
    await waitFor(() => (holderOut.includes('locked') ? true : holder.exitCode !== null ? (() => { throw new Error(holderOut); })() : null), 20_000, 'the lock holder to take the lock');
    assert.ok(exists(path.join(ltmRoot(project), '.lock')), 'the lock holder holds no .lock');
    holder.kill('SIGKILL');
    await new Promise((r) => holder.once('exit', r));
    kills++;
    const afterHolder = await nextCommand(project, rand, 'after-holder');
    nextTimes.push(afterHolder.run.ms);
    if (afterHolder.run.status === 0) acked.push(ackOf(afterHolder.run, afterHolder.memory)!);

    await fixAndCheck(project);
    const found = assertIntact(project, acked);
    console.log(
      `      kills (a): ${kills} kills, ${locksLeft} left a lock behind; ${acked.length} memories acknowledged, ${found} found intact; ` +
        `next command ${Math.min(...nextTimes).toFixed(0)}–${Math.max(...nextTimes).toFixed(0)} ms (after the killed lock holder: ${afterHolder.run.ms.toFixed(0)} ms)`,
    );
    assert.deepEqual(slow, [], `the next writer after a kill took longer than ${limitMs} ms`);
    assert.equal(afterHolder.run.status, 0, `the writer after a lock holder was killed failed after ${afterHolder.run.ms.toFixed(0)} ms: ${afterHolder.run.stderr}`);
    assert.ok(afterHolder.run.ms < limitMs, `the writer after a lock holder was killed -9 took ${afterHolder.run.ms.toFixed(0)} ms (limit ${limitMs} ms): a dead holder's lock is not taken over at once`);
  });

  it('(b) ltm serve killed -9 under store load from two MCP clients, restarted three times: nothing acknowledged is lost', async () => {
    const project = dirs.make('ltm-adv-kill-serve-');
    const rand = prng('kills-serve');
    const acked: Stored[] = [];
    const restartTimes: number[] = [];
    let kills = 0;
    for (let round = 0; round < 3; round++) {
      const started = Date.now();
      const { proc, info } = await startServe(procs, project);
      restartTimes.push(Date.now() - started);
      const clients: Client[] = [await mcpClient(info.port, info.token, 'adv-kill-a'), await mcpClient(info.port, info.token, 'adv-kill-b')];
      let dead = false;
      const load = clients.map(async (client, c) => {
        for (let i = 0; i < 200 && !dead; i++) {
          const m = newMemory(rand, `serve r${round} c${c} n${i}`);
          try {
            const res = await client.callTool({ name: 'store_memory', arguments: { topic: m.topic, content: m.content, summary: m.summary } }, undefined, { timeout: 10_000 });
            if (!res.isError) acked.push({ ...m, id: (res.structuredContent as { id: string }).id });
          } catch {
            // the server was killed mid-request: not acknowledged
          }
        }
      });
      await sleep(rand.int(300, 1_200));
      proc.child.kill('SIGKILL');
      kills++;
      await proc.exited;
      dead = true;
      await Promise.all(load);
      for (const c of clients) await c.close().catch(() => undefined);
    }
    // A last server: everything acknowledged is served, with its text.
    const started = Date.now();
    const { proc, info } = await startServe(procs, project);
    restartTimes.push(Date.now() - started);
    const client = await mcpClient(info.port, info.token, 'adv-kill-verify');
    try {
      for (const m of acked) {
        const got = await client.callTool({ name: 'get_memory', arguments: { id: m.id } });
        assert.notEqual(got.isError, true, `acknowledged ${m.id} is not served after the restarts: ${JSON.stringify(got.content)}`);
        assert.equal((got.structuredContent as { content: string }).content, m.content, `${m.id}: content`);
      }
    } finally {
      await client.close();
    }
    proc.child.kill('SIGTERM');
    await proc.exited;
    await fixAndCheck(project);
    const found = assertIntact(project, acked);
    console.log(`      kills (b): ${kills} server kills; ${acked.length} memories acknowledged, ${found} found intact; server (re)starts took ${restartTimes.join(', ')} ms`);
    assert.ok(acked.length >= 6, `the load was too light to mean anything (${acked.length} stores acknowledged)`);
    for (const [i, ms] of restartTimes.entries()) assert.ok(ms < limitMs + 2_000, `server start ${i} took ${ms} ms after a kill`);
  });

  it('(c) eviction killed mid-cycle (ltm evict, and session-end maintenance in ltm serve): every original text stays recoverable', async () => {
    const project = dirs.make('ltm-adv-kill-evict-');
    const rand = prng('kills-evict');
    const originals: Stored[] = [];
    const store = MemoryStore.open(project);
    try {
      for (let i = 0; i < 60; i++) {
        const m = newMemory(rand, `evictable ${i}`);
        const r = await store.store({ ...m, difficulty: Math.round(rand.next() * 100) / 100 });
        originals.push({ ...m, id: r.memory.id });
      }
    } finally {
      store.dispose();
    }
    setConfig(project, { max_memories: 20, eviction_batch_size: 15 });
    // How long one eviction cycle takes here (on a copy): kills are timed around it.
    const scratch = dirs.make('ltm-adv-kill-evict-timing-');
    fs.cpSync(project, scratch, { recursive: true });
    const timing = await runLtm(procs, ['evict', '--project', scratch, '--json']);
    assert.equal(timing.status, 0, timing.stderr);
    assert.equal((JSON.parse(timing.stdout) as { steps: unknown[] }).steps.length, 15, 'one cycle advances 15 memories');
    const evictMs = timing.ms;
    let kills = 0;
    let completed = 0;
    const nextTimes: number[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await runLtm(procs, ['evict', '--project', project, '--json'], { killAfterMs: rand.int(Math.round(0.5 * evictMs), Math.round(1.1 * evictMs)) });
      if (r.signal === 'SIGKILL') kills++;
      else {
        assert.equal(r.status, 0, `ltm evict failed: ${r.stderr}`);
        completed++;
      }
      const status = await runLtm(procs, ['status', '--project', project, '--json'], { timeoutMs: 25_000 });
      assert.equal(status.status, 0, status.stderr);
      nextTimes.push(status.ms);
    }
    // Session-end maintenance in a server, killed while it may be running.
    for (let round = 0; round < 2; round++) {
      const { proc, info } = await startServe(procs, project);
      for (let s = 0; s < 3; s++) {
        const session = `evict-${round}-${s}`;
        assert.equal((await postHook(info.port, info.token, 'session_start', { session_id: session, source: 'startup' }, { 'X-LTM-Wait': undefined })).status, 200);
        assert.equal((await postHook(info.port, info.token, 'session_end', { session_id: session }, { 'X-LTM-Wait': undefined })).status, 200);
      }
      await sleep(rand.int(100, 600));
      proc.child.kill('SIGKILL');
      kills++;
      await proc.exited;
      const status = await runLtm(procs, ['status', '--project', project, '--json'], { timeoutMs: 25_000 });
      assert.equal(status.status, 0, status.stderr);
      nextTimes.push(status.ms);
    }
    await fixAndCheck(project);

    const byPhase = [0, 0, 0, 0];
    const fresh = MemoryStore.open(project);
    const reducedOrArchived: Stored[] = [];
    try {
      for (const m of originals) {
        const memFile = path.join(ltmRoot(project), 'memories', `${m.id}.md`);
        const archiveFile = path.join(ltmRoot(project), 'archives', `${m.id}.md`);
        if (fs.existsSync(memFile)) {
          const view = fresh.peek(m.id);
          byPhase[view.phase]!++;
          assert.equal(fileSections(fs.readFileSync(memFile, 'utf8')).summary, m.summary, `${m.id} (phase ${view.phase}): eviction changed the Summary`);
          if (view.phase === 0) {
            assert.equal(view.content, m.content, `${m.id}: Content of a full memory`);
            continue;
          }
        } else {
          byPhase[3]!++;
          assert.ok(fresh.archivedIds().includes(m.id), `${m.id} left memories/ but is not listed as archived (not restorable)`);
        }
        assert.ok(fs.existsSync(archiveFile), `${m.id} was reduced or removed but has no archive`);
        const archived = fileSections(fs.readFileSync(archiveFile, 'utf8'));
        assert.equal(archived.content, m.content, `${m.id}: the archive does not hold the full original Content`);
        assert.equal(archived.summary, m.summary, `${m.id}: the archive's Summary`);
        reducedOrArchived.push(m);
      }
    } finally {
      fresh.dispose();
    }
    // Back through the CLI: restore brings the full text back.
    const sample = [reducedOrArchived[0], reducedOrArchived[reducedOrArchived.length - 1]].filter((m): m is Stored => m !== undefined);
    for (const m of new Set(sample)) {
      const restored = await runLtm(procs, ['restore', m.id, '--project', project]);
      assert.equal(restored.status, 0, `ltm restore ${m.id}: ${restored.stderr}`);
      const got = await ltmJsonAsync<{ content: string; summary: string; phase: number }>(procs, ['get', m.id, '--project', project]);
      assert.deepEqual([got.phase, got.content, got.summary], [0, m.content, m.summary], `${m.id} after ltm restore`);
    }
    const check = await runLtm(procs, ['check', '--project', project]);
    assert.equal(check.status, 0, `ltm check after the restores: ${check.stdout}`);
    console.log(
      `      kills (c): one eviction cycle takes ${evictMs.toFixed(0)} ms; ${kills} kills (${completed} evict runs finished); phases now full ${byPhase[0]}, hint ${byPhase[1]}, abstract ${byPhase[2]}, archived ${byPhase[3]}; ` +
        `${reducedOrArchived.length} reduced or archived, all with their original text; next command ${Math.max(...nextTimes).toFixed(0)} ms at most`,
    );
    assert.ok(reducedOrArchived.length > 0, 'no eviction happened: the test exercised nothing');
    for (const ms of nextTimes) assert.ok(ms < limitMs, `a command after an eviction was killed took ${ms.toFixed(0)} ms (limit ${limitMs} ms)`);
  });
  it('(d) ltm serve killed -9 while reads append to the stats journal and compact it: every acknowledged access counted, none twice', async () => {
    /** Reads each server answers at least before it is killed. */
    const READS_PER_ROUND = 300;
    const project = dirs.make('ltm-adv-kill-journal-');
    const rand = prng('kills-journal');
    const ids: string[] = [];
    const store = MemoryStore.open(project);
    try {
      for (let i = 0; i < 24; i++) ids.push((await store.store(newMemory(rand, `read ${i}`))).memory.id);
      await store.compactStats();
    } finally {
      store.dispose();
    }
    const statsJson = path.join(ltmRoot(project), 'stats.json');
    const journal = path.join(ltmRoot(project), 'stats.log');
    /** Reads answered (counted for certain) and reads sent (counted at most), per memory. */
    const acked = new Map<string, number>(ids.map((id) => [id, 0]));
    const sent = new Map<string, number>(ids.map((id) => [id, 0]));
    let kills = 0;
    let compactions = 0;
    for (let round = 0; round < 4; round++) {
      const { proc, info } = await startServe(procs, project);
      const clients: Client[] = [await mcpClient(info.port, info.token, 'adv-journal-a'), await mcpClient(info.port, info.token, 'adv-journal-b')];
      let dead = false;
      let lastStatsIno = fs.statSync(statsJson).ino;
      const watchCompaction = setInterval(() => {
        const ino = exists(statsJson) ? fs.statSync(statsJson).ino : lastStatsIno;
        if (ino !== lastStatsIno) compactions++;
        lastStatsIno = ino;
      }, 20);
      let answeredThisRound = 0;
      const load = clients.map(async (client) => {
        for (let i = 0; i < 2_000 && !dead; i++) {
          // A pause now and then, as people make: the server compacts the journal in one (followUpQueue.ts).
          if (i > 0 && i % 100 === 0) await sleep(400);
          const id = ids[rand.int(0, ids.length - 1)]!;
          sent.set(id, sent.get(id)! + 1);
          try {
            const res = await client.callTool({ name: 'get_memory', arguments: { id } }, undefined, { timeout: 10_000 });
            if (!res.isError) {
              acked.set(id, acked.get(id)! + 1);
              answeredThisRound++;
            }
          } catch {
            // the server was killed mid-request: counted at most
          }
        }
      });
      await sleep(rand.int(400, 1_500));
      // On a busy machine, not before the round has had its share of reads (the load below is checked).
      for (let waited = 0; answeredThisRound < READS_PER_ROUND && waited < 20_000; waited += 50) await sleep(50);
      proc.child.kill('SIGKILL');
      kills++;
      await proc.exited;
      dead = true;
      await Promise.all(load);
      clearInterval(watchCompaction);
      for (const c of clients) await c.close().catch(() => undefined);
    }
    const journalLeft = exists(journal);
    await fixAndCheck(project);
    assert.ok(!exists(journal), 'fix writes the journal into stats.json');
    const stats = (JSON.parse(fs.readFileSync(statsJson, 'utf8')) as { memories: Record<string, { access_count: number; read_count?: number }> }).memories;
    let answered = 0;
    for (const id of ids) {
      const entry = stats[id]!;
      answered += acked.get(id)!;
      assert.ok(entry.access_count >= acked.get(id)!, `${id}: ${acked.get(id)} answered reads, ${entry.access_count} counted (an acknowledged access was lost)`);
      assert.ok(entry.access_count <= sent.get(id)!, `${id}: ${sent.get(id)} reads sent, ${entry.access_count} counted (counted twice)`);
      assert.equal(entry.read_count ?? 0, entry.access_count, `${id}: every access here is a read`);
    }
    console.log(`      kills (d): ${kills} server kills; ${answered} reads answered; ${compactions} compactions seen; a journal was left for fix: ${journalLeft}`);
    assert.ok(answered >= 4 * READS_PER_ROUND, `the load was too light (${answered} reads answered)`);
    assert.ok(compactions > 0, 'no compaction happened while the servers ran: the test exercised none');
  });
  it('(e) ltm serve killed -9 while index.json is behind its stores: the memories are served, check names them, the next write lists them', async () => {
    const project = dirs.make('ltm-adv-kill-index-');
    const rand = prng('kills-index');
    // index.json exists and lists a first memory before the server starts.
    const first = await runLtm(procs, storeArgs(project, newMemory(rand, 'before the server')));
    assert.equal(first.status, 0, first.stderr);
    const { proc, info } = await startServe(procs, project);
    const client = await mcpClient(info.port, info.token, 'adv-kill-index');
    const acked: Stored[] = [];
    // A request every 10 ms: the server never pauses, so index.json stays behind until its deadline (2 s).
    let busy = true;
    const traffic = (async () => {
      while (busy) {
        await fetch(`http://127.0.0.1:${info.port}/health`, { headers: { Authorization: `Bearer ${info.token}` } }).catch(() => undefined);
        await sleep(10);
      }
    })();
    try {
      for (let i = 0; i < 3; i++) {
        const m = newMemory(rand, `behind ${i}`);
        const res = await client.callTool({ name: 'store_memory', arguments: { topic: m.topic, content: m.content, summary: m.summary } });
        assert.notEqual(res.isError, true, JSON.stringify(res.content));
        acked.push({ ...m, id: (res.structuredContent as { id: string }).id });
      }
      assert.ok(exists(path.join(ltmRoot(project), 'index-pending.json')), 'index.json should be marked as behind');
      proc.child.kill('SIGKILL');
      await proc.exited;
    } finally {
      busy = false;
      await traffic;
      await client.close().catch(() => undefined);
    }
    const indexFile = path.join(ltmRoot(project), 'index.json');
    const listed = () => (exists(indexFile) ? Object.keys((JSON.parse(fs.readFileSync(indexFile, 'utf8')) as { memories: object }).memories) : []);
    const unlisted = acked.filter((m) => !listed().includes(m.id));
    assert.ok(unlisted.length > 0, 'the kill came after index.json was written: nothing was behind');

    // The mark's process is dead: check does not wait for it, and names what index.json lacks.
    const check = await runLtm(procs, ['check', '--project', project, '--json']);
    assert.ok(check.ms < limitMs, `check took ${check.ms} ms after the kill`);
    assert.equal(check.status, 1, check.stdout + check.stderr);
    const problems = (JSON.parse(check.stdout) as { problems: { kind: string; id?: string }[] }).problems;
    for (const m of unlisted) assert.ok(problems.some((p) => p.kind === 'not_indexed' && p.id === m.id), `check does not name ${m.id}: ${check.stdout}`);
    // Every acknowledged memory is there and served.
    for (const m of acked) {
      const got = await runLtm(procs, ['get', m.id, '--project', project, '--json']);
      assert.equal(got.status, 0, got.stderr);
      assert.equal((JSON.parse(got.stdout) as { content: string }).content, m.content);
    }
    // The next write lists everything and removes the dead server's mark.
    const next = await runLtm(procs, storeArgs(project, newMemory(rand, 'after the kill')));
    assert.equal(next.status, 0, next.stderr);
    for (const m of acked) assert.ok(listed().includes(m.id), `${m.id} still not in index.json`);
    assert.equal(exists(path.join(ltmRoot(project), 'index-pending.json')), false, 'the dead server’s mark is left');
    await fixAndCheck(project);
    assertIntact(project, acked);
  });
});
