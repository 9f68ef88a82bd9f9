import { strict as assert } from 'node:assert';
import { MARKDOWN, PLAIN } from '../../src/core/textStyle';

describe('textStyle', () => {
  it('Markdown marks names, code, asides, headings and labelled fields up for Claude', () => {
    assert.equal(MARKDOWN.strong('Topic'), '**Topic**');
    assert.equal(MARKDOWN.code('mem_00000001'), '`mem_00000001`');
    assert.equal(MARKDOWN.aside('reduced'), '*reduced*');
    assert.deepEqual(MARKDOWN.heading('LTM Status', 1), ['# LTM Status']);
    assert.deepEqual(MARKDOWN.heading('Content', 2), ['## Content']);
    assert.deepEqual(MARKDOWN.fields([['ID', 'mem_1'], ['Last eviction', 'never']]), ['**ID:** mem_1', '**Last eviction:** never']);
  });

  it('plain text has no markup: headings underlined, labels aligned in one column', () => {
    assert.equal(PLAIN.strong('Topic'), 'Topic');
    assert.equal(PLAIN.code('mem_00000001'), 'mem_00000001');
    assert.deepEqual(PLAIN.heading('LTM status', 1), ['LTM status', '==========']);
    assert.deepEqual(PLAIN.heading('Content', 2), ['Content', '-------']);
    assert.deepEqual(PLAIN.fields([['ID', 'mem_1'], ['Last eviction', 'never']]), ['ID:            mem_1', 'Last eviction: never']);
    assert.deepEqual(PLAIN.fields([]), []);
  });
});
