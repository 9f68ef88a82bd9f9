import { strict as assert } from 'node:assert';
import fc from 'fast-check';
import type { FileSignature } from '../../src/core/files';
import { readSnapshot, savedPostingsLength, SnapshotNumbersWriter, writeSnapshotStart, type PostingWidth, type SnapshotContents } from '../../src/core/searchSnapshot';

const FIELDS = ['topic', 'content'];

/** A snapshot's bytes: the header and versions of `contents`, then `numbers` (4 bytes each), then `postings` (of the contents' width). */
function snapshotBytes(contents: SnapshotContents, numbers: readonly number[], postings: readonly number[]): Buffer {
  const pieces: Buffer[] = [];
  const write = (piece: Uint8Array) => pieces.push(Buffer.from(piece));
  writeSnapshotStart(contents, write);
  const numbersOut = new SnapshotNumbersWriter(write, 4);
  numbersOut.put(numbers);
  numbersOut.flush();
  const postingsOut = new SnapshotNumbersWriter(write, 4, contents.width);
  postingsOut.put(postings);
  postingsOut.flush();
  return Buffer.concat(pieces);
}

const version = (n: number): FileSignature => ({ size: 100 + n, mtimeMs: 1.7e12 + n + 0.125, ino: 2 ** 45 + n });

/**
 * Three slots, the second free; two fields. Field lengths (slot-major), then
 * the counts of "alpha" (topic: slot 0 ×2; content: slot 2 ×1) and "beta"
 * (content: slots 0 and 2, ×1 and ×3), then their postings.
 */
const CONTENTS: SnapshotContents = {
  fields: FIELDS,
  width: 2,
  ids: ['a', undefined, 'c'],
  terms: ['alpha', 'beta'],
  versionOf: (id) => (id === 'a' ? version(1) : undefined),
  textDigestAt: (slot) => (slot === 0 ? 2 ** 47 + 3 : NaN),
};
const LENGTHS = [4, 10, 7, 70, 2, 5];
const COUNTS = [1, 1, 0, 2];
const ALPHA = [0, 2, 2, 1];
const BETA = [0, 2, 1, 3];

describe('searchSnapshot: the saved form of a search index', () => {
  for (const width of [2, 4] as PostingWidth[]) {
    it(`reads back what was written, postings of ${width} bytes: IDs, free slots, terms, versions, field totals of the slots in use, and where each term starts`, () => {
      const parts = readSnapshot(snapshotBytes({ ...CONTENTS, width }, [...LENGTHS, ...COUNTS], [...ALPHA, ...BETA]), FIELDS);
      assert.ok(parts);
      assert.deepEqual(parts.ids, ['a', null, 'c']);
      assert.deepEqual(parts.freeSlots, [1]);
      assert.deepEqual(parts.terms, ['alpha', 'beta']);
      assert.deepEqual([...parts.totalLengths], [4 + 2, 10 + 5], 'the free slot is not counted');
      assert.equal(parts.width, width);
      assert.equal(parts.postings.BYTES_PER_ELEMENT, width);
      assert.deepEqual([...parts.postings], [...ALPHA, ...BETA]);
      assert.deepEqual([...parts.numbers], [...LENGTHS, ...COUNTS]);
      assert.deepEqual([...parts.starts], [0, 4]);
      assert.equal(savedPostingsLength(parts.numbers, 3, 0, FIELDS.length), 4);
      assert.equal(savedPostingsLength(parts.numbers, 3, 1, FIELDS.length), 4);
      assert.ok(parts.versions.isAt(0, version(1)));
      assert.ok(!parts.versions.isAt(0, { ...version(1), ino: version(1).ino + 1 }));
      assert.ok(!parts.versions.isAt(2, version(1)), 'a document saved without a version matches none');
      assert.ok(!parts.versions.isAt(3, version(1)), 'nor does a slot past the end');
      assert.equal(parts.versions.textDigestAt(0), 2 ** 47 + 3, 'the text digest, all 48 bits');
      assert.ok(Number.isNaN(parts.versions.textDigestAt(2)), 'none saved');
      assert.ok(Number.isNaN(parts.versions.textDigestAt(3)), 'none past the end');
    });
  }

  it('refuses a snapshot whose numbers are not whole or name what it does not hold', () => {
    const read = (numbers: number[], postings: number[], contents = CONTENTS, fields = FIELDS) => readSnapshot(snapshotBytes(contents, numbers, postings), fields);
    const numbers = [...LENGTHS, ...COUNTS];
    assert.ok(read(numbers, [...ALPHA, ...BETA]), 'as written');
    assert.equal(read(numbers, [...ALPHA, ...BETA, 0]), null, 'a number past the last term');
    assert.equal(read(numbers, [...ALPHA, ...BETA.slice(0, -1)]), null, 'cut short');
    assert.equal(read(numbers, ALPHA), null, 'a term without its postings');
    assert.equal(read(numbers, [1, 2, 2, 1, ...BETA]), null, 'a posting naming the free slot');
    assert.equal(read(numbers, [3, 2, 2, 1, ...BETA]), null, 'a posting naming a slot past the documents');
    assert.equal(read([...LENGTHS, 0, 0, 0, 2], BETA), null, 'a term no document holds');
    assert.equal(read(numbers.slice(0, -1), [...ALPHA, ...BETA]), null, 'a count missing');
    assert.equal(read(LENGTHS.slice(0, 4), [], { ...CONTENTS, terms: [] }), null, 'fewer field lengths than slots');
    assert.equal(read(numbers, [...ALPHA, ...BETA], CONTENTS, ['topic', 'summary']), null, 'other fields');
    const bytes = snapshotBytes(CONTENTS, numbers, [...ALPHA, ...BETA]);
    assert.equal(readSnapshot(bytes.subarray(0, bytes.length - 1), FIELDS), null, 'half a posting');
    assert.equal(readSnapshot(bytes.subarray(0, 3), FIELDS), null, 'no header length');
    const notJson = Buffer.from(bytes);
    notJson.write('{', 4 + notJson.readUInt32LE(0) - 1);
    assert.equal(readSnapshot(notJson, FIELDS), null, 'a header that is not JSON');
    const nullHeader = Buffer.alloc(16);
    nullHeader.writeUInt32LE(4, 0);
    nullHeader.write('null', 4);
    assert.equal(readSnapshot(nullHeader, FIELDS), null, 'a header that is not an object');
    const otherFormat = Buffer.from(bytes);
    otherFormat.write('ltm-search-0', otherFormat.indexOf('ltm-search-'));
    assert.equal(readSnapshot(otherFormat, FIELDS), null, 'another format');
    const otherWidth = Buffer.from(bytes);
    otherWidth.write('"width":3', otherWidth.indexOf('"width":2'));
    assert.equal(readSnapshot(otherWidth, FIELDS), null, 'postings neither 2 nor 4 bytes wide');
  });

  it('reads the same parts from bytes at any offset of their buffer (views where aligned, copies where not)', () => {
    for (const width of [2, 4] as PostingWidth[]) {
      const bytes = snapshotBytes({ ...CONTENTS, width }, [...LENGTHS, ...COUNTS], [...ALPHA, ...BETA]);
      const expected = readSnapshot(bytes, FIELDS)!;
      for (const offset of [1, 2, 4, 6]) {
        const moved = Buffer.alloc(bytes.length + offset).subarray(offset);
        bytes.copy(moved);
        const parts = readSnapshot(moved, FIELDS);
        assert.ok(parts, `offset ${offset}`);
        assert.deepEqual([...parts.numbers], [...expected.numbers], `offset ${offset}`);
        assert.deepEqual([...parts.postings], [...expected.postings], `offset ${offset}`);
        assert.ok(parts.versions.isAt(0, version(1)), `offset ${offset}`);
      }
    }
  });

  it('SnapshotNumbersWriter gives the numbers put, in order, whatever its block size and width', () => {
    for (const width of [2, 4] as PostingWidth[]) {
      const largest = width === 2 ? 0xffff : 2 ** 32 - 1;
      const item = fc.oneof(fc.nat({ max: largest }), fc.array(fc.nat({ max: largest }), { maxLength: 20 }));
      fc.assert(
        fc.property(fc.array(item, { maxLength: 20 }), fc.integer({ min: 1, max: 9 }), (items, block) => {
          const pieces: Buffer[] = [];
          const out = new SnapshotNumbersWriter((piece) => pieces.push(Buffer.from(piece)), block, width);
          for (const it of items) {
            if (typeof it === 'number') out.putOne(it);
            else out.put(it);
          }
          out.flush();
          const joined = Buffer.concat(pieces);
          const written = Array.from({ length: joined.length / width }, (_, i) => (width === 2 ? joined.readUInt16LE(2 * i) : joined.readUInt32LE(4 * i)));
          assert.deepEqual(written, items.flat());
          assert.ok(pieces.every((p) => p.length > 0 && p.length <= block * width));
        }),
        { numRuns: 200 },
      );
    }
  });

  it('SnapshotNumbersWriter refuses a number its width cannot hold, rather than cutting it', () => {
    const out = new SnapshotNumbersWriter(() => undefined, 4, 2);
    out.put([0xffff]);
    assert.throws(() => out.putOne(0x10000), RangeError);
    assert.throws(() => out.put([1, 0x10000]), RangeError);
  });
});
