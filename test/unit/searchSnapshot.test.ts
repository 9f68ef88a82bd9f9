import { strict as assert } from 'node:assert';
import fc from 'fast-check';
import type { FileSignature } from '../../src/core/files';
import { readSnapshot, savedPostingsEnd, SnapshotNumbersWriter, writeSnapshotStart, type SnapshotContents } from '../../src/core/searchSnapshot';

const FIELDS = ['topic', 'content'];

/** A snapshot's bytes: the header and versions of `contents`, then `numbers`. */
function snapshotBytes(contents: SnapshotContents, numbers: readonly number[]): Buffer {
  const pieces: Buffer[] = [];
  const write = (piece: Uint8Array) => pieces.push(Buffer.from(piece));
  writeSnapshotStart(contents, write);
  const out = new SnapshotNumbersWriter(write, 4);
  out.put(numbers);
  out.flush();
  return Buffer.concat(pieces);
}

const version = (n: number): FileSignature => ({ size: 100 + n, mtimeMs: 1.7e12 + n + 0.125, ino: 2 ** 45 + n });

/**
 * Three slots, the second free; two fields. Field lengths (slot-major), then
 * "alpha": topic [slot 0 ×2], content [slot 2 ×1]; "beta": content [slots 0 and 2, ×1 and ×3].
 */
const CONTENTS: SnapshotContents = { fields: FIELDS, ids: ['a', undefined, 'c'], terms: ['alpha', 'beta'], versionOf: (id) => (id === 'a' ? version(1) : undefined) };
const LENGTHS = [4, 10, 7, 70, 2, 5];
const ALPHA = [1, 0, 2, 1, 2, 1];
const BETA = [0, 2, 0, 2, 1, 3];

describe('searchSnapshot: the saved form of a search index', () => {
  it('reads back what was written: IDs, free slots, terms, versions, field totals of the slots in use, and where each term starts', () => {
    const parts = readSnapshot(snapshotBytes(CONTENTS, [...LENGTHS, ...ALPHA, ...BETA]), FIELDS);
    assert.ok(parts);
    assert.deepEqual(parts.ids, ['a', null, 'c']);
    assert.deepEqual(parts.freeSlots, [1]);
    assert.deepEqual(parts.terms, ['alpha', 'beta']);
    assert.deepEqual([...parts.totalLengths], [4 + 2, 10 + 5], 'the free slot is not counted');
    assert.deepEqual([...parts.starts], [6, 12]);
    assert.equal(savedPostingsEnd(parts.numbers, 6, FIELDS.length), 12);
    assert.equal(savedPostingsEnd(parts.numbers, 12, FIELDS.length), parts.numbers.length);
    assert.ok(parts.versions.isAt(0, version(1)));
    assert.ok(!parts.versions.isAt(0, { ...version(1), ino: version(1).ino + 1 }));
    assert.ok(!parts.versions.isAt(2, version(1)), 'a document saved without a version matches none');
    assert.ok(!parts.versions.isAt(3, version(1)), 'nor does a slot past the end');
  });

  it('refuses a snapshot whose numbers are not whole or name what it does not hold', () => {
    const read = (numbers: number[], contents = CONTENTS, fields = FIELDS) => readSnapshot(snapshotBytes(contents, numbers), fields);
    assert.ok(read([...LENGTHS, ...ALPHA, ...BETA]), 'as written');
    assert.equal(read([...LENGTHS, ...ALPHA, ...BETA, 0]), null, 'a number past the last term');
    assert.equal(read([...LENGTHS, ...ALPHA, ...BETA.slice(0, -1)]), null, 'cut short');
    assert.equal(read([...LENGTHS, ...ALPHA]), null, 'a term without its postings');
    assert.equal(read([...LENGTHS, 1, 1, 2, 1, 2, 1, ...BETA]), null, 'a posting naming the free slot');
    assert.equal(read([...LENGTHS, 1, 3, 2, 1, 2, 1, ...BETA]), null, 'a posting naming a slot past the documents');
    assert.equal(read([...LENGTHS, 0, 0, ...BETA]), null, 'a term no document holds');
    assert.equal(read(LENGTHS.slice(0, 4), { ...CONTENTS, terms: [] }), null, 'fewer field lengths than slots');
    assert.equal(read([...LENGTHS, ...ALPHA, ...BETA], CONTENTS, ['topic', 'summary']), null, 'other fields');
    const bytes = snapshotBytes(CONTENTS, [...LENGTHS, ...ALPHA, ...BETA]);
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
  });

  it('reads the same parts from bytes at any offset of their buffer (views where aligned, copies where not)', () => {
    const bytes = snapshotBytes(CONTENTS, [...LENGTHS, ...ALPHA, ...BETA]);
    const expected = readSnapshot(bytes, FIELDS)!;
    for (const offset of [1, 2, 4, 6]) {
      const moved = Buffer.alloc(bytes.length + offset).subarray(offset);
      bytes.copy(moved);
      const parts = readSnapshot(moved, FIELDS);
      assert.ok(parts, `offset ${offset}`);
      assert.deepEqual([...parts.numbers], [...expected.numbers], `offset ${offset}`);
      assert.ok(parts.versions.isAt(0, version(1)), `offset ${offset}`);
    }
  });

  it('SnapshotNumbersWriter gives the numbers put, in order, whatever its block size', () => {
    const item = fc.oneof(fc.nat({ max: 2 ** 32 - 1 }), fc.array(fc.nat({ max: 2 ** 32 - 1 }), { maxLength: 20 }));
    fc.assert(
      fc.property(fc.array(item, { maxLength: 20 }), fc.integer({ min: 1, max: 9 }), (items, block) => {
        const pieces: Buffer[] = [];
        const out = new SnapshotNumbersWriter((piece) => pieces.push(Buffer.from(piece)), block);
        for (const it of items) {
          if (typeof it === 'number') out.putOne(it);
          else out.put(it);
        }
        out.flush();
        const joined = Buffer.concat(pieces);
        const written = Array.from({ length: joined.length / 4 }, (_, i) => joined.readUInt32LE(4 * i));
        assert.deepEqual(written, items.flat());
        assert.ok(pieces.every((p) => p.length > 0 && p.length <= block * 4));
      }),
      { numRuns: 200 },
    );
  });
});
