import { strict as assert } from 'node:assert';
import * as fc from 'fast-check';
import YAML from 'yaml';
import {
  InvalidMemoryFile,
  deriveSummary,
  normaliseTags,
  parseBody,
  parseFrontmatter,
  parseMemoryFile,
  reduceToAbstract,
  reduceToHint,
  renderNewMemoryFile,
  replaceSummary,
  splitFrontmatter,
  summaryProblem,
  truncate,
  truncatedLine,
  updateFrontmatter,
  type NewMemoryFields,
} from '../../src/core/memoryFile';
import { FRONTMATTER_KEYS, type ActivePhase } from '../../src/core/model';

const RUNS = { numRuns: 300 };

// ---------------------------------------------------------------------------
// Arbitraries

/** Lone UTF-16 surrogates cannot be written as UTF-8 (the store rejects them): such inputs are skipped. */
function hasLoneSurrogate(s: string): boolean {
  return /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(s);
}

/** The same line in every line-terminator style JavaScript and YAML know of. */
function asLines(line: string): string[] {
  return [line, `\n${line}\n`, `\r\n${line}\r\n`, `\r${line}\r`, `\u2028${line}\u2028`, `\u2029${line}\u2029`, `\n${line}`];
}

const FRAGMENTS: readonly string[] = [
  '"', "'", ': ', ':', '#', ' #', '\n', '\r\n', '\r', '\n\n', '---', '...', '- ', '{', '}', '[', ']', ',', '? ', '> ', '| ',
  '&a', '*a', '!tag', '!!str', '%', '%YAML 1.2', '@', '`', '```', '\t', ' ', '  ', '\\', '\\n', '<<',
  'null', 'Null', '~', 'true', 'false', 'yes', 'no', '2024', '007', '0x1F', '0o17', '1e3', '-0', '.5', '.inf', '.nan',
  '2026-01-15', '2026-01-15T10:30:00Z',
  '😀', '👨‍👩‍👧', 'é', 'مرحبا بالعالم', 'שלום', '\u202e', '\u200f', '\u200b',
  '\u0000', '\u0001', '\u0007', '\u0008', '\u000b', '\u000c', '\u001b', '\u007f', '\u0085', '\u00a0', '\ufeff', '\ufffe', '\uffff',
  '\u2028', '\u2029',
  ...['---', '...', '## Summary', '## Content', '- item', '# Title'].flatMap(asLines),
];

const fragment = fc.constantFrom(...FRAGMENTS);

/** Strings assembled from YAML/Markdown-hostile fragments, plus 10 KB strings. */
const hostileString: fc.Arbitrary<string> = fc.oneof(
  { weight: 8, arbitrary: fc.array(fc.oneof(fragment, fragment, fc.string({ maxLength: 6 }), fc.string({ unit: 'binary', maxLength: 4 })), { maxLength: 14 }).map((parts) => parts.join('')) },
  {
    weight: 1,
    arbitrary: fc.array(fc.oneof(fragment, fc.string({ unit: 'grapheme', minLength: 1, maxLength: 8 })), { minLength: 1, maxLength: 6 }).map((parts) => {
      const unit = parts.join('') || 'x';
      return unit.repeat(Math.ceil(10_240 / unit.length));
    }),
  },
);

/** Any string: fc.string, full Unicode (fast-check 4's replacement for fullUnicodeString), UTF-16 units, hostile. */
const anyString: fc.Arbitrary<string> = fc
  .oneof(
    fc.string(),
    fc.string({ unit: 'binary' }),
    fc.string({ unit: 'grapheme' }),
    fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)) }),
    { weight: 4, arbitrary: hostileString },
  )
  .filter((s) => !hasLoneSurrogate(s));

const topicArb = anyString.filter((s) => s.trim().length > 0);
const summaryArb = anyString.filter((s) => summaryProblem(s) === null);
const contentArb = anyString;

const createdAtArb: fc.Arbitrary<string> = fc.oneof(
  anyString,
  fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
  fc.constantFrom(
    '2026-01-15', '2026-01-15T10:30:00Z', '2026-11-22T05:09:09.119350+00:00', '2026-01-15 10:30:00', '10:30',
    '2024', '0', '-1', '1e3', '0x1F', '0o17', '.5', '3.10', '.inf', '-.inf', '.nan', 'true', 'false', 'True', 'yes', 'no', 'on', 'off',
    'null', '~', '', ' ',
  ),
);

const idArb = fc.stringMatching(/^[0-9a-f]{8}$/).map((h) => `mem_${h}`);
const phaseArb = fc.constantFrom<ActivePhase>(0, 1, 2);
const difficultyArb = fc.double({ min: 0, max: 1, noNaN: true });
const sessionArb = fc.oneof(fc.constant(null), fc.nat(), fc.constant(Number.MAX_SAFE_INTEGER));
const tagsArb = fc.array(anyString, { maxLength: 6 }).map(normaliseTags);

const BASE: NewMemoryFields = {
  id: 'mem_0123abcd',
  topic: 'A topic',
  tags: ['alpha', 'beta'],
  phase: 0,
  difficulty: 0.5,
  created_at: '2026-01-15T10:30:00.000Z',
  created_session: 3,
  summary: 'A summary.',
  content: 'Some content.',
};

/** A string as a short, unambiguous JavaScript literal (for failure messages). */
function show(s: string): string {
  const text = JSON.stringify(s.length > 120 ? s.slice(0, 120) : s).replace(
    /[\u2028\u2029\u0085\u007f\u00a0\u200b-\u200f\u202e\ufeff\ufffe\uffff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
  return s.length > 120 ? `${text}… (${s.length} characters)` : text;
}

function roundTrip(fields: NewMemoryFields) {
  const text = renderNewMemoryFile(fields);
  try {
    return parseMemoryFile(text).memory;
  } catch (error) {
    if (!(error instanceof InvalidMemoryFile)) throw error;
    const frontmatter = text.slice(0, text.indexOf('\n---\n') + 5);
    throw new InvalidMemoryFile(`${error.reason} (the rendered file cannot be read back; its frontmatter: ${show(frontmatter)})`);
  }
}

/** Offset where the body starts (just after the closing delimiter line). */
function bodyOffset(text: string): number {
  return text.length - splitFrontmatter(text).body.length;
}

// ---------------------------------------------------------------------------

describe('memoryFile', () => {
  it('truncatedLine puts a text on one line and cuts it as truncate does, from its start only', () => {
    // Texts of every length around the cut, with long runs of whitespace anywhere, surrogate pairs included.
    const unit = fc.oneof(fc.constantFrom('a', 'bc ', '🚀', ' ', '\n\t  ', ' '.repeat(40)), fc.string({ maxLength: 3 }));
    fc.assert(
      fc.property(fc.array(unit, { maxLength: 400 }), fc.integer({ min: 4, max: 60 }), (parts, max) => {
        const text = parts.join('');
        assert.equal(truncatedLine(text, max), truncate(text.replace(/\s+/g, ' '), max));
      }),
      { numRuns: 1000 },
    );
    assert.equal(truncatedLine('a'.repeat(10) + ' '.repeat(100) + 'b', 12), 'a'.repeat(10) + ' b');
  });

  describe('round trip renderNewMemoryFile → parseMemoryFile (property tests)', () => {
    it('returns any topic trimmed (the codec trims on read; an already trimmed topic comes back exactly)', () => {
      fc.assert(
        fc.property(topicArb, (topic) => {
          const memory = roundTrip({ ...BASE, topic });
          assert.equal(memory.topic, topic.trim(), `topic ${show(topic)}`);
          assert.equal(roundTrip({ ...BASE, topic: topic.trim() }).topic, topic.trim());
        }),
        RUNS,
      );
    });

    it('rejects a topic that is empty after trimming, naming the field', () => {
      for (const topic of ['', ' ', '\t\n', '\u00a0\u2028']) {
        assert.throws(() => roundTrip({ ...BASE, topic }), (e: unknown) => e instanceof InvalidMemoryFile && /"topic"/.test(e.reason));
      }
    });

    it('returns any content exactly', () => {
      fc.assert(
        fc.property(contentArb, (content) => {
          const memory = roundTrip({ ...BASE, content });
          assert.equal(memory.content, content, `content ${show(content)}`);
          assert.equal(memory.summary, BASE.summary);
          assert.equal(memory.hasSections, true);
        }),
        RUNS,
      );
    });

    it('returns content with section headings, --- lines and surrounding blank lines exactly', () => {
      const contents = [
        '## Summary\nnot the summary\n\n## Content\nnot the heading',
        '\n\n\n  leading blank lines\n\ntrailing blank lines\n\n\n',
        '---\nid: mem_ffffffff\n---\n...\n',
        '   \t indented\t \n',
        '## Content\n## Content\n',
        '',
        '\n',
        ' ',
      ];
      for (const content of contents) assert.equal(roundTrip({ ...BASE, content }).content, content, show(content));
    });

    it('returns any summary that summaryProblem() accepts exactly', () => {
      fc.assert(
        fc.property(summaryArb, contentArb, (summary, content) => {
          const memory = roundTrip({ ...BASE, summary, content: 'x' });
          assert.equal(memory.summary, summary, `summary ${show(summary)}`);
          assert.equal(memory.content, 'x', `content after summary ${show(summary)}`);
          // and with any content after it
          assert.equal(roundTrip({ ...BASE, summary, content }).summary, summary, `summary ${show(summary)} with content ${show(content)}`);
        }),
        RUNS,
      );
    });

    it('returns normalised tags, phase, difficulty, created_at and created_session exactly', () => {
      fc.assert(
        fc.property(idArb, tagsArb, phaseArb, difficultyArb, createdAtArb, sessionArb, (id, tags, phase, difficulty, created_at, created_session) => {
          const memory = roundTrip({ ...BASE, id, tags, phase, difficulty, created_at, created_session });
          assert.equal(memory.id, id);
          assert.deepEqual(memory.tags, tags, `tags ${tags.map(show).join(', ')}`);
          assert.equal(memory.phase, phase);
          assert.ok(Object.is(memory.difficulty, difficulty), `difficulty ${difficulty} came back as ${memory.difficulty}`);
          assert.equal(memory.created_at, created_at, `created_at ${show(created_at)}`);
          assert.equal(typeof memory.created_at, 'string');
          assert.equal(memory.created_session, created_session);
        }),
        RUNS,
      );
    });

    it('returns all fields together', () => {
      fc.assert(
        fc.property(
          fc.record({
            id: idArb,
            topic: topicArb,
            tags: tagsArb,
            phase: phaseArb,
            difficulty: difficultyArb,
            created_at: createdAtArb,
            created_session: sessionArb,
            summary: summaryArb,
            content: contentArb,
          }),
          (fields) => {
            const memory = roundTrip(fields);
            assert.equal(memory.id, fields.id);
            assert.equal(memory.topic, fields.topic.trim(), `topic ${show(fields.topic)}`);
            assert.deepEqual(memory.tags, fields.tags, `tags ${fields.tags.map(show).join(', ')}`);
            assert.equal(memory.phase, fields.phase);
            assert.ok(Object.is(memory.difficulty, fields.difficulty), `difficulty ${fields.difficulty}`);
            assert.equal(memory.created_at, fields.created_at, `created_at ${show(fields.created_at)}`);
            assert.equal(memory.created_session, fields.created_session);
            assert.equal(memory.summary, fields.summary, `summary ${show(fields.summary)}`);
            assert.equal(memory.content, fields.content, `content ${show(fields.content)}`);
            assert.equal(memory.hasSections, true);
          },
        ),
        RUNS,
      );
    });
  });

  describe('long multi-line strings (regression)', () => {
    it('keeps a line that holds only a space in a long topic and tag', () => {
      // yaml folds long double-quoted strings over several lines by default, and
      // "\n \n" then read back as a backslash; found by the property test below.
      const text = '\u0000\n \n...\n\u2029## summary\u2029\u0000\u0000 and some more words to pass forty characters';
      const memory = parseMemoryFile(renderNewMemoryFile({ ...BASE, topic: text, tags: [text.toLowerCase()] })).memory;
      assert.equal(memory.topic, text);
      assert.deepEqual(memory.tags, [text.toLowerCase()]);
    });
  });

  describe('tags', () => {
    it('normaliseTags trims, lower-cases, drops empty tags and duplicates, and keeps the order', () => {
      assert.deepEqual(normaliseTags([' Beta ', 'alpha', 'BETA', '', '  ', 'Alpha', 'gamma\t']), ['beta', 'alpha', 'gamma']);
      assert.deepEqual(normaliseTags([]), []);
    });

    it('normaliseTags is idempotent', () => {
      fc.assert(
        fc.property(fc.array(anyString, { maxLength: 8 }), (tags) => {
          const once = normaliseTags(tags);
          assert.deepEqual(normaliseTags(once), once);
          for (const t of once) assert.ok(t.length > 0 && t === t.trim() && t === t.toLowerCase());
        }),
        RUNS,
      );
    });

    it('parseFrontmatter normalises the tags of a file', () => {
      const meta = parseFrontmatter('id: mem_0123abcd\ntopic: t\ntags: [" Deploy ", deploy, Kubernetes, ""]\n');
      assert.deepEqual(meta.tags, ['deploy', 'kubernetes']);
      assert.deepEqual(parseFrontmatter('id: mem_0123abcd\ntopic: t\n').tags, []);
      assert.deepEqual(parseFrontmatter('id: mem_0123abcd\ntopic: t\ntags:\n').tags, []);
    });
  });

  describe('scalars that look like other types stay text', () => {
    const file = (frontmatter: string) => `---\n${frontmatter}---\nBody.\n`;

    it('reads an unquoted timestamp as the same string', () => {
      for (const ts of ['2026-01-15T10:30:00Z', '2026-01-15', '2026-01-15 10:30:00', '2026-11-22T05:09:09.119350+00:00']) {
        const { memory } = parseMemoryFile(file(`id: mem_0123abcd\ntopic: t\ncreated_at: ${ts}\n`));
        assert.equal(memory.created_at, ts);
      }
    });

    it('keeps quoted numbers and booleans as strings (topic, tags, created_at)', () => {
      const { memory } = parseMemoryFile(
        file('id: mem_0123abcd\ntopic: "2024"\ntags:\n  - "2024"\n  - "3.10"\n  - "true"\n  - "null"\ncreated_at: "2024"\n'),
      );
      assert.equal(memory.topic, '2024');
      assert.deepEqual(memory.tags, ['2024', '3.10', 'true', 'null']);
      assert.equal(memory.created_at, '2024');
      assert.equal(parseMemoryFile(file("id: mem_0123abcd\ntopic: '007'\n")).memory.topic, '007');
    });

    it('reads unquoted numeric and boolean tags and topics as strings', () => {
      const { memory } = parseMemoryFile(file('id: mem_0123abcd\ntopic: 2024\ntags:\n  - 2024\n  - 3.5\n  - true\n  - python\ncreated_at: 2024\n'));
      assert.equal(memory.topic, '2024');
      assert.deepEqual(memory.tags, ['2024', '3.5', 'true', 'python']);
      for (const t of memory.tags) assert.equal(typeof t, 'string');
      assert.equal(memory.created_at, '2024');
    });

    it('reads unquoted numeric tags with the text they were written with (3.10, 007, 1e3, 0x1F)', () => {
      // The reference implementation writes tags as unquoted block items, so a tag "3.10" is on disk as `- 3.10`.
      const { memory } = parseMemoryFile(file('id: mem_0123abcd\ntopic: t\ntags:\n  - 3.10\n  - 007\n  - 1e3\n  - 0x1F\n'));
      assert.deepEqual(memory.tags, ['3.10', '007', '1e3', '0x1f']);
    });

    it('does not reject a file for an unquoted tag that YAML reads as null or infinity (null, ~, .inf)', () => {
      const { memory } = parseMemoryFile(file('id: mem_0123abcd\ntopic: t\ntags:\n  - null\n  - ~\n  - .inf\n  - ok\n'));
      assert.deepEqual(memory.tags, ['null', '~', '.inf', 'ok']);
    });
  });

  describe('frontmatter writing', () => {
    it('writes the known keys of a new file in the order id, topic, tags, phase, difficulty, created_at, created_session', () => {
      const order = ['id', 'topic', 'tags', 'phase', 'difficulty', 'created_at', 'created_session'];
      assert.deepEqual([...FRONTMATTER_KEYS], order);
      const keysOf = (text: string) => {
        const doc = YAML.parseDocument(splitFrontmatter(text).frontmatter);
        return (doc.contents as YAML.YAMLMap).items.map((pair) => String((pair.key as YAML.Scalar).value));
      };
      const text = renderNewMemoryFile(BASE);
      assert.deepEqual(keysOf(text), order);
      assert.deepEqual(
        text.split('\n').filter((l) => /^[a-z_]+:/.test(l)).map((l) => l.slice(0, l.indexOf(':'))),
        order,
      );
      assert.deepEqual(keysOf(renderNewMemoryFile({ ...BASE, created_session: null })), order.slice(0, -1));
      assert.ok(/^tags:\n {2}- "alpha"\n {2}- "beta"\n/m.test(text), 'tags are a block list');
      assert.ok(text.startsWith('---\nid: '));
    });

    const handWritten = [
      '---',
      '# Written by hand: this comment must survive.',
      'id: mem_0123abcd',
      "topic: 'Deploy: the \"blue\" cluster'",
      'tags:',
      '  - deploy # why this tag',
      '  - "2024"',
      '  - plain',
      'phase: 0',
      'difficulty: 0.25',
      'created_at: 2026-01-15T10:30:00Z',
      'created_session: 3',
      '# a comment before unknown keys',
      'owner: alice',
      "reviewer: 'bob'",
      'reviewed: true',
      'links:',
      '  - https://example.com/a',
      '  - "https://example.com/b"',
      'notes: |',
      '  Free text kept',
      '  as a literal block.',
      'extra:',
      '  nested: value',
      '  list:',
      '    - 1',
      '---',
      'Body text.',
      '',
    ].join('\n');

    it('updateFrontmatter changes only the changed line: unknown keys, comments and value styles are kept', () => {
      const updated = updateFrontmatter(handWritten, { phase: 2 });
      assert.equal(updated, handWritten.replace('\nphase: 0\n', '\nphase: 2\n'));
      const meta = parseMemoryFile(updated).memory;
      assert.equal(meta.phase, 2);
      assert.equal(meta.topic, 'Deploy: the "blue" cluster');
      const data = YAML.parse(splitFrontmatter(updated).frontmatter) as Record<string, unknown>;
      assert.equal(data.owner, 'alice');
      assert.equal(data.reviewer, 'bob');
      assert.deepEqual(data.extra, { nested: 'value', list: [1] });
      assert.equal(data.notes, 'Free text kept\nas a literal block.\n');
    });

    it('updateFrontmatter sets a string field, adds new keys at the end and deletes keys given undefined', () => {
      const updated = updateFrontmatter(handWritten, { topic: 'New: "topic"', restored_from_archive: true, reviewer: undefined });
      const lines = updated.split('\n');
      const before = handWritten.split('\n');
      assert.equal(lines[3], 'topic: "New: \\"topic\\""');
      assert.ok(!lines.some((l) => l.startsWith('reviewer:')));
      assert.equal(lines[lines.indexOf('---', 1) - 1], 'restored_from_archive: true');
      // Every other line is kept as it was.
      const expected = before.filter((l) => !l.startsWith('reviewer:') && !l.startsWith('topic:'));
      assert.deepEqual(lines.filter((l) => !l.startsWith('topic:') && l !== 'restored_from_archive: true'), expected);
      const memory = parseMemoryFile(updated).memory;
      assert.equal(memory.topic, 'New: "topic"');
      assert.equal(splitFrontmatter(updated).body, splitFrontmatter(handWritten).body);
    });

    it('updateFrontmatter keeps flow-style collections in flow style', () => {
      const text = '---\nid: mem_0123abcd\ntopic: t\ntags: [alpha, beta]\nmeta: {a: 1}\nphase: 0\n---\nBody\n';
      const updated = updateFrontmatter(text, { phase: 1 });
      assert.match(updated, /^tags: \[ ?alpha, beta ?\]$/m);
      assert.match(updated, /^meta: \{ ?a: 1 ?\}$/m);
      assert.deepEqual(parseMemoryFile(updated).memory.tags, ['alpha', 'beta']);
      assert.ok(updated.endsWith('---\nBody\n'));
    });

    it('updateFrontmatter keeps the exact text of untouched flow collections ([a, b] stays [a, b])', () => {
      const text = '---\nid: mem_0123abcd\ntopic: t\ntags: [alpha, beta]\nmeta: {a: 1}\nphase: 0\n---\nBody\n';
      assert.equal(updateFrontmatter(text, { phase: 1 }), text.replace('phase: 0', 'phase: 1'));
    });

    it('updateFrontmatter keeps the exact text of untouched numbers (.5, 0x1F, 1e3)', () => {
      const text = '---\nid: mem_0123abcd\ntopic: t\nphase: 0\ndifficulty: .5\ncount: 0x1F\nbig: 1e3\n---\nBody\n';
      assert.equal(updateFrontmatter(text, { phase: 1 }), text.replace('phase: 0', 'phase: 1'));
    });

    it('updateFrontmatter keeps every field of any rendered file that it does not change', () => {
      fc.assert(
        fc.property(topicArb, tagsArb, createdAtArb, contentArb, phaseArb, (topic, tags, created_at, content, phase) => {
          const text = renderNewMemoryFile({ ...BASE, topic: topic.trim(), tags, created_at, content });
          const updated = updateFrontmatter(text, { phase });
          const before = parseMemoryFile(text).memory;
          assert.deepEqual(parseMemoryFile(updated).memory, { ...before, phase });
          assert.equal(splitFrontmatter(updated).body, splitFrontmatter(text).body);
        }),
        RUNS,
      );
    });
  });

  describe('replaceSummary', () => {
    const simpleSummary = fc.string({ minLength: 1, maxLength: 80 }).filter((s) => summaryProblem(s) === null && s === s.trim());

    it('rewrites only the Summary section of a rendered file (property over contents)', () => {
      fc.assert(
        fc.property(contentArb, simpleSummary, simpleSummary, (content, oldSummary, newSummary) => {
          const text = renderNewMemoryFile({ ...BASE, summary: oldSummary, content });
          const start = bodyOffset(text) + '\n## Summary\n'.length;
          assert.equal(text.slice(start - '## Summary\n'.length, start), '## Summary\n');
          // A text ending in "\r" is closed with "\r\n" so that reading can strip exactly one line ending.
          const eol = content.endsWith('\r') ? '\r\n' : '\n';
          const tail = `\n\n## Content\n${content}${eol}`;
          assert.ok(text.endsWith(tail));
          const out = replaceSummary(text, newSummary);
          assert.equal(out.slice(0, start), text.slice(0, start), 'every byte before the summary is kept');
          assert.ok(out.endsWith(`## Content\n${content}${eol}`), 'every byte from the Content heading on is kept');
          assert.equal(out, text.slice(0, start) + newSummary + tail);
          const memory = parseMemoryFile(out).memory;
          assert.equal(memory.summary, newSummary);
          assert.equal(memory.content, parseMemoryFile(text).memory.content);
        }),
        RUNS,
      );
    });

    it('rewrites only the Summary section of hand-written sectioned files (CRLF, blank lines, heading spaces)', () => {
      const summaryLine = fc.string({ minLength: 1, maxLength: 40 }).filter((s) => !/^## (Content|Summary)/.test(s));
      fc.assert(
        fc.property(
          fc.constantFrom('', '\n', '\n\n', ' \n', '\r\n'),
          fc.constantFrom('\n', '\r\n'),
          fc.constantFrom('', ' ', '\t '),
          fc.array(summaryLine, { minLength: 1, maxLength: 3 }),
          fc.constantFrom(1, 2, 3),
          fc.option(contentArb, { nil: undefined }),
          simpleSummary,
          (lead, eol, headingTrail, summaryLines, gapLines, content, newSummary) => {
            const head = `---${eol}id: mem_0123abcd${eol}topic: "t"${eol}---${eol}${lead}## Summary${headingTrail}${eol}`;
            const oldSummary = summaryLines.join(eol);
            const after = content === undefined ? '' : `## Content${eol}${content}`;
            const text = `${head}${oldSummary}${eol.repeat(gapLines)}${after}`;
            const out = replaceSummary(text, newSummary);
            assert.equal(out.slice(0, head.length), head, 'every byte before the summary is kept');
            assert.ok(out.endsWith(after), 'every byte from the Content heading on is kept');
            const middle = out.slice(head.length, out.length - after.length);
            assert.equal(middle.replace(/(?:\r?\n)+$/, ''), newSummary);
            const memory = parseMemoryFile(out).memory;
            assert.equal(memory.summary, newSummary);
            assert.equal(memory.hasSections, true);
            if (content !== undefined) assert.equal(memory.content, parseMemoryFile(text).memory.content);
          },
        ),
        RUNS,
      );
    });

    it('keeps every byte around the summary of a reference-written sectioned file', () => {
      const text = [
        '---',
        'id: "mem_db545e7e"',
        'topic: "Fix postgres connection pool exhaustion"',
        'tags:',
        '  - py',
        '  - postgres',
        'phase: 0',
        '---',
        '## Summary',
        'Pool of 10 was exhausted by batch jobs; raised to 50 with 60s timeout.',
        '',
        '## Content',
        '### Problem',
        'Batch jobs opened connections faster than they were returned.',
        '',
      ].join('\n');
      assert.equal(
        replaceSummary(text, 'New summary.'),
        text.replace('Pool of 10 was exhausted by batch jobs; raised to 50 with 60s timeout.', 'New summary.'),
      );
    });

    it('gives a body without sections sections, the whole old body becoming Content (property)', () => {
      const bodyText = anyString.filter((t) => !/^[ \t]*\r?\n/.test(`${t}\n`) && !/^## Summary[ \t]*(?:\r?\n|$)/.test(t) && !t.endsWith('\r'));
      fc.assert(
        fc.property(bodyText, fc.constantFrom('\n', '\r\n'), simpleSummary, (t, eol, newSummary) => {
          const text = `---\nid: "mem_0123abcd"\ntopic: "t"\n---\n${t}${eol}`;
          assert.equal(parseMemoryFile(text).memory.hasSections, false);
          const out = replaceSummary(text, newSummary);
          assert.equal(out.slice(0, bodyOffset(text)), text.slice(0, bodyOffset(text)), 'the frontmatter is kept');
          const memory = parseMemoryFile(out).memory;
          assert.equal(memory.hasSections, true);
          assert.equal(memory.summary, newSummary);
          assert.equal(memory.content, t);
        }),
        RUNS,
      );
    });

    it('gives the reference example body sections with the old body as Content', () => {
      const text = '---\nid: "mem_4a55fb98"\ntopic: "Prefer ruff over flake8"\n---\nTeam convention: ruff for linting and formatting; line length 100.\n';
      assert.equal(
        replaceSummary(text, 'Use ruff.'),
        '---\nid: "mem_4a55fb98"\ntopic: "Prefer ruff over flake8"\n---\n\n## Summary\nUse ruff.\n\n## Content\nTeam convention: ruff for linting and formatting; line length 100.\n',
      );
    });
  });

  describe('parseBody without sections', () => {
    it('reads the text as Content and derives the Summary (property)', () => {
      // t is the text of the body: it does not start with a blank line, and its last line terminator is the body's.
      const bodyText = anyString.filter((t) => !/^[ \t]*\r?\n/.test(`${t}\n`) && !/^## Summary[ \t]*(?:\r?\n|$)/.test(t) && !t.endsWith('\r'));
      fc.assert(
        fc.property(fc.constantFrom('', '\n', '\n\n', ' \t\n', '\r\n'), bodyText, fc.constantFrom('\n', '\r\n'), (lead, t, eol) => {
          const body = parseBody(`${lead}${t}${eol}`);
          assert.equal(body.hasSections, false);
          assert.equal(body.content, t);
          assert.equal(body.summary, deriveSummary(t));
        }),
        RUNS,
      );
    });

    it('derives the first sentence of the first paragraph that is not a heading', () => {
      assert.deepEqual(parseBody('First sentence. Second sentence.\n'), {
        summary: 'First sentence.',
        content: 'First sentence. Second sentence.',
        hasSections: false,
      });
      assert.equal(parseBody('# Title\n## Sub\n\nBody starts here! More.\n').summary, 'Body starts here!');
      assert.equal(parseBody('### Problem\nBatch jobs\nwrapped line. Then more.\n').summary, 'Batch jobs wrapped line.');
      assert.equal(deriveSummary('Version 1.2 is out. Yes.'), 'Version 1.2 is out.');
      assert.equal(deriveSummary('Is it? Yes.'), 'Is it?');
      assert.equal(deriveSummary('No sentence end'), 'No sentence end');
      assert.equal(deriveSummary(''), '');
    });

    it('derives a Summary of at most 200 characters, on one line', () => {
      const long = `${'word '.repeat(100)}end. Next.`;
      const summary = deriveSummary(long);
      assert.ok(summary.length <= 200, `${summary.length} characters`);
      assert.ok(summary.endsWith('…'));
      assert.ok(long.startsWith(summary.slice(0, -1).trimEnd()));
      fc.assert(
        fc.property(anyString, (content) => {
          const s = deriveSummary(content);
          assert.ok(s.length <= 200);
          assert.ok(!/[\r\n\u2028\u2029]/.test(s), show(s));
        }),
        RUNS,
      );
    });

    it('derives a Summary that never splits a surrogate pair when truncating', () => {
      const summary = deriveSummary('😀'.repeat(150));
      assert.ok(summary.length <= 200);
      assert.ok(!hasLoneSurrogate(summary), `lone surrogate in ${show(summary.slice(-3))}`);
      fc.assert(
        fc.property(fc.string({ unit: 'binary', minLength: 150, maxLength: 400 }), (content) => {
          assert.ok(!hasLoneSurrogate(deriveSummary(content)));
        }),
        RUNS,
      );
    });
  });

  describe('anchors entries that cannot be read', () => {
    const HASH = 'poly64:0123456789abcdef';
    const front = (anchors: string) => `id: mem_00000001\ntopic: "T"\n${anchors}`;

    /** What parsing names as left out of the memory's anchors ([] when none). */
    const unreadableAnchors = (text: string) => parseFrontmatter(text).unreadable_anchors ?? [];

    it('are left out of the memory, and the parsed memory names each (entry, path, why); the readable ones are kept', () => {
      const text = front(`anchors:\n  - path: "src/a.ts"\n    hash: "${HASH}"\n  - path: "/etc/passwd"\n    hash: "${HASH}"\n  - path: "src/b.ts"\n    lines: "x"\n    hash: "${HASH}"\n  - 42\n`);
      assert.deepEqual(parseFrontmatter(text).anchors, [{ path: 'src/a.ts', hash: HASH }]);
      assert.deepEqual(unreadableAnchors(text), [
        { entry: 'anchors[1]', path: '/etc/passwd', reason: 'anchors[1].path must be a path inside the project' },
        { entry: 'anchors[2]', path: 'src/b.ts', reason: 'anchors[2].lines must be written 10-24' },
        { entry: 'anchors[3]', reason: 'anchors[3] must have path and hash' },
      ]);
    });

    it('a field that is not a list is one entry; past 20 readable anchors, the rest are named too', () => {
      assert.deepEqual(parseFrontmatter(front('anchors: src/a.ts\n')).anchors, []);
      assert.deepEqual(unreadableAnchors(front('anchors: src/a.ts\n')), [{ entry: 'anchors', reason: 'anchors must be a list' }]);
      const many = Array.from({ length: 22 }, (_, i) => `  - path: "src/f${i}.ts"\n    hash: "${HASH}"\n`).join('');
      assert.equal(parseFrontmatter(front(`anchors:\n${many}`)).anchors.length, 20);
      assert.deepEqual(
        unreadableAnchors(front(`anchors:\n${many}`)).map((u) => [u.entry, u.path, u.reason]),
        [20, 21].map((i) => [`anchors[${i}]`, `src/f${i}.ts`, 'beyond the 20 anchors a memory may have']),
      );
    });

    it('names nothing without anchors, with an empty field or with readable ones (and the field is then absent)', () => {
      for (const text of [front(''), front('anchors:\n'), front('anchors: []\n'), front(`anchors:\n  - path: "a.ts"\n    hash: "${HASH}"\n`), front('extra: "mentions anchors: in a string"\n')]) {
        assert.equal('unreadable_anchors' in parseFrontmatter(text), false, JSON.stringify(text));
      }
    });
  });

  describe('errors name the problem', () => {
    const reasonOf = (fn: () => unknown): string => {
      try {
        fn();
      } catch (error) {
        assert.ok(error instanceof InvalidMemoryFile, `expected InvalidMemoryFile, got ${String(error)}`);
        return error.reason;
      }
      assert.fail('expected an InvalidMemoryFile');
    };

    it('splitFrontmatter: a file without frontmatter', () => {
      assert.match(reasonOf(() => splitFrontmatter('Just text\n')), /no YAML frontmatter/);
      assert.match(reasonOf(() => splitFrontmatter('')), /no YAML frontmatter/);
      assert.match(reasonOf(() => splitFrontmatter('\n---\nid: x\n---\n')), /no YAML frontmatter/);
    });

    it('splitFrontmatter: a frontmatter without closing line', () => {
      assert.match(reasonOf(() => splitFrontmatter('---\nid: mem_0123abcd\ntopic: t\n')), /no closing "---"/);
      assert.match(reasonOf(() => splitFrontmatter('---\nid: mem_0123abcd\n----\n')), /no closing "---"/);
    });

    it('splitFrontmatter accepts a BOM, CRLF and a "..." closing line', () => {
      assert.deepEqual(splitFrontmatter('\uFEFF---\r\nid: x\r\n...\r\nbody'), { frontmatter: 'id: x\r\n', body: 'body' });
    });

    it('parseFrontmatter: a bad id names "id"', () => {
      assert.match(reasonOf(() => parseFrontmatter('id: mem_XYZ\ntopic: t\n')), /"id"/);
      assert.match(reasonOf(() => parseFrontmatter('id: 12345678\ntopic: t\n')), /"id"/);
    });

    it('parseFrontmatter: a missing id or topic names the field and says it is missing', () => {
      assert.match(reasonOf(() => parseFrontmatter('topic: t\n')), /"id" is missing/);
      assert.match(reasonOf(() => parseFrontmatter('id: mem_0123abcd\n')), /"topic"/);
      assert.match(reasonOf(() => parseFrontmatter('id: mem_0123abcd\n')), /"topic" is missing/);
    });

    it('parseFrontmatter: an empty topic names "topic"', () => {
      assert.match(reasonOf(() => parseFrontmatter('id: mem_0123abcd\ntopic: "  "\n')), /"topic" must not be empty/);
    });

    it('parseFrontmatter: a phase out of range names "phase"', () => {
      for (const phase of ['3', '-1', '1.5', '"x"']) {
        assert.match(reasonOf(() => parseFrontmatter(`id: mem_0123abcd\ntopic: t\nphase: ${phase}\n`)), /"phase"/);
      }
      assert.match(reasonOf(() => parseFrontmatter('id: mem_0123abcd\ntopic: t\nphase: 3\n')), /must be 0, 1 or 2/);
    });

    it('parseFrontmatter: a difficulty out of range names "difficulty"', () => {
      assert.match(reasonOf(() => parseFrontmatter('id: mem_0123abcd\ntopic: t\ndifficulty: 2\n')), /"difficulty"/);
    });

    it('parseFrontmatter: invalid YAML says so', () => {
      assert.match(reasonOf(() => parseFrontmatter('id: [\n')), /invalid YAML/);
      assert.match(reasonOf(() => parseFrontmatter('id: mem_0123abcd\nid: mem_0123abcd\ntopic: t\n')), /invalid YAML/);
      assert.match(reasonOf(() => parseFrontmatter('- a\n')), /not a mapping/);
    });
  });

  describe('eviction reductions', () => {
    it('reduceToHint keeps the first paragraph', () => {
      assert.equal(reduceToHint('First paragraph\nstill first.\n\nSecond paragraph.'), 'First paragraph\nstill first.');
      assert.equal(reduceToHint('\n\nOnly one.\n'), 'Only one.');
      assert.equal(reduceToHint(''), '');
    });

    it('reduceToHint keeps the heading of the first paragraph', () => {
      assert.equal(reduceToHint('## Heading\n\nFirst paragraph.\n\nSecond.'), '## Heading\n\nFirst paragraph.');
      assert.equal(reduceToHint('### Problem\nBatch jobs.\n\n### Solution\nRaise.'), '### Problem\nBatch jobs.');
    });

    it('reduceToHint keeps the first paragraph (property)', () => {
      const words = fc.array(fc.stringMatching(/^[A-Za-z0-9,.]{1,12}$/), { minLength: 1, maxLength: 40 }).map((w) => w.join(' '));
      fc.assert(
        fc.property(fc.option(fc.stringMatching(/^#{1,6} [A-Za-z]{1,20}$/), { nil: undefined }), words, words, (heading, p1, p2) => {
          const first = heading === undefined ? p1 : `${heading}\n\n${p1}`;
          assert.equal(reduceToHint(`${first}\n\n${p2}\n`), first);
        }),
        RUNS,
      );
    });

    it('reduceToAbstract gives one line: the first sentence, or the summary when the content has none', () => {
      assert.equal(reduceToAbstract('# T\n\nFirst line\nsecond line. Next.', 'S'), 'First line second line.');
      assert.equal(reduceToAbstract('', 'Sum\nmary  here'), 'Sum mary here');
      fc.assert(
        fc.property(anyString, summaryArb, (content, summary) => {
          const line = reduceToAbstract(content, summary);
          assert.ok(!/[\r\n\u2028\u2029]/.test(line), show(line));
          assert.ok(line.length <= 200);
        }),
        RUNS,
      );
    });
  });
});
