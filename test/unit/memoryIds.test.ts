import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { MentionedIds, mentionedIdsOfFile, mentionedIdsOfFileAsync, newMemoryId, randomMemoryId } from '../../src/core/memoryIds';
import { isMemoryId } from '../../src/core/model';
import type { StoreParts } from '../../src/core/storeParts';
import { makeParts, makeTempProject, removeDir, testId, writeArchive, writeMemory } from '../support/storeKit';

describe('memoryIds: new memory IDs', () => {
  let project: string;
  const opened: StoreParts[] = [];
  /** The store's parts as a fresh process reads them from disk. */
  const open = (): StoreParts => {
    const parts = makeParts(project);
    opened.push(parts);
    return parts;
  };

  beforeEach(() => {
    project = makeTempProject('ltm-ids-');
  });
  afterEach(() => {
    for (const parts of opened.splice(0)) parts.mirror.dispose();
    removeDir(project);
  });

  it('a random ID is mem_ and 8 hex digits, and they differ', () => {
    const ids = Array.from({ length: 200 }, () => randomMemoryId());
    for (const id of ids) {
      assert.match(id, /^mem_[0-9a-f]{8}$/);
      assert.ok(isMemoryId(id), id);
    }
    assert.ok(new Set(ids).size > 195, 'random IDs');
  });

  it('passes over an ID in use anywhere: an active memory, an unreadable file, an archive, archive_index.json (archived or purged), index.json', () => {
    const [active, unreadable, archiveFile, archived, purged, indexed, free] = [1, 2, 3, 4, 5, 6, 7].map(testId) as [string, string, string, string, string, string, string];
    const writer = open();
    writeMemory(writer.paths.root, active);
    fs.writeFileSync(path.join(writer.paths.memories, `${unreadable}.md`), 'not a memory file\n');
    writeArchive(writer.paths.root, archiveFile);
    writer.mirror.refresh();
    writer.mirror.archiveIndex.memories.set(archived, { topic: 'Gone', tags: [], archived_at: '2026-01-01T00:00:00.000Z', original_phase: 0, reason: 'forgotten' });
    writer.mirror.archiveIndex.purged.set(purged, { purged_at: '2026-01-01T00:00:00.000Z' });
    writer.mirror.writeArchiveIndex();
    fs.writeFileSync(writer.paths.index, `${JSON.stringify({ version: 1, memories: { [indexed]: { topic: 'Listed', tags: [], phase: 0, difficulty: 0.5, created_at: '2026-01-01T00:00:00.000Z' } } })}\n`);

    // A fresh process knows every one of them from the disk alone.
    const parts = open();
    assert.ok(parts.mirror.files.has(active) && !parts.mirror.files.has(unreadable), 'the unreadable file is no memory');
    const offered = [active, unreadable, archiveFile, archived, purged, indexed, free];
    const asked: string[] = [];
    const id = newMemoryId(parts, () => {
      const next = offered[asked.length]!;
      asked.push(next);
      return next;
    });
    assert.equal(id, free);
    assert.deepEqual(asked, offered, 'each ID in use was offered and passed over');
  });

  it("passes over an ID index.json names without parsing it, and over one it names with a \\u escape too", () => {
    const [listed, mentioned, escaped, free] = [1, 2, 3, 4].map(testId) as [string, string, string, string];
    const writer = open();
    const entry = { topic: 'Listed', tags: [], phase: 0, difficulty: 0.5, created_at: '2026-01-01T00:00:00.000Z' };
    fs.writeFileSync(writer.paths.index, `${JSON.stringify({ version: 1, memories: { [listed]: entry }, note: `see ${mentioned}` })}\n`);
    const parts = open();
    const offer = (...ids: string[]) => {
      let next = 0;
      return newMemoryId(parts, () => ids[next++]!);
    };
    // A text that only mentions an ID is passed over too: a free ID is never short.
    assert.equal(offer(listed, mentioned, free), free);
    assert.equal((parts.mirror as unknown as { indexFile: unknown }).indexFile, null, 'index.json was searched, not parsed');
    // An ID written with an escape ("\u006dem_…") is only found by parsing: a file with any escape is parsed.
    const text = JSON.stringify({ version: 1, memories: { [escaped]: entry } }).replace(`"${escaped}"`, `"\\u006d${escaped.slice(1)}"`);
    fs.writeFileSync(writer.paths.index, `${text}\n`);
    const again = open();
    let next = 0;
    assert.equal(newMemoryId(again, () => [escaped, free][next++]!), free);
  });

  it('MentionedIds knows every memory ID in a file\'s bytes, wherever it is written, and nothing that only looks like one', () => {
    const text = '{"memories":{"mem_0000000a":{"topic":"see mem_ffffffff, not mem_XYZ00000 nor mem_00c"}},"tag_index":{"db":["mem_0000000d"]}}mem_1234abcd';
    const mentioned = new MentionedIds(Buffer.from(text));
    for (const id of ['mem_0000000a', 'mem_ffffffff', 'mem_0000000d', 'mem_1234abcd']) assert.ok(mentioned.has(id), id);
    for (const id of ['mem_00000000', 'mem_0000000c', 'mem_XYZ00000', 'mem_1234ABCD', 'mem_0000000', 'other']) assert.ok(!mentioned.has(id), id);
    assert.ok(!new MentionedIds(Buffer.alloc(0)).has('mem_0000000a'));
  });

  it('MentionedIds reads the bytes as they are, without making a string of the file (17 MB at 50,000 memories)', () => {
    const bytes = Buffer.from('{"memories":{"mem_0000000a":{}}}  mem_00000');
    bytes.toString = () => {
      throw new Error('the file was made a string');
    };
    const mentioned = new MentionedIds(bytes);
    assert.ok(mentioned.has('mem_0000000a'));
    // An ID cut short by the end of the file is none.
    assert.ok(!mentioned.has('mem_00000000'));
    // A view into a larger buffer is read from its own offset.
    const larger = Buffer.from('xxxxmem_0000000bxxxx');
    assert.ok(new MentionedIds(larger.subarray(4, 16)).has('mem_0000000b'));
    assert.ok(!new MentionedIds(larger.subarray(5, 16)).has('mem_0000000b'));
  });

  it('a file is read in pieces: an ID or an escape across two pieces is found, an ID cut short by the end is none, sync or not', async () => {
    const file = path.join(project, 'index.json');
    const text = '{"memories":{"mem_0000000a":{"topic":"mem_ffffffff"}},"tag_index":{"db":["mem_0000000d"]}} mem_1234ab';
    fs.writeFileSync(file, text);
    for (const piece of [1, 5, 7, 16, 17, 1 << 20]) {
      for (const mentioned of [mentionedIdsOfFile(file, piece), await mentionedIdsOfFileAsync(file, piece)]) {
        assert.ok(mentioned instanceof MentionedIds, `pieces of ${piece}`);
        for (const id of ['mem_0000000a', 'mem_ffffffff', 'mem_0000000d']) assert.ok(mentioned.has(id), `${id} in pieces of ${piece}`);
        for (const id of ['mem_1234ab00', 'mem_00000000']) assert.ok(!mentioned.has(id), `${id} in pieces of ${piece}`);
      }
    }
    // A \u escape anywhere, however the pieces fall: only a parse tells which IDs the file names.
    fs.writeFileSync(file, '{"memories":{"mem_\\u0030000000a":{}}}');
    for (const piece of [1, 2, 3, 14, 15, 16, 1 << 20]) {
      assert.equal(mentionedIdsOfFile(file, piece), 'escaped', `pieces of ${piece}`);
      assert.equal(await mentionedIdsOfFileAsync(file, piece), 'escaped', `pieces of ${piece}`);
    }
    assert.throws(() => mentionedIdsOfFile(path.join(project, 'missing.json')), /ENOENT/);
  });

  it('gives the first free candidate at once on an empty store', () => {
    const parts = open();
    assert.equal(newMemoryId(parts, () => testId(9)), testId(9));
    assert.match(newMemoryId(parts), /^mem_[0-9a-f]{8}$/);
  });
});
