/**
 * When memories are offered unasked (with a prompt, or a tool's error): the
 * relevance gate of src/core/promptContext.ts scored on the evaluation set.
 * A positive is a `prompt` or `tool_error` query: it is served when one of its
 * relevant memories is among the memories offered (at most 3). A negative is
 * a prompt about nothing stored (unrelated-prompts.json): any offer is false.
 * Gates are compared on the tune split; the heldout and blind splits
 * are reported, never tuned on (the blind splits have prompts only, no
 * unrelated ones).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DEFAULT_RELEVANCE_GATE, isSearchablePrompt, type RelevanceGate } from '../../src/core/promptContext';
import type { MemoryStore } from '../../src/core/store';
import { drawHeldout, EVAL_DIR, QUERY_SPLITS, type EvalQuery, type Split } from './evalSet';

export function loadUnrelatedPrompts(dir: string = EVAL_DIR): { id: string; text: string; split: Split }[] {
  const { prompts } = JSON.parse(fs.readFileSync(path.join(dir, 'unrelated-prompts.json'), 'utf8')) as { prompts: string[] };
  const items = prompts.map((text, i) => ({ id: `n${String(i + 1).padStart(3, '0')}`, kind: 'prompt' as const, text }));
  const heldout = drawHeldout(items);
  return items.map(({ id, text }) => ({ id, text, split: heldout.has(id) ? 'heldout' : 'tune' }));
}

/** Only tune and heldout have unrelated prompts: the blind splits have served columns only. */
const hasNegatives = (split: Split): boolean => split === 'tune' || split === 'heldout';

export interface OfferScore {
  gate: RelevanceGate;
  split: Split;
  /** Positives with a relevant memory offered / positives. */
  served: number;
  positives: number;
  /** Negatives with any offer / negatives. */
  falseOffers: number;
  negatives: number;
}

/** Gates tried: the default and its neighbours. */
export const GATES: readonly RelevanceGate[] = [2, 3, 4].flatMap((minWords) => [2, 4, 6, 8, 10, 12].map((minStrength) => ({ minWords, minStrength })));

export function scoreOffers(store: MemoryStore, queries: readonly EvalQuery[], idOf: ReadonlyMap<string, string>, gates: readonly RelevanceGate[] = GATES): OfferScore[] {
  const positives = queries.filter((q) => q.kind === 'prompt' || q.kind === 'tool_error');
  const negatives = loadUnrelatedPrompts();
  const scores: OfferScore[] = [];
  for (const gate of gates) {
    for (const split of QUERY_SPLITS) {
      const pos = positives.filter((q) => q.split === split);
      const neg = negatives.filter((n) => n.split === split);
      // A prompt the hook would not search (a slash command, one word) is offered nothing.
      const offered = (text: string) => (isSearchablePrompt(text) ? store.relevantTo(text, { gate }).map((o) => o.view.id) : []);
      const served = pos.filter((q) => offered(q.text).some((id) => q.relevant.some((key) => idOf.get(key) === id))).length;
      const falseOffers = neg.filter((n) => offered(n.text).length > 0).length;
      scores.push({ gate, split, served, positives: pos.length, falseOffers, negatives: neg.length });
    }
  }
  return scores;
}

/** The table of gates; `only`: show that split's columns, the others as – (a tuning run must not see them). */
export function renderOffers(scores: readonly OfferScore[], only?: Split): string {
  const columns = QUERY_SPLITS.flatMap((split) => [
    { split, head: `served (${split})`, value: (s: OfferScore) => [s.served, s.positives] as const },
    ...(hasNegatives(split) ? [{ split, head: `false offers (${split})`, value: (s: OfferScore) => [s.falseOffers, s.negatives] as const }] : []),
  ]);
  const rows = [`| min words | min strength | ${columns.map((c) => c.head).join(' | ')} |`, `|---:|---:|${columns.map(() => '---:').join('|')}|`];
  const isDefault = (g: RelevanceGate) => g.minWords === DEFAULT_RELEVANCE_GATE.minWords && g.minStrength === DEFAULT_RELEVANCE_GATE.minStrength;
  const pct = ([a, b]: readonly [number, number]) => `${a}/${b} (${b === 0 ? '–' : Math.round((100 * a) / b)} %)`;
  // One row per gate, in the order scored: split → score.
  const byGate = new Map<string, { gate: RelevanceGate; bySplit: Map<Split, OfferScore> }>();
  for (const score of scores) {
    const key = `${score.gate.minWords}/${score.gate.minStrength}`;
    if (!byGate.has(key)) byGate.set(key, { gate: score.gate, bySplit: new Map() });
    byGate.get(key)!.bySplit.set(score.split, score);
  }
  for (const { gate, bySplit } of byGate.values()) {
    const mark = isDefault(gate) ? ' **(default)**' : '';
    const cells = columns.map((c) => {
      const score = bySplit.get(c.split);
      return score && (!only || c.split === only) ? pct(c.value(score)) : '–';
    });
    rows.push(`| ${gate.minWords} | ${gate.minStrength}${mark} | ${cells.join(' | ')} |`);
  }
  return rows.join('\n');
}
