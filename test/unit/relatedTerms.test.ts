import { strict as assert } from 'node:assert';
import { stemOf } from '../../src/core/analyzer';
import { DEVELOPER_TERM_GROUPS } from '../../src/core/developerTerms';
import { RelatedTerms, developerVocabulary, vocabularyTables } from '../../src/core/relatedTerms';
import { MemorySearchIndex, RELATED_WEIGHT } from '../../src/core/search';
import type { SearchableMemory } from '../../src/core/searchedText';

function reached(terms: RelatedTerms, query: string, word: string): string[] {
  return [...(terms.expand(query).get(word)?.keys() ?? [])].sort();
}

describe('relatedTerms', () => {
  const terms = new RelatedTerms(['memory, ram, heap, out of memory', 'login, log in, sign in, auth', 'charge, billed, payment']);

  it('relates a word to the other one-word members of its groups, by stem', () => {
    assert.deepEqual(reached(terms, 'hogging RAM', 'ram'), ['heap', 'memori']);
    // Another form of a member is the member: "charged" is "charge".
    assert.deepEqual(reached(terms, 'customers charged twice', 'charged'), [stemOf('billed'), stemOf('payment')].sort());
    assert.equal(terms.expand('hogging').size, 0, 'a word in no group reaches nothing');
  });

  it('recognises a phrase in running text, stop words included, and credits its first indexed word', () => {
    assert.deepEqual(reached(terms, 'people have to sign in again', 'sign'), ['auth', 'login']);
    assert.deepEqual(reached(terms, 'they must log in each time', 'log'), ['auth', 'login']);
    // The same words not in sequence are no phrase.
    assert.equal(terms.expand('sign the form in ink').get('sign'), undefined);
    // "out of memory": "out" is the first indexed word ("of" is a stop word).
    assert.ok(reached(terms, 'ran out of memory', 'out').includes('ram'));
  });

  it('reads a member with a leading dot (".env") as its word, not as a phrase that never matches', () => {
    const dotted = new RelatedTerms(['environment variable, envvar, .env, dotenv']);
    assert.deepEqual(reached(dotted, 'the value in .env was ignored', 'env'), [stemOf('dotenv'), stemOf('envvar')].sort());
    assert.ok(reached(dotted, 'where does dotenv look', 'dotenv').includes('env'));
  });

  it('leaves a group that holds only the word itself empty-handed', () => {
    const lone = new RelatedTerms(['cache, caching']);
    assert.equal(lone.expand('caching layer').size, 0, 'caching and cache share a stem: nothing else to reach');
  });

  it('expands the same from its tables carried through JSON (as the bundles embed the developer vocabulary)', () => {
    const tables = vocabularyTables(DEVELOPER_TERM_GROUPS);
    const fromJson = new RelatedTerms(JSON.parse(JSON.stringify(tables)) as typeof tables);
    const fromText = new RelatedTerms(DEVELOPER_TERM_GROUPS);
    assert.ok(tables.groupsOfStem.length > 1000 && tables.phrases.length > 100, 'the whole vocabulary');
    const asObject = (e: ReturnType<RelatedTerms['expand']>) => JSON.stringify([...e].map(([word, stems]) => [word, [...stems]]));
    for (const query of ['pod killed for hogging RAM', 'customers were charged twice after a retry', 'people have to log in again every morning', 'took too long then timed out']) {
      const expanded = fromText.expand(query);
      assert.ok(expanded.size > 0, query);
      assert.equal(asObject(fromJson.expand(query)), asObject(expanded), query);
    }
    assert.equal(fromJson.groups, DEVELOPER_TERM_GROUPS.length);
  });

  describe('in a search', () => {
    const memories: SearchableMemory[] = [
      { id: 'oom', topic: 'API pods OOMKilled at the memory limit', tags: ['kubernetes'], summary: 'The heap outgrew the container.', content: 'Node sized its heap from the host.' },
      { id: 'ram', topic: 'Buying RAM for the build machines', tags: ['hardware'], summary: 'More RAM for CI.', content: 'The build machines got 64 GB of RAM.' },
      { id: 'css', topic: 'Dark mode colours', tags: ['css'], summary: 'Theme tokens.', content: 'Colours come from CSS variables.' },
    ];
    const index = new MemorySearchIndex();
    for (const m of memories) index.upsert(m);

    it('finds a memory written in other words, below one that uses the query\'s own word', () => {
      const query = 'pod killed for hogging RAM';
      const without = [...index.search(query)].map((h) => h.id);
      const withRelated = [...index.search(query, undefined, developerVocabulary().expand(query))];
      assert.deepEqual(withRelated.map((h) => h.id).slice(0, 2).sort(), ['oom', 'ram']);
      assert.ok(!withRelated.some((h) => h.id === 'css'), 'a memory about none of it is not reached');
      assert.ok(without.includes('oom'), 'the query\'s own words ("pod", "killed") already reach the OOM memory in part');
      const oomWithout = [...index.search(query)].find((h) => h.id === 'oom')!;
      const oomWith = withRelated.find((h) => h.id === 'oom')!;
      assert.ok(oomWith.score > oomWithout.score, 'related words add to its score');
      assert.ok(oomWith.words > oomWithout.words, 'and count as matching the query word they stand for');
    });

    it('weighs a related word below the word itself', () => {
      assert.ok(RELATED_WEIGHT > 0 && RELATED_WEIGHT < 0.6, 'below another form of the same word (0.6)');
      const hits = [...index.search('ram', undefined, developerVocabulary().expand('ram'))];
      assert.deepEqual(hits.map((h) => h.id), ['ram', 'oom'], 'the memory that says RAM comes first');
      assert.ok(hits[1]!.score < hits[0]!.score);
    });
  });
});
