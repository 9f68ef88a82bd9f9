/**
 * npm run eval:recall [-- --pipeline a,b] [--misses] [--no-write] [--split tune]
 *
 * Scores every search pipeline of bench/eval/pipelines.ts on the recall
 * evaluation set (bench/eval/): a fresh store in a temporary directory holds
 * the set's memories, stored with the real engine; each query is searched and
 * R@5, R@10 and MRR@10 are averaged per kind and per split (tune, heldout,
 * and each blind split, all). Prints a table per pipeline and writes
 * bench/eval/RESULTS.md. The heldout and blind splits are never tuned
 * on: report them, do not optimise them.
 * `--split tune` scores the tune split only (and writes nothing): what tuning
 * may look at, without the other splits' numbers in sight.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  EVAL_DIR,
  buildStore,
  evaluate,
  loadBlindQueries,
  loadEvalSet,
  renderMisses,
  renderTable,
  summarize,
  BLIND_FILES,
  BLIND_SPLITS,
  QUERY_KINDS,
  QUERY_SPLITS,
  type QueryResult,
  type Split,
} from '../bench/eval/evalSet';
import { renderOffers, scoreOffers } from '../bench/eval/offers';
import { pipelines, type Pipeline } from '../bench/eval/pipelines';

const SPLIT_NAMES: readonly Split[] = QUERY_SPLITS;

function parseArgs(argv: readonly string[]): { names: string[] | undefined; misses: boolean; write: boolean; split: Split | undefined } {
  let names: string[] | undefined;
  let misses = false;
  let write = true;
  let split: Split | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--misses') misses = true;
    else if (arg === '--no-write') write = false;
    else if (arg === '--pipeline' || arg.startsWith('--pipeline=')) {
      const value = arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : argv[++i];
      if (!value) throw new Error('--pipeline needs a comma-separated list of names');
      names = value.split(',').map((s) => s.trim()).filter(Boolean);
    } else if (arg === '--split' || arg.startsWith('--split=')) {
      const value = arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : argv[++i];
      split = SPLIT_NAMES.find((name) => name === value);
      if (!split) throw new Error(`--split needs one of ${SPLIT_NAMES.join(', ')}`);
      // RESULTS.md holds every split: a run over one of them must not replace it.
      write = false;
    } else throw new Error(`unknown argument ${arg} (use --pipeline a,b, --misses, --no-write, --split ${SPLIT_NAMES.join('|')})`);
  }
  return { names, misses, write, split };
}

async function main(): Promise<void> {
  const { names, misses, write, split } = parseArgs(process.argv.slice(2));
  const selected: Pipeline[] = names ? names.map((n) => {
    const p = pipelines.find((x) => x.name === n);
    if (!p) throw new Error(`no pipeline "${n}"; known: ${pipelines.map((x) => x.name).join(', ')}`);
    return p;
  }) : [...pipelines];

  const { memories, queries: drawn } = loadEvalSet();
  const queries = [...drawn, ...BLIND_SPLITS.flatMap((s) => loadBlindQueries(s))].filter((q) => !split || q.split === split);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ltm-eval-'));
  const sections: string[] = [];
  try {
    const { store, idOf } = await buildStore(memories, dir);
    try {
      const offers = renderOffers(scoreOffers(store, queries, idOf), split);
      console.log(`\n## Memories offered unasked (prompts and tool errors; the relevance gate)\n\n${offers}`);
      sections.push(`## Memories offered unasked\n\nThe relevance gate of src/core/promptContext.ts: a \`prompt\` or \`tool_error\` query is served when one of its relevant memories is offered (at most 3); a prompt of bench/eval/unrelated-prompts.json (about nothing stored) that gets any offer is a false offer; the blind splits have prompts only, so only served. The default gate was chosen on the tune split.\n\n${offers}\n`);
      for (const pipeline of selected) {
        const results: QueryResult[] = await evaluate(pipeline, store, queries, idOf);
        const table = renderTable(summarize(results));
        console.log(`\n## ${pipeline.name}: ${pipeline.description}\n\n${table}`);
        if (misses) console.log(`\nMisses (relevant memory not in the top 5):\n${renderMisses(results, memories) || '(none)'}`);
        sections.push(`## Pipeline \`${pipeline.name}\`\n\n${pipeline.description}.\n\n${table}\n`);
      }
    } finally {
      store.dispose();
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }

  if (!write) return;
  const counts = QUERY_KINDS.map((k) => `${k} ${queries.filter((q) => q.kind === k).length}`).join(', ');
  const heldout = queries.filter((q) => q.split === 'heldout').length;
  const blindCounts = BLIND_SPLITS.map((s) => `bench/eval/${BLIND_FILES[s]}: ${queries.filter((q) => q.split === s).length} queries of split ${s}`).join(';\n');
  const date = new Date().toISOString().slice(0, 10);
  const text = `# Recall evaluation results

Written by \`npm run eval:recall\` on ${date}. The numbers depend only on the engine and the set
(bench/eval/memories.json: ${memories.length} memories; bench/eval/queries.json: ${drawn.length} queries,
${heldout} of them held out;
${blindCounts}), not on the machine.
See bench/eval/README.md for the set and its rules.

- **R@k**: fraction of a query's relevant memories among the first k results, averaged over the queries.
- **MRR@10**: 1 / rank of the first relevant memory within the first 10 (0 if none), averaged.
- **tune / heldout / blind / blind2 / blind3 / blind4 / all**: the query splits. Tune on *tune* only; *heldout* and the blind
  splits are reported, never optimised.
  *blind* queries were written after the semantic layer by someone who had seen neither it nor its vocabulary.
  *blind2* queries were written in the same way, after the second round of vocabulary ("Broader vocabulary").
  *blind3* queries were written in the same way, over memories no earlier blind query was about, before the
  third round of tuning. *blind4* queries were written in the same way, over the memories no earlier blind query
  was about, after the third round and before any further tuning: the number to quote now.
- **Targets** (from the issue): R@5 ≥ 0.90 for every kind, ≥ 0.85 for paraphrase. "met" compares R@5 of each split with the target.

Queries per kind: ${counts}.

${sections.join('\n')}`;
  const out = path.join(EVAL_DIR, 'RESULTS.md');
  fs.writeFileSync(out, text);
  console.log(`\nwrote ${path.relative(process.cwd(), out)}`);
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
