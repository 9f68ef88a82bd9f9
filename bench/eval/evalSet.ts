/**
 * The recall evaluation set (bench/eval/memories.json, queries.json) and the
 * code that scores a search pipeline on it: loading and the held-back draw,
 * building a store with the real engine, per-query metrics (R@5, R@10,
 * MRR@10) and their averages per kind and split. `npm run eval:recall`
 * (scripts/evalRecall.ts) drives it; test/unit/evalSet.test.ts checks it.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { MemoryStore } from '../../src/core/store';
import type { Pipeline } from './pipelines';

export const EVAL_DIR = __dirname;

export const QUERY_KINDS = ['keyword', 'identifier', 'error', 'tag', 'typo', 'paraphrase', 'prompt', 'tool_error'] as const;
export type QueryKind = (typeof QUERY_KINDS)[number];
/**
 * tune: what tuning may look at. heldout: the seeded draw, reported, never tuned on. blind:
 * blind-queries.json, written after the semantic layer by someone who had not seen it or its
 * vocabulary (see README.md). blind2: blind-queries-2.json, written the same way after the second
 * round of vocabulary. blind3: blind-queries-3.json, written the same way before the third round
 * of tuning (word forms over prefixes). blind4: blind-queries-4.json, written the same way over the
 * memories no earlier blind query was about, before any further tuning: the fairest measure of how
 * search generalises. Nothing is tuned on heldout or any blind split.
 */
export type Split = 'tune' | 'heldout' | BlindSplit;

/** The blind query files, each its own split (see README.md). */
export const BLIND_FILES = { blind: 'blind-queries.json', blind2: 'blind-queries-2.json', blind3: 'blind-queries-3.json', blind4: 'blind-queries-4.json' } as const;
export type BlindSplit = keyof typeof BLIND_FILES;
export const BLIND_SPLITS = Object.keys(BLIND_FILES) as BlindSplit[];

export interface EvalMemory {
  key: string;
  topic: string;
  summary: string;
  content: string;
  tags: string[];
}

export interface EvalQuery {
  id: string;
  kind: QueryKind;
  text: string;
  relevant: string[];
  split: Split;
}

/** The issue's targets: R@5 per kind. */
export const R5_TARGET: Record<QueryKind, number> = {
  keyword: 0.9,
  identifier: 0.9,
  error: 0.9,
  tag: 0.9,
  typo: 0.9,
  paraphrase: 0.85,
  prompt: 0.9,
  tool_error: 0.9,
};

export function loadEvalSet(dir: string = EVAL_DIR): { memories: EvalMemory[]; queries: EvalQuery[] } {
  const memories = JSON.parse(fs.readFileSync(path.join(dir, 'memories.json'), 'utf8')) as EvalMemory[];
  const queries = JSON.parse(fs.readFileSync(path.join(dir, 'queries.json'), 'utf8')) as EvalQuery[];
  return { memories, queries };
}

/** The queries of one blind file (BLIND_FILES: blind-queries.json for `blind`, …), all of that split. */
export function loadBlindQueries(split: BlindSplit = 'blind', dir: string = EVAL_DIR): EvalQuery[] {
  const queries = JSON.parse(fs.readFileSync(path.join(dir, BLIND_FILES[split]), 'utf8')) as Omit<EvalQuery, 'split'>[];
  return queries.map((q) => ({ ...q, split }));
}

// ---------------------------------------------------------------------------
// The held-back draw

/** Fixed before any result was looked at; see bench/eval/README.md. */
export const HELDOUT_SEED = 'ltm-recall-eval-v1';
export const HELDOUT_SHARE = 0.3;

/**
 * The held-back queries: within each kind, queries are ordered by
 * sha256(`${seed}:${id}`) and the first round(30 % × n) are held out. Adding
 * a query to a kind moves at most one other query between the splits.
 */
export function drawHeldout(queries: readonly Pick<EvalQuery, 'id' | 'kind'>[], seed: string = HELDOUT_SEED): Set<string> {
  const heldout = new Set<string>();
  const byKind = new Map<string, string[]>();
  for (const q of queries) byKind.set(q.kind, [...(byKind.get(q.kind) ?? []), q.id]);
  const hash = (id: string) => createHash('sha256').update(`${seed}:${id}`).digest('hex');
  for (const ids of byKind.values()) {
    const ordered = ids.map((id) => ({ id, h: hash(id) })).sort((a, b) => (a.h < b.h ? -1 : a.h > b.h ? 1 : 0));
    for (const { id } of ordered.slice(0, Math.round(HELDOUT_SHARE * ids.length))) heldout.add(id);
  }
  return heldout;
}

// ---------------------------------------------------------------------------
// Building a store

/** Stores every memory with the real engine in `projectDir`; returns key → memory ID. */
export async function buildStore(memories: readonly EvalMemory[], projectDir: string): Promise<{ store: MemoryStore; idOf: Map<string, string> }> {
  const store = MemoryStore.open(projectDir);
  const idOf = new Map<string, string>();
  for (const m of memories) {
    const { memory } = await store.store({ topic: m.topic, summary: m.summary, content: m.content, tags: m.tags });
    idOf.set(m.key, memory.id);
  }
  return { store, idOf };
}

// ---------------------------------------------------------------------------
// Metrics

/** Fraction of the relevant keys found in the first k of `ranked`. */
export function recallAt(ranked: readonly string[], relevant: readonly string[], k: number): number {
  if (relevant.length === 0) return 0;
  const top = new Set(ranked.slice(0, k));
  return relevant.filter((key) => top.has(key)).length / relevant.length;
}

/** 1 / rank of the first relevant key within the first k, or 0. */
export function reciprocalRankAt(ranked: readonly string[], relevant: readonly string[], k: number): number {
  const wanted = new Set(relevant);
  const index = ranked.slice(0, k).findIndex((key) => wanted.has(key));
  return index < 0 ? 0 : 1 / (index + 1);
}

export interface QueryResult {
  query: EvalQuery;
  /** Memory keys, best first (IDs the set does not know are kept as they are). */
  ranked: string[];
  r5: number;
  r10: number;
  mrr10: number;
}

export const EVAL_LIMIT = 10;

/** Runs one pipeline on every query; `idOf` maps keys to the store's IDs. */
export async function evaluate(pipeline: Pipeline, store: MemoryStore, queries: readonly EvalQuery[], idOf: ReadonlyMap<string, string>): Promise<QueryResult[]> {
  const keyOf = new Map([...idOf].map(([key, id]) => [id, key]));
  const results: QueryResult[] = [];
  for (const query of queries) {
    const ids = await pipeline.search(store, query.text, EVAL_LIMIT);
    const ranked = ids.map((id) => keyOf.get(id) ?? id);
    results.push({
      query,
      ranked,
      r5: recallAt(ranked, query.relevant, 5),
      r10: recallAt(ranked, query.relevant, 10),
      mrr10: reciprocalRankAt(ranked, query.relevant, 10),
    });
  }
  return results;
}

export interface Cell {
  n: number;
  r5: number;
  r10: number;
  mrr10: number;
}

export type SplitName = Split | 'all';
/** Every split a query can have, in the order they are reported. */
export const QUERY_SPLITS: readonly Split[] = ['tune', 'heldout', ...BLIND_SPLITS];
export const SPLITS: readonly SplitName[] = [...QUERY_SPLITS, 'all'];

/** Averages over the results that pass `keep`; all zero when none does. */
export function average(results: readonly QueryResult[], keep: (r: QueryResult) => boolean = () => true): Cell {
  const kept = results.filter(keep);
  const mean = (f: (r: QueryResult) => number) => (kept.length ? kept.reduce((s, r) => s + f(r), 0) / kept.length : 0);
  return { n: kept.length, r5: mean((r) => r.r5), r10: mean((r) => r.r10), mrr10: mean((r) => r.mrr10) };
}

export interface Summary {
  /** row (a kind, or 'overall') → split → cell */
  rows: Map<QueryKind | 'overall', Record<SplitName, Cell>>;
}

export function summarize(results: readonly QueryResult[]): Summary {
  const rows = new Map<QueryKind | 'overall', Record<SplitName, Cell>>();
  const bySplit = (filter: (r: QueryResult) => boolean): Record<SplitName, Cell> => {
    const cells = { all: average(results, filter) } as Record<SplitName, Cell>;
    for (const split of QUERY_SPLITS) cells[split] = average(results, (r) => filter(r) && r.query.split === split);
    return cells;
  };
  for (const kind of QUERY_KINDS) {
    if (results.some((r) => r.query.kind === kind)) rows.set(kind, bySplit((r) => r.query.kind === kind));
  }
  rows.set('overall', bySplit(() => true));
  return { rows };
}

// ---------------------------------------------------------------------------
// Rendering

const f2 = (x: number) => x.toFixed(2);

/** A Markdown table: one row per kind, n/R@5/R@10/MRR@10 per split, and the R@5 target. */
export function renderTable(summary: Summary): string {
  const head = ['kind', ...SPLITS.flatMap((s) => [`n ${s}`, `R@5 ${s}`, `R@10 ${s}`, `MRR@10 ${s}`]), 'R@5 target', `met (${QUERY_SPLITS.join(' / ')})`];
  const lines = [`| ${head.join(' | ')} |`, `|${head.map((_, i) => (i === 0 ? '---' : '---:')).join('|')}|`];
  for (const [kind, cells] of summary.rows) {
    const target = kind === 'overall' ? undefined : R5_TARGET[kind];
    const met = (c: Cell) => (target === undefined || c.n === 0 ? '–' : c.r5 >= target ? 'yes' : 'no');
    const values = SPLITS.flatMap((s) => {
      const c = cells[s];
      return [String(c.n), c.n ? f2(c.r5) : '–', c.n ? f2(c.r10) : '–', c.n ? f2(c.mrr10) : '–'];
    });
    lines.push(`| ${kind} | ${values.join(' | ')} | ${target === undefined ? '' : `≥ ${f2(target)}`} | ${QUERY_SPLITS.map((s) => met(cells[s])).join(' / ')} |`);
  }
  return lines.join('\n');
}

/** The queries whose relevant memories are not all in the top 5, for analysis. */
export function renderMisses(results: readonly QueryResult[], memories: readonly EvalMemory[]): string {
  const topicOf = new Map(memories.map((m) => [m.key, m.topic]));
  const out: string[] = [];
  for (const r of results) {
    if (r.r5 === 1) continue;
    const top5 = new Set(r.ranked.slice(0, 5));
    out.push(`${r.query.id} [${r.query.kind}/${r.query.split}] ${JSON.stringify(r.query.text.length > 160 ? `${r.query.text.slice(0, 157)}...` : r.query.text)}`);
    for (const key of r.query.relevant) {
      const rank = r.ranked.indexOf(key);
      out.push(`  expected ${key}${top5.has(key) ? ' (in top 5)' : rank >= 0 ? ` (rank ${rank + 1})` : ' (not in top 10)'}: ${topicOf.get(key) ?? '?'}`);
    }
    r.ranked.slice(0, 3).forEach((key, i) => out.push(`  found #${i + 1} ${key}: ${topicOf.get(key) ?? '?'}`));
    if (r.ranked.length === 0) out.push('  found nothing');
  }
  return out.join('\n');
}
