import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as v8 from 'node:v8';
import * as vm from 'node:vm';
import fc from 'fast-check';
import { TEMP_SUFFIX, toJsonText } from '../../src/core/files';
import { JsonMapChunks } from '../../src/core/jsonMapChunks';
import { IndexWriter } from '../../src/core/indexWriter';
import { parseMemoryFile } from '../../src/core/memoryFile';
import type { Memory } from '../../src/core/model';
import { indexEntryOf } from '../../src/core/storeFiles';
import { makeMirror, makeTempProject, memoryText, removeDir, testId, writeMemory, type MirrorHarness } from '../support/storeKit';

/** The valid memory files in memories/, parsed afresh from disk. */
function memoriesOnDisk(memoriesDir: string): Memory[] {
  const out: Memory[] = [];
  for (const name of fs.readdirSync(memoriesDir).filter((n) => n.endsWith('.md'))) {
    try {
      const { memory } = parseMemoryFile(fs.readFileSync(path.join(memoriesDir, name), 'utf8'));
      if (`${memory.id}.md` === name) out.push(memory);
    } catch {
      // not a memory
    }
  }
  return out;
}

/** index.json as a from-scratch render of the memories: entries by ID, and each tag's IDs, all sorted. */
function renderIndex(memories: readonly Memory[]): string {
  const sorted = [...memories].sort((a, b) => (a.id < b.id ? -1 : 1));
  const tagIndex = new Map<string, string[]>();
  for (const m of sorted) for (const tag of m.tags) tagIndex.set(tag, [...(tagIndex.get(tag) ?? []), m.id]);
  return toJsonText({
    version: 1,
    memories: Object.fromEntries(sorted.map((m) => [m.id, indexEntryOf(m)])),
    tag_index: Object.fromEntries([...tagIndex].sort(([a], [b]) => (a < b ? -1 : 1))),
  });
}

/** A mirror with an IndexWriter listening to it, as MemoryStore wires them. */
function indexHarness(project: string, options: { chunksPerSlice?: number } = {}): MirrorHarness & { index: IndexWriter } {
  const h = makeMirror(project);
  const index = new IndexWriter(h.mirror, options);
  h.on.memoryChanged = (id) => index.memoryChanged(id);
  h.on.indexChanged = () => index.indexChanged();
  h.mirror.refresh();
  return { ...h, index };
}

const A = testId(0xa);
const B = testId(0xb);
const C = testId(0xc);

describe('IndexWriter', () => {
  let project: string;
  let h: ReturnType<typeof indexHarness>;
  const readIndex = () => fs.readFileSync(h.paths.index, 'utf8');
  const expected = () => renderIndex(memoriesOnDisk(h.paths.memories));

  beforeEach(() => {
    project = makeTempProject('ltm-index-');
    h = indexHarness(project);
  });
  afterEach(() => {
    h.mirror.dispose();
    removeDir(project);
  });

  describe('write()', () => {
    it("keeps no rendered bytes of the tag index once written: tags whose lists did not change are copied from the file (a few MB at 50,000 memories were kept)", () => {
      v8.setFlagsFromString('--expose-gc');
      const gc = vm.runInNewContext('gc') as () => void;
      // The blocks a process reuses for every write (text encoded, runs copied) are made by a first write and a copy.
      const warmUp = indexHarness(makeTempProject('ltm-index-warm-up-'));
      try {
        for (let i = 0; i < 50; i++) writeMemory(warmUp.paths.root, testId(0x9000 + i), { tags: ['warm', `up${i % 5}`] });
        warmUp.mirror.refresh();
        warmUp.index.write();
        warmUp.mirror.writeMemoryFile(testId(0x9000), memoryText(testId(0x9000), { tags: ['moved'] }));
        warmUp.index.write();
      } finally {
        warmUp.mirror.dispose();
        removeDir(warmUp.paths.root);
      }
      const tagPool = Array.from({ length: 40 }, (_, i) => `tag-${i}`);
      for (let i = 0; i < 5000; i++) writeMemory(h.paths.root, testId(0x1000 + i), { tags: [tagPool[i % 40]!, tagPool[(i * 7) % 40]!, 'shared'] });
      h.mirror.refresh();
      gc();
      const before = process.memoryUsage().arrayBuffers;
      h.index.write();
      // One memory's tags change: two tags rendered again, the others copied.
      h.mirror.writeMemoryFile(testId(0x1000), memoryText(testId(0x1000), { tags: ['tag-39', 'renamed'] }));
      h.index.write();
      gc();
      const kept = process.memoryUsage().arrayBuffers - before;
      const tagIndexBytes = Buffer.byteLength(JSON.stringify((JSON.parse(readIndex()) as { tag_index: unknown }).tag_index, null, 2));
      assert.ok(tagIndexBytes > 250_000, `the tag index takes ${tagIndexBytes} bytes`);
      assert.ok(kept < 64 * 1024, `${(kept / 1024).toFixed(0)} KB of buffers kept after writing`);
      assert.equal(readIndex(), expected());
    });

    it('a memory edited with its tags kept renders none of them again: only a tag whose list changed is', () => {
      for (let i = 0; i < 20; i++) writeMemory(h.paths.root, testId(0x1000 + i), { tags: ['shared', `own${i}`] });
      h.mirror.refresh();
      h.index.write();
      // Tags rendered (not copied) by each write, from the tag index's own chunks.
      const tags = Reflect.get(h.index, 'tags') as JsonMapChunks<unknown>;
      const steps = Reflect.get(JsonMapChunks.prototype, 'writeSteps') as (this: JsonMapChunks<unknown>, ...args: unknown[]) => Generator<boolean>;
      let rendered = 0;
      Reflect.set(JsonMapChunks.prototype, 'writeSteps', function* (this: JsonMapChunks<unknown>, ...args: unknown[]) {
        for (const step of steps.apply(this, args)) {
          if (this === tags && step) rendered++;
          yield step;
        }
      });
      try {
        h.mirror.writeMemoryFile(testId(0x1000), memoryText(testId(0x1000), { topic: 'Edited', tags: ['shared', 'own0'] }));
        h.index.write();
        assert.equal(rendered, 0);
        h.mirror.writeMemoryFile(testId(0x1001), memoryText(testId(0x1001), { topic: 'Retagged', tags: ['shared', 'other'] }));
        h.index.write();
        assert.equal(rendered, 1, 'only "other", new: "own1" is gone and "shared" copied');
      } finally {
        Reflect.set(JsonMapChunks.prototype, 'writeSteps', steps);
      }
      assert.equal(readIndex(), expected());
    });

    it('renders every active memory and the tag index, sorted, exactly as JSON.stringify would', () => {
      h.mirror.writeMemoryFile(C, memoryText(C, { tags: ['zeta', 'alpha'], topic: 'Gamma' }));
      h.mirror.writeMemoryFile(A, memoryText(A, { tags: ['alpha'], topic: 'Alpha', difficulty: 0.9, phase: 1 }));
      h.mirror.writeMemoryFile(B, memoryText(B, { tags: [], topic: 'Beta' }));
      h.index.write();
      const index = JSON.parse(readIndex()) as { memories: Record<string, unknown>; tag_index: Record<string, string[]> };
      assert.deepEqual(Object.keys(index.memories), [A, B, C]);
      assert.deepEqual(index.memories[A], { topic: 'Alpha', tags: ['alpha'], phase: 1, difficulty: 0.9, created_at: '2026-01-01T00:00:00.000Z' });
      assert.deepEqual(index.tag_index, { alpha: [A, C], zeta: [C] });
      assert.deepEqual(Object.keys(index.tag_index), ['alpha', 'zeta']);
      assert.equal(readIndex(), expected());
    });

    it('an empty store gets empty maps', () => {
      h.index.write();
      assert.equal(readIndex(), toJsonText({ version: 1, memories: {}, tag_index: {} }));
    });

    it('a tag no memory has any more leaves the tag index', () => {
      h.mirror.writeMemoryFile(A, memoryText(A, { tags: ['gone', 'kept'] }));
      h.mirror.writeMemoryFile(B, memoryText(B, { tags: ['kept'] }));
      h.index.write();
      h.mirror.writeMemoryFile(A, memoryText(A, { tags: ['kept'] }));
      h.index.write();
      assert.deepEqual(JSON.parse(readIndex()).tag_index, { kept: [A, B] });
      h.mirror.deleteMemoryFile(A);
      h.index.unregister(A);
      h.mirror.deleteMemoryFile(B);
      h.index.unregister(B);
      h.index.write();
      assert.equal(readIndex(), expected());
      assert.deepEqual(JSON.parse(readIndex()).tag_index, {});
    });

    it('picks up a hand edit of a memory file seen by refresh()', () => {
      writeMemory(h.paths.root, A, { topic: 'Before' });
      h.mirror.refresh();
      h.index.write();
      writeMemory(h.paths.root, A, { topic: 'After', tags: ['new'] });
      h.mirror.refresh({ full: true });
      h.index.write();
      assert.equal(JSON.parse(readIndex()).memories[A].topic, 'After');
      assert.equal(readIndex(), expected());
    });

    it('over a damaged index.json renders everything from the memory files', () => {
      for (const id of [A, B, C]) writeMemory(h.paths.root, id, { tags: [id.slice(-1)] });
      h.mirror.refresh();
      h.index.write();
      fs.writeFileSync(h.paths.index, '{ damaged');
      h.mirror.refresh();
      h.mirror.writeMemoryFile(A, memoryText(A, { topic: 'Edited' }));
      h.index.write();
      assert.equal(readIndex(), expected());
    });

    it('records what it wrote: the mirror does not see index.json as changed', () => {
      h.mirror.writeMemoryFile(A, memoryText(A));
      h.index.write();
      h.log.length = 0;
      h.mirror.refresh();
      assert.deepEqual(h.log, []);
    });

    it('after any sequence of stores, edits, deletions, hand edits and index.json changes, equals a from-scratch render of the memory files', function () {
      this.timeout(60_000);
      const tagsArb = fc.subarray(['alpha', 'beta', 'gamma', 'go', 'rust', 'importance:critical', 'z-last']);
      const idArb = fc.integer({ min: 0, max: 11 }).map((n) => testId(0x1000 + n));
      const opArb = fc.oneof(
        fc.record({ kind: fc.constant('store' as const), id: idArb, tags: tagsArb, topic: fc.string({ minLength: 1, maxLength: 8 }).filter((s) => s.trim().length > 0) }),
        fc.record({ kind: fc.constant('edit' as const), id: idArb, tags: tagsArb, difficulty: fc.constantFrom(0, 0.25, 1) }),
        fc.record({ kind: fc.constant('delete' as const), id: idArb }),
        fc.record({ kind: fc.constant('handEdit' as const), id: idArb, tags: tagsArb, inPlace: fc.boolean() }),
        fc.record({ kind: fc.constant('handDelete' as const), id: idArb }),
        fc.record({ kind: fc.constant('indexOnDisk' as const), variant: fc.constantFrom('garbage', 'stale', 'deleted', 'conflicted') }),
        fc.constant({ kind: 'write' as const }),
      );
      fc.assert(
        fc.property(fc.integer({ min: 0, max: 100 }), fc.array(opArb, { minLength: 1, maxLength: 25 }), (prefill, ops) => {
          const dir = makeTempProject('ltm-index-prop-');
          const p = indexHarness(dir);
          const file = (id: string) => path.join(p.paths.memories, `${id}.md`);
          const onDisk = () => renderIndex(memoriesOnDisk(p.paths.memories));
          try {
            for (let i = 0; i < prefill; i++) writeMemory(p.paths.root, testId(i), { tags: i % 3 === 0 ? ['alpha'] : ['beta', `t${i % 7}`] });
            p.mirror.refresh();
            /** What `ids` should be: null while it is index.json's on disk. */
            let ownIds: Set<string> | null = null;
            const diskIds = () => {
              try {
                return new Set(Object.keys((JSON.parse(fs.readFileSync(p.paths.index, 'utf8')) as { memories: object }).memories));
              } catch {
                return new Set<string>();
              }
            };
            for (const op of ops) {
              switch (op.kind) {
                case 'store':
                  if (p.mirror.files.has(op.id)) break;
                  p.mirror.writeMemoryFile(op.id, memoryText(op.id, { topic: op.topic, tags: op.tags }));
                  p.index.register(op.id);
                  ownIds?.add(op.id);
                  break;
                case 'edit':
                  if (!p.mirror.files.has(op.id)) break;
                  p.mirror.writeMemoryFile(op.id, memoryText(op.id, { tags: op.tags, difficulty: op.difficulty }));
                  break;
                case 'delete':
                  if (!p.mirror.files.has(op.id)) break;
                  p.mirror.deleteMemoryFile(op.id);
                  p.index.unregister(op.id);
                  ownIds?.delete(op.id);
                  break;
                case 'handEdit':
                  if (op.inPlace && fs.existsSync(file(op.id))) fs.writeFileSync(file(op.id), memoryText(op.id, { tags: op.tags, topic: 'hand' }));
                  else {
                    fs.writeFileSync(`${file(op.id)}.new`, memoryText(op.id, { tags: op.tags, topic: 'hand' }));
                    fs.renameSync(`${file(op.id)}.new`, file(op.id));
                  }
                  p.mirror.refresh({ full: true });
                  break;
                case 'handDelete':
                  fs.rmSync(file(op.id), { force: true });
                  p.mirror.refresh();
                  break;
                case 'indexOnDisk':
                  if (op.variant === 'garbage') fs.writeFileSync(p.paths.index, 'garbage');
                  else if (op.variant === 'deleted') fs.rmSync(p.paths.index, { force: true });
                  else if (op.variant === 'conflicted') fs.writeFileSync(p.paths.index, '<<<<<<< ours\n{}\n=======\n{}\n>>>>>>> theirs\n');
                  else fs.writeFileSync(p.paths.index, toJsonText({ version: 1, memories: { [testId(0x1000)]: { topic: 'stale' }, [testId(0x2000)]: {} }, tag_index: {} }));
                  p.mirror.refresh();
                  ownIds = null;
                  break;
                case 'write':
                  p.index.write();
                  assert.equal(fs.readFileSync(p.paths.index, 'utf8'), onDisk());
                  ownIds = new Set(p.mirror.files.keys());
                  break;
              }
              assert.deepEqual(new Set(p.index.ids), ownIds ?? diskIds(), `ids after ${op.kind}`);
              const entries = Object.fromEntries(p.index.entriesForCheck());
              const status = p.mirror.indexStatus.kind;
              const expectedEntries = status === 'ok' ? (JSON.parse(fs.readFileSync(p.paths.index, 'utf8')) as { memories: object }).memories : {};
              assert.deepEqual(JSON.parse(JSON.stringify(entries)), expectedEntries, `entriesForCheck after ${op.kind}`);
            }
            p.index.write();
            assert.equal(fs.readFileSync(p.paths.index, 'utf8'), onDisk());
          } finally {
            p.mirror.dispose();
            removeDir(dir);
          }
        }),
        { numRuns: 40 },
      );
    });
  });

  describe('ids', () => {
    const listing = (...ids: string[]) => toJsonText({ version: 1, memories: Object.fromEntries(ids.map((id) => [id, {}])), tag_index: {} });

    it('are index.json’s on disk until this process writes; registering before a write does not hide them', () => {
      writeMemory(h.paths.root, A);
      fs.writeFileSync(h.paths.index, listing(B, C));
      h.mirror.refresh();
      assert.deepEqual([...h.index.ids].sort(), [B, C]);
      h.index.register(A);
      assert.deepEqual([...h.index.ids].sort(), [B, C], 'index.json does not list A yet');
      h.index.write();
      assert.deepEqual([...h.index.ids], [A]);
    });

    it('after a write, follow register and unregister until index.json changes on disk again', () => {
      h.mirror.writeMemoryFile(A, memoryText(A));
      h.index.register(A);
      h.index.write();
      h.index.register(B);
      h.index.unregister(A);
      assert.deepEqual([...h.index.ids], [B]);
      fs.writeFileSync(h.paths.index, listing(C));
      h.mirror.refresh();
      assert.deepEqual([...h.index.ids], [C]);
    });

    it('after a write, are what index.json now lists, also for memory files added or deleted by hand since the last write', () => {
      writeMemory(h.paths.root, A);
      h.mirror.refresh();
      h.index.write();
      writeMemory(h.paths.root, B);
      fs.rmSync(path.join(h.paths.memories, `${A}.md`));
      h.mirror.refresh();
      h.mirror.writeMemoryFile(C, memoryText(C));
      h.index.register(C);
      h.index.write();
      assert.deepEqual(Object.keys(JSON.parse(readIndex()).memories), [B, C]);
      assert.deepEqual([...h.index.ids].sort(), [B, C]);
      assert.deepEqual([...h.mirror.indexIds()].sort(), [B, C]);
    });

    it('replaceIds sets them until the next write renders from the memory files', () => {
      h.mirror.writeMemoryFile(A, memoryText(A));
      h.index.write();
      h.index.replaceIds(new Set([B]));
      assert.deepEqual([...h.index.ids], [B]);
      h.index.write();
      assert.deepEqual([...h.index.ids], [A]);
      assert.equal(readIndex(), expected());
    });
  });

  describe('deferred writes (deferWrites, flush)', () => {
    it('marks index.json as behind once, without writing it, until flush() writes it and removes the mark', async () => {
      writeMemory(h.paths.root, A, { topic: 'Alpha' });
      h.mirror.refresh();
      h.index.write();
      const before = fs.statSync(h.paths.index);
      let behind = 0;
      h.index.deferWrites(() => behind++);

      h.mirror.writeMemoryFile(B, memoryText(B, { topic: 'Beta' }));
      h.index.register(B);
      h.index.write();
      h.mirror.writeMemoryFile(C, memoryText(C, { topic: 'Gamma' }));
      h.index.register(C);
      h.index.write();
      assert.equal(behind, 1, 'told once until the next flush');
      assert.equal(h.index.isBehind, true);
      assert.equal(fs.statSync(h.paths.index).ino, before.ino, 'index.json not rewritten');
      assert.deepEqual(Object.keys(JSON.parse(readIndex()).memories), [A]);
      assert.equal(fs.existsSync(h.paths.indexPending), true, 'the mark says index.json is behind');

      await h.index.flush();
      assert.equal(readIndex(), expected());
      assert.equal(h.index.isBehind, false);
      assert.equal(fs.existsSync(h.paths.indexPending), false);

      // The next change is told again.
      h.mirror.writeMemoryFile(A, memoryText(A, { topic: 'Alpha again' }));
      h.index.write();
      assert.equal(behind, 2);
    });

    it('writes at once when asked (fix) or once deferral is turned off, and flush() without changes writes nothing', async () => {
      writeMemory(h.paths.root, A);
      h.mirror.refresh();
      h.index.deferWrites(() => undefined);
      await h.index.flush();
      assert.equal(fs.existsSync(h.paths.index), false);
      h.index.write({ now: true });
      assert.equal(readIndex(), expected());
      assert.equal(fs.existsSync(h.paths.indexPending), false);

      h.mirror.writeMemoryFile(B, memoryText(B));
      h.index.register(B);
      h.index.write();
      assert.notEqual(readIndex(), expected());
      h.index.deferWrites(null);
      h.index.write();
      assert.equal(readIndex(), expected());
      assert.equal(fs.existsSync(h.paths.indexPending), false);
    });

    it('a flush renders in slices; a memory deleted by hand meanwhile, seen by a reader, is written as decided, then dropped at the next flush', async () => {
      const sliced = indexHarness(project, { chunksPerSlice: 1 });
      try {
        const ids = Array.from({ length: 120 }, (_, i) => testId(0x100 + i));
        for (const id of ids) writeMemory(sliced.paths.root, id, { topic: `Topic ${id}` });
        sliced.mirror.refresh();
        sliced.index.deferWrites(() => undefined);
        for (const id of ids) sliced.index.register(id);
        sliced.index.write();
        const flushing = sliced.index.flush();
        // A reader's refresh between two slices sees a memory file deleted by hand.
        await new Promise<void>((resolve) => setImmediate(resolve));
        // The last memory: its chunk is rendered after this.
        fs.rmSync(path.join(sliced.paths.memories, `${ids[119]}.md`));
        sliced.mirror.refresh();
        await flushing;
        const listed = () => Object.keys((JSON.parse(fs.readFileSync(sliced.paths.index, 'utf8')) as { memories: object }).memories);
        assert.equal(listed().length, 120, 'written as decided when the flush began');
        // The deletion was seen: the next change is flushed with it.
        sliced.mirror.writeMemoryFile(ids[1]!, memoryText(ids[1]!, { topic: 'Changed' }));
        sliced.index.write();
        await sliced.index.flush();
        assert.equal(listed().length, 119);
        assert.equal(fs.readFileSync(sliced.paths.index, 'utf8'), renderIndex(memoriesOnDisk(sliced.paths.memories)));
      } finally {
        sliced.mirror.dispose();
      }
    });

    describe('layOutAhead()', () => {
      const ids = Array.from({ length: 120 }, (_, i) => testId(0x100 + i));
      /** How often `work` laid out the members from every memory (JsonMapChunks.sync) and looked at one member (update). */
      async function membersLookedAt(work: () => Promise<void>): Promise<{ layouts: number; members: number }> {
        const { sync, update } = JsonMapChunks.prototype;
        const counts = { layouts: 0, members: 0 };
        // index.json's members only, not its tag index (a JsonMapChunks too).
        const members = Reflect.get(h.index, 'members') as JsonMapChunks<unknown>;
        JsonMapChunks.prototype.sync = function (this: JsonMapChunks<unknown>, ...args: Parameters<typeof sync>) {
          if (this === members) counts.layouts++;
          return sync.apply(this, args);
        };
        JsonMapChunks.prototype.update = function (this: JsonMapChunks<unknown>, ...args: Parameters<typeof update>) {
          if (this === members) counts.members++;
          return update.apply(this, args);
        };
        try {
          await work();
        } finally {
          Object.assign(JsonMapChunks.prototype, { sync, update });
        }
        return counts;
      }
      const nextSlice = () => new Promise<void>((resolve) => setImmediate(resolve));
      /** A memory file replaced as editors and git save (a new inode), so that a refresh sees it without the watcher. */
      const replaceMemory = (id: string, fields: Parameters<typeof memoryText>[1]) => {
        const file = path.join(h.paths.memories, `${id}.md`);
        fs.writeFileSync(`${file}.new`, memoryText(id, fields));
        fs.renameSync(`${file}.new`, file);
      };

      beforeEach(() => {
        for (const id of ids) writeMemory(h.paths.root, id, { topic: `Topic ${id}`, tags: [`tag${parseInt(id.slice(-2), 16) % 7}`] });
        h.mirror.refresh();
        h.index.deferWrites(() => undefined);
      });

      it('lays out every member and tag in slices; the first flush then looks only at what changed meanwhile, and writes a full render', async () => {
        const laying = h.index.layOutAhead(10);
        await nextSlice();
        // Meanwhile, as a server's requests would: one memory already laid out changed by hand, one not yet laid out
        // deleted, one stored.
        replaceMemory(ids[2]!, { topic: 'Changed meanwhile', tags: ['moved'] });
        fs.rmSync(path.join(h.paths.memories, `${ids[119]}.md`));
        h.mirror.refresh();
        h.mirror.writeMemoryFile(C, memoryText(C, { topic: 'Stored meanwhile', tags: ['tag1'] }));
        h.index.register(C);
        h.index.write();
        await laying;
        // Not every memory the opening saw: the three that changed.
        assert.deepEqual(await membersLookedAt(() => h.index.flush()), { layouts: 0, members: 3 });
        assert.equal(readIndex(), expected());
        assert.ok(h.index.mentions(C) && !h.index.mentions(ids[119]!));
      });

      it('is abandoned when index.json changes on disk or a write decides first; the flush lays everything out itself', async () => {
        for (const interrupt of [
          () => fs.writeFileSync(h.paths.index, renderIndex([])),
          () => h.index.write({ now: true }),
        ]) {
          const laying = h.index.layOutAhead(10);
          await nextSlice();
          interrupt();
          h.mirror.refresh();
          await laying;
          replaceMemory(ids[3]!, { topic: `Changed after ${interrupt.toString().length}` });
          h.mirror.refresh();
          h.index.write();
          await h.index.flush();
          assert.equal(readIndex(), expected());
        }
      });

      it('after index.json changed on disk, drops from the tag index a memory this process had written and that is gone', async () => {
        // This process wrote index.json with every memory; then another one replaced it and deleted a memory.
        h.index.write({ now: true });
        fs.writeFileSync(h.paths.index, renderIndex(memoriesOnDisk(h.paths.memories)));
        h.mirror.refresh();
        fs.rmSync(path.join(h.paths.memories, `${ids[5]}.md`));
        h.mirror.refresh();
        await h.index.layOutAhead(10);
        h.mirror.writeMemoryFile(C, memoryText(C, { topic: 'Stored after', tags: ['tag1'] }));
        h.index.register(C);
        h.index.write();
        await h.index.flush();
        assert.equal(readIndex(), expected());
      });
    });

    it('a flush renders the tag index in slices too, a tag at a time, with the event loop free between them', async () => {
      const sliced = indexHarness(project);
      try {
        for (let i = 0; i < 6; i++) writeMemory(sliced.paths.root, testId(0x200 + i), { tags: [`tag${i}`] });
        sliced.mirror.refresh();
        sliced.index.deferWrites(() => undefined);
        sliced.index.write();
        // Whether an immediate queued as the tags began had run, at each tag rendered.
        const looked: boolean[] = [];
        const tags = Reflect.get(sliced.index, 'tags') as JsonMapChunks<readonly string[]>;
        const steps = Reflect.get(JsonMapChunks.prototype, 'writeSteps') as (this: JsonMapChunks<unknown>, ...args: unknown[]) => Generator<boolean>;
        Reflect.set(JsonMapChunks.prototype, 'writeSteps', function* (this: JsonMapChunks<unknown>, ...args: unknown[]) {
          if (this !== (tags as JsonMapChunks<unknown>)) return yield* steps.apply(this, args);
          let ran = false;
          setImmediate(() => (ran = true));
          for (const rendered of steps.apply(this, args)) {
            looked.push(ran);
            yield rendered;
          }
        });
        try {
          await sliced.index.flush();
        } finally {
          Reflect.set(JsonMapChunks.prototype, 'writeSteps', steps);
        }
        assert.deepEqual(looked, [false, true, true, true, true, true]);
        assert.equal(fs.readFileSync(sliced.paths.index, 'utf8'), renderIndex(memoriesOnDisk(sliced.paths.memories)));
      } finally {
        sliced.mirror.dispose();
      }
    });

    /** index.json written with A, writes deferred, then B stored: index.json is behind. */
    function deferredWithBeta(onBehind: () => void = () => undefined): void {
      writeMemory(h.paths.root, A);
      h.mirror.refresh();
      h.index.write();
      h.index.deferWrites(onBehind);
      h.mirror.writeMemoryFile(B, memoryText(B, { topic: 'Beta' }));
      h.index.register(B);
      h.index.write();
    }

    it('changes made while a flush writes (without the lock) keep index.json behind, marked, and ask for the next flush', async () => {
      let asked = 0;
      deferredWithBeta(() => asked++);
      const prepared = h.index.prepareFlush()!;
      const writing = h.index.writeFlush(prepared);
      // Another write of this process while the file is being written.
      h.mirror.writeMemoryFile(C, memoryText(C, { topic: 'Gamma' }));
      h.index.register(C);
      h.index.write();
      h.index.commitFlush(prepared, await writing);
      assert.deepEqual(Object.keys(JSON.parse(readIndex()).memories), [A, B], 'written as prepared');
      assert.equal(h.index.isBehind, true, 'Gamma is not in it');
      assert.equal(fs.existsSync(h.paths.indexPending), true, 'and the mark still says so');
      assert.equal(asked, 2, 'the next flush is asked for');
      await h.index.flush();
      assert.equal(readIndex(), expected());
      assert.equal(h.index.isBehind, false);
      assert.equal(fs.existsSync(h.paths.indexPending), false);
    });

    it('a flush prepared before index.json was written again (by another process, or by this one) is dropped, and the next one writes everything', async () => {
      deferredWithBeta();
      const leftovers = () => fs.readdirSync(h.paths.root).filter((name) => name.endsWith(TEMP_SUFFIX));

      // Another process writes index.json while this one renders: the refresh before putting it in place sees it.
      let prepared = h.index.prepareFlush()!;
      let written = await h.index.writeFlush(prepared);
      const theirs = `${JSON.stringify({ version: 1, memories: { [A]: { topic: 'Theirs' } } })}\n`;
      fs.writeFileSync(h.paths.index, theirs);
      h.mirror.refresh();
      h.index.commitFlush(prepared, written);
      assert.equal(readIndex(), theirs, 'not replaced by what was prepared before it');
      assert.deepEqual(leftovers(), []);
      assert.equal(h.index.isBehind, true);

      // This process writes it at once (fix) meanwhile.
      prepared = h.index.prepareFlush()!;
      written = await h.index.writeFlush(prepared);
      h.index.write({ now: true });
      const now = readIndex();
      h.index.commitFlush(prepared, written);
      assert.equal(readIndex(), now);
      assert.deepEqual(leftovers(), []);

      await h.index.flush();
      assert.equal(readIndex(), expected());
    });

    it('a flush prepared before another decision of this process is dropped even when that write failed: what it decided is not lost', async () => {
      deferredWithBeta();
      const prepared = h.index.prepareFlush()!;
      const written = await h.index.writeFlush(prepared);
      h.mirror.writeMemoryFile(C, memoryText(C, { topic: 'Gamma' }));
      h.index.register(C);
      // An immediate write (fix) decides Gamma in, then fails: index.json cannot be replaced while a directory holds its name.
      fs.rmSync(h.paths.index);
      fs.mkdirSync(h.paths.index);
      assert.throws(() => h.index.write({ now: true }));
      fs.rmdirSync(h.paths.index);
      h.index.commitFlush(prepared, written);
      assert.equal(fs.existsSync(h.paths.index), false, 'what was prepared before Gamma is not put in place');
      assert.equal(h.index.isBehind, true);
      assert.equal(fs.existsSync(h.paths.indexPending), true, 'the mark still says so');
      await h.index.flush();
      assert.equal(readIndex(), expected());
      assert.deepEqual(Object.keys(JSON.parse(readIndex()).memories), [A, B, C]);
    });

    it('a failed flush stays behind, and the next one writes everything', async () => {
      deferredWithBeta();
      // index.json cannot be replaced while a directory holds its name.
      fs.rmSync(h.paths.index);
      fs.mkdirSync(h.paths.index);
      await assert.rejects(h.index.flush());
      assert.equal(h.index.isBehind, true);
      fs.rmdirSync(h.paths.index);
      await h.index.flush();
      assert.equal(readIndex(), expected());
    });
  });

  describe('entriesForCheck()', () => {
    it('gives index.json’s entries as read from disk, stale ones included', () => {
      writeMemory(h.paths.root, A, { topic: 'Current' });
      fs.writeFileSync(h.paths.index, toJsonText({ version: 1, memories: { [A]: { topic: 'Stale' }, [B]: { topic: 'Gone' } } }));
      h.mirror.refresh();
      assert.deepEqual(Object.fromEntries(h.index.entriesForCheck()), { [A]: { topic: 'Stale' }, [B]: { topic: 'Gone' } });
    });

    it('after a write, gives what was written even when a memory file was edited by hand since', () => {
      writeMemory(h.paths.root, A, { topic: 'Written' });
      h.mirror.refresh();
      h.index.write();
      const written = JSON.parse(readIndex()).memories;
      writeMemory(h.paths.root, A, { topic: 'Edited by hand' });
      h.mirror.refresh({ full: true });
      assert.equal(h.mirror.files.get(A)!.memory.topic, 'Edited by hand');
      assert.deepEqual(JSON.parse(JSON.stringify(Object.fromEntries(h.index.entriesForCheck()))), written);
    });

    it('is empty when index.json is unusable or missing', () => {
      writeMemory(h.paths.root, A);
      h.mirror.refresh();
      assert.equal(h.index.entriesForCheck().size, 0);
      fs.writeFileSync(h.paths.index, '[1, 2');
      h.mirror.refresh();
      assert.equal(h.index.entriesForCheck().size, 0);
    });
  });
});
