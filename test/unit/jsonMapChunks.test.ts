/**
 * JsonMapChunks on real files: every write gives exactly the JSON of the map,
 * rendering only what changed and copying the rest from the file it wrote
 * last, unless that file changed since.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as v8 from 'node:v8';
import * as vm from 'node:vm';
import fc from 'fast-check';
import { replaceWithTemp, toJsonText, writeTempFileFrom, writeTempFileFromAsync, type PieceWriter, type TempFile } from '../../src/core/files';
import { JSON_MAPS_END, JSON_MAPS_START, JsonMapChunks, mapClosing, mapOpening } from '../../src/core/jsonMapChunks';
import { makeTempProject, removeDir } from '../support/storeKit';

interface Value {
  n: number;
  text: string;
}

/** A map written to `file` as `{ "version": 1, "m": {...} }`, counting the members it renders. */
class Harness {
  readonly values = new Map<string, Value>();
  readonly map: JsonMapChunks<Value>;
  rendered = 0;

  constructor(
    readonly file: string,
    options: { maxChunk?: number } = {},
  ) {
    this.map = new JsonMapChunks<Value>((v) => {
      this.rendered++;
      return v;
    }, options);
  }

  set(key: string, value: Value | undefined): void {
    if (value) this.values.set(key, value);
    else this.values.delete(key);
    this.map.update(key, value !== undefined, (k) => this.values.get(k)!);
  }

  /** Writes the file; `commit: false` writes it and drops it, as a flush overtaken by another write. */
  write(options: { commit?: boolean } = {}): void {
    const written = writeTempFileFrom(this.file, (out) => this.produce(out, () => this.map.writeTo(out, this.file)));
    this.finish(written, options.commit ?? true);
  }

  async writeInSlices(chunksPerSlice: number): Promise<void> {
    const written = await writeTempFileFromAsync(this.file, async (out) => {
      out.write(JSON_MAPS_START);
      out.write(mapOpening('m', this.map.isEmpty));
      await this.map.writeInSlices(out, this.file, chunksPerSlice);
      out.write(mapClosing(this.map.isEmpty));
      out.write(JSON_MAPS_END);
    });
    this.finish(written, true);
  }

  expected(): string {
    return toJsonText({ version: 1, m: Object.fromEntries([...this.values].sort(([a], [b]) => (a < b ? -1 : 1))) });
  }

  private produce(out: PieceWriter, members: () => void): void {
    out.write(JSON_MAPS_START);
    out.write(mapOpening('m', this.map.isEmpty));
    members();
    out.write(mapClosing(this.map.isEmpty));
    out.write(JSON_MAPS_END);
  }

  private finish(written: TempFile, commit: boolean): void {
    if (!commit) {
      fs.rmSync(written.temp);
      this.map.abandoned();
      return;
    }
    replaceWithTemp(written, this.file);
    this.map.committed(written.signature);
  }
}

const keyOf = (i: number) => `key${String(i).padStart(4, '0')}`;
const valueOf = (i: number, version = 0): Value => ({ n: i * 10 + version, text: `value ${version} of\n"${keyOf(i)}"` });

describe('JsonMapChunks', () => {
  let dir: string;
  beforeEach(() => (dir = makeTempProject('ltm-chunks-')));
  afterEach(() => removeDir(dir));

  it('writes the JSON of the map, as JSON.stringify with 2 spaces would', () => {
    const h = new Harness(path.join(dir, 'map.json'));
    h.write();
    assert.equal(fs.readFileSync(h.file, 'utf8'), h.expected());
    for (let i = 0; i < 300; i++) h.set(keyOf(i), valueOf(i));
    h.write();
    assert.equal(fs.readFileSync(h.file, 'utf8'), h.expected());
  });

  it('renders only the chunk that changed, and copies every other one from the file it wrote', () => {
    const h = new Harness(path.join(dir, 'map.json'));
    for (let i = 0; i < 1000; i++) h.set(keyOf(i), valueOf(i));
    h.write();
    assert.equal(h.rendered, 1000);
    h.rendered = 0;
    h.set(keyOf(500), valueOf(500, 1));
    h.write();
    assert.ok(h.rendered > 0 && h.rendered <= 64, `rendered ${h.rendered} members`);
    assert.equal(fs.readFileSync(h.file, 'utf8'), h.expected());
    // Nothing changed: nothing rendered, and the same bytes.
    h.rendered = 0;
    h.write();
    assert.equal(h.rendered, 0);
    assert.equal(fs.readFileSync(h.file, 'utf8'), h.expected());
  });

  it('renders everything again when the file it wrote was replaced or edited since', () => {
    const h = new Harness(path.join(dir, 'map.json'));
    for (let i = 0; i < 200; i++) h.set(keyOf(i), valueOf(i));
    h.write();
    for (const change of [
      () => fs.writeFileSync(h.file, '{}\n'),
      () => fs.appendFileSync(h.file, ' '),
      () => fs.rmSync(h.file),
    ]) {
      change();
      h.rendered = 0;
      h.write();
      assert.equal(h.rendered, 200);
      assert.equal(fs.readFileSync(h.file, 'utf8'), h.expected());
    }
  });

  it('keeps no rendered bytes once written: the file holds them (~1.7 MB for 20,000 members were kept)', () => {
    v8.setFlagsFromString('--expose-gc');
    const gc = vm.runInNewContext('gc') as () => void;
    // The blocks a process reuses for every write (text encoded, chunks copied) are made by a first write and a copy.
    const warmUp = new Harness(path.join(dir, 'warm-up.json'));
    for (let i = 0; i < 100; i++) warmUp.set(keyOf(i), valueOf(i));
    warmUp.write();
    warmUp.write();
    const h = new Harness(path.join(dir, 'map.json'));
    for (let i = 0; i < 20_000; i++) h.set(keyOf(i), valueOf(i));
    gc();
    const before = process.memoryUsage().arrayBuffers;
    h.write();
    h.set(keyOf(10), valueOf(10, 1));
    h.write();
    gc();
    const kept = process.memoryUsage().arrayBuffers - before;
    assert.ok(fs.statSync(h.file).size > 1_500_000, `${fs.statSync(h.file).size} bytes`);
    assert.ok(kept < 256 * 1024, `${(kept / 1024).toFixed(0)} KB of buffers kept after writing`);
    assert.equal(fs.readFileSync(h.file, 'utf8'), h.expected());
  });

  it('holds its keys in its chunks only: no map of every key (~1.8 MB at 50,000 keys, in index.json and stats.json each)', () => {
    v8.setFlagsFromString('--expose-gc');
    const gc = vm.runInNewContext('gc') as () => void;
    const keys = new Set(Array.from({ length: 50_000 }, (_, i) => `mem_${String(i).padStart(8, '0')}`));
    const value = (): Value => valueOf(0);
    // Several maps, so that what one holds stands out of the heap's own ups and downs.
    const build = () => {
      const map = new JsonMapChunks<Value>((v) => v);
      map.sync(keys, value);
      // Every key found again, as a write after changes does.
      for (const key of keys) map.update(key, true, value);
      return map;
    };
    build();
    gc();
    gc();
    const before = process.memoryUsage().heapUsed;
    const maps = Array.from({ length: 8 }, build);
    gc();
    gc();
    const held = (process.memoryUsage().heapUsed - before) / maps.length;
    // The chunks' arrays of the keys (8 bytes a key) and the chunks themselves: ~0.6 MB a map.
    assert.ok(held < 1_000_000, `${(held / 1024).toFixed(0)} KB held a map of 50,000 keys`);
    assert.ok(maps.every((map) => !map.isEmpty));
  });

  it('after a write that was not put in place, copies from the file that is', () => {
    const h = new Harness(path.join(dir, 'map.json'));
    for (let i = 0; i < 200; i++) h.set(keyOf(i), valueOf(i));
    h.write();
    h.set(keyOf(7), valueOf(7, 1));
    h.write({ commit: false });
    h.rendered = 0;
    h.write();
    // The changed chunk again (its rendering was dropped with the file), the others copied.
    assert.ok(h.rendered > 0 && h.rendered <= 64, `rendered ${h.rendered} members`);
    assert.equal(fs.readFileSync(h.file, 'utf8'), h.expected());
  });

  for (const maxChunk of [undefined, 1, 2]) {
    it(`gives the right file after any sequence of changes, writes and dropped writes (${maxChunk ?? 'default'} members a chunk at most)`, () => {
      fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            fc.record({ kind: fc.constant('set' as const), key: fc.nat(400), version: fc.nat(3) }),
            fc.record({ kind: fc.constant('delete' as const), key: fc.nat(400) }),
            fc.record({ kind: fc.constant('bulk' as const), from: fc.nat(400), count: fc.integer({ min: 1, max: 200 }) }),
            fc.record({ kind: fc.constant('write' as const), commit: fc.boolean() }),
            fc.record({ kind: fc.constant('replace' as const) }),
          ),
          { maxLength: 40 },
        ),
        (steps) => {
          const h = new Harness(path.join(dir, `map-${Math.random().toString(36).slice(2)}.json`), { maxChunk });
          for (const step of steps) {
            if (step.kind === 'set') h.set(keyOf(step.key), valueOf(step.key, step.version));
            else if (step.kind === 'delete') h.set(keyOf(step.key), undefined);
            else if (step.kind === 'bulk') for (let i = step.from; i < step.from + step.count; i++) h.set(keyOf(i), valueOf(i, 2));
            else if (step.kind === 'replace') fs.writeFileSync(h.file, toJsonText({ version: 1, m: { other: 1 } }));
            else {
              h.write({ commit: step.commit });
              if (step.commit) assert.equal(fs.readFileSync(h.file, 'utf8'), h.expected());
            }
          }
          h.write();
          assert.equal(fs.readFileSync(h.file, 'utf8'), h.expected());
          fs.rmSync(h.file);
        },
      ),
      { numRuns: 150 },
    );
    });
  }

  it('with a member a chunk, renders only the members that changed and copies the others', () => {
    const h = new Harness(path.join(dir, 'map.json'), { maxChunk: 1 });
    for (let i = 0; i < 100; i++) h.set(keyOf(i), valueOf(i));
    h.write();
    assert.equal(h.rendered, 100);
    h.rendered = 0;
    h.set(keyOf(7), valueOf(7, 1));
    h.set(keyOf(150), valueOf(150));
    h.set(keyOf(30), undefined);
    h.write();
    assert.equal(h.rendered, 2);
    assert.equal(fs.readFileSync(h.file, 'utf8'), h.expected());
  });

  describe('writeInSlices', () => {
    it('writes what writeTo writes, giving way to the event loop between slices of rendered chunks', async () => {
      const sliced = new Harness(path.join(dir, 'sliced.json'));
      const whole = new Harness(path.join(dir, 'whole.json'));
      for (const h of [sliced, whole]) for (let i = 0; i < 200; i++) h.set(keyOf(i), valueOf(i));
      whole.write();
      let turns = 0;
      let counting = true;
      const count = () => {
        if (!counting) return;
        turns++;
        setImmediate(count);
      };
      setImmediate(count);
      await sliced.writeInSlices(1);
      counting = false;
      assert.equal(fs.readFileSync(sliced.file, 'utf8'), fs.readFileSync(whole.file, 'utf8'));
      // 200 keys in chunks of 32: 7 chunks, each rendered in a turn of its own.
      assert.ok(turns >= 6, `the event loop ran ${turns} times meanwhile`);
      // Nothing left to render: the next write copies everything and gives way to nothing.
      turns = 0;
      counting = true;
      setImmediate(count);
      await sliced.writeInSlices(1);
      counting = false;
      assert.equal(turns, 0);
      assert.equal(fs.readFileSync(sliced.file, 'utf8'), sliced.expected());
    });

    it('a member changed while it gives way is written as it was when rendered, and rendered again next time', async () => {
      const h = new Harness(path.join(dir, 'map.json'));
      for (let i = 0; i < 200; i++) h.set(keyOf(i), valueOf(i));
      h.write();
      for (let i = 0; i < 200; i += 40) h.set(keyOf(i), valueOf(i, 1));
      const writing = h.writeInSlices(1);
      // After the first chunk's turn: the first member changes again, after it was written.
      await new Promise<void>((resolve) => setImmediate(resolve));
      h.set(keyOf(0), valueOf(0, 2));
      await writing;
      const written = JSON.parse(fs.readFileSync(h.file, 'utf8')) as { m: Record<string, Value> };
      assert.deepEqual(written.m[keyOf(0)], valueOf(0, 1));
      h.write();
      assert.equal(fs.readFileSync(h.file, 'utf8'), h.expected());
    });
  });
});
