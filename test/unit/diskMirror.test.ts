import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ChangedOnDiskError } from '../../src/core/errors';
import { statSignature, toJsonText, type PieceWriter } from '../../src/core/files';
import { sweepSignatures } from '../../src/core/signatureSweep';
import { statCallsDuring } from '../support/fsCalls';
import { afterRenameOnto } from '../support/renameFaults';
import { memoryText, makeMirror, drain, makeTempProject, removeDir, testId, writeArchive, writeMemory, type MirrorHarness } from '../support/storeKit';

const A = testId(0xa);
const B = testId(0xb);
const C = testId(0xc);

describe('DiskMirror', () => {
  let project: string;
  let h: MirrorHarness;
  const memFile = (id: string) => path.join(h.paths.memories, `${id}.md`);
  /** Replaces a file the way editors and git do: a new file renamed over the old one (a new inode). */
  const replaceByRename = (file: string, text: string) => {
    fs.writeFileSync(`${file}.new`, text);
    fs.renameSync(`${file}.new`, file);
  };
  /** Rewrites a file in place: same inode, so memories/'s own signature does not change. */
  const editInPlace = (file: string, text: string) => {
    const ino = fs.statSync(file).ino;
    fs.writeFileSync(file, text);
    assert.equal(fs.statSync(file).ino, ino, 'the edit kept the inode');
  };

  beforeEach(() => {
    project = makeTempProject('ltm-mirror-');
    h = makeMirror(project);
  });
  afterEach(() => {
    h.mirror.dispose();
    removeDir(project);
  });

  describe('opening', () => {
    it('a project without a store: refresh() finds nothing and reports every JSON file missing', () => {
      const bare = makeMirror(makeTempProject('ltm-mirror-bare-'), { init: false });
      try {
        bare.mirror.refresh();
        assert.equal(bare.mirror.files.size, 0);
        assert.equal(bare.mirror.invalidFiles.size, 0);
        assert.equal(bare.mirror.indexStatus.kind, 'missing');
        assert.equal(bare.mirror.statsStatus.kind, 'missing');
        assert.equal(bare.mirror.stateStatus.kind, 'missing');
        assert.equal(bare.mirror.archiveIndexStatus.kind, 'missing');
        assert.equal(bare.mirror.state.session_count, 0);
        assert.deepEqual(bare.mirror.tempFiles(), []);
        assert.equal(bare.mirror.storageSize(), 0);
      } finally {
        removeDir(bare.paths.project);
      }
    });

    it('loads every valid memory file with its exact text and signature', () => {
      const texts = new Map([A, B, C].map((id, i) => [id, writeMemory(h.paths.root, id, { topic: `T${i}`, tags: [`tag${i}`] })]));
      h.mirror.refresh();
      assert.deepEqual([...h.mirror.files.keys()].sort(), [A, B, C]);
      for (const [id, text] of texts) {
        const loaded = h.mirror.files.get(id)!;
        assert.equal(loaded.raw, text);
        assert.equal(loaded.memory.id, id);
        assert.deepEqual(loaded.signature, statSignature(memFile(id)));
        assert.ok(h.mirror.isActive(id));
      }
      assert.equal(h.mirror.files.get(B)!.memory.topic, 'T1');
      assert.ok(!h.mirror.isActive(testId(0xd)));
      assert.deepEqual(drain(h.log).filter((e) => e.startsWith('memoryChanged')).sort(), [`memoryChanged ${A} +`, `memoryChanged ${B} +`, `memoryChanged ${C} +`]);
    });
  });

  describe('refresh() sees what other processes did to memories/', () => {
    beforeEach(() => {
      writeMemory(h.paths.root, A, { topic: 'Alpha' });
      writeMemory(h.paths.root, B, { topic: 'Beta' });
      h.mirror.refresh();
      drain(h.log);
    });

    it('a file added', () => {
      const text = writeMemory(h.paths.root, C, { topic: 'Gamma' });
      h.mirror.refresh();
      assert.equal(h.mirror.files.get(C)?.raw, text);
      assert.deepEqual(drain(h.log), [`memoryChanged ${C} +`]);
    });

    it('a file deleted', () => {
      fs.rmSync(memFile(A));
      h.mirror.refresh();
      assert.ok(!h.mirror.files.has(A));
      assert.ok(!h.mirror.fileSignatures.has(`${A}.md`));
      assert.deepEqual(drain(h.log), [`memoryChanged ${A} -`]);
    });

    it('a file replaced by rename (a new inode), as editors and git save', () => {
      const text = memoryText(A, { topic: 'Alpha, edited' });
      replaceByRename(memFile(A), text);
      h.mirror.refresh();
      assert.equal(h.mirror.files.get(A)?.memory.topic, 'Alpha, edited');
      assert.deepEqual(drain(h.log), [`memoryChanged ${A} +`]);
    });

    it('a file renamed to another memory ID: the old memory is gone and the new name claims the old ID', () => {
      fs.renameSync(memFile(A), memFile(C));
      h.mirror.refresh();
      assert.ok(!h.mirror.files.has(A));
      assert.ok(!h.mirror.files.has(C));
      assert.deepEqual(h.mirror.invalidFiles.get(`${C}.md`)?.claimedId, A);
      assert.deepEqual(drain(h.log), [`memoryChanged ${A} -`]);
    });

    it('an edit in place (same inode) is missed by a plain refresh() but found by refresh({ full: true })', () => {
      editInPlace(memFile(A), memoryText(A, { topic: 'Alpha, edited in place' }));
      h.mirror.refresh();
      assert.equal(h.mirror.files.get(A)?.memory.topic, 'Alpha', 'memories/ did not change: nothing is stat-ed');
      assert.deepEqual(drain(h.log), []);
      h.mirror.refresh({ full: true });
      assert.equal(h.mirror.files.get(A)?.memory.topic, 'Alpha, edited in place');
      assert.deepEqual(drain(h.log), [`memoryChanged ${A} +`]);
    });

    it('refreshOne(id) always looks at that memory’s file, so an edit in place is seen at once', () => {
      editInPlace(memFile(B), memoryText(B, { topic: 'Beta, edited in place' }));
      h.mirror.refreshOne(A);
      assert.equal(h.mirror.files.get(B)?.memory.topic, 'Beta', 'only the memory asked for is stat-ed');
      h.mirror.refreshOne(B);
      assert.equal(h.mirror.files.get(B)?.memory.topic, 'Beta, edited in place');
      assert.deepEqual(drain(h.log), [`memoryChanged ${B} +`]);
    });

    it('an invalid file fixed by hand becomes a memory; a memory broken by hand leaves the active set', () => {
      replaceByRename(memFile(A), 'no frontmatter\n');
      h.mirror.refresh();
      assert.ok(!h.mirror.files.has(A));
      assert.ok(h.mirror.invalidFiles.has(`${A}.md`));
      assert.deepEqual(drain(h.log), [`memoryChanged ${A} -`]);
      const text = memoryText(A, { topic: 'Alpha again' });
      replaceByRename(memFile(A), text);
      h.mirror.refresh();
      assert.equal(h.mirror.files.get(A)?.raw, text);
      assert.ok(!h.mirror.invalidFiles.has(`${A}.md`));
      assert.deepEqual(drain(h.log), [`memoryChanged ${A} +`]);
    });

    it('memories/ deleted and made anew is read again', () => {
      fs.rmSync(h.paths.memories, { recursive: true });
      h.mirror.refresh();
      assert.equal(h.mirror.files.size, 0);
      fs.mkdirSync(h.paths.memories);
      writeMemory(h.paths.root, C);
      h.mirror.refresh();
      assert.deepEqual([...h.mirror.files.keys()], [C]);
    });
  });

  describe('refresh({ swept }): signatures taken on another thread (signatureSweep.ts)', () => {
    beforeEach(() => {
      writeMemory(h.paths.root, A, { topic: 'Alpha' });
      writeMemory(h.paths.root, B, { topic: 'Beta' });
    });

    it('are used instead of statting each file here, when no file appeared or went away since', async () => {
      const swept = (await sweepSignatures(h.paths.memories))!;
      const stats = statCallsDuring(() => h.mirror.refresh({ swept }));
      assert.deepEqual([...h.mirror.files.keys()].sort(), [A, B]);
      assert.deepEqual(h.mirror.files.get(A)!.signature, statSignature(memFile(A)));
      // memories/ itself and the JSON files, not the memory files.
      const fresh = makeMirror(project, { init: false });
      try {
        const statsWithout = statCallsDuring(() => fresh.mirror.refresh());
        assert.equal(statsWithout - stats, 2, `${statsWithout} stat calls without the sweep, ${stats} with it`);
      } finally {
        fresh.mirror.dispose();
      }
    });

    it('are not used when a file appeared or went away after the sweep: memories/ is listed and statted again', async () => {
      const swept = (await sweepSignatures(h.paths.memories))!;
      fs.rmSync(memFile(B));
      const text = writeMemory(h.paths.root, C, { topic: 'Gamma' });
      h.mirror.refresh({ swept });
      assert.deepEqual([...h.mirror.files.keys()].sort(), [A, C]);
      assert.equal(h.mirror.files.get(C)!.raw, text);
    });

    it('a file the sweep could not stat is statted here', async () => {
      const swept = (await sweepSignatures(h.paths.memories))!;
      swept.files.set(`${A}.md`, undefined);
      h.mirror.refresh({ swept });
      assert.deepEqual(h.mirror.files.get(A)!.signature, statSignature(memFile(A)));
      assert.equal(h.mirror.files.get(A)!.memory.topic, 'Alpha');
    });
  });

  describe('invalid files', () => {
    it('land in invalidFiles with the reason, never in files', () => {
      writeMemory(h.paths.root, A);
      const memories = h.paths.memories;
      fs.writeFileSync(path.join(memories, 'notes.md'), memoryText(A));
      fs.writeFileSync(path.join(memories, 'MEM_0000000B.md'), memoryText(B));
      fs.writeFileSync(path.join(memories, `${C}.md`), memoryText(B));
      fs.writeFileSync(path.join(memories, `${testId(0xd)}.md`), '---\nid: [unclosed\n---\nbody\n');
      fs.writeFileSync(path.join(memories, `${testId(0xe)}.md`), 'no frontmatter at all\n');
      fs.writeFileSync(path.join(memories, `${testId(0xf)}.md`), `---\nid: ${testId(0xf)}\ntopic: x\nphase: 3\n---\nbody\n`);
      fs.writeFileSync(path.join(memories, 'README.txt'), 'not a memory file at all');
      fs.writeFileSync(path.join(memories, `.${B}.md.1.abcd.ltm-tmp`), memoryText(B));
      h.mirror.refresh();

      assert.deepEqual([...h.mirror.files.keys()], [A]);
      const invalid = Object.fromEntries([...h.mirror.invalidFiles].map(([name, f]) => [name, f]));
      assert.deepEqual(Object.keys(invalid).sort(), ['MEM_0000000B.md', `${C}.md`, `${testId(0xd)}.md`, `${testId(0xe)}.md`, `${testId(0xf)}.md`, 'notes.md'].sort());
      assert.match(invalid['notes.md']!.reason, /not a memory ID \(mem_ followed by 8 hex characters\)/);
      assert.match(invalid['MEM_0000000B.md']!.reason, /not a memory ID/);
      assert.equal(invalid['notes.md']!.claimedId, undefined, 'a bad name claims no ID');
      assert.equal(invalid[`${C}.md`]!.claimedId, B);
      assert.match(invalid[`${C}.md`]!.reason, new RegExp(`frontmatter ID ${B} is not its file name`));
      assert.match(invalid[`${testId(0xd)}.md`]!.reason, /YAML/);
      assert.match(invalid[`${testId(0xe)}.md`]!.reason, /frontmatter/);
      assert.match(invalid[`${testId(0xf)}.md`]!.reason, /phase/);
      for (const f of Object.values(invalid)) assert.equal(f.name, Object.keys(invalid).find((n) => invalid[n] === f));
      // every *.md is stat-ed and counted, valid or not; other names are not memory files
      assert.equal(h.mirror.fileSignatures.size, 7);
      assert.ok(!h.mirror.fileSignatures.has('README.txt'));
    });

    it('fileSignatures follows a file from valid to invalid, valid again and away: one signature a name, the one last read', () => {
      writeMemory(h.paths.root, A);
      writeMemory(h.paths.root, B);
      h.mirror.refresh();
      assert.equal(h.mirror.fileSignatures.size, 2);
      assert.equal(h.mirror.fileSignatures.get(`${A}.md`), h.mirror.files.get(A)!.signature, 'a memory\'s signature is its file\'s');
      replaceByRename(memFile(A), 'broken\n');
      h.mirror.refresh();
      assert.ok(!h.mirror.files.has(A));
      assert.deepEqual(h.mirror.fileSignatures.get(`${A}.md`), statSignature(memFile(A)), 'an invalid file keeps its own');
      assert.equal(h.mirror.fileSignatures.size, 2);
      assert.deepEqual([...h.mirror.fileSignatures.keys()].sort(), [`${A}.md`, `${B}.md`]);
      replaceByRename(memFile(A), memoryText(A, { topic: 'Valid again' }));
      h.mirror.refresh();
      assert.equal(h.mirror.files.get(A)!.memory.topic, 'Valid again');
      assert.deepEqual(h.mirror.fileSignatures.get(`${A}.md`), statSignature(memFile(A)));
      assert.equal(h.mirror.fileSignatures.size, 2);
      assert.equal([...h.mirror.fileSignatures.values()].reduce((sum, sig) => sum + sig.size, 0), fs.statSync(memFile(A)).size + fs.statSync(memFile(B)).size);
      fs.writeFileSync(memFile(B), 'broken too\n');
      h.mirror.refresh({ full: true });
      fs.rmSync(memFile(A));
      fs.rmSync(memFile(B));
      h.mirror.refresh();
      assert.equal(h.mirror.fileSignatures.size, 0);
      assert.ok(!h.mirror.fileSignatures.has(`${A}.md`) && !h.mirror.fileSignatures.has(`${B}.md`));
    });

    it('writeMemoryFile over an invalid file makes it valid again', () => {
      fs.writeFileSync(memFile(A), 'broken\n');
      h.mirror.refresh();
      assert.ok(h.mirror.invalidFiles.has(`${A}.md`));
      h.mirror.writeMemoryFile(A, memoryText(A));
      assert.ok(!h.mirror.invalidFiles.has(`${A}.md`));
      assert.ok(h.mirror.files.has(A));
    });
  });

  describe('its own writes', () => {
    it('are not read again: the loaded file stays the same object after refresh()', () => {
      h.mirror.refresh();
      drain(h.log);
      h.mirror.writeMemoryFile(A, memoryText(A, { topic: 'Mine' }));
      const loaded = h.mirror.files.get(A)!;
      assert.deepEqual(loaded.signature, statSignature(memFile(A)));
      assert.deepEqual(h.mirror.fileSignatures.get(`${A}.md`), statSignature(memFile(A)));
      assert.deepEqual(drain(h.log), [`memoryChanged ${A} +`]);
      h.mirror.refresh();
      h.mirror.refresh({ full: true });
      h.mirror.refreshOne(A);
      assert.equal(h.mirror.files.get(A), loaded);
      assert.deepEqual(drain(h.log), []);
    });

    it('record memories/’s new signature: a write causes no rescan of the directory', () => {
      writeMemory(h.paths.root, B, { topic: 'Beta' });
      h.mirror.refresh();
      // An edit in place is only found by a rescan (or refreshOne / full): it shows whether refresh() rescanned.
      editInPlace(memFile(B), memoryText(B, { topic: 'Beta, edited in place' }));
      h.mirror.writeMemoryFile(A, memoryText(A));
      h.mirror.refresh();
      assert.equal(h.mirror.files.get(B)!.memory.topic, 'Beta');
      h.mirror.deleteMemoryFile(A);
      h.mirror.refresh();
      assert.equal(h.mirror.files.get(B)!.memory.topic, 'Beta');
    });

    it('deleteMemoryFile and forgetFileName drop the memory and fire memoryChanged once', () => {
      writeMemory(h.paths.root, A);
      writeMemory(h.paths.root, B);
      h.mirror.refresh();
      drain(h.log);
      h.mirror.deleteMemoryFile(A);
      assert.ok(!fs.existsSync(memFile(A)));
      assert.ok(!h.mirror.files.has(A));
      fs.renameSync(memFile(B), path.join(h.paths.root, 'moved.md'));
      h.mirror.forgetFileName(`${B}.md`);
      assert.ok(!h.mirror.files.has(B));
      assert.equal(h.mirror.fileSignatures.size, 0);
      h.mirror.refresh();
      assert.deepEqual(drain(h.log), [`memoryChanged ${A} -`, `memoryChanged ${B} -`]);
    });
  });

  describe('MirrorEvents fire exactly for real changes', () => {
    it('memoryChanged does not fire when a file is rewritten with identical text, by another process or by this one', () => {
      const text = writeMemory(h.paths.root, A);
      h.mirror.refresh();
      drain(h.log);
      replaceByRename(memFile(A), text);
      h.mirror.refresh();
      assert.deepEqual(h.mirror.files.get(A)!.signature, statSignature(memFile(A)), 'the new version was seen');
      h.mirror.writeMemoryFile(A, text);
      assert.deepEqual(drain(h.log), []);
    });

    it('nothing fires when nothing changed', () => {
      writeMemory(h.paths.root, A);
      fs.writeFileSync(h.paths.index, toJsonText({ version: 1, memories: {} }));
      fs.writeFileSync(h.paths.stats, toJsonText({ version: 1, memories: {} }));
      h.mirror.refresh();
      assert.deepEqual(drain(h.log).sort(), ['archivesChanged', 'indexChanged', `memoryChanged ${A} +`, 'statsRead']);
      h.mirror.refresh();
      h.mirror.refresh({ full: true });
      assert.deepEqual(drain(h.log), []);
    });

    it('indexChanged fires when index.json appears, changes or goes away on disk, not after this process wrote it', () => {
      h.mirror.refresh();
      drain(h.log);
      fs.writeFileSync(h.paths.index, toJsonText({ version: 1, memories: { [A]: {} } }));
      h.mirror.refresh();
      assert.deepEqual(drain(h.log), ['indexChanged']);
      replaceByRename(h.paths.index, toJsonText({ version: 1, memories: { [B]: {} } }));
      h.mirror.refresh();
      assert.deepEqual(drain(h.log), ['indexChanged']);
      fs.rmSync(h.paths.index);
      h.mirror.refresh();
      assert.deepEqual(drain(h.log), ['indexChanged']);
      fs.writeFileSync(h.paths.index, toJsonText({ version: 1, memories: { [C]: {} } }));
      h.mirror.noteIndexWritten(new Set([C]));
      h.mirror.refresh();
      assert.deepEqual(drain(h.log), []);
    });

    it('statsRead fires when stats.json changes on disk and replaces the stats map', () => {
      const statsKind = (): string => h.mirror.statsStatus.kind;
      h.mirror.refresh();
      drain(h.log);
      const entry = { access_count: 3, accessed_at: '2026-01-02T00:00:00.000Z', last_session: 2, priority: 0.5 };
      fs.writeFileSync(h.paths.stats, toJsonText({ version: 1, memories: { [A]: entry } }));
      h.mirror.refresh();
      assert.deepEqual(drain(h.log), ['statsRead']);
      assert.deepEqual(h.mirror.stats.get(A), entry);
      assert.equal(statsKind(), 'ok');
      fs.writeFileSync(h.paths.stats, 'garbage');
      h.mirror.refresh();
      assert.deepEqual(drain(h.log), ['statsRead']);
      assert.equal(h.mirror.stats.size, 0);
      assert.equal(statsKind(), 'unreadable');
      fs.rmSync(h.paths.stats);
      h.mirror.refresh();
      assert.deepEqual(drain(h.log), ['statsRead']);
      assert.equal(statsKind(), 'missing');
    });

    it('archivesChanged fires when archives/ or archive_index.json changes', () => {
      h.mirror.refresh();
      drain(h.log);
      writeArchive(h.paths.root, A);
      h.mirror.refresh();
      assert.ok(drain(h.log).includes('archivesChanged'));
      fs.writeFileSync(h.paths.archiveIndex, toJsonText({ version: 1, memories: {} }));
      h.mirror.refresh();
      assert.deepEqual(drain(h.log), ['archivesChanged']);
      h.mirror.refresh();
      assert.deepEqual(drain(h.log), []);
    });
  });

  describe('index.json is read only when asked for', () => {
    const indexOf = (...ids: string[]) => toJsonText({ version: 1, memories: Object.fromEntries(ids.map((id) => [id, { topic: id }])), tag_index: {} });

    it('a damaged index.json does not stop opening or refreshing; indexStatus reports it when asked', () => {
      writeMemory(h.paths.root, A);
      fs.writeFileSync(h.paths.index, 'this is {not json');
      h.mirror.refresh();
      h.mirror.refresh({ full: true });
      assert.deepEqual([...h.mirror.files.keys()], [A]);
      const status = h.mirror.indexStatus;
      assert.equal(status.kind, 'unreadable');
      assert.deepEqual([...h.mirror.indexIds()], []);
      fs.writeFileSync(h.paths.index, `<<<<<<< HEAD\n${indexOf(A)}=======\n${indexOf(B)}>>>>>>> other\n`);
      h.mirror.refresh();
      assert.equal(h.mirror.indexStatus.kind, 'conflicted');
    });

    it('is read when first asked, not at refresh(), and then kept until it changes on disk', () => {
      fs.writeFileSync(h.paths.index, indexOf(A));
      h.mirror.refresh();
      // Changed in place after the refresh: a mirror that had read it at refresh() would still say A.
      editInPlace(h.paths.index, indexOf(A, B));
      assert.deepEqual([...h.mirror.indexIds()].sort(), [A, B]);
      assert.equal(h.mirror.indexText, indexOf(A, B));
      assert.equal(h.mirror.indexStatus.kind, 'ok');
      // Once read, it is kept: the next read comes after refresh() saw a change.
      replaceByRename(h.paths.index, indexOf(C));
      assert.deepEqual([...h.mirror.indexIds()].sort(), [A, B]);
      h.mirror.refresh();
      assert.deepEqual([...h.mirror.indexIds()], [C]);
    });

    it('after noteIndexWritten it holds the IDs written, and no text (this process knows what it wrote)', () => {
      h.mirror.refresh();
      fs.writeFileSync(h.paths.index, indexOf(A, B));
      h.mirror.noteIndexWritten(new Set([A, B]));
      assert.deepEqual([...h.mirror.indexIds()].sort(), [A, B]);
      assert.equal(h.mirror.indexText, null);
      assert.equal(h.mirror.indexStatus.kind, 'ok');
      assert.deepEqual(h.mirror.indexSignature, statSignature(h.paths.index));
    });

    it('a missing index.json is reported as missing', () => {
      h.mirror.refresh();
      assert.equal(h.mirror.indexStatus.kind, 'missing');
      assert.equal(h.mirror.indexText, null);
    });

    it('the IDs it mentions are read ahead for the first store, and kept only for the index.json last seen', async () => {
      fs.writeFileSync(h.paths.index, indexOf(A, B));
      h.mirror.refresh();
      await h.mirror.readIndexMentionsAhead();
      // Moved away without a refresh: indexMentions answers from what was read ahead, without reading the file.
      fs.renameSync(h.paths.index, `${h.paths.index}.away`);
      assert.ok(h.mirror.indexMentions(A) && h.mirror.indexMentions(B));
      assert.ok(!h.mirror.indexMentions(C));
      fs.renameSync(`${h.paths.index}.away`, h.paths.index);

      // Changed after the last refresh: what was read ahead is not kept, and the first store reads the file as it is then.
      const other = makeMirror(project, { init: false });
      try {
        other.mirror.refresh();
        replaceByRename(h.paths.index, indexOf(C));
        await other.mirror.readIndexMentionsAhead();
        replaceByRename(h.paths.index, indexOf(B));
        assert.ok(other.mirror.indexMentions(B), 'read when asked');
        assert.ok(!other.mirror.indexMentions(C));
      } finally {
        other.mirror.dispose();
      }
    });
  });

  describe('memory files written by this process', () => {
    it('never writes over a file saved after it was read: ChangedOnDiskError, the save kept and read', () => {
      writeMemory(h.paths.root, A, { topic: 'Read first' });
      h.mirror.refresh();
      const saved = memoryText(A, { topic: 'Saved in an editor' });
      editInPlace(memFile(A), saved);
      assert.throws(() => h.mirror.writeMemoryFile(A, memoryText(A, { topic: 'Written by a command' })), (error: Error) => error instanceof ChangedOnDiskError && /memories\/mem_\w+\.md was changed on disk/.test(error.message));
      assert.equal(fs.readFileSync(memFile(A), 'utf8'), saved);
      assert.equal(h.mirror.files.get(A)!.memory.topic, 'Saved in an editor');
      assert.deepEqual(fs.readdirSync(h.paths.memories).filter((n) => !n.endsWith('.md')), [], 'no temporary file left');
      // Once read, the next write goes through.
      h.mirror.writeMemoryFile(A, memoryText(A, { topic: 'Written after reading it' }));
      assert.match(fs.readFileSync(memFile(A), "utf8"), /topic: "Written after reading it"/);
    });

    it('never removes a file saved after it was read, unless asked to whatever it says (a purge)', () => {
      writeMemory(h.paths.root, A, { topic: 'Read first' });
      h.mirror.refresh();
      const saved = memoryText(A, { topic: 'Saved in an editor' });
      editInPlace(memFile(A), saved);
      assert.throws(() => h.mirror.deleteMemoryFile(A), ChangedOnDiskError);
      assert.equal(fs.readFileSync(memFile(A), 'utf8'), saved);
      assert.equal(h.mirror.files.get(A)!.memory.topic, 'Saved in an editor');
      editInPlace(memFile(A), memoryText(A, { topic: 'Saved again' }));
      h.mirror.deleteMemoryFile(A, { evenIfChanged: true });
      assert.equal(fs.existsSync(memFile(A)), false);
      assert.equal(h.mirror.isActive(A), false);
    });

    it('a save right after its rename is read: the signature kept is that of the text written, not a look after the rename', () => {
      writeMemory(h.paths.root, A, { topic: 'Before' });
      h.mirror.refresh();
      const saved = memoryText(A, { topic: 'Saved right after the write' });
      afterRenameOnto(
        memFile(A),
        () => fs.writeFileSync(memFile(A), saved),
        () => h.mirror.writeMemoryFile(A, memoryText(A, { topic: 'Written' })),
      );
      h.mirror.refreshOne(A);
      assert.equal(h.mirror.files.get(A)!.memory.topic, 'Saved right after the write');
    });
  });

  describe('stats.json written by this process', () => {
    /** A producer of stats.json with these entries, as StatsWriter gives statsFile.write. */
    const statsBytes = (entries: Record<string, unknown>) => (out: PieceWriter) => out.write(Buffer.from(toJsonText({ version: 1, memories: entries })));
    const statsBytesAsync = (entries: Record<string, unknown>) => async (out: PieceWriter) => statsBytes(entries)(out);
    const entry = (n: number) => ({ access_count: n, accessed_at: '2026-01-02T00:00:00.000Z', last_session: n, priority: 0 });

    it('writeStats records its signature: the next refresh() does not read stats.json again', () => {
      h.mirror.refresh();
      drain(h.log);
      h.mirror.stats.set(A, entry(1));
      const stats = h.mirror.stats;
      h.mirror.statsFile.write(statsBytes({ [A]: entry(1) }));
      h.mirror.refresh();
      assert.equal(h.mirror.stats, stats, 'the stats map was not replaced');
      assert.deepEqual(drain(h.log), []);
      assert.equal(h.mirror.statsStatus.kind, 'ok');
    });

    it('state.json changed by another process is read again, and counts as a change', () => {
      h.mirror.refresh();
      const before = h.mirror.changeCount;
      replaceByRename(h.paths.state, toJsonText({ version: 1, session_count: 42 }));
      h.mirror.refresh();
      assert.equal(h.mirror.state.session_count, 42);
      assert.equal(h.mirror.changeCount, before + 1);
    });

    it('while the rename of an async write of stats.json is in flight, refresh() keeps off the file; once done, its signature is recorded', async () => {
      h.mirror.refresh();
      drain(h.log);
      h.mirror.stats.set(A, entry(1));
      const stats = h.mirror.stats;
      const { rename } = fs.promises;
      let renamed = false;
      // A refresh between the rename landing and its signature being recorded: the file on disk is not the one recorded.
      fs.promises.rename = async (...args: Parameters<typeof rename>) => {
        await rename(...args);
        renamed = true;
        h.mirror.refresh();
      };
      try {
        assert.deepEqual(await h.mirror.statsFile.writeAsync(statsBytesAsync({ [A]: entry(1) })), statSignature(h.paths.stats));
      } finally {
        fs.promises.rename = rename;
      }
      assert.ok(renamed);
      assert.equal(h.mirror.stats, stats, 'refresh() read stats.json during the rename');
      assert.deepEqual(drain(h.log), []);
      assert.deepEqual(h.mirror.statsSignature, statSignature(h.paths.stats));
      assert.deepEqual(JSON.parse(fs.readFileSync(h.paths.stats, 'utf8')).memories, { [A]: entry(1) });
      h.mirror.refresh();
      assert.equal(h.mirror.stats, stats);
      assert.deepEqual(drain(h.log), []);
    });

    it('a failed async write leaves refresh() free to read the file again', async () => {
      h.mirror.refresh();
      fs.rmSync(h.paths.root, { recursive: true });
      await assert.rejects(h.mirror.statsFile.writeAsync(statsBytesAsync({})));
      fs.mkdirSync(h.paths.root, { recursive: true });
      fs.writeFileSync(h.paths.stats, toJsonText({ version: 1, memories: { [B]: entry(2) } }));
      h.mirror.refresh();
      assert.deepEqual(h.mirror.stats.get(B), entry(2));
    });
  });

  describe('archives', () => {
    it('without archive_index.json, every archive of a memory that is not active is listed as archived (reason legacy)', () => {
      writeArchive(h.paths.root, A, { topic: 'Archived A', tags: ['x', 'y'] });
      writeArchive(h.paths.root, B, { topic: 'Original of B' });
      writeMemory(h.paths.root, B, { topic: 'B, reduced', phase: 1 });
      fs.writeFileSync(path.join(h.paths.archives, 'not-an-id.md'), memoryText(C));
      const mtime = new Date('2025-06-01T12:00:00.000Z');
      fs.utimesSync(path.join(h.paths.archives, `${A}.md`), mtime, mtime);
      h.mirror.refresh();
      assert.equal(h.mirror.archiveIndexStatus.kind, 'missing');
      assert.deepEqual([...h.mirror.archiveFiles].sort(), [A, B]);
      assert.deepEqual([...h.mirror.archiveIndex.memories.keys()], [A], 'the active memory’s archive is not an archived memory');
      assert.deepEqual(h.mirror.archiveIndex.memories.get(A), {
        topic: 'Archived A',
        tags: ['x', 'y'],
        archived_at: mtime.toISOString(),
        original_phase: 2,
        reason: 'legacy',
      });
    });

    it('a damaged archive_index.json is rebuilt from archives/ (reason recovered), also for archives added later', () => {
      writeArchive(h.paths.root, A);
      fs.writeFileSync(h.paths.archiveIndex, 'nonsense');
      h.mirror.refresh();
      assert.equal(h.mirror.archiveIndexStatus.kind, 'unreadable');
      assert.equal(h.mirror.archiveIndex.memories.get(A)?.reason, 'recovered');
      writeArchive(h.paths.root, B);
      h.mirror.refresh();
      assert.equal(h.mirror.archiveIndex.memories.get(B)?.reason, 'recovered');
    });

    it('archive_index.json deleted or damaged later (archives/ unchanged) is rebuilt at the next refresh()', () => {
      writeArchive(h.paths.root, A);
      h.mirror.refresh();
      h.mirror.archiveIndex.memories.set(A, { topic: 'A', tags: [], archived_at: 'then', original_phase: 0, reason: 'forgotten' });
      h.mirror.writeArchiveIndex();
      fs.rmSync(h.paths.archiveIndex);
      h.mirror.refresh();
      assert.equal(h.mirror.archiveIndexStatus.kind, 'missing');
      assert.equal(h.mirror.archiveIndex.memories.get(A)?.reason, 'legacy');
      fs.writeFileSync(h.paths.archiveIndex, '{"memories": 3}');
      h.mirror.refresh();
      assert.equal(h.mirror.archiveIndexStatus.kind, 'unreadable');
      assert.equal(h.mirror.archiveIndex.memories.get(A)?.reason, 'recovered');
    });

    it('a usable archive_index.json is taken as it is: an archive it does not list stays unlisted', () => {
      writeArchive(h.paths.root, A);
      writeArchive(h.paths.root, B);
      const listed = { topic: 'A', tags: [], archived_at: '2026-01-01T00:00:00.000Z', original_phase: 0, reason: 'forgotten' };
      fs.writeFileSync(h.paths.archiveIndex, toJsonText({ version: 1, memories: { [A]: listed }, purged: { [C]: { purged_at: 'x' } } }));
      h.mirror.refresh();
      assert.equal(h.mirror.archiveIndexStatus.kind, 'ok');
      assert.deepEqual([...h.mirror.archiveIndex.memories.keys()], [A]);
      assert.deepEqual(h.mirror.archiveIndex.memories.get(A), listed);
      assert.deepEqual([...h.mirror.archiveIndex.purged.keys()], [C]);
    });

    it('readArchive gives the parsed archive with its entry and whether the memory is active; null when missing or unreadable', () => {
      const text = writeArchive(h.paths.root, A, { topic: 'Archived', content: 'Full text.' });
      writeArchive(h.paths.root, B);
      writeMemory(h.paths.root, B, { phase: 1 });
      fs.writeFileSync(path.join(h.paths.archives, `${C}.md`), 'not a memory file');
      h.mirror.refresh();
      const a = h.mirror.readArchive(A)!;
      assert.equal(a.topic, 'Archived');
      assert.equal(a.content, 'Full text.');
      assert.equal(a.active, false);
      assert.equal(a.entry?.reason, 'legacy');
      assert.equal(h.mirror.readArchiveText(A), text);
      assert.equal(h.mirror.readArchive(B)!.active, true);
      assert.equal(h.mirror.readArchive(B)!.entry, null);
      assert.equal(h.mirror.readArchive(C), null);
      assert.equal(h.mirror.readArchive(testId(0xd)), null);
      assert.equal(h.mirror.readArchiveText(testId(0xd)), null);
    });

    it('writeArchiveFile, deleteArchiveFile and writeArchiveIndex keep archiveFiles in step and are not read again', () => {
      h.mirror.refresh();
      drain(h.log);
      h.mirror.writeArchiveFile(A, memoryText(A));
      assert.ok(h.mirror.archiveFiles.has(A));
      assert.ok(fs.existsSync(path.join(h.paths.archives, `${A}.md`)));
      h.mirror.archiveIndex.memories.set(A, { topic: 'A', tags: [], archived_at: 'now', original_phase: 0, reason: 'forgotten' });
      h.mirror.writeArchiveIndex();
      assert.equal(h.mirror.archiveIndexStatus.kind, 'ok');
      assert.deepEqual(Object.keys(JSON.parse(fs.readFileSync(h.paths.archiveIndex, 'utf8')).memories), [A]);
      h.mirror.deleteArchiveFile(A);
      assert.ok(!h.mirror.archiveFiles.has(A));
      assert.deepEqual(drain(h.log), ['archivesChanged', 'archivesChanged', 'archivesChanged']);
      const index = h.mirror.archiveIndex;
      h.mirror.refresh();
      assert.deepEqual(drain(h.log), []);
      assert.equal(h.mirror.archiveIndex, index);
    });
  });

  describe('storageSize and tempFiles', () => {
    it('storageSize is the bytes of every memory file, archive and JSON file the store holds', () => {
      writeMemory(h.paths.root, A, { content: 'x'.repeat(1000) });
      fs.writeFileSync(path.join(h.paths.memories, 'notes.md'), 'an invalid file still takes space');
      writeArchive(h.paths.root, B, { content: 'y'.repeat(500) });
      for (const file of [h.paths.index, h.paths.stats, h.paths.state, h.paths.archiveIndex]) fs.writeFileSync(file, toJsonText({ version: 1, memories: {} }));
      fs.writeFileSync(h.paths.parseCache, 'a per-machine cache is not counted');
      h.mirror.refresh();
      const size = (file: string) => fs.statSync(file).size;
      const expected =
        size(path.join(h.paths.memories, `${A}.md`)) +
        size(path.join(h.paths.memories, 'notes.md')) +
        size(path.join(h.paths.archives, `${B}.md`)) +
        [h.paths.index, h.paths.stats, h.paths.state, h.paths.archiveIndex].map(size).reduce((x, y) => x + y);
      assert.equal(h.mirror.storageSize(), expected);
    });

    it('tempFiles lists leftover temporary files in memories/, archives/ and the store root only', () => {
      const temps = [
        path.join(h.paths.memories, `.${A}.md.1.aaaa.ltm-tmp`),
        path.join(h.paths.archives, `.${A}.md.1.bbbb.ltm-tmp`),
        path.join(h.paths.root, '.index.json.1.cccc.ltm-tmp'),
      ];
      for (const f of temps) fs.writeFileSync(f, '');
      fs.mkdirSync(h.paths.quarantine);
      fs.writeFileSync(path.join(h.paths.quarantine, '.x.ltm-tmp'), '');
      fs.writeFileSync(path.join(h.paths.root, 'index.json.ltm-tmp.bak'), '');
      assert.deepEqual([...h.mirror.tempFiles()].sort(), [...temps].sort());
    });
  });
});
