import { strict as assert } from 'node:assert';
import { LtmError } from '../../src/core/errors';
import { prepareInput, prepareSummary, redactTextFields, rejectUnpairedSurrogates, requireMemoryId } from '../../src/core/storeInput';
import type { StoreInput } from '../../src/core/storeTypes';

const KEY = 'sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_abc';

function rejection(input: StoreInput): string {
  try {
    prepareInput(input);
  } catch (error) {
    assert.ok(error instanceof LtmError, String(error));
    assert.equal(error.code, 'invalid_input');
    return error.message;
  }
  assert.fail('the input was accepted');
}

describe('storeInput', () => {
  describe('requireMemoryId', () => {
    it('accepts mem_ and 8 hex digits; refuses anything else with invalid_input naming it and the format', () => {
      requireMemoryId('mem_0123abcd');
      for (const bad of ['mem_0123ABCD', 'mem_0123abc', 'mem_0123abcde', 'mem_0123abcg', '../mem_0123abcd', '__proto__', '', 42 as unknown as string, null as unknown as string]) {
        assert.throws(
          () => requireMemoryId(bad),
          (e: unknown) => e instanceof LtmError && e.code === 'invalid_input' && e.message.startsWith(`"${String(bad)}" is not a memory ID (expected mem_`),
          String(bad),
        );
      }
    });
  });

  describe('rejectUnpairedSurrogates', () => {
    it('accepts a surrogate pair (an emoji) and rejects either half alone, naming the field', () => {
      rejectUnpairedSurrogates('topic', 'ok \uD83D\uDE00 ok');
      assert.throws(() => rejectUnpairedSurrogates('topic', 'x\uD83D'), /topic contains an unpaired UTF-16 surrogate/);
      assert.throws(() => rejectUnpairedSurrogates('summary', '\uDE00x'), /summary contains an unpaired/);
      // Two high halves in a row: the first has no low half after it.
      assert.throws(() => rejectUnpairedSurrogates('content', '\uD83D\uD83D\uDE00'), /content/);
    });
  });

  describe('prepareInput', () => {
    it('trims the topic, keeps the content byte for byte and derives a summary when none is given', () => {
      const prepared = prepareInput({ topic: '  Topic  ', content: '  First line.\n\nMore.  ' });
      assert.equal(prepared.topic, 'Topic');
      assert.equal(prepared.content, '  First line.\n\nMore.  ');
      assert.ok(prepared.summary.length > 0);
      assert.equal(prepared.difficulty, undefined);
      assert.deepEqual(prepared.redactions, []);
    });

    it('treats a summary of only spaces as none', () => {
      assert.notEqual(prepareInput({ topic: 't', content: 'Some content.', summary: '   ' }).summary.trim(), '');
    });

    it('normalises tags: trimmed, lower case, without duplicates or empties', () => {
      assert.deepEqual(prepareInput({ topic: 't', content: 'c', tags: [' A ', 'a', '', 'B'] }).tags, ['a', 'b']);
    });

    it('accepts difficulty 0 and 1 and rejects NaN and values outside', () => {
      assert.equal(prepareInput({ topic: 't', content: 'c', difficulty: 0 }).difficulty, 0);
      assert.equal(prepareInput({ topic: 't', content: 'c', difficulty: 1 }).difficulty, 1);
      for (const difficulty of [Number.NaN, -0.01, 1.01]) {
        assert.match(rejection({ topic: 't', content: 'c', difficulty }), /difficulty must be a number from 0 to 1/);
      }
    });

    it('names the first problem', () => {
      assert.match(rejection({ topic: ' ', content: 'c' }), /topic is required/);
      assert.match(rejection({ topic: 't', content: '\n' }), /content is required/);
      assert.match(rejection({ topic: 'x'.repeat(10_001), content: 'c' }), /topic is longer than 10,000/);
      assert.match(rejection({ topic: 't', content: 'c'.repeat(1_000_001) }), /content is longer than 1,000,000/);
      assert.match(rejection({ topic: 't', content: 'c', summary: 3 as unknown as string }), /summary must be a string/);
      assert.match(rejection({ topic: 't', content: 'c', tags: ['ok', '\uD800'] }), /a tag contains an unpaired/);
      assert.match(rejection({ topic: 't', content: 'c', tags: ['t'.repeat(101)] }), /is not valid \(one line, at most 100 characters\)/);
      assert.match(rejection({ topic: 't', content: 'c', tags: ['two\nlines'] }), /is not valid/);
    });

    it('redacts secrets from every text field, tags included, before the summary is derived from the content', () => {
      const prepared = prepareInput({ topic: `topic ${KEY}`, content: `The key is ${KEY}.`, tags: [KEY] });
      for (const text of [prepared.topic, prepared.content, prepared.summary, ...prepared.tags]) {
        assert.ok(!text.includes(KEY), text);
      }
      assert.equal(prepared.redactions.length, 1);
      assert.equal(prepared.redactions[0]!.count, 3);
    });
  });

  describe('redactTextFields', () => {
    it('walks the fields it is given, so a field added later is redacted too, and leaves the input as it was', () => {
      const input = { topic: 't', later: `key ${KEY}`, list: [KEY, 7, null], count: 3 };
      const { value, redactions } = redactTextFields(input);
      assert.ok(!value.later.includes(KEY));
      assert.ok(!String(value.list[0]).includes(KEY));
      assert.deepEqual(value.list.slice(1), [7, null]);
      assert.equal(value.count, 3);
      assert.equal(input.later, `key ${KEY}`, 'the input object is not changed');
      assert.deepEqual(redactions.map((r) => r.count), [2]);
    });

    it('reports nothing for text without secrets', () => {
      const { value, redactions } = redactTextFields({ topic: 'plain', tags: ['a'] });
      assert.deepEqual(value, { topic: 'plain', tags: ['a'] });
      assert.deepEqual(redactions, []);
    });
  });

  describe('prepareSummary', () => {
    it('trims and redacts a new Summary', () => {
      assert.equal(prepareSummary('  Use the pool.  '), 'Use the pool.');
      const redacted = prepareSummary(`Call it with ${KEY}.`);
      assert.ok(!redacted.includes(KEY), redacted);
    });

    it('refuses an empty Summary, one with a "## Content" line and a lone surrogate, as invalid input', () => {
      for (const bad of ['   ', 'x\n## Content\ny', 'a\uD800b']) {
        assert.throws(() => prepareSummary(bad), (e: LtmError) => e.code === 'invalid_input', JSON.stringify(bad));
      }
    });
  });
});
