/**
 * What the Claude Code plugin's SessionStart hook costs when no server runs
 * (`ltm hook session_start`: Node starts, opens the store, ranks, counts the
 * session, writes its caches), at 0 memories and at a store of N synthetic
 * ones (bench/lib/corpus.ts, written as files and indexed by fix(), as
 * `npm run bench` builds its large stores). Each run is the command with the
 * payload on stdin, as Claude Code runs it; the first run at a size is cold
 * (no parse cache or search index yet), the others warm. Also SessionEnd.
 *
 *   npm run build && node --import tsx scripts/plugin-hook-timing.ts [memories = 10000] [runs = 7]
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { MemoryStore } from '../src/core/store';
import { toJsonText } from '../src/core/files';
import { deriveSummary, normaliseTags, renderNewMemoryFile } from '../src/core/memoryFile';
import { DEFAULT_CONFIG } from '../src/core/model';
import { defaultState, stateJson, storePaths } from '../src/core/storeFiles';
import { Corpus } from '../bench/lib/corpus';
import { CLI, requireBuiltCli } from '../test/support/ltmProcess';

const size = Number(process.argv[2] ?? 10_000);
const runs = Number(process.argv[3] ?? 7);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function buildStore(projectDir: string, count: number): Promise<void> {
  const paths = storePaths(projectDir);
  fs.mkdirSync(paths.memories, { recursive: true });
  const state = defaultState();
  // Above the store's size: the SessionEnd runs measure a session's end, not an eviction of thousands.
  state.config = { ...DEFAULT_CONFIG, max_memories: count + 100 };
  fs.writeFileSync(paths.state, toJsonText(stateJson(state)));
  const corpus = new Corpus(42 + count);
  for (let i = 0; i < count; i++) {
    const m = corpus.memory();
    const id = `mem_${i.toString(16).padStart(8, '0')}`;
    const raw = renderNewMemoryFile({ id, topic: m.topic, tags: normaliseTags(m.tags), phase: 0, difficulty: m.difficulty, created_at: new Date().toISOString(), created_session: 0, summary: deriveSummary(m.content) || m.topic, content: m.content });
    fs.writeFileSync(path.join(paths.memories, `${id}.md`), raw);
  }
  const store = MemoryStore.open(projectDir);
  await store.fix();
  store.dispose();
}

function hook(event: string, projectDir: string, sessionId: string): { ms: number; out: string } {
  const payload = JSON.stringify({ session_id: sessionId, hook_event_name: event === 'session_start' ? 'SessionStart' : 'SessionEnd', source: 'startup', cwd: projectDir });
  const t0 = performance.now();
  const r = spawnSync(process.execPath, [CLI, 'hook', event], { input: payload, env: { ...process.env, CLAUDE_PROJECT_DIR: projectDir, LTM_PORT: '', LTM_TOKEN: '' }, encoding: 'utf8' });
  return { ms: performance.now() - t0, out: r.stdout };
}

async function main(): Promise<void> {
  requireBuiltCli();
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ltm-plugin-timing-'));
  try {
    const t0 = performance.now();
    for (let i = 0; i < runs; i++) spawnSync(process.execPath, ['-e', '0'], { encoding: 'utf8' });
    const bareNode = (performance.now() - t0) / runs;
    console.log(`node -e 0 (process start alone): ${bareNode.toFixed(0)} ms`);
    for (const count of [0, size]) {
      const project = path.join(root, `store-${count}`);
      fs.mkdirSync(project);
      if (count > 0) {
        const b0 = performance.now();
        await buildStore(project, count);
        console.log(`built ${count} memories in ${((performance.now() - b0) / 1000).toFixed(1)} s`);
      }
      const starts: number[] = [];
      const ends: number[] = [];
      let cold = 0;
      for (let i = 0; i <= runs; i++) {
        const start = hook('session_start', project, `timing-${i}`);
        if (!start.out.includes('Long-term memory')) throw new Error(`no context at ${count}: ${start.out}`);
        if (i === 0) cold = start.ms;
        else starts.push(start.ms);
        ends.push(hook('session_end', project, `timing-${i}`).ms);
      }
      console.log(`${count} memories: SessionStart cold ${cold.toFixed(0)} ms, warm median ${median(starts).toFixed(0)} ms (min ${Math.min(...starts).toFixed(0)}, max ${Math.max(...starts).toFixed(0)}); SessionEnd median ${median(ends).toFixed(0)} ms`);
    }
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}

void main();
