/**
 * Reciprocal-rank fusion: several rankings of the same items (one per way of
 * asking) made into one. An item's score is the sum over rankings of
 * 1 / (k + rank), so an item near the top of several rankings beats one at the
 * top of a single ranking, and no ranking's raw scores need to be comparable
 * with another's. k = 60 is the value of the method's paper (Cormack, Clarke
 * and Büttcher, 2009), which is robust across collections.
 */
export const RRF_K = 60;

/**
 * Fuses rankings (IDs best first) into one ranking, best first. Ties are
 * broken by the best rank an item reached, then by the first ranking it
 * appears in: the same input always gives the same order.
 */
export function reciprocalRankFusion(rankings: readonly (readonly string[])[], k = RRF_K): string[] {
  const fused = new Map<string, { score: number; bestRank: number; firstList: number }>();
  rankings.forEach((ranking, list) => {
    const seen = new Set<string>();
    ranking.forEach((id, index) => {
      // An ID listed twice in one ranking counts once, at its better rank.
      if (seen.has(id)) return;
      seen.add(id);
      const entry = fused.get(id);
      if (entry) {
        entry.score += 1 / (k + index + 1);
        entry.bestRank = Math.min(entry.bestRank, index);
      } else {
        fused.set(id, { score: 1 / (k + index + 1), bestRank: index, firstList: list });
      }
    });
  });
  return [...fused]
    .sort(([, a], [, b]) => b.score - a.score || a.bestRank - b.bestRank || a.firstList - b.firstList)
    .map(([id]) => id);
}
