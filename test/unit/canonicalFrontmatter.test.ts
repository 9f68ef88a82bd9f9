import { strict as assert } from 'node:assert';
import fc from 'fast-check';
import { readCanonicalFrontmatter } from '../../src/core/canonicalFrontmatter';
import { frontmatterFieldsByYaml, parseFrontmatter, renderNewMemoryFile, splitFrontmatter, updateFrontmatter } from '../../src/core/memoryFile';

/** What `yaml` makes of a block, or the error it raises. */
function byYaml(frontmatter: string): Record<string, unknown> | 'error' {
  try {
    return frontmatterFieldsByYaml(frontmatter);
  } catch {
    return 'error';
  }
}

/** The fast reader either gives up or reads exactly what `yaml` reads; returns whether it answered. */
function agrees(frontmatter: string): boolean {
  const fast = readCanonicalFrontmatter(frontmatter);
  if (fast === null) return false;
  assert.deepEqual(fast, byYaml(frontmatter), `the fast reader and yaml differ on:\n${frontmatter}`);
  return true;
}

// Any text, with the characters that YAML and JSON treat differently over-represented.
const tricky = fc.constantFrom('"', '\\', '\t', '\u2028', '\u0085', '\u00a0', '\ufeff', '\u007f', '\ud800', '#', ': ', '- ', "'", '\n', '\r', ' ', '{', '[', '0.5', 'null', '~', '\\x41', '\\u00e9');
const anyText = fc.array(fc.oneof(fc.string({ unit: 'grapheme' }), tricky, fc.string({ unit: 'binary', maxLength: 3 })), { maxLength: 6 }).map((parts) => parts.join(''));
const printable = fc.string({ unit: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz ABCXYZ0123456789-_.:/()\'"`#é漢😀'.split('')), minLength: 1, maxLength: 30 });

const memoryFile = (text: fc.Arbitrary<string>) =>
  fc.record({
    topic: text,
    tags: fc.array(text, { maxLength: 4 }),
    keywords: fc.array(text, { maxLength: 3 }),
    difficulty: fc.oneof(fc.constantFrom(0, 0.1, 0.5, 1), fc.double({ min: 0, max: 1, noNaN: true })),
    created_at: text,
    created_session: fc.option(fc.nat(100_000)),
    anchors: fc.array(fc.record({ path: text, lines: fc.option(fc.tuple(fc.nat(500), fc.nat(500))), hash: fc.constant('poly64:14b7cfb0da7e0b36') }), { maxLength: 2 }),
    proposed: fc.boolean(),
    history: fc.array(fc.record({ phase: fc.nat(3), at: text, event: fc.constantFrom('evicted', 'restored') }), { maxLength: 2 }),
  }).map((m) => {
    const text0 = renderNewMemoryFile({
      id: 'mem_0000abcd',
      topic: m.topic,
      tags: m.tags,
      keywords: m.keywords,
      phase: 0,
      difficulty: m.difficulty,
      created_at: m.created_at,
      created_session: m.created_session,
      anchors: m.anchors.map((a) => ({ path: a.path, hash: a.hash, ...(a.lines ? { lines: a.lines } : {}) })),
      ...(m.proposed ? { status: 'proposed' as const } : {}),
      summary: 'S.',
      content: 'C.',
    });
    return splitFrontmatter(m.history.length > 0 ? updateFrontmatter(text0, { phase: 1, phase_history: m.history }) : text0).frontmatter;
  });

describe('canonicalFrontmatter (the fast reader of what LTM writes)', () => {
  it('reads every file LTM writes from printable text, exactly as yaml does', () => {
    fc.assert(
      fc.property(memoryFile(printable), (frontmatter) => {
        assert.ok(agrees(frontmatter), `the fast reader gave up on a file LTM wrote:\n${frontmatter}`);
      }),
      { numRuns: 400 },
    );
  });

  it('on any text LTM may write, either gives up or agrees with yaml', () => {
    let answered = 0;
    fc.assert(
      fc.property(memoryFile(anyText), (frontmatter) => {
        if (agrees(frontmatter)) answered++;
      }),
      { numRuns: 600 },
    );
    assert.ok(answered > 100, `it answered ${answered} of 600: the fast path is the common one`);
  });

  it('on hand-edited blocks (lines added, removed, changed), either gives up or agrees with yaml', () => {
    const edits = fc.array(
      fc.record({
        at: fc.nat(40),
        kind: fc.constantFrom('insert', 'delete', 'replace', 'append'),
        line: fc.oneof(
          fc.constantFrom('# a comment', '', 'tags:', 'tags: []', '  - plain-tag', '  - "quoted"', '  -  "x"', '- "x"', 'topic: plain text', "topic: 'single'", 'topic: "a" # c', 'phase: 01', 'phase: 1e1', 'phase: -1', 'phase: 0x1', 'difficulty: .5', 'difficulty: 0.5 ', 'x_unknown: "1"', '__proto__: "x"', 'id: "mem_0000abcd"', '    at: "t"', '    phase: 2', '      deep: "x"', '  - path: "a"', '  - importance:low', '  - a: b', '  - true', '  - 3.10', '  - ~', 'anchors:', 'keywords:', 'status: "proposed"'),
          anyText,
        ),
        text: anyText,
      }),
      { maxLength: 4 },
    );
    let answered = 0;
    fc.assert(
      fc.property(memoryFile(printable), edits, (frontmatter, changes) => {
        const lines = frontmatter.split('\n');
        for (const c of changes) {
          const at = c.at % lines.length;
          if (c.kind === 'insert') lines.splice(at, 0, c.line);
          else if (c.kind === 'delete') lines.splice(at, 1);
          else if (c.kind === 'replace') lines[at] = c.line;
          else lines[at] = (lines[at] ?? '') + c.text;
        }
        if (agrees(lines.join('\n'))) answered++;
      }),
      { numRuns: 1000 },
    );
    assert.ok(answered > 50, `it answered ${answered} of 1000`);
  });

  it('gives up on what it does not read, so that yaml decides', () => {
    const base = 'id: "mem_0000abcd"\ntopic: "t"\n';
    for (const block of [
      '',
      `${base}# a note\n`,
      `${base}\n`,
      `${base}topic: "again"\n`,
      `${base}owner: "someone"\n`,
      `${base}tags:\n`,
      `id: mem_0000abcd\ntopic: "t"\n`,
      `${base}created_at: "a\\x41"\n`,
      `${base}created_at: "a"\u00a0\n`,
      `${base}created_at: "a\tb"\n`,
      `${base}tags:\n  - "a"\n  - plain: map\n`,
      `${base}anchors:\n  - path: "a"\n    path: "b"\n`,
      `${base}anchors:\n  - path: "a"\n    __proto__: "b"\n`,
      `${base}phase: +1\n`,
      `${base}difficulty: .5\n`,
      `${base}`.replace(/\n/g, '\r\n'),
    ]) {
      assert.equal(readCanonicalFrontmatter(block), null, JSON.stringify(block));
    }
  });

  it("reads the reference implementation's plain tags as their text, as parseFrontmatter always has", () => {
    const block = 'id: "mem_4a55fb98"\ntopic: "Prefer ruff over flake8"\ntags:\n  - conventions\n  - importance:low\n  - 3.10\n  - "db"\nphase: 0\ndifficulty: 0.1\ncreated_at: "2026-11-22T05:09:09.119350+00:00"\ncreated_session: 2\n';
    assert.ok(agrees(block));
    assert.deepEqual(parseFrontmatter(block).tags, ['conventions', 'importance:low', '3.10', 'db']);
  });
});
