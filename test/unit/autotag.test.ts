import { strict as assert } from 'node:assert';
import fc from 'fast-check';
import { suggestTags } from '../../src/core/autotag';

describe('autotag: suggestTags', () => {
  it('tags whole words only: "Good" is not go, "rapid" is not api, "Tests" inside "contests" is not testing', () => {
    assert.deepEqual(suggestTags('Good rapid progress on contests and reactors; a dockerized build, cssom, jsonl'), []);
    assert.deepEqual(suggestTags('The API answered slowly.'), ['api']);
  });

  it('is case-insensitive and splits words on punctuation, including dots in names', () => {
    assert.deepEqual(suggestTags('DOCKER'), ['docker']);
    assert.deepEqual(suggestTags('Node.js'), ['javascript', 'node']);
    assert.deepEqual(suggestTags('(postgres)/[redis]'), ['postgres', 'redis']);
  });

  it('keeps + and # as parts of a word, so c++ and c# are tagged', () => {
    assert.deepEqual(suggestTags('Ported from C++ to C#'), ['cpp', 'csharp']);
    assert.deepEqual(suggestTags('c is not c++'), ['cpp']);
  });

  it('maps synonyms to one tag, counting each mention', () => {
    assert.deepEqual(suggestTags('postgres postgresql'), ['postgres']);
    assert.deepEqual(suggestTags('ts tsx typescript TS'), ['typescript']);
    assert.deepEqual(suggestTags('npm pnpm yarn'), ['npm']);
    assert.deepEqual(suggestTags('k8s kubernetes'), ['kubernetes']);
    assert.deepEqual(suggestTags('bug crash error debug debugging'), ['debugging']);
    assert.deepEqual(suggestTags('golang'), ['go']);
  });

  it('orders the most mentioned first, then alphabetically', () => {
    // redis 1, docker 2, security 3 (auth, security, authentication), api 1
    assert.deepEqual(suggestTags('redis docker auth docker security api authentication'), ['security', 'docker', 'api', 'redis']);
    assert.deepEqual(suggestTags('vue react angular'), ['angular', 'react', 'vue']);
    // one synonym mentioned twice outranks two tags mentioned once each
    assert.deepEqual(suggestTags('aws gcp py python'), ['python', 'aws', 'gcp']);
  });

  it('gives at most `max` tags (5 by default), the highest ranked', () => {
    const text = 'python python python rust rust go golang java kotlin swift ruby php';
    assert.deepEqual(suggestTags(text), ['python', 'rust', 'go', 'java', 'kotlin']);
    assert.deepEqual(suggestTags(text, 2), ['python', 'rust']);
    assert.deepEqual(suggestTags(text, 0), []);
    assert.deepEqual(suggestTags(text, 100), ['python', 'rust', 'go', 'java', 'kotlin', 'php', 'ruby', 'swift']);
  });

  it('gives no tag for words that are keys of Object.prototype', () => {
    assert.deepEqual(suggestTags('constructor __proto__ toString hasOwnProperty valueOf isPrototypeOf propertyIsEnumerable toLocaleString'), []);
    assert.deepEqual(suggestTags('The constructor throws an error'), ['debugging']);
  });

  it('gives nothing for text without vocabulary words', () => {
    assert.deepEqual(suggestTags(''), []);
    assert.deepEqual(suggestTags('   \n\t '), []);
    assert.deepEqual(suggestTags('Ümlaut café naïve 東京'), []);
  });

  it('answers any text with at most `max` distinct tags, the same each time, a prefix of the unbounded answer, whatever the case (property)', () => {
    const words = ['python', 'py', 'docker', 'api', 'rapid', 'go', 'golang', 'Good', 'test', 'tests', 'c++', 'c#', 'js', 'constructor', '__proto__', 'the', 'error'];
    const textArb = fc.array(fc.oneof(fc.constantFrom(...words), fc.string({ maxLength: 6 })), { maxLength: 40 }).map((ws) => ws.join(' '));
    fc.assert(
      fc.property(textArb, fc.integer({ min: 0, max: 8 }), (text, max) => {
        const tags = suggestTags(text, max);
        assert.ok(tags.length <= max);
        assert.equal(new Set(tags).size, tags.length, 'distinct');
        assert.deepEqual(suggestTags(text, max), tags, 'deterministic');
        // A prefix of the unbounded answer.
        assert.deepEqual(suggestTags(text, 1000).slice(0, max), tags);
        // Upper-casing the text changes nothing.
        assert.deepEqual(suggestTags(text.toUpperCase(), max), tags);
      }),
      { numRuns: 300 },
    );
  });
});
