import { strict as assert } from 'node:assert';
import fc from 'fast-check';
import { DEFAULT_INJECTION_BUDGET_TOKENS, MAX_HOOK_CONTEXT_CHARS, buildInjection, estimateTokens, type InjectionOptions } from '../../src/core/injection';
import type { Phase } from '../../src/core/model';
import { memoryView } from '../support/storeKit';

const mem = memoryView;

const OPTIONS: InjectionOptions = { limit: 10, budgetTokens: DEFAULT_INJECTION_BUDGET_TOKENS };
const INTRO =
  '## Long-term memory (LTM)\n' +
  'What earlier sessions of this project learned, highest priority first. ' +
  'Hints and abstracts are reduced memories: get_memory or restore_memory brings back detail.';
const STORE_HINT = 'Store new lessons with the store_memory tool (mcp__ltm__store_memory) or /remember.';
const more = (n: number) =>
  `${n} more memor${n === 1 ? 'y is' : 'ies are'} stored. Search them with the recall tool (mcp__ltm__recall) or /recall <query>; archived ones with search_archives.`;
const id = (n: number) => `mem_${n.toString(16).padStart(8, '0')}`;

describe('injection: buildInjection', () => {
  it('renders full memories, hints and abstracts as what they are, highest priority first, and says how many more exist', () => {
    const ranked = [
      mem({ id: 'mem_0000000a', topic: 'Postgres pool', tags: ['database', 'postgres'], summary: 'Raise the pool to 50.', content: 'The pool of 10 ran dry.\n\nBatch jobs held connections.', priority: 0.876 }),
      mem({ id: 'mem_0000000b', topic: 'Venv path', phase: 1, summary: 'Use .venv.', content: 'Tools look for .venv first.', priority: 0.5 }),
      mem({ id: 'mem_0000000c', topic: 'Old CI  note', phase: 2, summary: 'CI cache\nkeyed by lockfile.', content: 'Hash of package-lock.json.', priority: 0.125 }),
    ];
    const injection = buildInjection(ranked, 7, OPTIONS);
    const expected = [
      INTRO,
      '### Postgres pool\n_memory · mem_0000000a · tags: database, postgres · priority 0.88_\nRaise the pool to 50.\nThe pool of 10 ran dry.\n\nBatch jobs held connections.',
      '### Venv path\n_hint · mem_0000000b · priority 0.50_\nUse .venv.\nKey point: Tools look for .venv first.',
      '### Old CI note\n_abstract · mem_0000000c · priority 0.13_\nCI cache keyed by lockfile. (Hash of package-lock.json.)',
      more(4),
    ].join('\n\n');
    assert.equal(injection.text, expected);
    assert.deepEqual(injection.injectedIds, ['mem_0000000a', 'mem_0000000b', 'mem_0000000c']);
    assert.equal(injection.omitted, 4);
    assert.equal(injection.estimatedTokens, Math.ceil(expected.length / 4));
  });

  it('says "1 more memory is" for one, and invites storing when nothing is left out', () => {
    const ranked = [mem({ id: id(1) }), mem({ id: id(2) })];
    assert.ok(
      buildInjection(ranked, 3, OPTIONS).text.endsWith(
        '\n\n1 more memory is stored. Search them with the recall tool (mcp__ltm__recall) or /recall <query>; archived ones with search_archives.',
      ),
    );
    assert.ok(buildInjection(ranked, 4, OPTIONS).text.endsWith('\n\n2 more memories are stored. Search them with the recall tool (mcp__ltm__recall) or /recall <query>; archived ones with search_archives.'));
    const all = buildInjection(ranked, 2, OPTIONS);
    assert.equal(all.omitted, 0);
    assert.ok(all.text.endsWith(`\n\n${STORE_HINT}`));
    assert.ok(!all.text.includes('recall'), 'no recall hint when nothing was left out');
  });

  it('answers an empty store with "No memories yet." and how to store one', () => {
    const injection = buildInjection([], 0, OPTIONS);
    assert.equal(injection.text, `${INTRO}\n\nNo memories yet. ${STORE_HINT}`);
    assert.deepEqual(injection.injectedIds, []);
    assert.equal(injection.omitted, 0);
    assert.equal(injection.estimatedTokens, estimateTokens(injection.text));
  });

  it('injects at most `limit` memories and counts the rest as omitted', () => {
    const ranked = Array.from({ length: 6 }, (_, i) => mem({ id: id(i), priority: 1 - i / 10 }));
    const two = buildInjection(ranked, 9, { ...OPTIONS, limit: 2 });
    assert.deepEqual(two.injectedIds, [id(0), id(1)]);
    assert.equal(two.omitted, 7);
    assert.ok(!two.text.includes(id(2)));
    assert.ok(two.text.endsWith(more(7)));
    const none = buildInjection(ranked, 6, { ...OPTIONS, limit: 0 });
    assert.deepEqual(none.injectedIds, []);
    assert.equal(none.text, `${INTRO}\n\n${more(6)}`);
  });

  it('does not repeat a full memory’s Content when it is its Summary, and bounds Content to contentChars', () => {
    const same = buildInjection([mem({ id: id(1), summary: 'Only this.', content: '  Only this.\n' })], 1, OPTIONS);
    assert.equal(same.text.split('\n\n')[1], `### Topic\n_memory · ${id(1)} · priority 0.50_\nOnly this.`);
    const long = buildInjection([mem({ id: id(1), summary: 'S.', content: 'alpha beta gamma delta epsilon zeta eta theta iota kappa' })], 1, { ...OPTIONS, contentChars: 30 });
    assert.equal(long.text.split('\n\n')[1], `### Topic\n_memory · ${id(1)} · priority 0.50_\nS.\nalpha beta gamma delta…`);
    // A Summary derived from the Content's first sentence is said once, by the Content.
    const derived = buildInjection([mem({ id: id(1), summary: 'First sentence.', content: 'First sentence. Then the details.' })], 1, OPTIONS);
    assert.equal(derived.text.split('\n\n')[1], `### Topic\n_memory · ${id(1)} · priority 0.50_\nFirst sentence. Then the details.`);
    const hint = buildInjection([mem({ id: id(2), phase: 1, summary: 'S.', content: 'alpha beta gamma delta epsilon zeta eta theta iota kappa' })], 1, { ...OPTIONS, contentChars: 30 });
    assert.equal(hint.text.split('\n\n')[1], `### Topic\n_hint · ${id(2)} · priority 0.50_\nS.\nKey point: alpha beta gamma delta…`);
  });

  it('puts an abstract on one line, each part at most 200 characters, and leaves out an empty Content', () => {
    const words = Array.from({ length: 80 }, (_, i) => `w${i}`).join('\n');
    const injection = buildInjection([mem({ id: id(1), phase: 2, summary: words, content: words }), mem({ id: id(2), phase: 2, summary: 'Short.', content: '  ' })], 2, OPTIONS);
    const [, first, second] = injection.text.split('\n\n');
    const body = first!.split('\n')[2]!;
    assert.equal(first!.split('\n').length, 3, 'header, then one line');
    const match = /^(.*) \((.*)\)$/.exec(body);
    assert.ok(match, body);
    for (const part of [match[1]!, match[2]!]) {
      assert.ok(part.length <= 200 && part.endsWith('…') && !part.includes('\n'), part);
      assert.ok(words.replace(/\n/g, ' ').startsWith(part.slice(0, -1)), part);
    }
    assert.equal(second, `### Topic\n_abstract · ${id(2)} · priority 0.50_\nShort.`);
  });

  it('shortens a memory that does not fit to its summary, then leaves out the rest once one does not fit at all', () => {
    const a = mem({ id: id(0xa), topic: 'First', summary: 'Sum A.', content: 'Content A.', priority: 0.9 });
    const b = mem({ id: id(0xb), topic: 'Second', summary: 'Sum B.', content: 'x '.repeat(290), priority: 0.8 });
    const c = mem({ id: id(0xc), topic: 'Long topic '.repeat(300), summary: 'Sum C.', content: 'c', priority: 0.7 });
    const d = mem({ id: id(0xd), topic: 'Tiny', summary: 'D.', content: 'd', priority: 0.6 });
    const fullA = `### First\n_memory · ${id(0xa)} · priority 0.90_\nSum A.\nContent A.`;
    const shortB = `### Second\n_memory · ${id(0xb)} · priority 0.80_\nSum B.`;
    // Room for the intro, the closing line's reserve (200), A in full and B as its summary: not B in full.
    const budgetTokens = Math.ceil((INTRO.length + 200 + fullA.length + 2 + shortB.length + 2) / 4);
    const injection = buildInjection([a, b, c, d], 4, { limit: 10, budgetTokens });
    assert.equal(injection.text, [INTRO, fullA, shortB, more(2)].join('\n\n'));
    assert.deepEqual(injection.injectedIds, [id(0xa), id(0xb)]);
    assert.equal(injection.omitted, 2);
    assert.ok(injection.estimatedTokens <= budgetTokens);
    // With room for everything, all four are injected in full.
    assert.deepEqual(buildInjection([a, b, c, d], 4, { limit: 10, budgetTokens: 100_000 }).injectedIds, [id(0xa), id(0xb), id(0xc), id(0xd)]);
  });

  it('shortens the summary of a memory that does not fit to one line of at most 200 characters', () => {
    const summary = Array.from({ length: 100 }, (_, i) => `s${i}`).join('\n');
    const m = mem({ id: id(1), topic: 'Big', summary, content: 'y '.repeat(300) });
    const budgetTokens = Math.ceil((INTRO.length + 200 + 260) / 4);
    const injection = buildInjection([m], 1, { limit: 10, budgetTokens });
    const block = injection.text.split('\n\n')[1]!;
    const lines = block.split('\n');
    assert.equal(lines.length, 3, block);
    assert.equal(lines[1], `_memory · ${id(1)} · priority 0.50_`);
    assert.ok(lines[2]!.length <= 200 && lines[2]!.endsWith('…') && lines[2]!.startsWith('s0 s1 s2'), lines[2]);
    assert.ok(!injection.text.includes('y y'), 'no Content');
    assert.ok(injection.text.length <= budgetTokens * 4);
  });

  it('puts memory text in verbatim as Markdown data: headings, fences and emphasis in Summary and Content are kept; the topic is one line', () => {
    const summary = 'Use `npm ci`, **never** `npm install` in CI.';
    const content = '## Why\nThe lockfile:\n\n```sh\nnpm ci\n```\n\n> quoted <b>html</b> & _emphasis_\n### Not a memory heading';
    const m = mem({ id: id(1), topic: '# Heading-like\ntopic  with   spaces\n', tags: ['ci', 'npm'], summary, content });
    const injection = buildInjection([m], 1, OPTIONS);
    assert.equal(
      injection.text,
      [INTRO, `### # Heading-like topic with spaces\n_memory · ${id(1)} · tags: ci, npm · priority 0.50_\n${summary}\n${content}`, STORE_HINT].join('\n\n'),
    );
    const hint = buildInjection([{ ...m, phase: 1 }], 1, OPTIONS);
    assert.ok(hint.text.includes(`\nKey point: ${content}\n\n${STORE_HINT}`));
  });

  it('closes a code fence that cutting the Content left open, so the memories after it are not read as code', () => {
    const content = '```sh\n' + 'echo step && '.repeat(60) + 'done\n```';
    for (const phase of [0, 1] as const) {
      const injection = buildInjection([mem({ id: id(1), phase, content }), mem({ id: id(2), topic: 'Next one' })], 2, OPTIONS);
      const fences = injection.text.match(/^```/gm) ?? [];
      assert.equal(fences.length % 2, 0, injection.text);
      assert.ok(injection.text.includes('…\n```\n\n### Next one'), injection.text);
    }
    // A fence the cut did not touch is left as it is.
    const whole = buildInjection([mem({ id: id(1), content: '```sh\nnpm ci\n```' })], 1, OPTIONS);
    assert.equal(whole.text.match(/^```/gm)?.length, 2);
  });

  it('shows at most 200 characters of a topic, so that one long topic does not keep every memory out', () => {
    const long = mem({ id: id(1), topic: 'x '.repeat(4_500) });
    const injection = buildInjection([long, mem({ id: id(2), topic: 'Small' })], 2, { limit: 10, budgetTokens: DEFAULT_INJECTION_BUDGET_TOKENS });
    assert.deepEqual(injection.injectedIds, [id(1), id(2)]);
    assert.ok(injection.estimatedTokens <= DEFAULT_INJECTION_BUDGET_TOKENS);
    assert.match(injection.text, /^### (?:x ){50,}x?…$/m);
  });

  it('returns injectedIds exactly of the memories in the text, as a prefix of the ranked list, and stays within the token budget (property)', () => {
    const textArb = (max: number) =>
      fc.oneof(
        { weight: 4, arbitrary: fc.string({ maxLength: 40 }) },
        { weight: 2, arbitrary: fc.lorem({ maxCount: 30 }) },
        { weight: 1, arbitrary: fc.tuple(fc.string({ minLength: 1, maxLength: 8 }), fc.integer({ min: 1, max: max })).map(([s, n]) => s.repeat(n)) },
      );
    const memoryArb = fc.record({
      topic: textArb(1500),
      summary: textArb(600),
      content: textArb(1000),
      tags: fc.array(fc.constantFrom('a', 'docker', 'importance:critical'), { maxLength: 3 }),
      phase: fc.constantFrom<Phase>(0, 1, 2),
      priority: fc.double({ min: 0, max: 1, noNaN: true }),
    });
    fc.assert(
      fc.property(
        fc.array(memoryArb, { maxLength: 14 }),
        fc.integer({ min: 0, max: 20 }),
        fc.integer({ min: 0, max: 15 }),
        fc.integer({ min: 100, max: 3000 }),
        fc.option(fc.integer({ min: 1, max: 2000 }), { nil: undefined }),
        (drawn, extra, limit, budgetTokens, contentChars) => {
          const ranked = drawn.map((m, i) => mem({ ...m, id: id(0x5a5a0000 + i) }));
          const total = ranked.length + extra;
          const injection = buildInjection(ranked, total, { limit, budgetTokens, contentChars });
          const { text, injectedIds } = injection;
          assert.ok(text.length <= budgetTokens * 4, `${text.length} chars for a budget of ${budgetTokens} tokens`);
          assert.equal(injection.estimatedTokens, Math.ceil(text.length / 4));
          assert.ok(injection.estimatedTokens <= budgetTokens);
          assert.deepEqual(injectedIds, ranked.slice(0, injectedIds.length).map((m) => m.id), 'a prefix of the ranked list');
          assert.ok(injectedIds.length <= limit);
          for (const m of ranked) {
            const injected = injectedIds.includes(m.id);
            const label = m.phase === 0 ? 'memory' : m.phase === 1 ? 'hint' : 'abstract';
            assert.equal(text.includes(`\n_${label} · ${m.id}`), injected, `${m.id} in the text iff injected`);
          }
          assert.ok(text.startsWith(`${INTRO}\n\n`));
          if (total === 0) {
            assert.equal(injection.omitted, 0);
          } else {
            assert.equal(injection.omitted, total - injectedIds.length);
            assert.ok(text.endsWith(injection.omitted > 0 ? `\n\n${more(injection.omitted)}` : `\n\n${STORE_HINT}`));
          }
        },
      ),
      { numRuns: 400 },
    );
  });

  it("stays under Claude Code's 10,000-character hook context limit whatever the budget, cut between memories", () => {
    // Claude Code replaces a longer additionalContext by a preview and a file path: the memories would be lost.
    const ranked = Array.from({ length: 60 }, (_, i) =>
      mem({ id: id(i + 1), topic: `Memory ${i + 1}`, summary: `Summary ${i + 1}.`, content: `${'word '.repeat(110)}end of memory ${i + 1}.`, priority: 0.9 - i / 100 }),
    );
    for (const budgetTokens of [2500, 10_000, 1_000_000]) {
      const injection = buildInjection(ranked, ranked.length, { limit: 60, budgetTokens });
      assert.ok(injection.text.length < 10_000, `${injection.text.length} characters with a budget of ${budgetTokens} tokens`);
      assert.ok(injection.text.length <= MAX_HOOK_CONTEXT_CHARS);
      const n = injection.injectedIds.length;
      assert.ok(n >= 10 && n < 60, `${n} memories`);
      assert.deepEqual(injection.injectedIds, ranked.slice(0, n).map((m) => m.id));
      // Every injected memory whole (its Content's end is there), none of the next, and the closing line.
      for (let i = 0; i < n; i++) assert.ok(injection.text.includes(`end of memory ${i + 1}.`) || injection.text.includes(`Summary ${i + 1}.`), `memory ${i + 1} is whole`);
      assert.ok(!injection.text.includes(`Memory ${n + 1}\n`), 'nothing of the first memory left out');
      assert.ok(injection.text.endsWith(`\n\n${more(60 - n)}`));
    }
    // A budget below the limit still decides.
    assert.ok(buildInjection(ranked, ranked.length, { limit: 60, budgetTokens: 1000 }).text.length <= 4000);
  });

  it('says the situation the ranking took into account, and why each memory relates to it', () => {
    const ranked = [mem({ id: id(1), topic: 'Pool size', priority: 0.2 }), mem({ id: id(2), topic: 'Other', priority: 0.9 })];
    const injection = buildInjection(ranked, 2, {
      ...OPTIONS,
      situation: 'branch fix/pool, 1 changed file',
      reasons: new Map([[id(1), ['changed file src/db/pool.ts', 'branch fix/pool (pool)']]]),
    });
    assert.ok(
      injection.text.startsWith(
        '## Long-term memory (LTM)\nWhat earlier sessions of this project learned, ranked by priority and by relevance to the current work (branch fix/pool, 1 changed file). ',
      ),
    );
    assert.ok(injection.text.includes(`### Pool size\n_memory · ${id(1)} · priority 0.20 · related to changed file src/db/pool.ts; branch fix/pool (pool)_\n`));
    assert.ok(injection.text.includes(`### Other\n_memory · ${id(2)} · priority 0.90_\n`));
  });

  it('estimates tokens as characters / 4, rounded up', () => {
    assert.equal(estimateTokens(''), 0);
    assert.equal(estimateTokens('abcd'), 1);
    assert.equal(estimateTokens('abcde'), 2);
  });
});
