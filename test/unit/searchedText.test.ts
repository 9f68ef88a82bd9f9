import { strict as assert } from 'node:assert';
import { FIELDS, fieldTerms, searchedTextDigest, type SearchableMemory } from '../../src/core/searchedText';

describe('searchedText: what a search index holds of a memory', () => {
  it('searches topic, tags, keywords, summary and content, a topic match weighing most', () => {
    assert.deepEqual(
      FIELDS.map((f) => f.name),
      ['topic', 'tags', 'keywords', 'summary', 'content'],
    );
    const boosts = FIELDS.map((f) => f.boost);
    assert.equal(Math.max(...boosts), FIELDS[0].boost);
    const memory: SearchableMemory = { id: 'm1', topic: 'T', tags: ['a', 'b'], keywords: ['k1', 'k2'], summary: 'S', content: 'C' };
    assert.deepEqual(
      FIELDS.map((f) => f.text(memory)),
      ['T', 'a b', 'k1 k2', 'S', 'C'],
    );
    assert.equal(FIELDS[2].text({ ...memory, keywords: undefined }), '', 'an archived memory has no keywords');
  });

  it('fieldTerms: counts each indexed term (lower case, identifiers split, stop words left out), and the distinct tokens as written', () => {
    const { length, termCounts } = fieldTerms('The pool ran dry; the Pool was small. ECONNRESET on pool_size');
    assert.equal(termCounts.get('pool'), 3, 'pool, Pool and the pool of pool_size');
    assert.equal(termCounts.get('econnreset'), 1);
    assert.equal(termCounts.get('size'), 1);
    for (const stopWord of ['the', 'was', 'on']) assert.equal(termCounts.has(stopWord), false, stopWord);
    assert.equal(length, 11, 'distinct tokens, stop words and case included, as MiniSearch counts a field');
  });

  it('searchedTextDigest: the same for the same searched text, another when any field changes or text moves between fields', () => {
    const memory: SearchableMemory = { id: 'm1', topic: 'Pool timeout', tags: ['db', 'pool'], keywords: ['hikari'], summary: 'Raise the pool.', content: 'The pool ran dry.' };
    const digest = searchedTextDigest(memory);
    assert.ok(Number.isSafeInteger(digest) && digest >= 0 && digest < 2 ** 48);
    assert.equal(searchedTextDigest({ ...memory, id: 'm2', tags: [...memory.tags] }), digest, 'the ID is not searched text; a copied list is the same text');
    const others: SearchableMemory[] = [
      { ...memory, topic: 'Pool timeouts' },
      { ...memory, tags: ['db'] },
      { ...memory, keywords: [] },
      { ...memory, summary: 'Raise the pool!' },
      { ...memory, content: 'The pool ran dry' },
      { ...memory, topic: 'Pool', summary: 'timeout Raise the pool.' },
      { ...memory, keywords: ['pool'], tags: ['db', 'hikari'] },
    ];
    for (const other of others) assert.notEqual(searchedTextDigest(other), digest, JSON.stringify(other));
    // Whatever a text holds: joined with a separator, these two would be the same string.
    assert.notEqual(searchedTextDigest({ ...memory, topic: 'a\u0000b', tags: [] }), searchedTextDigest({ ...memory, topic: 'a', tags: ['b\u0000'] }));
  });

});
