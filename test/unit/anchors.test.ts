import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import {
  InvalidAnchor,
  LineIndex,
  anchorLines,
  hashLines,
  anchorFromFrontmatterEntry,
  anchorsFromFrontmatter,
  anchorsToFrontmatter,
  checkAnchor,
  createAnchor,
  describeAnchor,
  parseAnchorSpec,
} from '../../src/core/anchors';

const root = path.resolve('/work/project');
const numbered = (n: number, prefix = 'line') => Array.from({ length: n }, (_, i) => `${prefix} ${i + 1}`).join('\n') + '\n';

describe('anchors', () => {
  it('parses a file, a line and a range into a project-relative path (GitHub\'s #L10-L24 too)', () => {
    assert.deepEqual(parseAnchorSpec(root, 'src/db/pool.ts'), { path: 'src/db/pool.ts' });
    assert.deepEqual(parseAnchorSpec(root, 'src/db/pool.ts#L10'), { path: 'src/db/pool.ts', lines: [10, 10] });
    assert.deepEqual(parseAnchorSpec(root, 'src/db/pool.ts#L10-24'), { path: 'src/db/pool.ts', lines: [10, 24] });
    assert.deepEqual(parseAnchorSpec(root, 'src/db/pool.ts#L10-L24'), { path: 'src/db/pool.ts', lines: [10, 24] });
    assert.deepEqual(parseAnchorSpec(root, path.join(root, 'src/a.ts')), { path: 'src/a.ts' }, 'an absolute path inside the project');
    assert.deepEqual(parseAnchorSpec(root, './src/../src/a.ts'), { path: 'src/a.ts' });
  });

  it('refuses paths outside the project or in .git, and ranges that make no sense, saying why', () => {
    for (const [spec, reason] of [
      ['../elsewhere.ts', /not a file inside the project/],
      ['/etc/passwd', /not a file inside the project/],
      ['.', /not a file inside the project/],
      ['.git/config', /inside \.git/],
      ['', /needs a file path/],
      ['a.ts#L0', /lines must be 1 or more/],
      ['a.ts#L24-10', /first no later than the last/],
      ['a.ts#10-24', /written #L10 or #L10-24/],
      ['a.ts#L1-5000', /at most 2000 lines/],
      ['a\nb.ts', /control character/],
    ] as const) {
      assert.throws(() => parseAnchorSpec(root, spec), (e: unknown) => e instanceof InvalidAnchor && reason.test(e.message), spec);
    }
  });

  it('hashes the anchored text, not its line endings or trailing spaces', () => {
    const text = numbered(30);
    const anchor = createAnchor({ path: 'a.ts', lines: [10, 12] }, text);
    assert.match(anchor.hash, /^poly64:[0-9a-f]{16}$/);
    assert.deepEqual(createAnchor({ path: 'a.ts', lines: [10, 12] }, text.replace(/\n/g, '\r\n')), anchor);
    assert.deepEqual(createAnchor({ path: 'a.ts', lines: [10, 12] }, text.replace('line 11\n', 'line 11   \n')), anchor);
    assert.deepEqual(anchorLines('a\nb\n'), ['a', 'b'], 'a final newline ends the last line');
    assert.throws(() => createAnchor({ path: 'a.ts', lines: [29, 31] }, text), /has 30 lines; #L29-31 is past its end/);
  });

  it('is fresh while the text is unchanged, changed after an edit inside the range, missing without its file', () => {
    const text = numbered(30);
    const anchor = createAnchor({ path: 'a.ts', lines: [10, 12] }, text);
    assert.deepEqual(checkAnchor(anchor, text), { state: 'fresh' });
    assert.deepEqual(checkAnchor(anchor, text.replace('line 20', 'changed below')), { state: 'fresh' }, 'an edit outside the range');
    assert.deepEqual(checkAnchor(anchor, text.replace('line 11', 'line eleven')), { state: 'changed' });
    assert.deepEqual(checkAnchor(anchor, null), { state: 'missing' });
    const whole = createAnchor({ path: 'a.ts' }, text);
    assert.deepEqual(checkAnchor(whole, text), { state: 'fresh' });
    assert.deepEqual(checkAnchor(whole, text.replace('line 30', 'line 30!')), { state: 'changed' }, 'a whole-file anchor changes with any line');
  });

  it('follows lines that only moved, to the nearest copy of their text', () => {
    const text = numbered(30);
    const anchor = createAnchor({ path: 'a.ts', lines: [10, 12] }, text);
    const inserted = `import x;\nimport y;\n${text}`;
    assert.deepEqual(checkAnchor(anchor, inserted), { state: 'moved', lines: [12, 14] });
    const removed = text.replace('line 1\nline 2\nline 3\n', '');
    assert.deepEqual(checkAnchor(anchor, removed), { state: 'moved', lines: [7, 9] });
    // Two copies of the text: the one nearer the old place wins.
    const copies = `${numbered(12)}${'x\n'.repeat(3)}${numbered(12)}`;
    const second = createAnchor({ path: 'a.ts', lines: [10, 12] }, copies);
    assert.deepEqual(checkAnchor(second, `a\n${copies}`), { state: 'moved', lines: [11, 13] });
    // Moved and shortened to fewer lines than the range: changed.
    assert.deepEqual(checkAnchor(anchor, 'line 10\nline 11\n'), { state: 'changed' });
  });

  it('hashes any range in O(1) from the file\'s index, the same as hashing those lines alone', () => {
    const lines = anchorLines(numbered(300));
    const index = new LineIndex(lines);
    for (const [start, end] of [[1, 1], [1, 300], [17, 42], [299, 300]] as const) {
      assert.equal(index.hash(start, end), hashLines(lines.slice(start - 1, end)), `${start}-${end}`);
    }
    // Any one changed line changes the hash; the same lines elsewhere hash the same.
    assert.equal(LineIndex.of(numbered(300).replace('line 21\n', 'line 21 \t\n')).hash(18, 42), index.hash(18, 42), 'trailing space only');
    const changed = [...lines];
    changed[20] = 'line 21!';
    assert.notEqual(new LineIndex(changed).hash(18, 42), index.hash(18, 42));
    assert.notEqual(hashLines(['a', 'b']), hashLines(['b', 'a']), 'order counts');
    assert.notEqual(hashLines(['ab']), hashLines(['a', 'b']), 'line breaks count');
  });

  it('finds a long range moved far down a long file', () => {
    const text = numbered(5000);
    const anchor = createAnchor({ path: 'a.ts', lines: [100, 1600] }, text);
    const moved = `${'// new\n'.repeat(2000)}${text}`;
    assert.deepEqual(checkAnchor(anchor, moved), { state: 'moved', lines: [2100, 3600] });
  });

  it('describes itself as it is written', () => {
    assert.equal(describeAnchor({ path: 'a.ts' }), 'a.ts');
    assert.equal(describeAnchor({ path: 'a.ts', lines: [3, 3] }), 'a.ts#L3');
    assert.equal(describeAnchor({ path: 'a.ts', lines: [3, 9] }), 'a.ts#L3-9');
  });

  it('writes frontmatter in path, lines, hash order and reads it back; a hand-edited entry is checked field by field', () => {
    const anchors = [createAnchor({ path: 'src/a.ts', lines: [2, 4] }, numbered(10)), createAnchor({ path: 'README.md' }, '# hi\n')];
    const written = anchorsToFrontmatter(anchors);
    assert.deepEqual(Object.keys(written[0]!), ['path', 'lines', 'hash']);
    assert.deepEqual(Object.keys(written[1]!), ['path', 'hash']);
    assert.deepEqual(anchorsFromFrontmatter(written), anchors);
    assert.deepEqual(anchorsFromFrontmatter(undefined), []);
    assert.deepEqual(anchorsFromFrontmatter([{ path: 'a.ts', lines: 7, hash: anchors[1]!.hash }]), [{ path: 'a.ts', lines: [7, 7], hash: anchors[1]!.hash }], 'one line written as a number');
    for (const [value, reason] of [
      ['a.ts', /must be a list/],
      [[{ path: '../x', hash: anchors[1]!.hash }], /anchors\[0\]\.path/],
      [[{ path: 'a.ts', hash: 'sha256:0123456789abcdef' }], /anchors\[0\]\.hash/],
      [[{ path: 'a.ts', hash: anchors[1]!.hash, lines: '9-3' }], /anchors\[0\]\.lines/],
      [[{ path: 'a.ts', hash: anchors[1]!.hash, lines: 'ten' }], /written 10-24/],
      [['a.ts'], /must have path and hash/],
      [Array.from({ length: 21 }, () => ({ path: 'a.ts', hash: anchors[1]!.hash })), /at most 20 anchors/],
    ] as const) {
      assert.throws(() => anchorsFromFrontmatter(value), (e: unknown) => e instanceof InvalidAnchor && reason.test(e.message), JSON.stringify(value).slice(0, 80));
    }
    // One entry read alone (as loading does, to keep the others) is named by its place in the list.
    assert.throws(() => anchorFromFrontmatterEntry({ path: '../x', hash: anchors[1]!.hash }, 3), /anchors\[3\]\.path must be a path inside the project/);
    assert.deepEqual(anchorFromFrontmatterEntry(written[0], 5), anchors[0]);
  });
});
