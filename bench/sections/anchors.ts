/**
 * Anchors: what telling stale memories costs (src/core/staleness.ts). A
 * project of code files (one per ten memories, 200 lines each) and a store
 * whose every memory is anchored to one or two ranges of them; then a
 * "checkout" rewrites 100 files (half move the anchored lines down, half
 * change them) and the whole store's staleness is refreshed.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createAnchor } from '../../src/core/anchors';
import { toJsonText } from '../../src/core/files';
import { renderNewMemoryFile } from '../../src/core/memoryFile';
import { DEFAULT_CONFIG } from '../../src/core/model';
import { MemoryStore } from '../../src/core/store';
import { defaultState, stateJson, storePaths } from '../../src/core/storeFiles';
import type { BenchContext, BenchSection } from '../lib/context';
import { Corpus } from '../lib/corpus';
import { Random } from '../lib/random';
import { target, timingTable, type SectionResult, type Target, type TimingRow } from '../lib/report';
import { collectGarbage, measure, summarise, timeOnce } from '../lib/stats';

const MEMORIES_PER_FILE = 10;
const LINES_PER_FILE = 200;
const CHECKOUT_FILES = 100;
const SEED = 4242;

function codeFile(fileNumber: number, variant = ''): string {
  return Array.from({ length: LINES_PER_FILE }, (_, i) => `export const value${fileNumber}_${i + 1}${variant} = ${i + 1};`).join('\n') + '\n';
}

interface Built {
  project: string;
  files: string[];
  anchoredMemories: number;
}

function build(ctx: BenchContext, size: number): Built {
  const project = fs.mkdtempSync(path.join(ctx.tmpRoot, `anchors-${size}-`));
  const paths = storePaths(project);
  fs.mkdirSync(paths.memories, { recursive: true });
  const state = defaultState();
  state.config = { ...DEFAULT_CONFIG, max_memories: size * 2 };
  fs.writeFileSync(paths.state, toJsonText(stateJson(state)));
  const fileCount = Math.max(1, Math.round(size / MEMORIES_PER_FILE));
  const files: string[] = [];
  const texts: string[] = [];
  for (let f = 0; f < fileCount; f++) {
    const rel = `src/module${Math.floor(f / 100)}/file${f}.ts`;
    fs.mkdirSync(path.join(project, path.dirname(rel)), { recursive: true });
    const text = codeFile(f);
    fs.writeFileSync(path.join(project, rel), text);
    files.push(rel);
    texts.push(text);
  }
  const corpus = new Corpus(SEED + size);
  const rng = new Random(SEED ^ size);
  for (let i = 0; i < size; i++) {
    const m = corpus.memory();
    const anchors = Array.from({ length: 1 + (i % 2) }, () => {
      const f = rng.int(0, fileCount - 1);
      const start = rng.int(1, LINES_PER_FILE - 10);
      return createAnchor({ path: files[f]!, lines: [start, start + rng.int(0, 9)] }, texts[f]!);
    });
    const id = `mem_${(0x10000000 + i).toString(16)}`;
    fs.writeFileSync(
      path.join(paths.memories, `${id}.md`),
      renderNewMemoryFile({ id, topic: m.topic, tags: m.tags, phase: 0, difficulty: m.difficulty, created_at: new Date().toISOString(), created_session: 0, summary: m.topic, content: m.content, anchors }),
    );
  }
  return { project, files, anchoredMemories: size };
}

export const anchorsSection: BenchSection = {
  id: 'anchors',
  title: 'Anchors: telling stale memories',
  async run(ctx: BenchContext): Promise<SectionResult> {
    const rows: TimingRow[] = [];
    const targets: Target[] = [];
    const raw: Record<string, unknown> = {};
    for (const size of ctx.options.sizes) {
      ctx.log(`  anchors: ${size.toLocaleString('en-US')} anchored memories over ${Math.round(size / MEMORIES_PER_FILE).toLocaleString('en-US')} files`);
      const built = build(ctx, size);
      const store = MemoryStore.open(built.project);
      try {
        await store.fix();
        collectGarbage();
        const first = await timeOnce(() => store.staleMemories());
        const again = await timeOnce(() => store.staleMemories());
        // A checkout of 100 files: half gain two lines at the top (anchors move), half change every line.
        const touched = built.files.slice(0, CHECKOUT_FILES);
        touched.forEach((rel, i) => {
          const f = built.files.indexOf(rel);
          fs.writeFileSync(path.join(built.project, rel), i % 2 === 0 ? `// a\n// b\n${codeFile(f)}` : codeFile(f, 'x'));
        });
        const afterCheckout = await timeOnce(() => store.staleMemories());
        const follow = await timeOnce(() => store.followAnchors());
        const ids = store.list({ limit: 1_000_000 }).memories.map((m) => m.id);
        const rng = new Random(size);
        const get = await measure(ctx.options.reps, ctx.options.warmup, () => {
          const id = ids[rng.int(0, ids.length - 1)]!;
          return [store.peek(id), store.staleness(id)] as const;
        });
        const stale = afterCheckout.result.length;
        rows.push(
          { label: `staleness, whole store, first (${size})`, description: 'staleMemories() right after open: every anchored file read and hashed once', summary: summarise([first.ms]) },
          { label: `staleness, whole store, unchanged (${size})`, description: 'staleMemories() again: a stat per anchored file, nothing read', summary: summarise([again.ms]) },
          { label: `staleness after a ${CHECKOUT_FILES}-file checkout (${size})`, description: `staleMemories() after ${CHECKOUT_FILES} files changed: those read again, lines that moved looked for (${stale} stale)`, summary: summarise([afterCheckout.ms]) },
          { label: `follow moved anchors (${size})`, description: `followAnchors(): ${follow.result.length} memories rewritten with the lines their text moved to`, summary: summarise([follow.ms]) },
          { label: `get with staleness (${size})`, description: 'peek(id) + staleness(id), random memories (what get_memory adds to a get)', summary: get.summary },
        );
        if (size === 10_000) {
          targets.push(
            target(`staleness after a ${CHECKOUT_FILES}-file checkout @10k`, `staleMemories() with ${size / MEMORIES_PER_FILE} anchored files`, afterCheckout.ms, 200, 'ms'),
            target('get with staleness p99 @10k', 'peek + staleness', get.summary.p99, 2, 'ms'),
          );
        }
        raw[String(size)] = { first: first.ms, again: again.ms, afterCheckout: afterCheckout.ms, stale, followed: follow.result.length, follow: follow.ms, get: get.samples };
      } finally {
        store.dispose();
        fs.rmSync(built.project, { recursive: true, force: true });
      }
    }
    return {
      id: 'anchors',
      title: 'Anchors: telling stale memories',
      intro: `Every memory anchored to one or two ranges of ${LINES_PER_FILE}-line code files, one file per ${MEMORIES_PER_FILE} memories. Costs grow with the number of anchored files (a stat each) and the files that changed (a read and hash each), not with the number of memories beyond their anchors.`,
      tables: [timingTable('Staleness', rows)],
      targets,
      notes: [],
      raw,
    };
  },
};
