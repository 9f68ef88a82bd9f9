import { strict as assert } from 'node:assert';
import fc from 'fast-check';
import MiniSearch from 'minisearch';
import { identifierParts, indexTerm, matchesAsPrefix, queryWords, stemOf, tokenize, typosAllowed } from '../../src/core/analyzer';
import { MemorySearchIndex } from '../../src/core/search';

describe('analyzer', () => {
  describe('identifiers', () => {
    for (const [identifier, parts] of [
      ['TestQueryClient', ['Test', 'Query', 'Client']],
      ['useAuthStore', ['use', 'Auth', 'Store']],
      ['HTTPServer', ['HTTP', 'Server']],
      ['parseJSONBody', ['parse', 'JSON', 'Body']],
      ['TS2339', ['TS', '2339']],
      ['utf8Decode', ['utf', '8', 'Decode']],
      ['iPhone', ['i', 'Phone']],
    ] as const) {
      it(`splits ${identifier} into ${parts.join(', ')}`, () => assert.deepEqual(identifierParts(identifier), parts));
    }

    for (const word of ['Postgres', 'postgres', 'POSTGRES', 'x', '', 'a'.repeat(65) + 'B']) {
      it(`leaves ${JSON.stringify(word.slice(0, 12))} whole (no inner boundary, or overlong)`, () => assert.deepEqual(identifierParts(word), []));
    }

    it('keeps every token whole and adds its parts: what MiniSearch split on punctuation stays split', () => {
      assert.deepEqual(tokenize('TestQueryClient retry_after_ms src/db/pool.ts ERR_SSL_PROTOCOL'), [
        'TestQueryClient',
        'Test',
        'Query',
        'Client',
        'retry',
        'after',
        'ms',
        'src',
        'db',
        'pool',
        'ts',
        'ERR',
        'SSL',
        'PROTOCOL',
      ]);
    });

    it('gives a query for part of an identifier, in another case style, the same words as the memory', () => {
      const memory = new Set(queryWords('The fix is in TestQueryClient and retry_after_ms'));
      for (const query of ['QueryClient', 'query client', 'retryAfterMs', 'RetryAfterMS']) {
        for (const word of queryWords(query).filter((w) => w !== query.toLowerCase())) assert.ok(memory.has(word), `"${word}" of "${query}"`);
      }
    });

    it("splits text exactly where MiniSearch's tokenizer does, whatever the characters (property)", () => {
      const reference = MiniSearch.getDefault('tokenize') as (text: string) => string[];
      // Spaces, punctuation and separators of every kind, astral ones and lone surrogates included.
      const characters = fc.oneof(
        fc.constantFrom(' ', '\n', '\r', '\t', '.', '_', '-', '/', '$', '+', '`', '\u00a0', '\u2028', '\u3000', '\u00bf', '\u2014', '\u{1039f}', '\u{10100}', '\ud800', '\udc00', 'é', '漢', '😀', 'a', 'Z', '7'),
        fc.string({ unit: 'binary', maxLength: 2 }),
      );
      fc.assert(
        fc.property(fc.array(characters, { maxLength: 40 }), (parts) => {
          const text = parts.join('');
          assert.deepEqual(
            tokenize(text),
            reference(text).flatMap((t) => [t, ...identifierParts(t)]),
            JSON.stringify(text),
          );
        }),
        { numRuns: 2000 },
      );
    });

    it('every part of a token is a substring of it, and tokenizing never throws (property)', () => {
      fc.assert(
        fc.property(fc.string({ maxLength: 80 }), (text) => {
          const tokens = tokenize(text);
          for (const token of tokens) assert.equal(typeof token, 'string');
          for (const raw of text.split(/\s+/)) for (const part of identifierParts(raw)) assert.ok(raw.includes(part));
        }),
        { numRuns: 500 },
      );
    });
  });

  describe('terms', () => {
    it('lower-cases, drops stop words, empty and overlong tokens', () => {
      assert.equal(indexTerm('Postgres'), 'postgres');
      assert.equal(indexTerm('the'), null);
      assert.equal(indexTerm(''), null);
      assert.equal(indexTerm('x'.repeat(65)), null);
      assert.equal(indexTerm('x'.repeat(64)), 'x'.repeat(64));
    });

    it('allows typos in longer words only, and prefixes from three letters', () => {
      assert.deepEqual(['go', 'pool', 'deadlock', 'postgresql'].map(typosAllowed), [0, 1, 2, 2]);
      assert.deepEqual(['de', 'dea'].map(matchesAsPrefix), [false, true]);
    });

    it('groups the forms of a word by stem, and leaves identifiers, numbers and short words as they are', () => {
      assert.equal(stemOf('deadlocks'), stemOf('deadlock'));
      assert.equal(stemOf('deadlocked'), stemOf('deadlock'));
      assert.equal(stemOf('migrations'), stemOf('migrate'));
      assert.equal(stemOf('caching'), stemOf('cached'));
      assert.notEqual(stemOf('cache'), stemOf('catch'));
      for (const term of ['ts2339', 'ssl', 'db', '2339', 'node_modules']) assert.equal(stemOf(term), term);
    });
  });

  describe('in the search index', () => {
    const memories = [
      { id: 'forms', topic: 'Deadlocked invoice imports', tags: [], summary: 'Two workers deadlocked.', content: 'Take locks in one order.' },
      { id: 'exact', topic: 'Deadlocks in the scheduler', tags: [], summary: 'A deadlock in cron.', content: 'The scheduler deadlocks nightly.' },
      { id: 'ident', topic: 'Flaky TestQueryClient', tags: [], summary: 'Reset the client between tests.', content: 'retry_after_ms was ignored.' },
      { id: 'other', topic: 'Unrelated CSS grid gap', tags: [], summary: 'Use gap.', content: 'Grid gaps.' },
    ];
    const index = new MemorySearchIndex();
    for (const m of memories) index.upsert(m);

    it('finds other forms of a word, below the form asked for', () => {
      const hits = [...index.search('deadlocks')];
      assert.deepEqual(hits.map((h) => h.id), ['exact', 'forms']);
      const exact = new MemorySearchIndex({ wordForms: false });
      for (const m of memories) exact.upsert(m);
      assert.deepEqual([...exact.search('deadlocks')].map((h) => h.id), ['exact'], 'without word forms, only the form asked for');
    });

    it('finds an identifier from part of it, or written in another case style', () => {
      assert.equal([...index.search('QueryClient')][0]?.id, 'ident');
      assert.equal([...index.search('retryAfterMs')][0]?.id, 'ident');
      assert.equal([...index.search('query client')][0]?.id, 'ident');
    });

    it('keeps typo tolerance for a word that matches nothing as written or as another form', () => {
      assert.equal([...index.search('scheduller')][0]?.id, 'exact');
    });
  });
});
