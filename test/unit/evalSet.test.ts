import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  BLIND_SPLITS,
  QUERY_KINDS,
  QUERY_SPLITS,
  average,
  buildStore,
  drawHeldout,
  evaluate,
  loadBlindQueries,
  loadEvalSet,
  recallAt,
  reciprocalRankAt,
  summarize,
  type BlindSplit,
  type EvalQuery,
} from '../../bench/eval/evalSet';
import { pipelines, type Pipeline } from '../../bench/eval/pipelines';
import { renderOffers } from '../../bench/eval/offers';
import type { MemoryStore } from '../../src/core/store';

const { memories, queries } = loadEvalSet();

describe('recall evaluation set: the data', () => {
  it('has at least 200 memories with unique keys and no empty field', () => {
    assert.ok(memories.length >= 200, `${memories.length} memories`);
    assert.equal(new Set(memories.map((m) => m.key)).size, memories.length, 'keys are unique');
    for (const m of memories) {
      for (const field of ['key', 'topic', 'summary', 'content'] as const) {
        assert.equal(typeof m[field], 'string', `${m.key}.${field} is a string`);
        assert.ok(m[field].trim(), `${m.key}.${field} is not empty`);
      }
      assert.ok(Array.isArray(m.tags) && m.tags.length >= 1 && m.tags.length <= 4, `${m.key} has 1–4 tags`);
      for (const tag of m.tags) assert.ok(tag.trim() && tag === tag.toLowerCase() && tag === tag.trim(), `${m.key} tag "${tag}" is lowercase`);
    }
  });

  it('has at least 120 queries with unique ids, known kinds and existing relevant keys', () => {
    assert.ok(queries.length >= 120, `${queries.length} queries`);
    assert.equal(new Set(queries.map((q) => q.id)).size, queries.length, 'ids are unique');
    const keys = new Set(memories.map((m) => m.key));
    for (const q of queries) {
      assert.ok((QUERY_KINDS as readonly string[]).includes(q.kind), `${q.id} kind ${q.kind}`);
      assert.ok(q.text.trim(), `${q.id} text is not empty`);
      assert.ok(q.split === 'tune' || q.split === 'heldout', `${q.id} split ${q.split}`);
      assert.ok(q.relevant.length >= 1, `${q.id} has a relevant memory`);
      assert.equal(new Set(q.relevant).size, q.relevant.length, `${q.id} lists each relevant memory once`);
      for (const key of q.relevant) assert.ok(keys.has(key), `${q.id} relevant ${key} exists`);
    }
  });

  const blindMinimum: Record<BlindSplit, number> = { blind: 30, blind2: 50, blind3: 50, blind4: 50 };
  for (const split of BLIND_SPLITS) {
    it(`has ${split} queries of known kinds, with ids of their own and existing relevant keys`, () => {
      const blind = loadBlindQueries(split);
      assert.ok(blind.length >= blindMinimum[split], `${blind.length} ${split} queries`);
      // Ids clash neither with the drawn queries nor with another blind file's.
      const ids = new Set([...queries, ...BLIND_SPLITS.filter((s) => s !== split).flatMap((s) => loadBlindQueries(s))].map((q) => q.id));
      const keys = new Set(memories.map((m) => m.key));
      for (const q of blind) {
        assert.equal(q.split, split);
        assert.ok(!ids.has(q.id), `${q.id} is not also a drawn query or a query of another blind file`);
        assert.ok((QUERY_KINDS as readonly string[]).includes(q.kind), `${q.id} kind ${q.kind}`);
        assert.ok(q.text.trim(), `${q.id} text is not empty`);
        assert.ok(q.relevant.length >= 1 && q.relevant.every((key) => keys.has(key)), `${q.id} relevant keys exist`);
        assert.equal(new Set(q.relevant).size, q.relevant.length, `${q.id} lists each relevant memory once`);
      }
      assert.equal(new Set(blind.map((q) => q.id)).size, blind.length, 'ids are unique');
    });
  }

  it('has at least 12 queries of every kind, 20–40 % of them held out', () => {
    for (const kind of QUERY_KINDS) {
      const ofKind = queries.filter((q) => q.kind === kind);
      assert.ok(ofKind.length >= 12, `${kind}: ${ofKind.length} queries`);
      const share = ofKind.filter((q) => q.split === 'heldout').length / ofKind.length;
      assert.ok(share >= 0.2 && share <= 0.4, `${kind}: heldout share ${share}`);
    }
  });

  it('holds out exactly the seeded draw (no query was moved by hand)', () => {
    const heldout = drawHeldout(queries);
    for (const q of queries) assert.equal(q.split, heldout.has(q.id) ? 'heldout' : 'tune', `${q.id} split`);
  });
});

describe('recall evaluation: the metrics', () => {
  it('computes R@k and reciprocal rank by hand on small lists', () => {
    const ranked = ['a', 'b', 'c', 'd', 'e', 'f', 'g'];
    assert.equal(recallAt(ranked, ['c', 'x'], 5), 0.5);
    assert.equal(recallAt(ranked, ['f'], 5), 0);
    assert.equal(recallAt(ranked, ['f'], 10), 1);
    assert.equal(recallAt(ranked, ['a', 'e', 'g'], 5), 2 / 3);
    assert.equal(reciprocalRankAt(ranked, ['c', 'x'], 10), 1 / 3);
    assert.equal(reciprocalRankAt(ranked, ['x'], 10), 0);
    assert.equal(reciprocalRankAt(ranked, ['g', 'b'], 10), 1 / 2);
    assert.equal(reciprocalRankAt(ranked, ['g'], 5), 0, 'MRR@k ignores ranks past k');
  });

  it('averages a constructed case per kind and split through evaluate() and summarize()', async () => {
    // Store IDs are not keys: evaluate() must map them back.
    const idOf = new Map(['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'l'].map((key) => [key, `mem-${key}`]));
    const answers: Record<string, string[]> = {
      q1: ['a', 'b', 'c', 'd', 'e', 'f'], // relevant c, x → R@5 .5, R@10 .5, RR 1/3
      q2: ['a', 'b', 'c', 'd', 'e', 'f'], // relevant f → R@5 0, R@10 1, RR 1/6
      q3: ['b', 'a'], //                     relevant a → R@5 1, R@10 1, RR 1/2
      q4: ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k'], // relevant k → 0, 0, 0
    };
    const fake: Pipeline = {
      name: 'fake',
      description: 'fixed answers',
      search: (_store: MemoryStore, query: string, limit: number) => answers[query]!.slice(0, limit).map((key) => idOf.get(key)!),
    };
    const q = (id: string, kind: EvalQuery['kind'], relevant: string[], split: EvalQuery['split']): EvalQuery => ({ id, kind, text: id, relevant, split });
    const set = [q('q1', 'keyword', ['c', 'x'], 'tune'), q('q2', 'keyword', ['f'], 'heldout'), q('q3', 'typo', ['a'], 'tune'), q('q4', 'typo', ['k'], 'tune')];
    const results = await evaluate(fake, undefined as unknown as MemoryStore, set, idOf);
    assert.deepEqual(results.map((r) => [r.r5, r.r10, r.mrr10]), [[0.5, 0.5, 1 / 3], [0, 1, 1 / 6], [1, 1, 1 / 2], [0, 0, 0]]);
    assert.deepEqual(results[2]!.ranked, ['b', 'a'], 'IDs are mapped back to keys');

    const rows = summarize(results).rows;
    const close = (actual: number, expected: number, what: string) => assert.ok(Math.abs(actual - expected) < 1e-12, `${what}: ${actual} vs ${expected}`);
    const keyword = rows.get('keyword')!;
    assert.equal(keyword.all.n, 2);
    close(keyword.all.r5, 0.25, 'keyword R@5');
    close(keyword.all.r10, 0.75, 'keyword R@10');
    close(keyword.all.mrr10, 0.25, 'keyword MRR@10');
    close(keyword.tune.r5, 0.5, 'keyword tune R@5');
    close(keyword.heldout.r10, 1, 'keyword heldout R@10');
    const typo = rows.get('typo')!;
    assert.equal(typo.heldout.n, 0);
    close(typo.tune.r5, 0.5, 'typo R@5');
    close(typo.tune.mrr10, 0.25, 'typo MRR@10');
    const overall = rows.get('overall')!;
    assert.equal(overall.all.n, 4);
    close(overall.all.r5, 1.5 / 4, 'overall R@5');
    close(overall.all.r10, 2.5 / 4, 'overall R@10');
    close(overall.all.mrr10, (1 / 3 + 1 / 6 + 1 / 2) / 4, 'overall MRR@10');
    close(overall.tune.mrr10, (1 / 3 + 1 / 2) / 3, 'overall tune MRR@10');
    assert.equal(rows.has('paraphrase'), false, 'kinds without queries have no row');
    assert.deepEqual(average([]), { n: 0, r5: 0, r10: 0, mrr10: 0 });
  });
});

describe('recall evaluation: end to end on a slice', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ltm-evalset-'));
  });
  afterEach(() => {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('builds a real store from 20 memories and scores the store pipeline and an oracle', async () => {
    const slice = memories.slice(0, 20);
    const inSlice = new Set(slice.map((m) => m.key));
    const sliceQueries = queries.filter((q) => q.relevant.every((key) => inSlice.has(key)));
    assert.ok(sliceQueries.length >= 5, `${sliceQueries.length} queries in the slice`);
    // Plus one query per memory: its own topic, which the engine must rank first.
    const topicQueries: EvalQuery[] = slice.map((m) => ({ id: `t-${m.key}`, kind: 'keyword', text: m.topic, relevant: [m.key], split: 'tune' }));

    const { store, idOf } = await buildStore(slice, dir);
    try {
      assert.equal(idOf.size, 20);
      assert.equal(store.status().total_memories, 20);
      const storePipeline = pipelines.find((p) => p.name === 'store')!;
      const byTopic = await evaluate(storePipeline, store, topicQueries, idOf);
      for (const r of byTopic) assert.equal(r.ranked[0], r.query.relevant[0], `"${r.query.text}" finds its own memory first`);
      assert.equal(summarize(byTopic).rows.get('overall')!.all.mrr10, 1);

      const results = await evaluate(storePipeline, store, sliceQueries, idOf);
      for (const r of results) {
        assert.ok(r.ranked.length <= 10 && r.ranked.every((key) => inSlice.has(key)), `${r.query.id} returns slice keys`);
        for (const v of [r.r5, r.r10, r.mrr10]) assert.ok(v >= 0 && v <= 1);
        assert.ok(r.r5 <= r.r10);
      }

      const oracle: Pipeline = {
        name: 'oracle',
        description: 'the relevant memories, then nothing',
        search: (_s, text) => sliceQueries.find((q) => q.text === text)!.relevant.map((key) => idOf.get(key)!),
      };
      const perfect = summarize(await evaluate(oracle, store, sliceQueries, idOf)).rows.get('overall')!.all;
      assert.deepEqual(perfect, { n: sliceQueries.length, r5: 1, r10: 1, mrr10: 1 });
    } finally {
      store.dispose();
    }
  });
});

describe('the offers table for one split (eval:recall --split)', () => {
  it('shows only that split\'s numbers, the others as –', () => {
    const gate = { minWords: 3, minStrength: 8 };
    const scores = QUERY_SPLITS.map((split, i) => ({ gate, split, served: i + 1, positives: 10, falseOffers: i, negatives: 5 }));
    const table = (only?: 'tune' | 'blind2') => renderOffers(scores, only).split('\n');
    const row = (only?: 'tune' | 'blind2') => table(only).find((line) => line.startsWith('| 3 | 8'))!;
    assert.equal(table()[0], '| min words | min strength | served (tune) | false offers (tune) | served (heldout) | false offers (heldout) | served (blind) | served (blind2) | served (blind3) | served (blind4) |');
    assert.equal(row(), '| 3 | 8 **(default)** | 1/10 (10 %) | 0/5 (0 %) | 2/10 (20 %) | 1/5 (20 %) | 3/10 (30 %) | 4/10 (40 %) | 5/10 (50 %) | 6/10 (60 %) |');
    assert.equal(row('tune'), '| 3 | 8 **(default)** | 1/10 (10 %) | 0/5 (0 %) | – | – | – | – | – | – |');
    assert.equal(row('blind2'), '| 3 | 8 **(default)** | – | – | – | – | – | 4/10 (40 %) | – | – |');
  });
});
