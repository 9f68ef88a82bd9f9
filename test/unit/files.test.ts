/**
 * The file primitives every write of the store goes through, on real files.
 */
import { strict as assert } from 'node:assert';
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { MAX_HELD_REPLACED, TEMP_SUFFIX, readTextIfExists, sameSignature, signatureOf, statSignature, writeFileAtomic, writeFileAtomicAsync, writeFileAtomicFrom } from '../../src/core/files';
import { makeTempProject, removeDir } from '../support/storeKit';

describe('writeFileAtomicAsync', () => {
  let dir: string;
  beforeEach(() => (dir = makeTempProject('ltm-files-')));
  afterEach(() => removeDir(dir));

  const leftovers = () => fs.readdirSync(dir).filter((name) => name.endsWith(TEMP_SUFFIX));

  it('replaces a file with a string or with buffers, and returns the signature the file has', async () => {
    const file = path.join(dir, 'state.json');
    fs.writeFileSync(file, 'old');
    const first = await writeFileAtomicAsync(file, '{"a":1}\n');
    assert.equal(fs.readFileSync(file, 'utf8'), '{"a":1}\n');
    assert.ok(sameSignature(first, statSignature(file)), 'the signature is the renamed file\'s');
    const second = await writeFileAtomicAsync(file, [Buffer.from('{"b":'), Buffer.alloc(0), Buffer.from('2}\n')], { durable: false });
    assert.equal(fs.readFileSync(file, 'utf8'), '{"b":2}\n');
    assert.ok(sameSignature(second, statSignature(file)));
    assert.ok(!sameSignature(first, second), 'each write is a new inode');
    assert.deepEqual(leftovers(), []);
  });

  it('writes thousands of buffers (more than one writev takes) in order, as writeFileAtomic does', async () => {
    const pieces = Array.from({ length: 3000 }, (_, i) => Buffer.from(i % 7 === 0 ? '' : `${i},`));
    const expected = Buffer.concat(pieces).toString('utf8');
    const asynchronous = path.join(dir, 'async.json');
    const synchronous = path.join(dir, 'sync.json');
    await writeFileAtomicAsync(asynchronous, pieces, { durable: false });
    writeFileAtomic(synchronous, pieces, { durable: false });
    assert.equal(fs.readFileSync(asynchronous, 'utf8'), expected);
    assert.equal(fs.readFileSync(synchronous, 'utf8'), expected);
    assert.deepEqual(leftovers(), []);
  });

  it('creates the file with the mode asked for', async () => {
    const file = path.join(dir, 'server.json');
    await writeFileAtomicAsync(file, 'secret', { mode: 0o600 });
    assert.equal(fs.statSync(file).mode & 0o777, 0o600);
  });

  it('fails without touching the target or leaving a temporary file when the rename cannot happen', async () => {
    // A non-empty directory where the file should go: the rename is refused.
    const target = path.join(dir, 'stats.json');
    fs.mkdirSync(target);
    fs.writeFileSync(path.join(target, 'keep'), 'kept');
    await assert.rejects(writeFileAtomicAsync(target, 'new'), (error: NodeJS.ErrnoException) => ['EISDIR', 'ENOTEMPTY', 'EEXIST'].includes(error.code ?? ''));
    assert.equal(fs.readFileSync(path.join(target, 'keep'), 'utf8'), 'kept');
    assert.deepEqual(leftovers(), []);
  });

  it('a reader only ever sees the old or the new file, never a part', async () => {
    const file = path.join(dir, 'big.json');
    const oldText = `${'a'.repeat(2 * 1024 * 1024)}\n`;
    const newText = `${'b'.repeat(2 * 1024 * 1024)}\n`;
    fs.writeFileSync(file, oldText);
    let reads = 0;
    let done = false;
    const reader = (async () => {
      while (!done) {
        const seen = fs.readFileSync(file, 'utf8');
        assert.ok(seen === oldText || seen === newText, `a read saw ${seen.length} characters of a mix`);
        reads++;
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    await writeFileAtomicAsync(file, newText);
    done = true;
    await reader;
    assert.equal(fs.readFileSync(file, 'utf8'), newText);
    assert.ok(reads >= 1, 'the reader ran while the write was under way');
  });
});

describe('readTextIfExists', () => {
  let dir: string;
  beforeEach(() => (dir = makeTempProject('ltm-read-')));
  afterEach(() => removeDir(dir));

  it('gives a file\'s text as readFileSync(file, \'utf8\') does, null for no file, and an unreadable file\'s error', () => {
    const file = path.join(dir, 'cache.json');
    // Multi-byte characters, one cut at the end, as a cut write may leave them: decoded as readFileSync(file, 'utf8') does.
    const bytes = Buffer.concat([Buffer.from('{"topic":"café ✓ 🚀"}\n', 'utf8'), Buffer.from([0xe2, 0x9c])]);
    fs.writeFileSync(file, bytes);
    assert.equal(readTextIfExists(file), fs.readFileSync(file, 'utf8'));
    assert.equal(readTextIfExists(path.join(dir, 'missing.json')), null);
    assert.throws(() => readTextIfExists(dir), /EISDIR/);
  });
});

describe('signatureOf', () => {
  it('keeps every value exactly, small integers and those past 32 bits alike', () => {
    for (const [ino, size, mtimeMs] of [
      [0, 0, 0],
      [2_447_562, 787, 1_795_570_698_364.9988],
      [2 ** 30, 2 ** 30 - 1, 1],
      [2 ** 31 + 7, 2 ** 32 + 5, 1_700_000_000_000],
      [2 ** 53 - 1, 2 ** 40, 0.5],
    ]) {
      assert.deepEqual(signatureOf({ ino, size, mtimeMs } as fs.Stats), { ino, size, mtimeMs });
    }
  });
});

describe('writeFileAtomicFrom', () => {
  let dir: string;
  beforeEach(() => (dir = makeTempProject('ltm-files-')));
  afterEach(() => removeDir(dir));

  it('writes each piece as it is given, so a producer may reuse its buffer', () => {
    const file = path.join(dir, 'search-index.bin');
    const block = new Uint8Array(4);
    writeFileAtomicFrom(file, (out) => {
      for (let i = 0; i < 5; i++) {
        block.fill(65 + i);
        out.write(block);
      }
    });
    assert.equal(fs.readFileSync(file, 'utf8'), 'AAAABBBBCCCCDDDDEEEE');
  });

  it('writes text as UTF-8, short or longer than its block, and counts the bytes', () => {
    const file = path.join(dir, 'parse-cache.json');
    const long = 'é€😀x'.repeat(100_000);
    let position = 0;
    writeFileAtomicFrom(file, (out) => {
      out.writeText('{"a":"é€😀"');
      out.writeText(long);
      out.writeText('}');
      position = out.position;
    });
    const expected = `{"a":"é€😀"${long}}`;
    assert.equal(fs.readFileSync(file, 'utf8'), expected);
    assert.equal(position, Buffer.byteLength(expected));
  });

  it('a producer that fails leaves the target as it was and no temporary file', () => {
    const file = path.join(dir, 'search-index.bin');
    fs.writeFileSync(file, 'old');
    assert.throws(() =>
      writeFileAtomicFrom(file, (out) => {
        out.write(Buffer.from('partial'));
        throw new Error('the producer failed');
      }),
    /the producer failed/);
    assert.equal(fs.readFileSync(file, 'utf8'), 'old');
    assert.deepEqual(fs.readdirSync(dir).filter((name) => name.endsWith(TEMP_SUFFIX)), []);
  });
});

describe('writeFileAtomic: the file it replaces', () => {
  let dir: string;
  beforeEach(() => (dir = makeTempProject('ltm-files-')));
  afterEach(() => removeDir(dir));

  /** How many descriptors of this process are open on `target`, as /proc/self/fd names it (Linux). */
  const heldAs = (target: string): number =>
    fs.readdirSync('/proc/self/fd').filter((fd) => {
      try {
        return fs.readlinkSync(`/proc/self/fd/${fd}`) === target;
      } catch {
        return false; // The descriptor readdir itself used, closed since.
      }
    }).length;
  /** The same for the file `file` was before it was replaced: Linux names it "<path> (deleted)". */
  const heldDeleted = (file: string): number => heldAs(`${fs.realpathSync(path.dirname(file))}/${path.basename(file)} (deleted)`);

  /**
   * Keeps every thread of libuv's pool waiting on a read from a FIFO until the
   * returned function writes to them: work queued to the pool waits meanwhile.
   */
  let occupied = 0;
  function occupyThreadPool(): () => Promise<void> {
    const threads = Number(process.env.UV_THREADPOOL_SIZE ?? 4);
    const reads: Promise<void>[] = [];
    const fds: number[] = [];
    for (let i = 0; i < threads; i++) {
      const fifo = path.join(dir, `pool-${(occupied += 1)}.fifo`);
      execFileSync('mkfifo', [fifo]);
      // Read and write: open does not wait for a writer, and a read waits for data.
      const fd = fs.openSync(fifo, 'r+');
      fds.push(fd);
      reads.push(new Promise((resolve, reject) => fs.read(fd, Buffer.alloc(1), 0, 1, null, (error) => (error ? reject(error) : resolve()))));
    }
    return async () => {
      for (const fd of fds) fs.writeSync(fd, 'x');
      await Promise.all(reads);
      for (const fd of fds) fs.closeSync(fd);
    };
  }

  it('is released after the rename, on the thread pool: the event loop does not free its blocks', async function () {
    if (process.platform !== 'linux') this.skip();
    const file = path.join(dir, 'index.json');
    fs.writeFileSync(file, Buffer.alloc(1 << 20, 'x'));
    const release = occupyThreadPool();
    try {
      writeFileAtomic(file, 'new', { durable: false });
      assert.equal(fs.readFileSync(file, 'utf8'), 'new');
      assert.equal(heldDeleted(file), 1, 'the old file is still held when the write returns, its close queued to the pool');
    } finally {
      await release();
    }
    for (let i = 0; i < 100 && heldDeleted(file) > 0; i++) await new Promise((resolve) => setTimeout(resolve, 5));
    assert.equal(heldDeleted(file), 0, 'and closed once the pool is free');
  });

  it('is held for at most MAX_HELD_REPLACED files at once: past that, a rename releases the old file itself', async function () {
    if (process.platform !== 'linux') this.skip();
    const files = Array.from({ length: MAX_HELD_REPLACED + 10 }, (_, i) => path.join(dir, `cache-${i}.json`));
    for (const file of files) fs.writeFileSync(file, 'old');
    const release = occupyThreadPool();
    try {
      for (const file of files) writeFileAtomic(file, 'new', { durable: false });
      for (const file of files) assert.equal(fs.readFileSync(file, 'utf8'), 'new');
      assert.equal(files.reduce((held, file) => held + heldDeleted(file), 0), MAX_HELD_REPLACED, 'the pool busy: as many held as allowed, no more');
    } finally {
      await release();
    }
    for (let i = 0; i < 100 && files.some((file) => heldDeleted(file) > 0); i++) await new Promise((resolve) => setTimeout(resolve, 5));
    assert.equal(files.reduce((held, file) => held + heldDeleted(file), 0), 0, 'all closed once the pool is free');
    // The count went back down with the closes: a write holds its old file again.
    const release2 = occupyThreadPool();
    try {
      writeFileAtomic(files[0]!, 'newer', { durable: false });
      assert.equal(heldDeleted(files[0]!), 1);
    } finally {
      await release2();
    }
  });

  it('is not the file a symbolic link in its place points to, which the rename leaves alone', async function () {
    if (process.platform !== 'linux') this.skip();
    const target = path.join(dir, 'elsewhere.json');
    fs.writeFileSync(target, 'kept');
    const file = path.join(dir, 'index.json');
    fs.symlinkSync(target, file);
    const release = occupyThreadPool();
    try {
      writeFileAtomic(file, 'new', { durable: false });
      assert.equal(heldAs(fs.realpathSync(target)), 0, 'nothing to release: the target is not held');
    } finally {
      await release();
    }
    assert.equal(fs.readFileSync(file, 'utf8'), 'new');
    assert.ok(!fs.lstatSync(file).isSymbolicLink(), 'the link itself was replaced');
    assert.equal(fs.readFileSync(target, 'utf8'), 'kept');
  });

  it('is not waited for when it is a FIFO (opening one for reading would block until a writer came)', function () {
    if (process.platform === 'win32') this.skip();
    this.timeout(30_000);
    const file = path.join(dir, 'stats.json');
    execFileSync('mkfifo', [file]);
    // In a process of its own: a write stuck in open() would stop this one, timeouts included.
    const write = `require(${JSON.stringify(require.resolve('../../src/core/files'))}).writeFileAtomic(${JSON.stringify(file)}, '{}\\n', { durable: false })`;
    const run = spawnSync(process.execPath, ['--import', 'tsx', '-e', write], { encoding: 'utf8', timeout: 20_000 });
    assert.equal(run.status, 0, `the write ended: ${run.error?.message ?? run.stderr}`);
    assert.equal(fs.readFileSync(file, 'utf8'), '{}\n');
  });

  it('a failed rename leaves it in place, held by nothing, and no temporary file', async function () {
    if (process.platform !== 'linux') this.skip();
    // A directory in the file's place: the rename of a file over it fails (EISDIR).
    const file = path.join(dir, 'index.json');
    fs.mkdirSync(file);
    assert.throws(() => writeFileAtomic(file, 'new', { durable: false }), /EISDIR|EEXIST|ENOTEMPTY|directory/);
    assert.ok(fs.statSync(file).isDirectory());
    assert.deepEqual(fs.readdirSync(dir).filter((name) => name.endsWith(TEMP_SUFFIX)), []);
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(heldAs(fs.realpathSync(file)), 0, 'the descriptor opened on it is closed');
  });
});
