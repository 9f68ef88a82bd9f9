import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { MemoryStore } from '../../src/core/store';
import { REPO_ROOT, ensureCliBuilt, ltmRoot, makeTempProject, memoryFileIds, memoryKeys, readJson, removeDir, statsOnDisk } from '../support/storeKit';

const CLI = path.join(REPO_ROOT, 'dist', 'cli.js');
const WORKER = path.join(__dirname, 'concurrency.worker.ts');

interface Exit {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(command: string, args: string[]): Promise<Exit> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

function worker(args: string[]): Promise<Exit> {
  return run(process.execPath, ['--import', 'tsx', WORKER, ...args]);
}

interface Timed {
  started: number;
  ended: number;
}

/** The two workers really ran at the same time: each was busy for most of the other's run. */
function assertOverlap(a: Timed, b: Timed): void {
  const overlap = Math.min(a.ended, b.ended) - Math.max(a.started, b.started);
  const shorter = Math.min(a.ended - a.started, b.ended - b.started);
  assert.ok(overlap > shorter * 0.5, `the processes hardly overlapped (${overlap} ms of ${shorter} ms)`);
}

function lastJson<T>(exit: Exit): T {
  assert.equal(exit.code, 0, `worker failed: ${exit.stderr}`);
  const line = exit.stdout.trim().split('\n').pop()!;
  return JSON.parse(line) as T;
}

describe('concurrency: real processes sharing one store', function () {
  this.timeout(60_000);
  let project: string;
  let root: string;

  before(() => ensureCliBuilt());
  beforeEach(() => {
    project = makeTempProject('ltm-concurrency-');
    root = ltmRoot(project);
  });
  /** A folder in which the two workers meet before they start (concurrency.worker.ts, startTogether). */
  let barriers: string[] = [];
  const startBarrier = () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ltm-barrier-'));
    barriers.push(dir);
    return dir;
  };
  afterEach(() => {
    removeDir(project);
    for (const dir of barriers) removeDir(dir);
    barriers = [];
  });

  function expectHealthy(): void {
    const store = MemoryStore.open(project);
    try {
      const report = store.check();
      assert.equal(report.healthy, true, JSON.stringify(report.problems, null, 1));
    } finally {
      store.dispose();
    }
  }

  it('two processes each storing 100 memories at the same time lose nothing', async () => {
    const barrier = startBarrier();
    const [a, b] = await Promise.all([worker(['store', project, '100', 'alpha', barrier]), worker(['store', project, '100', 'bravo', barrier])]);
    const outA = lastJson<{ ids: string[] } & Timed>(a);
    const outB = lastJson<{ ids: string[] } & Timed>(b);
    assertOverlap(outA, outB);
    const idsA = outA.ids;
    const idsB = outB.ids;
    assert.equal(idsA.length, 100);
    assert.equal(idsB.length, 100);
    const all = [...idsA, ...idsB].sort();
    assert.equal(new Set(all).size, 200, 'all IDs are distinct');
    assert.deepEqual(memoryFileIds(path.join(root, 'memories')), all, '200 memory files');
    assert.deepEqual(memoryKeys(path.join(root, 'index.json')), all, 'index.json lists all 200');
    assert.deepEqual(Object.keys(statsOnDisk(root)).sort(), all, 'stats.json has all 200');
    const index = readJson<{ memories: Record<string, { topic: string }>; tag_index: Record<string, string[]> }>(path.join(root, 'index.json'));
    assert.deepEqual([...(index.tag_index.alpha ?? [])].sort(), [...idsA].sort());
    assert.deepEqual([...(index.tag_index.bravo ?? [])].sort(), [...idsB].sort());
    for (const [i, id] of idsA.entries()) assert.equal(index.memories[id]!.topic, `alpha memory ${i}`);
    expectHealthy();
    const store = MemoryStore.open(project);
    assert.equal(store.list().total, 200);
    store.dispose();
  });

  it('one process storing while another reads (counting accesses) loses no stats entry and no memory', async () => {
    const store = MemoryStore.open(project);
    const existing: string[] = [];
    for (let i = 0; i < 20; i++) existing.push((await store.store({ topic: `existing ${i}`, content: `text ${i}` })).memory.id);
    await store.get(existing[0]!); // one access before the race
    store.dispose();

    const barrier = startBarrier();
    const rounds = 8;
    const [writer, reader] = await Promise.all([
      worker(['store', project, '100', 'writer', barrier]),
      worker(['get', project, String(rounds), barrier, ...existing]),
    ]);
    const writerOut = lastJson<{ ids: string[] } & Timed>(writer);
    const readerOut = lastJson<{ reads: Record<string, number> } & Timed>(reader);
    assertOverlap(writerOut, readerOut);
    const stored = writerOut.ids;
    const reads = readerOut.reads;
    assert.equal(stored.length, 100);
    const all = [...existing, ...stored].sort();
    assert.equal(new Set(all).size, 120);
    assert.deepEqual(memoryFileIds(path.join(root, 'memories')), all);
    assert.deepEqual(memoryKeys(path.join(root, 'index.json')), all);
    const stats = statsOnDisk(root);
    assert.deepEqual(Object.keys(stats).sort(), all, 'a stats entry for every memory');
    for (const id of existing) {
      assert.equal(reads[id], rounds);
      assert.equal(stats[id]!.access_count, rounds + (id === existing[0] ? 1 : 0), `accesses of ${id} were lost`);
    }
    for (const id of stored) assert.equal(stats[id]!.access_count, 0);
    expectHealthy();
  });

  it('two processes counting injections, offers, recalls and reads of the same memories at the same time lose no count', async () => {
    const store = MemoryStore.open(project);
    const ids: string[] = [];
    try {
      for (let i = 0; i < 3; i++) ids.push((await store.store({ topic: `shared ${i}`, content: `Used by both processes, ${i}.` })).memory.id);
    } finally {
      store.dispose();
    }
    const barrier = startBarrier();
    const rounds = 12;
    // Sessions 1-12 and 101-112: every injection is in a session of its own.
    const [a, b] = await Promise.all([worker(['usage', project, String(rounds), barrier, '1', ...ids]), worker(['usage', project, String(rounds), barrier, '101', ...ids])]);
    assertOverlap(lastJson<Timed>(a), lastJson<Timed>(b));
    const stats = statsOnDisk(root) as unknown as Record<string, Record<string, number>>;
    for (const id of ids) {
      const s = stats[id]!;
      assert.deepEqual(
        [s.offer_count, s.recall_count, s.read_count, s.access_count],
        [2 * rounds, 2 * rounds, 2 * rounds, 6 * rounds],
        `counts of ${id} were lost: ${JSON.stringify(s)}`,
      );
      // Both workers' sessions interleave: an injection recorded after a higher session of the other worker is not counted again.
      assert.ok(s.injected_sessions! >= rounds && s.injected_sessions! <= 2 * rounds, `injected_sessions ${s.injected_sessions}`);
      assert.equal(s.last_injected_session, 100 + rounds);
    }
    expectHealthy();
  });

  it('two shells running `ltm store` in a loop through the real binary lose nothing', async () => {
    const loop = (label: string) =>
      run('sh', [
        '-c',
        `for i in $(seq 1 10); do "${process.execPath}" "${CLI}" store --project "${project}" --topic "${label} $i" --content "from ${label} $i" --json || exit 1; done`,
      ]);
    const [a, b] = await Promise.all([loop('left'), loop('right')]);
    for (const r of [a, b]) assert.equal(r.code, 0, r.stderr);
    // The stored memory's own ID, at the top level of each answer (the similar memories it names are nested deeper).
    const stored = /^ {2}"id": "(mem_[0-9a-f]{8})"/gm;
    const ids = [...a.stdout.matchAll(stored), ...b.stdout.matchAll(stored)].map((m) => m[1]!).sort();
    assert.equal(ids.length, 20);
    assert.equal(new Set(ids).size, 20);
    assert.deepEqual(memoryFileIds(path.join(root, 'memories')), ids);
    assert.deepEqual(memoryKeys(path.join(root, 'index.json')), ids);
    expectHealthy();
  });
});
