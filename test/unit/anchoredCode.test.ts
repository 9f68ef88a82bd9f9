import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { MAX_FENCED_LINES, anchoredRanges, anchorIndex, fencedCode, lensGroups, lensTitle, selectionAnchorSpec, selectionLines, topicFrom, type AnchoredMemory } from '../../src/core/anchoredCode';
import { checkAnchor, createAnchor, InvalidAnchor, type Anchor } from '../../src/core/anchors';

const numbered = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1}`).join('\n') + '\n';
const root = path.resolve('/work/project');

describe('anchored code (what the editor shows of anchors)', () => {
  const pool = createAnchor({ path: 'src/pool.ts', lines: [3, 5] }, numbered(20));
  const poolTop = createAnchor({ path: 'src/pool.ts', lines: [1, 2] }, numbered(20));
  const retry = createAnchor({ path: 'src/retry.ts' }, 'retry\n');
  const a: AnchoredMemory = { id: 'mem_aaaaaaaa', topic: 'Pool size', anchors: [pool, retry] };
  const b: AnchoredMemory = { id: 'mem_bbbbbbbb', topic: 'Pool timeout', anchors: [pool, poolTop] };
  const c: AnchoredMemory = { id: 'mem_cccccccc', topic: 'Unanchored', anchors: [] };

  it('indexes memories by anchored file, each once per file, in the given order', () => {
    const index = anchorIndex([a, b, c]);
    assert.deepEqual([...index.keys()].sort(), ['src/pool.ts', 'src/retry.ts']);
    assert.deepEqual(index.get('src/pool.ts')!.map((m) => m.id), ['mem_aaaaaaaa', 'mem_bbbbbbbb']);
    assert.deepEqual(index.get('src/retry.ts')!.map((m) => m.id), ['mem_aaaaaaaa']);
  });

  it('places ranges where their text is now: moved ranges where they went, changed ones where they were', () => {
    const text = `added\nadded\n${numbered(20)}`;
    const ranges = anchoredRanges('src/pool.ts', [a, b], (anchor) => checkAnchor(anchor, text));
    assert.deepEqual(
      ranges.map((r) => [r.id, r.lines, r.stale]),
      [
        ['mem_aaaaaaaa', [5, 7], false],
        ['mem_bbbbbbbb', [5, 7], false],
        ['mem_bbbbbbbb', [3, 4], false],
      ],
    );
    const edited = numbered(20).replace('line 4\n', 'line four\n');
    const stale = anchoredRanges('src/pool.ts', [b], (anchor) => checkAnchor(anchor, edited));
    assert.deepEqual(stale.map((r) => [r.lines, r.stale]), [[[3, 5], true], [[1, 2], false]]);
    const whole = anchoredRanges('src/retry.ts', [a], (anchor: Anchor) => checkAnchor(anchor, 'retry\n'));
    assert.deepEqual(whole, [{ id: 'mem_aaaaaaaa', topic: 'Pool size', lines: null, stale: false }]);
  });

  it('groups ranges by first line into lens titles that count memories and the possibly outdated ones', () => {
    const groups = lensGroups(
      [
        { id: 'mem_1', topic: 'one', lines: [10, 12], stale: false },
        { id: 'mem_2', topic: 'two', lines: [10, 20], stale: true },
        { id: 'mem_2', topic: 'two', lines: [10, 11], stale: false },
        { id: 'mem_3', topic: 'three', lines: null, stale: false },
        { id: 'mem_4', topic: 'four', lines: [90, 95], stale: true },
      ],
      50,
    );
    assert.deepEqual(
      groups.map((g) => [g.line, g.memories.map((m) => `${m.id}${m.stale ? '!' : ''}`), g.title]),
      [
        [1, ['mem_3'], 'LTM: 1 memory'],
        [10, ['mem_1', 'mem_2!'], 'LTM: 2 memories · 1 possibly outdated'],
        [50, ['mem_4!'], 'LTM: 1 memory · possibly outdated'],
      ],
    );
    assert.equal(lensTitle(3, 0), 'LTM: 3 memories');
    assert.deepEqual(lensGroups([], 10), []);
  });

  it('turns a selection into lines: empty is the whole file, a selection ending at a line start stops before it', () => {
    assert.equal(selectionLines({ line: 4, character: 2 }, { line: 4, character: 2 }), null);
    assert.deepEqual(selectionLines({ line: 9, character: 0 }, { line: 23, character: 5 }), [10, 24]);
    assert.deepEqual(selectionLines({ line: 9, character: 0 }, { line: 12, character: 0 }), [10, 12]);
    assert.deepEqual(selectionLines({ line: 9, character: 3 }, { line: 9, character: 7 }), [10, 10]);
  });

  it('writes the anchor spec relative to the project and refuses files outside it', () => {
    assert.equal(selectionAnchorSpec(root, path.join(root, 'src', 'pool.ts'), [10, 24]), 'src/pool.ts#L10-24');
    assert.equal(selectionAnchorSpec(root, path.join(root, 'src', 'pool.ts'), [7, 7]), 'src/pool.ts#L7');
    assert.equal(selectionAnchorSpec(root, path.join(root, 'README.md'), null), 'README.md');
    assert.throws(() => selectionAnchorSpec(root, path.resolve('/elsewhere/a.ts'), null), (e) => e instanceof InvalidAnchor && /not inside .* own project's files/.test(e.message));
    assert.throws(() => selectionAnchorSpec(root, path.join(root, '..', 'project-b', 'a.ts'), [1, 2]), InvalidAnchor);
    assert.throws(() => selectionAnchorSpec(root, root, null), InvalidAnchor);
  });

  it('fences code so that backticks in it cannot close the fence, with a caption', () => {
    assert.equal(fencedCode('const a = 1;\n\n', 'typescript', 'From src/a.ts#L1'), 'From src/a.ts#L1:\n\n```typescript\nconst a = 1;\n```');
    const md = fencedCode('Use ```js fences``` here', 'markdown', 'From README.md');
    assert.match(md, /^From README\.md:\n\n````markdown\nUse ```js fences``` here\n````$/);
    assert.match(fencedCode('x', 'not a language!', 'c'), /\n```\nx\n```$/, 'an odd language ID is left out');
    const long = fencedCode(numbered(MAX_FENCED_LINES + 5), 'text', 'From a.txt');
    assert.ok(long.includes(`line ${MAX_FENCED_LINES}\n\`\`\`\n\n(The first ${MAX_FENCED_LINES} of ${MAX_FENCED_LINES + 5} lines.)`), long.slice(-80));
    assert.ok(!long.includes(`line ${MAX_FENCED_LINES + 1}`));
    assert.equal(fencedCode('a\r\nb\r\n', 'text', 'c'), 'c:\n\n```text\na\nb\n```');
  });

  it('takes a topic from the first line that says something', () => {
    assert.equal(topicFrom('\n  // \n  const pool = new Pool({ max: 50 });\n'), 'const pool = new Pool({ max: 50 });');
    assert.equal(topicFrom('}\n'), '');
    assert.equal(topicFrom('x'.repeat(100)).length, 80);
  });
});
