/**
 * The MCP tools as Claude Code reaches them: the real MCP SDK client
 * (StreamableHTTPClientTransport) over real HTTP on 127.0.0.1 against
 * `ltm serve` (dist/cli.js, as shipped) in its own process; beside them, the
 * floor: the same client against a minimal SDK server with a no-op tool, and
 * bare HTTP.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import { storePaths } from '../../src/core/storeFiles';
import type { StartupJob, StartupResult } from '../child/serveStartup';
import type { StdioStartupJob, StdioStartupResult } from '../child/stdioStartup';
import { runJobChild, startPortChild } from '../lib/child';
import type { BenchContext, BenchSection } from '../lib/context';
import type { CallsJob, CallsResult, GeneratedCall } from '../lib/mcpTraffic';
import { ms, target, timingTable, type SectionResult, type Table, type Target, type TimingRow } from '../lib/report';
import { summarise, type Summary } from '../lib/stats';
import { startServer, stopServer, untilReady } from '../lib/serveProcess';
import { bytesWritten, peakRssMb } from '../lib/procStats';
import { gitCopyOf } from '../lib/gitProject';
import { pluginMcpLaunch } from '../../src/servers/pluginFiles';
import { EngineBench } from './engine';
import { settleDisk } from '../lib/machine';

/** The targets: [at 10,000 memories, at 50,000]; sizes over 10,000 get the second. */
const LIMITS = {
  recallP99: [5, 8],
  storeP99: [10, 15],
  /** MCP recall p99 at most this multiple of the reused no-op floor's p99. */
  recallOverFloor: [1.5, 1.5],
  firstCall: [50, 50],
  startToFirstAnswer: [300, 1000],
  /** The same with the caches deleted: everything read and indexed from the memory files. */
  startWithoutCaches: [1000, 4000],
  /** The server's peak resident memory (VmHWM), MB. */
  peakRss: [90, 200],
} as const;

/** store_memory calls in the burst whose written bytes are counted. */
const BURST = 100;
/** Longer than a server's longest deferral of index.json (INDEX_FLUSH_MAX_DEFER_MS). */
const AFTER_BURST_MS = 2_500;

const QUERIES = 50;
/** Fresh servers per kind of first request without caches (each reads and indexes every memory file). */
const NO_CACHE_RUNS = 3;
/** How long after its handshake a fresh `ltm mcp` gets its first recall: about a model's first answer. */
const STDIO_PAUSE_MS = 1_000;

function limit(kind: keyof typeof LIMITS, size: number): number {
  return LIMITS[kind][size > 10_000 ? 1 : 0];
}

function fmtInt(n: number): string {
  return n.toLocaleString('en-US');
}

function fmtBytes(n: number): string {
  return n >= 1_048_576 ? `${(n / 1_048_576).toFixed(1)} MB` : n >= 10_240 ? `${(n / 1024).toFixed(0)} KB` : `${fmtInt(Math.round(n))} B`;
}

interface SizeResult {
  size: number;
  build: string;
  reps: number;
  startupRuns: number;
  rows: Record<string, { summary: Summary; samples: number[] }>;
  startup: { recall: Summary; sessionStart: Summary; serving: Summary };
  startupWithoutCaches: { recall: Summary; sessionStart: Summary };
  /** Serve start → first recall in a fresh copy of the project: caches present, every entry stale. */
  startupCopied: Summary;
  /** Serve start → first session_start in a git repository (a committed copy of the project), caches saved. */
  startupInGit: Summary;
  /** `ltm mcp` (stdio, one process per session, as the plugin runs it). */
  stdio: { handshake: Summary; recallAtOnce: Summary; recallAfterPause: Summary };
  ltm: { connectMs: number; firstCallMs: number; sessionId?: string };
  floors: Record<'perRequest' | 'reused', { connectMs: number; firstCallMs: number; sessionId?: string; peakRssMb: number | null }>;
  /** The bare HTTP floor's peak RSS (VmHWM) after its calls: Node itself with a server and JSON. */
  barePeakRssMb: number | null;
  /** An `ltm mcp` process's peak RSS (VmHWM) after the same recall and store_memory calls (no burst). */
  stdioPeakRssMb: number | null;
  /** `ltm mcp` started while `ltm serve` runs, which it relays the session to (mcpForwarding.ts). */
  relayed: { recallAtOnce: Summary; peakRssMb: number | null };
  memoriesAfter: number;
  load: { start: number; end: number };
  /** Bytes `ltm serve` wrote (files and answers) per store_memory in a burst of BURST, and with what it wrote in the pause after. */
  bytesPerStore: { burst: number; withPause: number; indexJson: number } | null;
  /** The server's peak RSS (VmHWM) after starting, the recall and store_memory calls and the burst. */
  peakRssMb: number | null;
}

const DESCRIBE: Record<string, string> = {
  recall: 'tools/call recall (1-3 word queries of the engine section, typos and prefixes mixed; default limit)',
  store: 'tools/call store_memory (a generated memory: topic, content, tags)',
  noopPerRequest: 'a no-op tool on a minimal SDK server that builds a McpServer and stateless transport per request (bench/child/mcpNoopServer.ts per-request)',
  noopReused: 'the same no-op tool on a minimal SDK server that keeps one McpServer and transport per MCP session (mcpNoopServer.ts reused)',
  stdioRecall: 'recall through the SDK stdio client to an `ltm mcp` process started as the plugin\'s .mcp.json starts it, after the rows above',
  stdioStore: 'store_memory, the same way (other generated memories)',
  relayedRecall: 'recall through the SDK stdio client to an `ltm mcp` started while `ltm serve` runs: it relays the session to the server over HTTP',
  relayedStore: 'store_memory, the same way (other generated memories)',
  bare: 'the same tools/call body POSTed to a bare node:http server that parses it and answers {} (bench/child/bareServer.ts)',
};

class McpBench {
  constructor(private readonly ctx: BenchContext) {}

  async measureSize(size: number): Promise<SizeResult> {
    const { projectDir, build, corpus } = await new EngineBench(this.ctx).build(size);
    try {
      const { ctx } = this;
      const { reps, warmup, processReps } = ctx.options;
      const loadStart = os.loadavg()[0]!;
      const queries = corpus.queries(QUERIES).map((q) => q.query);
      const recalls: GeneratedCall[] = queries.map((query) => ({ name: 'recall', args: { query } }));
      // store_memory calls of new generated memories, other ones at each call.
      const generatedStores = (count: number): GeneratedCall[] =>
        Array.from({ length: count }, () => {
          const m = corpus.memory();
          return { name: 'store_memory', args: { topic: m.topic, content: m.content, tags: m.tags } };
        });
      const stores = generatedStores(warmup + reps);

      const startups = (job: Omit<StartupJob, 'cliPath' | 'projectDir' | 'query'>) =>
        runJobChild<StartupResult>(ctx, 'bench/child/serveStartup.ts', { cliPath: ctx.cliPath, projectDir, query: queries[0]!, ...job } satisfies StartupJob);
      ctx.log(`  serve start → first recall / first session_start: ${processReps} fresh servers each`);
      const startup = startups({ runs: processReps });
      ctx.log(`  the same without parse-cache.json and search-index.bin: ${NO_CACHE_RUNS} fresh servers each`);
      const noCaches = startups({ runs: NO_CACHE_RUNS, caches: 'deleted' });
      ctx.log(`  serve start → first recall in a copy of the project (every cache entry stale): ${NO_CACHE_RUNS} fresh servers`);
      const copied = startups({ runs: NO_CACHE_RUNS, caches: 'copied', kinds: ['recall'] });
      ctx.log(`  serve start → first session_start in a git repository (a committed copy): ${processReps} fresh servers`);
      const inGit = this.startupsInGit(projectDir, queries[0]!, processReps);
      const stdioArgs = pluginMcpLaunch(ctx.repoRoot).args;
      ctx.log(`  ltm mcp (stdio): ${processReps} fresh sessions recalling at once, ${processReps} recalling ${STDIO_PAUSE_MS} ms after the handshake`);
      const stdio = runJobChild<StdioStartupResult>(ctx, 'bench/child/stdioStartup.ts', {
        args: stdioArgs,
        projectDir,
        runs: processReps,
        query: queries[0]!,
        pauseMs: STDIO_PAUSE_MS,
      } satisfies StdioStartupJob);

      ctx.log(`  MCP calls to ltm serve: first call, then ${warmup} + ${reps} recall and store_memory calls`);
      settleDisk();
      const server = await startServer(ctx.cliPath, projectDir);
      // The first call is timed on an opened server (the handshake no longer waits for the opening).
      await untilReady(server);
      let ltm: CallsResult;
      let bytesPerStore: SizeResult['bytesPerStore'] = null;
      let peakRss: number | null = null;
      let relayedStartup: StdioStartupResult;
      let relayedCalls: CallsResult;
      try {
        const url = `http://127.0.0.1:${server.port}/mcp`;
        ltm = this.calls({ kind: 'mcp', url, token: server.token, warmup, reps, first: recalls[1]!, series: { recall: recalls, store: stores } });
        ctx.log(`  bytes written per store_memory: a burst of ${BURST}, then a pause of ${AFTER_BURST_MS} ms`);
        await new Promise((resolve) => setTimeout(resolve, AFTER_BURST_MS));
        const burst = generatedStores(BURST);
        const pid = server.child.pid!;
        const filesBefore = this.memoryFileBytes(projectDir);
        const before = bytesWritten(pid);
        const timed = this.calls({ kind: 'mcp', url, token: server.token, warmup: 0, reps: BURST - 1, first: burst[0]!, series: { store: burst.slice(1) } }).samples.store!;
        const afterBurst = bytesWritten(pid);
        await new Promise((resolve) => setTimeout(resolve, AFTER_BURST_MS));
        const afterPause = bytesWritten(pid);
        const calls = timed.length + 1;
        const memoryBytes = this.memoryFileBytes(projectDir) - filesBefore;
        if (before !== null && afterBurst !== null && afterPause !== null) {
          bytesPerStore = {
            burst: (afterBurst - before - memoryBytes) / calls,
            withPause: (afterPause - before - memoryBytes) / calls,
            indexJson: fs.statSync(storePaths(projectDir).index).size,
          };
        }
        peakRss = peakRssMb(pid);
        // After the server's own figures: these add the relays' MCP sessions to the server.
        ctx.log(`  ltm mcp beside the running server (relayed to it): ${processReps} fresh sessions recalling at once, then ${warmup} + ${reps} recall and store_memory calls`);
        relayedStartup = runJobChild<StdioStartupResult>(ctx, 'bench/child/stdioStartup.ts', { args: stdioArgs, projectDir, runs: processReps, query: queries[0]!, pauseMs: STDIO_PAUSE_MS } satisfies StdioStartupJob);
        relayedCalls = this.calls({ kind: 'stdio', args: stdioArgs, projectDir, warmup, reps, first: recalls[1]!, series: { recall: recalls, store: generatedStores(warmup + reps) } });
      } finally {
        await stopServer(server, projectDir);
      }

      ctx.log('  floors: no-op SDK server (per request, reused), bare HTTP');
      const noop: GeneratedCall[] = [{ name: 'noop', args: { text: 'x' } }];
      const floors = {} as SizeResult['floors'];
      const rows: SizeResult['rows'] = {};
      const addRow = (key: string, samples: number[] | undefined) => {
        if (samples) rows[key] = { summary: summarise(samples), samples };
      };
      addRow('recall', ltm.samples.recall);
      addRow('store', ltm.samples.store);
      for (const [key, mode] of [['perRequest', 'per-request'], ['reused', 'reused']] as const) {
        const floor = await startPortChild(ctx.childScript('bench/child/mcpNoopServer.ts'), [mode]);
        try {
          const result = this.calls({ kind: 'mcp', url: `http://127.0.0.1:${floor.port}/mcp`, warmup, reps, first: noop[0]!, series: { noop } });
          floors[key] = { connectMs: result.connectMs, firstCallMs: result.firstCallMs, sessionId: result.sessionId, peakRssMb: peakRssMb(floor.child.pid!) };
          addRow(key === 'perRequest' ? 'noopPerRequest' : 'noopReused', result.samples.noop);
        } finally {
          floor.child.kill('SIGKILL');
        }
      }
      const bare = await startPortChild(ctx.childScript('bench/child/bareServer.ts'));
      let barePeakRss: number | null;
      try {
        const body = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'recall', arguments: { query: queries[0] } } };
        addRow('bare', this.calls({ kind: 'bare', port: bare.port, warmup, reps, body }).samples.bare);
        barePeakRss = peakRssMb(bare.child.pid!);
      } finally {
        bare.child.kill('SIGKILL');
      }

      ctx.log(`  the same recall and store_memory calls to ltm mcp (stdio, as the plugin launches it), for its peak RSS`);
      const stdioStores = generatedStores(warmup + reps);
      const stdioCalls = this.calls({ kind: 'stdio', args: stdioArgs, projectDir, warmup, reps, first: recalls[1]!, series: { recall: recalls, store: stdioStores } });
      addRow('stdioRecall', stdioCalls.samples.recall);
      addRow('stdioStore', stdioCalls.samples.store);
      addRow('relayedRecall', relayedCalls.samples.recall);
      addRow('relayedStore', relayedCalls.samples.store);

      const memoriesAfter = fs.readdirSync(storePaths(projectDir).memories).filter((f) => f.endsWith('.md')).length;
      return {
        size,
        build: `${build.method === 'store' ? 'store() for every memory' : 'generated files + fix()'}, ${build.totalSeconds.toFixed(1)} s`,
        reps,
        startupRuns: processReps,
        rows,
        startup: { recall: summarise(startup.recall), sessionStart: summarise(startup.sessionStart), serving: summarise(startup.serving) },
        startupWithoutCaches: { recall: summarise(noCaches.recall), sessionStart: summarise(noCaches.sessionStart) },
        startupCopied: summarise(copied.recall),
        startupInGit: summarise(inGit.sessionStart),
        stdio: { handshake: summarise(stdio.handshake), recallAtOnce: summarise(stdio.recallAtOnce), recallAfterPause: summarise(stdio.recallAfterPause) },
        ltm: { connectMs: ltm.connectMs, firstCallMs: ltm.firstCallMs, sessionId: ltm.sessionId },
        floors,
        memoriesAfter,
        load: { start: loadStart, end: os.loadavg()[0]! },
        bytesPerStore,
        peakRssMb: peakRss,
        barePeakRssMb: barePeakRss,
        stdioPeakRssMb: stdioCalls.peakRssMb ?? null,
        relayed: { recallAtOnce: summarise(relayedStartup.recallAtOnce), peakRssMb: relayedCalls.peakRssMb ?? null },
      };
    } finally {
      fs.rmSync(projectDir, { recursive: true, force: true });
    }
  }

  /**
   * Serve start → first session_start in a git copy of the project (gitCopyOf): the
   * session start reads git and ranks by the situation. One untimed start first:
   * a copy's caches name other inodes until a server has saved them again.
   */
  private startupsInGit(projectDir: string, query: string, runs: number): StartupResult {
    const copy = gitCopyOf(projectDir);
    try {
      const job = (n: number): StartupJob => ({ cliPath: this.ctx.cliPath, projectDir: copy, query, runs: n, kinds: ['sessionStart'] });
      runJobChild<StartupResult>(this.ctx, 'bench/child/serveStartup.ts', job(1));
      return runJobChild<StartupResult>(this.ctx, 'bench/child/serveStartup.ts', job(runs));
    } finally {
      fs.rmSync(copy, { recursive: true, force: true });
    }
  }

  /** The bytes of every memory file: the burst's own files are its growth, not "per store" overhead. */
  private memoryFileBytes(projectDir: string): number {
    const dir = storePaths(projectDir).memories;
    let total = 0;
    for (const name of fs.readdirSync(dir)) if (name.endsWith('.md')) total += fs.statSync(`${dir}/${name}`).size;
    return total;
  }

  private calls(job: CallsJob): CallsResult {
    return runJobChild<CallsResult>(this.ctx, 'bench/child/mcpCalls.ts', job);
  }
}

// ---------------------------------------------------------------------------------------------
// Report

const ROWS: [key: string, label: string][] = [
  ['recall', 'MCP recall'],
  ['store', 'MCP store_memory'],
  ['noopPerRequest', 'no-op tool, server per request (floor)'],
  ['noopReused', 'no-op tool, server reused (floor)'],
  ['bare', 'bare HTTP (machine floor)'],
  ['stdioRecall', 'ltm mcp (stdio): recall'],
  ['stdioStore', 'ltm mcp (stdio): store_memory'],
  ['relayedRecall', 'ltm mcp beside ltm serve (relayed): recall'],
  ['relayedStore', 'ltm mcp beside ltm serve (relayed): store_memory'],
];

function rowsFor(r: SizeResult): TimingRow[] {
  return ROWS.filter(([key]) => r.rows[key]).map(([key, label]) => ({ label, description: DESCRIBE[key] ?? key, summary: r.rows[key]!.summary }));
}

function medianMax(s: Summary): string {
  return `${ms(s.median)} ms (max ${ms(s.max)})`;
}

function sizeTables(r: SizeResult): Table[] {
  const label = fmtInt(r.size);
  return [
    timingTable(
      `${label} memories: MCP calls`,
      rowsFor(r),
      `The MCP SDK client in its own process, one call at a time, over HTTP on keep-alive connections (over stdio in the ltm mcp rows); ${r.reps} timed calls per row after the warm-up.`,
    ),
    {
      title: `${label} memories: start and first calls`,
      columns: ['Item', 'Value', 'What it is'],
      align: ['l', 'r', 'l'],
      rows: [
        ['store', r.build, 'built as in the engine section'],
        ['serve start → first recall', medianMax(r.startup.recall), `median (max) of ${r.startupRuns} fresh \`ltm serve\` processes: spawn → "serving", the SDK client connects (initialize, initialized) and calls recall, timed by the process that spawned the server`],
        ['serve start → first session_start', medianMax(r.startup.sessionStart), `median (max) of ${r.startupRuns} more: spawn → "serving", then POST /hook/session_start with the token and port of server.json`],
        ['serve start → first recall, no caches', medianMax(r.startupWithoutCaches.recall), `median (max) of ${NO_CACHE_RUNS} fresh servers with parse-cache.json and search-index.bin deleted before each: every memory file read, parsed and indexed`],
        ['serve start → first session_start, no caches', medianMax(r.startupWithoutCaches.sessionStart), `the same, ${NO_CACHE_RUNS} more`],
        [
          'serve start → first recall, copied project',
          medianMax(r.startupCopied),
          `median (max) of ${NO_CACHE_RUNS} fresh servers, each in a fresh copy of the project (fs.cpSync, as \`cp -r\`): the caches are there, but every file has a new inode and time, so every entry is stale`,
        ],
        [
          'serve start → first session_start, git repository',
          medianMax(r.startupInGit),
          `median (max) of ${r.startupRuns} fresh servers in a git copy of the project (the project and its memories committed, then 3 commits of code files, one changed in the tree, on a branch): the session start reads git and ranks by that situation`,
        ],
        ['serve start → serving', medianMax(r.startup.serving), 'spawn → "serving" on stdout (server.json written), over all those processes'],
        ['ltm mcp (stdio): spawn → handshake', medianMax(r.stdio.handshake), `median (max) of ${r.stdio.handshake.n} fresh \`ltm mcp\` processes (the plugin's MCP server, one per session) started by the SDK's stdio client`],
        ['ltm mcp (stdio): spawn → first recall at once', medianMax(r.stdio.recallAtOnce), `median (max) of ${r.stdio.recallAtOnce.n} of them: recall called as soon as the handshake was done, while the store opens`],
        [
          `ltm mcp (stdio): first recall after ${STDIO_PAUSE_MS} ms`,
          medianMax(r.stdio.recallAfterPause),
          `median (max) of ${r.stdio.recallAfterPause.n} others: the first recall alone, called ${STDIO_PAUSE_MS} ms after the handshake (about a model's first answer), when the store has opened on its own`,
        ],
        ['connect', `${ms(r.ltm.connectMs)} ms`, `initialize + notifications/initialized to the running server (session ${r.ltm.sessionId ? 'given' : 'none: stateless'})`],
        ['first call after connect', `${ms(r.ltm.firstCallMs)} ms`, 'the first recall of that client (not in the rows above)'],
        ['floor first call', `${ms(r.floors.perRequest.firstCallMs)} / ${ms(r.floors.reused.firstCallMs)} ms`, 'the first no-op call after connecting: server per request / reused'],
        ['memories after', fmtInt(r.memoriesAfter), 'files in memories/ after the store_memory calls'],
        [
          'bytes written per store_memory',
          r.bytesPerStore ? `${fmtBytes(r.bytesPerStore.burst)} / ${fmtBytes(r.bytesPerStore.withPause)}` : 'not measured',
          `what \`ltm serve\` wrote (wchar of /proc/<pid>/io: files and HTTP answers) per call in a burst of ${BURST} store_memory calls, less the memory files themselves; ` +
            `then the same with what it wrote in the ${AFTER_BURST_MS} ms pause after (index.json once${r.bytesPerStore ? `, ${fmtBytes(r.bytesPerStore.indexJson)}` : ''})`,
        ],
        ['server peak RSS', mbText(r.peakRssMb), 'VmHWM of the `ltm serve` process after start, the recall and store_memory calls and the burst'],
        ['floors: peak RSS', rssFloorsText(r), rssFloorsWhat(r)],
        ['ltm mcp (stdio): peak RSS', mbText(r.stdioPeakRssMb), `VmHWM of an \`ltm mcp\` process started as the plugin starts it, after ${fmtInt(r.reps)} recall and ${fmtInt(r.reps)} store_memory calls (and the warm-up)`],
        [
          'ltm mcp beside ltm serve: spawn → first recall at once',
          medianMax(r.relayed.recallAtOnce),
          `median (max) of ${r.relayed.recallAtOnce.n} fresh \`ltm mcp\` processes started while \`ltm serve\` runs: they relay the session to it and open no store`,
        ],
        ['ltm mcp beside ltm serve: peak RSS', mbText(r.relayed.peakRssMb), `VmHWM of such an \`ltm mcp\` after ${fmtInt(r.reps)} recall and ${fmtInt(r.reps)} store_memory calls relayed (and the warm-up)`],
        ['load average (1 min)', `${r.load.start.toFixed(2)} → ${r.load.end.toFixed(2)}`, "at the start and end of this size's measurements"],
      ],
    },
  ];
}

/** The floors' peak RSS: what Node and the MCP SDK take before LTM keeps anything. */
function rssFloorsText(r: SizeResult): string {
  return `${mbText(r.floors.reused.peakRssMb)} / ${mbText(r.barePeakRssMb)}`;
}

function mbText(value: number | null | undefined): string {
  return value === null || value === undefined ? 'not measured' : `${value.toFixed(1)} MB`;
}

function rssFloorsWhat(r: SizeResult): string {
  return `VmHWM of the reused no-op SDK server and of the bare HTTP server after their calls (a warmup and ${fmtInt(r.reps)} timed, as many as recall's)`;
}

function summaryTable(results: readonly SizeResult[]): Table {
  const cell = (s: Summary | undefined) => (s ? `${ms(s.median)} / ${ms(s.p99)} / ${ms(s.max)}` : null);
  return {
    title: 'Summary',
    caption: 'Median / p99 / max in milliseconds.',
    columns: ['Operation', ...results.map((r) => `${fmtInt(r.size)} memories`)],
    align: ['l', ...results.map(() => 'r' as const)],
    rows: [
      ...ROWS.map(([key, label]) => [label, ...results.map((r) => cell(r.rows[key]?.summary))]),
      ['serve start → first recall', ...results.map((r) => cell(r.startup.recall))],
      ['serve start → first session_start', ...results.map((r) => cell(r.startup.sessionStart))],
      ['first call after connect', ...results.map((r) => ms(r.ltm.firstCallMs))],
      ['ltm mcp (stdio): spawn → first recall at once', ...results.map((r) => cell(r.stdio.recallAtOnce))],
      [`ltm mcp (stdio): first recall after ${STDIO_PAUSE_MS} ms`, ...results.map((r) => cell(r.stdio.recallAfterPause))],
      ['bytes written per store_memory (burst / with the pause after)', ...results.map((r) => (r.bytesPerStore ? `${fmtBytes(r.bytesPerStore.burst)} / ${fmtBytes(r.bytesPerStore.withPause)}` : null))],
      ['server peak RSS', ...results.map((r) => mbText(r.peakRssMb))],
      ['floors: peak RSS (no-op SDK server reused / bare HTTP)', ...results.map(rssFloorsText)],
      ['ltm mcp (stdio): peak RSS', ...results.map((r) => mbText(r.stdioPeakRssMb))],
      ['ltm mcp beside ltm serve (relayed): spawn → first recall at once', ...results.map((r) => cell(r.relayed.recallAtOnce))],
      ['ltm mcp beside ltm serve (relayed): peak RSS', ...results.map((r) => mbText(r.relayed.peakRssMb))],
    ],
  };
}

function targetsFor(r: SizeResult): Target[] {
  const at = fmtInt(r.size);
  const recall = r.rows.recall!.summary;
  const store = r.rows.store!.summary;
  const floor = r.rows.noopReused!.summary;
  const overFloor = limit('recallOverFloor', r.size);
  return [
    target(`MCP recall p99 at ${at}`, `p99 of ${recall.n} recall calls through the SDK client (median ${ms(recall.median)} ms)`, recall.p99, limit('recallP99', r.size), 'ms'),
    target(`MCP store_memory p99 at ${at}`, `p99 of ${store.n} store_memory calls (median ${ms(store.median)} ms)`, store.p99, limit('storeP99', r.size), 'ms'),
    target(
      `MCP recall p99 vs the reused no-op floor at ${at}`,
      `recall p99 ${ms(recall.p99)} ms over the no-op p99 ${ms(floor.p99)} ms (at most ${overFloor}×)`,
      recall.p99 / floor.p99,
      overFloor,
      '×',
    ),
    target(`First MCP call after connect at ${at}`, 'the first recall after the client connected to a running server whose /health said ready (store open, search index loaded)', r.ltm.firstCallMs, limit('firstCall', r.size), 'ms'),
    target(
      `Serve start → first recall at ${at}`,
      `median of ${r.startupRuns} fresh servers (max ${ms(r.startup.recall.max)} ms)`,
      r.startup.recall.median,
      limit('startToFirstAnswer', r.size),
      'ms',
    ),
    target(
      `Serve start → first session_start at ${at}`,
      `median of ${r.startupRuns} fresh servers (max ${ms(r.startup.sessionStart.max)} ms)`,
      r.startup.sessionStart.median,
      limit('startToFirstAnswer', r.size),
      'ms',
    ),
    target(
      `Serve start → first session_start in a git repository at ${at}`,
      `median of ${r.startupRuns} fresh servers in a git copy of the project, which session start ranks by (max ${ms(r.startupInGit.max)} ms)`,
      r.startupInGit.median,
      limit('startToFirstAnswer', r.size),
      'ms',
    ),
    target(
      `ltm mcp (stdio): first recall ${STDIO_PAUSE_MS} ms after the handshake at ${at}`,
      `median of ${r.stdio.recallAfterPause.n} fresh \`ltm mcp\` sessions, the first recall alone (max ${ms(r.stdio.recallAfterPause.max)} ms)`,
      r.stdio.recallAfterPause.median,
      limit('firstCall', r.size),
      'ms',
    ),
    target(
      `ltm mcp (stdio): spawn → first recall at once at ${at}`,
      `median of ${r.stdio.recallAtOnce.n} fresh \`ltm mcp\` sessions, recall called right after the handshake (max ${ms(r.stdio.recallAtOnce.max)} ms)`,
      r.stdio.recallAtOnce.median,
      limit('startToFirstAnswer', r.size),
      'ms',
    ),
    ...(['recall', 'sessionStart'] as const).map((kind) =>
      target(
        `Serve start → first ${kind === 'recall' ? 'recall' : 'session_start'} without caches at ${at}`,
        `median of ${NO_CACHE_RUNS} fresh servers, parse-cache.json and search-index.bin deleted (max ${ms(r.startupWithoutCaches[kind].max)} ms)`,
        r.startupWithoutCaches[kind].median,
        limit('startWithoutCaches', r.size),
        'ms',
      ),
    ),
    target(
      `Serve start → first recall in a copied project at ${at}`,
      `median of ${NO_CACHE_RUNS} fresh servers, each in a fresh copy of the project: every cache entry stale (max ${ms(r.startupCopied.max)} ms)`,
      r.startupCopied.median,
      limit('startWithoutCaches', r.size),
      'ms',
    ),
    ...(r.peakRssMb === null
      ? []
      : [
          target(
            `Server peak RSS at ${at}`,
            `VmHWM of \`ltm serve\` after start, recall, store_memory and a burst of stores (floors after as many calls as recall's: the reused no-op SDK server / bare HTTP ${rssFloorsText(r)})`,
            r.peakRssMb,
            limit('peakRss', r.size),
            'MB',
          ),
        ]),
  ];
}

export const mcpSection: BenchSection = {
  id: 'mcp',
  title: 'MCP (the tools over Streamable HTTP)',
  async run(ctx: BenchContext): Promise<SectionResult> {
    const bench = new McpBench(ctx);
    const results: SizeResult[] = [];
    for (const size of ctx.options.sizes) {
      ctx.log(`mcp: ${fmtInt(size)} memories`);
      results.push(await bench.measureSize(size));
    }
    // Targets at 10,000 and 50,000 where measured; else at the largest size, with the 10,000 limits below it.
    const targeted = results.filter((r) => r.size === 10_000 || r.size === 50_000);
    const targetRuns = targeted.length > 0 ? targeted : [results[results.length - 1]!];
    return {
      id: 'mcp',
      title: 'MCP (the tools over Streamable HTTP)',
      intro:
        'The MCP tools as Claude Code calls them: the MCP SDK client (StreamableHTTPClientTransport) over real HTTP on 127.0.0.1 against ' +
        '`node dist/cli.js serve --project <dir>` in its own process, on stores built as in the engine section. Beside them, the floor: ' +
        'the same client against a minimal SDK server with a no-op tool (a server built per request, and one reused per session), and bare HTTP. ' +
        "Also `ltm mcp`, the Claude Code plugin's MCP server over stdio (one process per session), started by the SDK's stdio client. " +
        `Targets: recall p99 ≤ ${LIMITS.recallP99[0]} ms at 10,000 memories (≤ ${LIMITS.recallP99[1]} at 50,000), store_memory p99 ≤ ${LIMITS.storeP99[0]} ms (≤ ${LIMITS.storeP99[1]}), ` +
        `recall p99 ≤ ${LIMITS.recallOverFloor[0]} × the reused no-op p99, the first call after connecting ≤ ${LIMITS.firstCall[0]} ms, ` +
        `serve start → first recall and → first session_start ≤ ${LIMITS.startToFirstAnswer[0]} ms at 10,000 (≤ ${LIMITS.startToFirstAnswer[1]} ms at 50,000).`,
      tables: [summaryTable(results), ...results.flatMap(sizeTables)],
      targets: targetRuns.flatMap(targetsFor),
      notes: [
        'Every client runs in a small Node process of its own (bench/child/mcpCalls.ts, bench/child/serveStartup.ts), so the bench\'s large heap stays out of the times. ' +
          'Each call is timed from before callTool to its parsed result, as Claude Code waits for it; every result is checked (no isError).',
        'The store_memory calls add memories to the store (see "memories after"); max_memories is size − 100, but eviction runs only after session_end, which these calls do not send.',
        "Before the server for the timed calls starts, the page cache's dirty data is written out (sync(1), bench/lib/machine.ts settleDisk): otherwise a store's fsync waited for the setup's own writes (the store built, the project copied and committed).",
      ],
      raw: results,
    };
  },
};
