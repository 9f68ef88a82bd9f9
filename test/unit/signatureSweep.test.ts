/**
 * The memory files' signatures taken on a worker thread (src/core/signatureSweep.ts),
 * on real directories: the same signatures a stat here gives, every name as it is.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { statSignature } from '../../src/core/files';
import { sweepSignatures } from '../../src/core/signatureSweep';
import { makeTempProject, removeDir } from '../support/storeKit';

describe('signatureSweep: signatures from a worker thread', () => {
  let dir: string;
  beforeEach(() => (dir = makeTempProject('ltm-sweep-')));
  afterEach(() => removeDir(dir));

  it('gives the directory’s signature and each .md file’s, as a stat here does; other files are left out', async () => {
    // Names as a file system allows them: spaces, a newline, non-ASCII; none holds "/".
    const names = ['mem_0000000a.md', 'with space.md', 'line\nbreak.md', 'café ☕.md', '.hidden.md'];
    for (const [i, name] of names.entries()) fs.writeFileSync(path.join(dir, name), 'x'.repeat(i + 1));
    fs.writeFileSync(path.join(dir, 'notes.txt'), 'not a memory');
    fs.writeFileSync(path.join(dir, 'mem_0000000b.md.tmp-1-2'), 'a temporary file');
    fs.mkdirSync(path.join(dir, 'sub.md'));
    const swept = await sweepSignatures(dir);
    assert.ok(swept);
    assert.deepEqual(swept.directory, statSignature(dir));
    assert.deepEqual([...swept.files.keys()].sort(), [...names, 'sub.md'].sort());
    for (const name of [...names, 'sub.md']) assert.deepEqual(swept.files.get(name), statSignature(path.join(dir, name)), name);
  });

  it('an empty directory gives no files; a missing one gives null (the caller stats itself)', async () => {
    const empty = await sweepSignatures(dir);
    assert.ok(empty);
    assert.equal(empty.files.size, 0);
    assert.equal(await sweepSignatures(path.join(dir, 'missing')), null);
  });

  it('sweeps run at once give the same answer', async () => {
    fs.writeFileSync(path.join(dir, 'mem_0000000a.md'), 'a');
    const answers = await Promise.all([1, 2, 3].map(() => sweepSignatures(dir)));
    assert.deepEqual([...answers[0]!.files.keys()], ['mem_0000000a.md']);
    for (const answer of answers) assert.deepEqual(answer, answers[0]);
  });
});
