/**
 * The engine: MemoryStore operations on stores of 1,000 and 10,000 memories,
 * in this process and in fresh processes (cold open, the CLI).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { MemoryStore } from '../../src/core/store';
import { MemorySearchIndex } from '../../src/core/search';
import { toJsonText } from '../../src/core/files';
import { deriveSummary, normaliseTags, renderNewMemoryFile } from '../../src/core/memoryFile';
import { DEFAULT_CONFIG } from '../../src/core/model';
import { defaultState, stateJson, storePaths } from '../../src/core/storeFiles';
import { runJobChild, runJsonChild, runNode } from '../lib/child';
import type { OpenHoldJob, OpenHoldResult } from '../child/openHold';
import CLI_FILES from '../../src/shared/cliFiles.json';
import type { BenchContext, BenchSection } from '../lib/context';
import { Corpus, TAG_POOL } from '../lib/corpus';
import { Random } from '../lib/random';
import { mb, ms, target, timingTable, type SectionResult, type Table, type Target, type TimingRow } from '../lib/report';
import { collectGarbage, measure, memoryNow, summarise, timeOnce, type Summary } from '../lib/stats';
import { settleDisk } from '../lib/machine';

const SEED = 20_240_601;
/** store() calls measured at the end of every build (after STORE_WARMUP untimed ones). */
const STORE_WARMUP = 10;
/** Stores up to this size are built with real store() calls ("auto"); larger ones from generated files. */
const STORE_BULK_MAX = 2_000;
const EVICTION_CYCLES = 20;
const FIRST_SEARCH_REPS = 5;
const RECALL_QUERIES = 60;
/** Roughly how many memories a session stores; sets the spread of created_session. */
const MEMORIES_PER_SESSION = 25;

/** One line per row: what each measurement is. */
const DESCRIBE = {
  store: 'MemoryStore.store() of a new memory: lock, write the .md file (fsync\'d), rewrite index.json (atomic rename without fsync: it can be rebuilt from the memory files), append the new stats entry to stats.log (stats.json is rewritten only when the journal is long)',
  get: 'MemoryStore.get() of a random memory: counts an access, appended to stats.log under the lock',
  list: 'MemoryStore.list() with the default filter (limit 50): every memory ranked by priority',
  listTag: 'MemoryStore.list({ tag }) cycling through common and rare tags (limit 50)',
  recall: 'MemoryStore.search(query, { limit: 10 }) on a warm index: 1-3 word queries, typos and prefixes mixed',
  recallKind: (kind: string) => `the warm recall samples whose query is of kind "${kind}"`,
  firstSearch: 'The first search after opening, without search-index.bin: builds the search index of every memory, then searches',
  firstSearchLoaded: 'The first search after opening, with search-index.bin saved by an earlier process: loads the index, checks each document against its file\'s signature, then searches',
  evict: `MemoryStore.evict() with the store over max_memories (size − 100): one cycle, batch of ${DEFAULT_CONFIG.eviction_batch_size}`,
  evictServer: 'The same cycles as a server runs them (MemoryStore.deferIndexWrites): index.json is marked as behind instead of rewritten',
  indexFlush: 'What the server then writes in a pause: MemoryStore.flushIndex() after each cycle (index.json with the cycle\'s changes)',
  openInProcess: 'MemoryStore.open() in this (warm) process, record cache (parse-cache.json) present (before each first search)',
  coldOpen: 'Fresh process: MemoryStore.open() + first list(), timed inside the child, record cache (parse-cache.json) present: each memory file is stat()ed, none is read but the page\'s',
  coldOpenNoCache: 'Same, parse-cache.json deleted first: every memory file is read and its frontmatter parsed as YAML',
  coldFlushNoCache: 'In that process, the flushCaches() that follows (as the CLI does): writes parse-cache.json anew',
  coldProcess: 'Fresh process, whole: node startup + loading the bundle + open + list, timed by the parent (cache present)',
  openHold: 'Fresh process opening the store as the extension does in its host (openAsync in slices, search index worker, serving meanwhile) until its first search: the longest time the thread was held in one go, which every other extension in the host waits at worst (caches present)',
  openHoldNoCache: 'Same, parse-cache.json and search-index.bin deleted first (a fresh clone): every memory file is read, a slice at a time, and indexed on the worker',
  openHoldAfter: 'In those processes, after the first search, what the extension does next (the memories ranked, the caches saved in slices, the first store prepared): the longest hold, which a request coming then waits for at worst (caches present: nothing to save)',
  openHoldAfterNoCache: 'Same after the fresh clone\'s opening: both caches are written, a slice at a time',
  cliStatus: '`node dist/cli.js status --project <dir>` as a whole process, timed by the parent',
  cliList: '`node dist/cli.js list --project <dir> --limit 1` as a whole process, timed by the parent',
  cliRecall: '`node dist/cli.js recall <query> --project <dir>` as a whole process: open, load the search index (search-index.bin, saved by the untimed first run), search',
  cliVersion: '`node dist/cli.js --version`: the CLI\'s startup alone (loading the bundle), no store opened',
} as const;

interface ProbeOutput {
  loadedAtMs: number;
  openMs: number;
  listMs: number;
  openListMs: number;
  flushMs: number;
  sinceStartMs: number;
  total: number;
  rss: number;
  heapUsed: number;
  /** With --held: the heap the open store holds once its search index is loaded and its caches saved (after gc). */
  heldHeapUsed?: number;
}

interface BuildInfo {
  method: 'store' | 'files';
  reason: string;
  bulkCount: number;
  bulkSeconds: number;
  /** For a store() bulk: mean ms per store() by store size, per 100 stores. */
  storeCurve: [number, number][];
  /** For a files bulk: open + fix() + simulated access history. */
  fixSeconds: number | null;
  totalSeconds: number;
  storeSamples: number[];
  /** MemoryStore.check() right after the build: 'healthy' or the kinds of problem found. */
  integrity: string;
}

interface SizeResult {
  size: number;
  projectDir: string;
  build: BuildInfo;
  files: Record<string, number>;
  rows: Record<string, { summary: Summary; samples: number[] }>;
  memory: {
    childAfterOpenList: { rssMB: number; heapUsedMB: number };
    /** A fresh process's heap with the store open as a server holds it, opened without caches and with them (see heldHeap). */
    heldAfterOpen: { freshCloneMB: number; cachedMB: number };
    inProcessBaseline: { rssMB: number; heapUsedMB: number };
    inProcessAfterOpen: { rssMB: number; heapUsedMB: number };
    inProcessAfterSearchIndex: { rssMB: number; heapUsedMB: number };
  };
  recall: { hitRate: number; meanMatches: number; maxMatches: number; meanHits: number; examples: { query: string; kind: string; hits: number; top: string | null }[] };
  eviction: { ms: number; before: number; after: number; steps: number }[];
  coldOpen: { withCache: ProbeOutput[]; withoutCache: ProbeOutput[] };
}

function fmtInt(n: number): string {
  return n.toLocaleString('en-US');
}

function seconds(msValue: number): number {
  return msValue / 1000;
}

/** Writes state.json before the store is first opened: sessions so far and max_memories = size − 100. */
function writeInitialState(projectDir: string, size: number, sessions: number): void {
  const paths = storePaths(projectDir);
  fs.mkdirSync(paths.memories, { recursive: true });
  const state = defaultState();
  state.session_count = sessions;
  state.config = { ...DEFAULT_CONFIG, max_memories: size - 100 };
  fs.writeFileSync(paths.state, toJsonText(stateJson(state)));
}

function dirBytes(dir: string): number {
  let total = 0;
  for (const name of fs.existsSync(dir) ? fs.readdirSync(dir) : []) total += fs.statSync(path.join(dir, name)).size;
  return total;
}

function fileBytes(file: string): number {
  return fs.existsSync(file) ? fs.statSync(file).size : 0;
}

/** Builds and measures stores; exported so later sections can build stores the same way. */
export class EngineBench {
  constructor(private readonly ctx: BenchContext) {}

  /**
   * One method per size, whatever ran before: a store built by 10,000 real store() calls
   * leaves the bench process a much larger heap than one built from files, and the timed
   * store() calls that follow the build would measure that difference, not the store.
   */
  private chooseMethod(size: number): { method: 'store' | 'files'; reason: string } {
    const forced = this.ctx.options.bulk;
    if (forced !== 'auto') return { method: forced, reason: `forced by LTM_BENCH_BULK=${forced}` };
    return size <= STORE_BULK_MAX
      ? { method: 'store', reason: `real store() calls for every memory (sizes up to ${fmtInt(STORE_BULK_MAX)})` }
      : { method: 'files', reason: `generated files + fix() for the bulk (sizes over ${fmtInt(STORE_BULK_MAX)}; store() calls would take minutes)` };
  }

  async build(size: number): Promise<{ projectDir: string; build: BuildInfo; corpus: Corpus }> {
    const { ctx } = this;
    const reps = ctx.options.reps;
    const projectDir = fs.mkdtempSync(path.join(ctx.tmpRoot, `store-${size}-`));
    const sessions = Math.max(1, Math.ceil(size / MEMORIES_PER_SESSION));
    writeInitialState(projectDir, size, sessions);
    const corpus = new Corpus(SEED + size);
    const rng = new Random(SEED ^ size);
    const bulkCount = Math.max(0, size - reps - STORE_WARMUP);
    const sessionOf = (i: number) => Math.floor((i * sessions) / size);
    const { method, reason } = this.chooseMethod(size);
    ctx.log(`  building ${fmtInt(size)} memories: bulk of ${fmtInt(bulkCount)} by ${method === 'store' ? 'store()' : 'generated files + fix()'}`);
    const t0 = performance.now();
    const storeCurve: [number, number][] = [];
    let fixSeconds: number | null = null;
    let store: MemoryStore;

    if (method === 'store') {
      store = MemoryStore.open(projectDir);
      let batchStart = performance.now();
      for (let i = 0; i < bulkCount; i++) {
        const m = corpus.memory();
        await store.store({ ...m, session: sessionOf(i) });
        if ((i + 1) % 100 === 0) {
          const now = performance.now();
          storeCurve.push([i + 1 - 50, (now - batchStart) / 100]);
          batchStart = now;
          if ((i + 1) % 1000 === 0) ctx.log(`    ${fmtInt(i + 1)} stored (${((now - t0) / 1000).toFixed(1)} s)`);
        }
      }
    } else {
      const paths = storePaths(projectDir);
      const ids: string[] = [];
      const used = new Set<string>();
      const created0 = Date.now() - bulkCount * 20 * 60_000;
      for (let i = 0; i < bulkCount; i++) {
        let id: string;
        do id = `mem_${rng.hex(8)}`;
        while (used.has(id));
        used.add(id);
        ids.push(id);
        const m = corpus.memory();
        const raw = renderNewMemoryFile({
          id,
          topic: m.topic,
          tags: normaliseTags(m.tags),
          phase: 0,
          difficulty: m.difficulty,
          created_at: new Date(created0 + i * 20 * 60_000).toISOString(),
          created_session: sessionOf(i),
          summary: deriveSummary(m.content) || m.topic,
          content: m.content,
        });
        fs.writeFileSync(path.join(paths.memories, `${id}.md`), raw);
      }
      const tFix = performance.now();
      store = MemoryStore.open(projectDir);
      await store.fix();
      // A plausible access history, so stats.json has an entry per memory (as store() leaves it) and
      // priorities spread: at ten points in the past, the memories stored since the last point are
      // accessed, plus a random 15% of the older ones.
      let previous = 0;
      for (let c = 1; c <= 10; c++) {
        const session = Math.round((c * sessions) / 10);
        await store.updateState((s) => {
          s.session_count = session;
        });
        const accessed: string[] = [];
        for (let i = 0; i < bulkCount; i++) {
          const created = sessionOf(i);
          if ((created >= previous && created < session) || (created < previous && rng.chance(0.15))) accessed.push(ids[i]!);
        }
        await store.recordAccesses(accessed);
        previous = session;
      }
      await store.updateState((s) => {
        s.session_count = sessions;
      });
      fixSeconds = seconds(performance.now() - tFix);
    }
    const bulkSeconds = seconds(performance.now() - t0);

    // The measured store() calls complete the store.
    settleDisk();
    const timed = await measure(reps, STORE_WARMUP, async () => {
      const m = corpus.memory();
      const result = await store.store(m);
      return result.memory.id;
    });
    store.flushCaches();
    const check = store.check();
    store.dispose();
    const total = storePaths(projectDir);
    const count = fs.readdirSync(total.memories).filter((n) => n.endsWith('.md')).length;
    if (count !== size) throw new Error(`built ${count} memories, expected ${size}`);
    const build: BuildInfo = {
      method,
      reason,
      bulkCount,
      bulkSeconds,
      storeCurve,
      fixSeconds,
      totalSeconds: seconds(performance.now() - t0),
      storeSamples: timed.samples,
      integrity: check.healthy ? 'healthy' : check.problems.map((p) => p.kind).join(', '),
    };
    ctx.log(`  built in ${build.totalSeconds.toFixed(1)} s; store() median ${ms(timed.summary.median)} ms, p99 ${ms(timed.summary.p99)} ms`);
    return { projectDir, build, corpus };
  }

  private coldOpens(projectDir: string, withCache: boolean): { runs: ProbeOutput[]; wall: number[] } {
    const { ctx } = this;
    const probe = ctx.childScript('bench/child/openProbe.ts');
    const cache = storePaths(projectDir).parseCache;
    const runs: ProbeOutput[] = [];
    const wall: number[] = [];
    for (let i = 0; i <= ctx.options.processReps; i++) {
      if (!withCache) fs.rmSync(cache, { force: true });
      else if (!fs.existsSync(cache)) throw new Error('parse-cache.json is missing before a "with cache" run');
      const { wallMs, data } = runJsonChild<ProbeOutput>(['--expose-gc', probe, projectDir]);
      if (i === 0) continue; // warm-up: the OS file cache, not the process, is what it warms
      runs.push(data);
      wall.push(wallMs);
    }
    return { runs, wall };
  }

  /**
   * The heap a fresh process holds with the store open once its search index
   * is loaded and its caches saved, as a server holds it after opening: from
   * the memory files alone (a fresh clone: both caches deleted, the index
   * built in the process), then from the caches that run saved. One run each.
   */
  private heldHeap(projectDir: string): { freshCloneMB: number; cachedMB: number } {
    const probe = this.ctx.childScript('bench/child/openProbe.ts');
    const paths = storePaths(projectDir);
    const held = () => {
      const { data } = runJsonChild<ProbeOutput>(['--expose-gc', probe, projectDir, '--held']);
      if (data.heldHeapUsed === undefined) throw new Error('the open probe did not measure the heap held');
      return data.heldHeapUsed / 2 ** 20;
    };
    fs.rmSync(paths.parseCache, { force: true });
    fs.rmSync(paths.searchIndex, { force: true });
    const freshCloneMB = held();
    return { freshCloneMB, cachedMB: held() };
  }

  /** The longest holds of the thread (until the first search, and after it) in each of OPEN_HOLD_RUNS fresh processes opening the store as the extension does. */
  private openHolds(projectDir: string, caches: OpenHoldJob['caches']): { until: number[]; after: number[] } {
    const workerScript = path.join(path.dirname(this.ctx.cliPath), path.basename(CLI_FILES.indexWorker));
    const job: OpenHoldJob = { projectDir, workerScript, caches };
    const runs = Array.from({ length: OPEN_HOLD_RUNS }, () => runJobChild<OpenHoldResult>(this.ctx, 'bench/child/openHold.ts', job));
    return { until: runs.map((r) => r.longestHoldMs), after: runs.map((r) => r.longestHoldAfterMs) };
  }

  private cliWall(projectDir: string, args: string[]): number[] {
    const { ctx } = this;
    const wall: number[] = [];
    for (let i = 0; i <= ctx.options.processReps; i++) {
      const run = runNode([ctx.cliPath, ...args, '--project', projectDir]);
      if (run.status !== 0) throw new Error(`ltm ${args.join(' ')} failed: ${run.stderr}`);
      if (i > 0) wall.push(run.wallMs);
    }
    return wall;
  }

  async measureSize(size: number): Promise<SizeResult> {
    const { ctx } = this;
    const { reps, warmup } = ctx.options;
    const { projectDir, build, corpus } = await this.build(size);
    const paths = storePaths(projectDir);
    const rows: SizeResult['rows'] = {};
    const add = (key: string, samples: number[]) => {
      rows[key] = { summary: summarise(samples), samples };
    };
    add('store', build.storeSamples);

    // --- fresh processes first, on the store exactly as built ---------------------------------
    ctx.log('  cold open in fresh processes (with and without the record cache)');
    const withCache = this.coldOpens(projectDir, true);
    const withoutCache = this.coldOpens(projectDir, false);
    add('coldOpen', withCache.runs.map((r) => r.openListMs));
    add('coldOpenNoCache', withoutCache.runs.map((r) => r.openListMs));
    add('coldFlushNoCache', withoutCache.runs.map((r) => r.flushMs));
    add('coldProcess', withCache.wall);
    ctx.log('  the heap a fresh process holds with the store open, from the memory files alone and from the caches');
    const heldAfterOpen = this.heldHeap(projectDir);
    ctx.log('  the extension host held while the store opens (with and without the caches)');
    const holds = this.openHolds(projectDir, 'kept');
    const holdsNoCache = this.openHolds(projectDir, 'deleted');
    add('openHold', holds.until);
    add('openHoldNoCache', holdsNoCache.until);
    add('openHoldAfter', holds.after);
    add('openHoldAfterNoCache', holdsNoCache.after);
    if (!fs.existsSync(paths.parseCache)) throw new Error('parse-cache.json was not written again by flushCaches() after the no-cache runs');
    const files = {
      memoriesDirBytes: dirBytes(paths.memories),
      indexJsonBytes: fileBytes(paths.index),
      statsJsonBytes: fileBytes(paths.stats),
      parseCacheBytes: fileBytes(paths.parseCache),
    };

    // --- this process -------------------------------------------------------------------------
    ctx.log('  in-process: open, list, recall, get');
    collectGarbage();
    const inProcessBaseline = memoryNow();
    const opened = await timeOnce(() => MemoryStore.open(projectDir));
    let store = opened.result;
    collectGarbage();
    const inProcessAfterOpen = memoryNow();

    const list = await measure(reps, warmup, () => store.list());
    if (list.results.some((r) => r.total !== size || r.memories.length !== 50)) throw new Error('list() did not see the whole store');
    add('list', list.samples);
    const tagCounts = new Map<string, number>();
    for (const m of store.list({ limit: size }).memories) for (const t of m.tags) tagCounts.set(t, (tagCounts.get(t) ?? 0) + 1);
    const byUse = TAG_POOL.filter((t) => tagCounts.has(t)).sort((a, b) => tagCounts.get(b)! - tagCounts.get(a)!);
    const listTags = [byUse[0]!, byUse[Math.floor(byUse.length / 3)]!, byUse[Math.floor((2 * byUse.length) / 3)]!, byUse[byUse.length - 1]!];
    add('listTag', (await measure(reps, warmup, (i) => store.list({ tag: listTags[i % listTags.length]! }))).samples);

    const queries = corpus.queries(RECALL_QUERIES);
    const firstSearch: number[] = [];
    const opens = [opened.ms];
    let inProcessAfterSearchIndex = inProcessAfterOpen;
    for (let i = 0; i < FIRST_SEARCH_REPS; i++) {
      // What this row measures: a first search that builds the index, never one that loads a saved one.
      fs.rmSync(storePaths(projectDir).searchIndex, { force: true });
      if (i > 0) {
        store.dispose();
        const reopened = await timeOnce(() => MemoryStore.open(projectDir));
        store = reopened.result;
        opens.push(reopened.ms);
      }
      const q = queries[i % queries.length]!.query;
      firstSearch.push((await timeOnce(() => store.search(q, { limit: 10 }))).ms);
      if (i === 0) {
        collectGarbage();
        inProcessAfterSearchIndex = memoryNow();
      }
    }
    add('firstSearch', firstSearch);
    add('openInProcess', opens);
    // The same first search once a process has saved the index (as the CLI and servers do): loaded, not built.
    store.flushCaches();
    if (!fs.existsSync(storePaths(projectDir).searchIndex)) throw new Error('flushCaches() did not write search-index.bin');
    const firstSearchLoaded: number[] = [];
    for (let i = 0; i < FIRST_SEARCH_REPS; i++) {
      store.dispose();
      store = MemoryStore.open(projectDir);
      const q = queries[i % queries.length]!.query;
      firstSearchLoaded.push((await timeOnce(() => store.search(q, { limit: 10 }))).ms);
    }
    add('firstSearchLoaded', firstSearchLoaded);
    const recall = await measure(reps, warmup, (i) => {
      const q = queries[i % queries.length]!;
      return { q, hits: store.search(q.query, { limit: 10 }) };
    });
    add('recall', recall.samples);
    for (const kind of ['words', 'typo', 'prefix', 'mixed'] as const) {
      add(`recall:${kind}`, recall.samples.filter((_, i) => recall.results[i]!.q.kind === kind));
    }
    const examples = queries.slice(0, 8).map((q) => {
      const hits = store.search(q.query, { limit: 10 });
      return { query: q.query, kind: q.kind, hits: hits.length, top: hits[0]?.topic ?? null };
    });
    const withHits = recall.results.filter((r) => r.hits.length > 0).length;
    // What a search walks through before the limit: every matching memory gets a view and a score.
    const probeIndex = new MemorySearchIndex();
    for (const m of store.list({ limit: size }).memories) probeIndex.upsert(m);
    const matches = queries.map((q) => [...probeIndex.search(q.query)].length);

    const rng = new Random(SEED + 7 * size);
    const ids = store.list({ limit: size }).memories.map((m) => m.id);
    const getIds = Array.from({ length: reps + warmup }, () => rng.pick(ids));
    add('get', (await measure(reps, warmup, (i) => store.get(getIds[i]!))).samples);

    ctx.log(`  eviction: ${EVICTION_CYCLES} cycles`);
    const eviction: SizeResult['eviction'] = [];
    for (let i = 0; i < EVICTION_CYCLES; i++) {
      const { ms: cycleMs, result } = await timeOnce(() => store.evict());
      if (!result.ran) throw new Error(`eviction cycle ${i + 1} did not run (${result.before} ≤ ${result.max_memories})`);
      eviction.push({ ms: cycleMs, before: result.before, after: result.after, steps: result.steps.length });
    }
    add('evict', eviction.map((e) => e.ms));
    // As `ltm serve` and VS Code run them: index.json written after the cycle, in a pause (servers/indexFlush.ts).
    store.deferIndexWrites(() => undefined);
    // The cycles above brought the store close to its limit: these need a lower one to run.
    const activeNow = store.memoryCount();
    await store.updateState((state) => {
      state.config.max_memories = activeNow - 100;
    });
    const serverCycles: number[] = [];
    const flushes: number[] = [];
    for (let i = 0; i < EVICTION_CYCLES; i++) {
      const { ms: cycleMs, result } = await timeOnce(() => store.evict());
      if (!result.ran) throw new Error(`eviction cycle ${i + 1} (server) did not run (${result.before} ≤ ${result.max_memories})`);
      serverCycles.push(cycleMs);
      flushes.push((await timeOnce(() => store.flushIndex())).ms);
    }
    store.deferIndexWrites(null);
    add('evictServer', serverCycles);
    add('indexFlush', flushes);
    store.flushCaches();
    store.dispose();

    ctx.log('  CLI processes: status, list, recall, --version');
    add('cliStatus', this.cliWall(projectDir, ['status']));
    add('cliList', this.cliWall(projectDir, ['list', '--limit', '1']));
    add('cliRecall', this.cliWall(projectDir, ['recall', queries[1]!.query]));
    add('cliVersion', this.cliWall(projectDir, ['--version']));

    const median = (values: number[]) => summarise(values).median;
    return {
      size,
      projectDir,
      build,
      files,
      rows,
      memory: {
        childAfterOpenList: {
          rssMB: median(withCache.runs.map((r) => r.rss)) / 2 ** 20,
          heapUsedMB: median(withCache.runs.map((r) => r.heapUsed)) / 2 ** 20,
        },
        heldAfterOpen,
        inProcessBaseline,
        inProcessAfterOpen,
        inProcessAfterSearchIndex,
      },
      recall: {
        hitRate: withHits / recall.results.length,
        meanMatches: matches.reduce((a, b) => a + b, 0) / matches.length,
        maxMatches: Math.max(...matches),
        meanHits: recall.results.reduce((s, r) => s + r.hits.length, 0) / recall.results.length,
        examples,
      },
      eviction,
      coldOpen: { withCache: withCache.runs, withoutCache: withoutCache.runs },
    };
  }
}

// ---------------------------------------------------------------------------------------------
// Report

const ROW_ORDER: [key: string, label: string, description: string][] = [
  ['store', 'store', DESCRIBE.store],
  ['get', 'get', DESCRIBE.get],
  ['list', 'list', DESCRIBE.list],
  ['listTag', 'list --tag', DESCRIBE.listTag],
  ['recall', 'recall (warm)', DESCRIBE.recall],
  ['recall:words', '  recall: plain words', DESCRIBE.recallKind('words')],
  ['recall:typo', '  recall: with a typo', DESCRIBE.recallKind('typo')],
  ['recall:prefix', '  recall: prefix', DESCRIBE.recallKind('prefix')],
  ['recall:mixed', '  recall: adjective + term', DESCRIBE.recallKind('mixed')],
  ['firstSearch', 'first search (index build)', DESCRIBE.firstSearch],
  ['firstSearchLoaded', 'first search (index loaded)', DESCRIBE.firstSearchLoaded],
  ['evict', 'eviction cycle', DESCRIBE.evict],
  ['evictServer', 'eviction cycle (server)', DESCRIBE.evictServer],
  ['indexFlush', '  then index.json (server)', DESCRIBE.indexFlush],
  ['openInProcess', 'open (in-process)', DESCRIBE.openInProcess],
  ['coldOpen', 'cold open + list', DESCRIBE.coldOpen],
  ['coldOpenNoCache', 'cold open + list, no record cache', DESCRIBE.coldOpenNoCache],
  ['coldFlushNoCache', '  then flushCaches()', DESCRIBE.coldFlushNoCache],
  ['coldProcess', 'cold process (open + list)', DESCRIBE.coldProcess],
  ['openHold', 'longest hold while the extension opens', DESCRIBE.openHold],
  ['openHoldNoCache', 'longest hold while the extension opens, no caches', DESCRIBE.openHoldNoCache],
  ['openHoldAfter', '  then until the caches are saved', DESCRIBE.openHoldAfter],
  ['openHoldAfterNoCache', '  then until the caches are saved, no caches', DESCRIBE.openHoldAfterNoCache],
  ['cliStatus', 'CLI status', DESCRIBE.cliStatus],
  ['cliList', 'CLI list --limit 1', DESCRIBE.cliList],
  ['cliRecall', 'CLI recall', DESCRIBE.cliRecall],
  ['cliVersion', 'CLI --version', DESCRIBE.cliVersion],
];

function sizeTables(r: SizeResult): Table[] {
  const timingRows: TimingRow[] = ROW_ORDER.filter(([key]) => r.rows[key]).map(([key, label, description]) => ({
    label,
    description,
    summary: r.rows[key]!.summary,
  }));
  const b = r.build;
  const m = r.memory;
  const facts: Table = {
    title: `${fmtInt(r.size)} memories: the store and memory use`,
    columns: ['Item', 'Value', 'What it is'],
    align: ['l', 'r', 'l'],
    rows: [
      ['build method', b.method === 'store' ? 'store() for every memory' : 'generated files + fix()', b.reason],
      ['build time', `${b.totalSeconds.toFixed(1)} s`, `bulk of ${fmtInt(b.bulkCount)} in ${b.bulkSeconds.toFixed(1)} s${b.fixSeconds === null ? '' : ` (of which open + fix() + access history ${b.fixSeconds.toFixed(1)} s)`}, then ${STORE_WARMUP} + ${r.rows.store!.summary.n} store() calls`],
      ['integrity after build', b.integrity, 'MemoryStore.check() on the finished store (the generated-files path must leave a healthy store)'],
      ['memories/', mb(r.files.memoriesDirBytes! / 2 ** 20), 'total size of the memory files'],
      ['index.json', mb(r.files.indexJsonBytes! / 2 ** 20), 'rewritten by every store(), forget(), restore() and eviction cycle of a one-shot process; a server writes it in pauses (see "eviction cycle (server)")'],
      ['stats.json', mb(r.files.statsJsonBytes! / 2 ** 20), 'rewritten when stats.log holds more than max(256, entries / 4) lines, at server stop and by fix'],
      ['parse-cache.json', mb(r.files.parseCacheBytes! / 2 ** 20), 'per file: signature, frontmatter fields and Summary, read at open'],
      ['child RSS after open + list', mb(m.childAfterOpenList.rssMB), 'fresh process (bundled engine), after gc, median of the cold-open runs'],
      ['child heapUsed after open + list', mb(m.childAfterOpenList.heapUsedMB), 'same process, V8 heap in use after gc'],
      [
        'heap held, opened from the files alone',
        mb(m.heldAfterOpen.freshCloneMB),
        `a fresh process opened the store without parse-cache.json and search-index.bin (a fresh clone), built the search index and saved the caches, as a server does once open: V8 heap in use after gc, the store open (opened from those caches instead: ${mb(m.heldAfterOpen.cachedMB)})`,
      ],
      ['in-process heapUsed: open', `+${mb(m.inProcessAfterOpen.heapUsedMB - m.inProcessBaseline.heapUsedMB)}`, `heap growth from MemoryStore.open() in the bench process (after gc; RSS ${mb(m.inProcessAfterOpen.rssMB)})`],
      ['in-process heapUsed: search index', `+${mb(m.inProcessAfterSearchIndex.heapUsedMB - m.inProcessAfterOpen.heapUsedMB)}`, `further growth once the first search built the search index (RSS ${mb(m.inProcessAfterSearchIndex.rssMB)})`],
      ['recall hit rate', `${(r.recall.hitRate * 100).toFixed(0)} %`, `warm recall queries with at least one result (mean ${r.recall.meanHits.toFixed(1)} results of at most 10)`],
      ['memories matching a query', r.recall.meanMatches.toFixed(0), `mean over the ${RECALL_QUERIES} recall queries (max ${fmtInt(r.recall.maxMatches)}) of the memories a query matches: all are scored, and search() reads them best first until none left can enter the top 10`],
      ['eviction cycles', r.eviction.map((e) => ms(e.ms)).join(', '), `each cycle's ms, in order (${r.eviction[0]?.before ?? 0} → ${r.eviction[r.eviction.length - 1]?.after ?? 0} active memories)`],
    ],
  };
  return [timingTable(`${fmtInt(r.size)} memories: timings`, timingRows), facts];
}

function summaryTable(results: readonly SizeResult[]): Table {
  const keys: [string, string][] = [
    ['store', 'store'],
    ['get', 'get'],
    ['list', 'list'],
    ['listTag', 'list --tag'],
    ['recall', 'recall (warm)'],
    ['firstSearch', 'first search (index build)'],
    ['firstSearchLoaded', 'first search (index loaded)'],
    ['evict', 'eviction cycle'],
    ['evictServer', 'eviction cycle (server)'],
    ['coldOpen', 'cold open + list (cache)'],
    ['coldOpenNoCache', 'cold open + list (no cache)'],
    ['cliStatus', 'CLI status (whole process)'],
    ['cliRecall', 'CLI recall (whole process)'],
  ];
  return {
    title: 'Summary',
    caption: 'Median / p99 in milliseconds. Each row is described in the per-size tables below.',
    columns: ['Operation', ...results.map((r) => `${fmtInt(r.size)} memories`)],
    align: ['l', ...results.map(() => 'r' as const)],
    rows: keys.map(([key, label]) => [
      label,
      ...results.map((r) => {
        const s = r.rows[key]?.summary;
        return s ? `${ms(s.median)} / ${ms(s.p99)}` : null;
      }),
    ]),
  };
}

function growthTable(results: readonly SizeResult[]): Table | null {
  const curve = results
    .filter((r) => r.build.method === 'store' && r.build.storeCurve.length > 0)
    .sort((a, b) => b.build.storeCurve.length - a.build.storeCurve.length)[0];
  if (!curve) return null;
  const points = curve.build.storeCurve.filter((_, i, all) => i % Math.max(1, Math.floor(all.length / 8)) === 0);
  const rows: [string, string][] = points.map(([n, v]) => [`~${fmtInt(Math.round(n))}`, ms(v)]);
  for (const r of results) rows.push([`${fmtInt(r.size)} (measured rows above)`, ms(r.rows.store!.summary.mean)]);
  return {
    title: 'store() cost as the store grows',
    caption:
      'Mean ms per store() by the number of memories already stored (from the store() bulk build, 100 calls a point; ' +
      'the last rows are the measured store() calls at each size). Every store() here rewrites index.json whole (a server defers it) and appends a line to stats.log.',
    columns: ['Memories in the store', 'mean ms per store()'],
    align: ['r', 'r'],
    rows,
  };
}

function targetsFor(r: SizeResult): Target[] {
  const label = fmtInt(r.size);
  const cold = r.rows.coldOpen!.summary;
  const coldNoCache = r.rows.coldOpenNoCache!.summary;
  const coldTarget = target(
    `Cold open at ${label}`,
    `max (= p99) of ${cold.n} fresh processes: MemoryStore.open() + first list(), record cache present (median ${ms(cold.median)} ms)`,
    Math.max(cold.p99, cold.max),
    1000,
    'ms',
  );
  const noCache = target(
    `Cold open at ${label}, no record cache (reference)`,
    `same without parse-cache.json (median ${ms(coldNoCache.median)} ms); shown for reference, not a target`,
    Math.max(coldNoCache.p99, coldNoCache.max),
    1000,
    'ms',
  );
  const holds = (['openHold', 'openHoldNoCache', 'openHoldAfter', 'openHoldAfterNoCache'] as const).flatMap((key) => {
    const hold = r.rows[key]?.summary;
    if (!hold) return [];
    const what = key === 'openHold' || key === 'openHoldAfter' ? 'caches present' : 'no caches (a fresh clone)';
    const when = key.startsWith('openHoldAfter') ? 'once the store answers (caches saved, first store prepared)' : 'while the store opens';
    return [
      {
        ...target(
          `Longest hold of the extension host ${when} at ${label}, ${what} (reference)`,
          `max of ${hold.n} fresh processes (median ${ms(hold.median)} ms): no target in the issue; ${OPEN_HOLD_REFERENCE_MS} ms is where a pause starts to be felt`,
          hold.max,
          OPEN_HOLD_REFERENCE_MS,
          'ms',
        ),
        informational: true,
      },
    ];
  });
  return [
    target(`Recall p99 at ${label}`, `p99 of ${r.rows.recall!.summary.n} warm MemoryStore.search() calls, limit 10`, r.rows.recall!.summary.p99, 10, 'ms'),
    target(`Store p99 at ${label}`, `p99 of ${r.rows.store!.summary.n} MemoryStore.store() calls`, r.rows.store!.summary.p99, 20, 'ms'),
    coldTarget,
    { ...noCache, informational: true },
    ...holds,
  ];
}

/** Fresh processes per kind of open-hold measurement (each opens the whole store). */
const OPEN_HOLD_RUNS = 3;
/** The reference line of the open-hold rows: about where a pause starts to be felt. */
const OPEN_HOLD_REFERENCE_MS = 100;

/** Issue 13's targets at 10,000 and at 50,000 memories: [10,000, 50,000]. */
const SCALE_LIMITS = { cliRecall: [300, 1000], evictionCycle: [50, 100] } as const;

function scaleTargetsFor(r: SizeResult): Target[] {
  const label = fmtInt(r.size);
  const at = r.size > 10_000 ? 1 : 0;
  const cli = r.rows.cliRecall!.summary;
  const cycles = r.rows.evictServer!.summary;
  return [
    target(`Fresh CLI process, first recall at ${label}`, `median of ${cli.n} \`ltm recall\` processes (max ${ms(cli.max)} ms)`, cli.median, SCALE_LIMITS.cliRecall[at], 'ms'),
    target(
      `Eviction cycle (server) at ${label}`,
      `median of ${cycles.n} cycles with index.json deferred, as a server runs them (max ${ms(cycles.max)} ms; index.json written after each: median ${ms(r.rows.indexFlush!.summary.median)} ms)`,
      cycles.median,
      SCALE_LIMITS.evictionCycle[at],
      'ms',
    ),
  ];
}

export const engineSection: BenchSection = {
  id: 'engine',
  title: 'Engine (MemoryStore)',
  async run(ctx: BenchContext): Promise<SectionResult> {
    const bench = new EngineBench(ctx);
    const results: SizeResult[] = [];
    for (const size of ctx.options.sizes) {
      ctx.log(`engine: ${fmtInt(size)} memories`);
      const result = await bench.measureSize(size);
      results.push(result);
      fs.rmSync(result.projectDir, { recursive: true, force: true });
      collectGarbage();
    }
    // The targets are set for 10,000 memories; a run with other sizes checks its largest.
    const targetRun = results.find((r) => r.size === 10_000) ?? results[results.length - 1]!;
    const growth = growthTable(results);
    const sample = results[0]?.recall.examples ?? [];
    return {
      id: 'engine',
      title: 'Engine (MemoryStore)',
      intro:
        'Stores are built in a temporary directory from a seeded synthetic corpus: topics of 5-12 words, contents of 300-1500 ' +
        'characters in 2-5 paragraphs from 13 programming domains, 1-4 tags from a pool of ' +
        `${TAG_POOL.length} (plus importance:critical/important/low on ~16 %). state.json sets max_memories to size − 100 before ` +
        `the first open. Fast operations run ${ctx.options.warmup} untimed calls then ${ctx.options.reps} timed ones; fresh-process ` +
        `rows run 1 untimed then ${ctx.options.processReps} timed (the OS file cache is warm in both). In-process rows call the ` +
        'TypeScript sources through tsx; fresh processes run esbuild bundles, as shipped.',
      tables: [summaryTable(results), ...results.flatMap(sizeTables), ...(growth ? [growth] : [])],
      targets: [...targetsFor(targetRun), ...results.filter((r) => r.size === 10_000 || r.size === 50_000).flatMap(scaleTargetsFor)],
      notes: [
        `Recall queries (first ${sample.length} of ${RECALL_QUERIES}, at ${fmtInt(results[0]?.size ?? 0)}): ` +
          sample.map((q) => `"${q.query}" (${q.kind}, ${q.hits} hits)`).join(', '),
        'get() and eviction run after the other in-process rows, so the store they change is not the one the others measured; ' +
          'the CLI rows run last, on the store after eviction (with its archives).',
        'store() rows are the last calls of the build: the store holds size − 200 … size memories while they run.',
      ],
      raw: results.map((r) => ({ ...r, projectDir: undefined })),
    };
  },
};
