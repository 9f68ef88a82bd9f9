/**
 * When memories are offered unasked (with a prompt, or a tool's error): the
 * relevance gate of src/core/promptContext.ts scored on the evaluation set.
 * A positive is a `prompt` or `tool_error` query: it is served when one of its
 * relevant memories is among the memories offered (at most 3). A negative is
 * a prompt about nothing stored (unrelated-prompts.json): any offer is false.
 * Gates are compared on the tune split; the heldout and blind splits are
 * reported (the blind split has prompts only, no unrelated ones).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DEFAULT_RELEVANCE_GATE, isSearchablePrompt, type RelevanceGate } from '../../src/core/promptContext';
import type { MemoryStore } from '../../src/core/store';
import { drawHeldout, EVAL_DIR, type EvalQuery, type Split } from './evalSet';

export function loadUnrelatedPrompts(dir: string = EVAL_DIR): { id: string; text: string; split: Split }[] {
  const { prompts } = JSON.parse(fs.readFileSync(path.join(dir, 'unrelated-prompts.json'), 'utf8')) as { prompts: string[] };
  const items = prompts.map((text, i) => ({ id: `n${String(i + 1).padStart(3, '0')}`, kind: 'prompt' as const, text }));
  const heldout = drawHeldout(items);
  return items.map(({ id, text }) => ({ id, text, split: heldout.has(id) ? 'heldout' : 'tune' }));
}

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
    for (const split of ['tune', 'heldout', 'blind'] as const) {
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
  const rows = ['| min words | min strength | served (tune) | false offers (tune) | served (heldout) | false offers (heldout) | served (blind) |', '|---:|---:|---:|---:|---:|---:|---:|'];
  const isDefault = (g: RelevanceGate) => g.minWords === DEFAULT_RELEVANCE_GATE.minWords && g.minStrength === DEFAULT_RELEVANCE_GATE.minStrength;
  const shown = (score: OfferScore) => !only || score.split === only;
  const pct = (a: number, b: number, score: OfferScore) => (shown(score) ? `${a}/${b} (${b === 0 ? '–' : Math.round((100 * a) / b)} %)` : '–');
  for (let i = 0; i < scores.length; i += 3) {
    const [tune, heldout, blind] = [scores[i]!, scores[i + 1]!, scores[i + 2]!];
    const mark = isDefault(tune.gate) ? ' **(default)**' : '';
    rows.push(`| ${tune.gate.minWords} | ${tune.gate.minStrength}${mark} | ${pct(tune.served, tune.positives, tune)} | ${pct(tune.falseOffers, tune.negatives, tune)} | ${pct(heldout.served, heldout.positives, heldout)} | ${pct(heldout.falseOffers, heldout.negatives, heldout)} | ${pct(blind.served, blind.positives, blind)} |`);
  }
  return rows.join('\n');
}
