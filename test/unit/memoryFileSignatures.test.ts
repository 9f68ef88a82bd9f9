import { strict as assert } from 'node:assert';
import type { FileSignature } from '../../src/core/files';
import type { LoadedFile } from '../../src/core/loadedFile';
import { MemoryFileSignatures } from '../../src/core/memoryFileSignatures';

const sig = (ino: number): FileSignature => ({ ino, size: 100 + ino, mtimeMs: 1_700_000_000_000 + ino });

describe('memoryFileSignatures', () => {
  // Only `signature` of a LoadedFile is read here: a stand-in with that one field is the whole contract.
  const files = new Map<string, LoadedFile>([
    ['mem_a', { signature: sig(1) } as LoadedFile],
    ['mem_b', { signature: sig(2) } as LoadedFile],
  ]);

  it('answers for a memory file from its LoadedFile, by file name, and for other files from its own map', () => {
    const signatures = new MemoryFileSignatures(files);
    assert.deepEqual(signatures.get('mem_a.md'), sig(1));
    assert.equal(signatures.get('mem_a'), undefined, 'a name without .md is no memory file');
    assert.equal(signatures.get('mem_c.md'), undefined);
    signatures.setOther('notes.md', sig(9));
    assert.deepEqual(signatures.get('notes.md'), sig(9));
    assert.ok(signatures.has('notes.md') && signatures.has('mem_b.md') && !signatures.has('x.md'));
    assert.equal(signatures.size, 3);
    assert.deepEqual([...signatures.keys()].sort(), ['mem_a.md', 'mem_b.md', 'notes.md']);
    assert.deepEqual([...signatures.values()].map((s) => s.ino).sort(), [1, 2, 9]);
  });

  it('follows the files map as it changes, and forgets another file once told', () => {
    const live = new Map(files);
    const signatures = new MemoryFileSignatures(live);
    signatures.setOther('mem_c.md', sig(3));
    // The file became a valid memory: its signature now comes from the map, the other entry goes.
    live.set('mem_c', { signature: sig(4) } as LoadedFile);
    signatures.deleteOther('mem_c.md');
    assert.deepEqual(signatures.get('mem_c.md'), sig(4));
    live.delete('mem_a');
    assert.equal(signatures.has('mem_a.md'), false);
    assert.equal(signatures.size, 2);
  });

  it('prefers the entry of another file over a memory of the same name (an invalid version read last)', () => {
    const signatures = new MemoryFileSignatures(files);
    signatures.setOther('mem_a.md', sig(7));
    assert.deepEqual(signatures.get('mem_a.md'), sig(7));
  });
});
