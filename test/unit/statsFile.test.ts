import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import { replaceWithTemp, statSignature, toJsonText, writeTempFile, type PieceWriter } from '../../src/core/files';
import type { MemoryStats } from '../../src/core/model';
import { StatsFile } from '../../src/core/statsFile';
import { journalLine } from '../../src/core/statsJournal';
import { storePaths, type StorePaths } from '../../src/core/storeFiles';
import { makeTempProject, removeDir, testId } from '../support/storeKit';

const A = testId(0xa);
const B = testId(0xb);
/** Read through a call: an assertion on the field itself would narrow its type for the rest of the test. */
const kindOf = (file: StatsFile): string => file.status.kind;
const entry = (n: number): MemoryStats => ({ access_count: n, accessed_at: '2026-01-02T00:00:00.000Z', last_session: n, priority: 0 });
/** A producer of stats.json with these entries, as StatsWriter gives write(). */
const statsBytes = (entries: Record<string, MemoryStats>) => (out: PieceWriter) => out.write(Buffer.from(toJsonText({ version: 1, memories: entries })));

describe('StatsFile: stats.json and its journal', () => {
  let project: string;
  let paths: StorePaths;
  let reads: number;
  /** The writer (this process) and a reader (another process's view of the same files). */
  let writer: StatsFile;
  let reader: StatsFile;

  beforeEach(() => {
    project = makeTempProject('ltm-statsfile-');
    paths = storePaths(project);
    fs.mkdirSync(paths.root, { recursive: true });
    reads = 0;
    writer = new StatsFile(paths);
    reader = new StatsFile(paths, () => reads++);
  });
  afterEach(() => removeDir(project));

  it('reads stats.json when it changed on disk, and only then', () => {
    reader.refresh();
    assert.equal(kindOf(reader), 'missing');
    assert.equal(reader.stats.size, 0);
    fs.writeFileSync(paths.stats, toJsonText({ version: 1, memories: { [A]: entry(1) } }));
    reader.refresh();
    assert.equal(reads, 1);
    assert.equal(kindOf(reader), 'ok');
    assert.deepEqual(reader.stats.get(A), entry(1));
    reader.refresh();
    assert.equal(reads, 1, 'unchanged: not read again');
    fs.writeFileSync(paths.stats, 'not json');
    reader.refresh();
    assert.equal(kindOf(reader), 'unreadable');
    assert.equal(reader.stats.size, 0);
  });

  it('a write is recorded, not read back, and removes the journal it makes obsolete', () => {
    const writes = { n: 0 };
    const own = new StatsFile(paths, () => writes.n++);
    own.refresh();
    own.write(statsBytes({ [A]: entry(1) }));
    own.appendJournal([journalLine(B, entry(2))]);
    assert.ok(fs.existsSync(paths.statsJournal));
    own.write(statsBytes({ [A]: entry(1), [B]: entry(2) }));
    assert.equal(fs.existsSync(paths.statsJournal), false, 'the journal is in stats.json now');
    assert.equal(own.hasJournal, false);
    own.refresh();
    assert.equal(writes.n, 0, 'its own writes are not read again');
    assert.equal(kindOf(own), 'ok');
    assert.deepEqual(own.signature, statSignature(paths.stats), 'the signature of the file written');
  });

  it('journal lines apply on top of stats.json for every reader; lines appended since are read alone', () => {
    writer.refresh();
    writer.write(statsBytes({ [A]: entry(1) }));
    writer.appendJournal([journalLine(A, entry(5)), journalLine(B, entry(2))]);
    assert.match(fs.readFileSync(paths.gitignore, 'utf8'), /^stats\.log$/m, 'the journal is kept out of git');
    assert.equal(writer.journalLines, 2);
    reader.refresh();
    assert.deepEqual(reader.stats.get(A), entry(5));
    assert.deepEqual(reader.stats.get(B), entry(2));
    assert.equal(reader.journalLines, 2);
    const map = reader.stats;

    writer.appendJournal([journalLine(B, undefined)]);
    reader.refresh();
    assert.equal(reader.stats, map, 'the tail applied to the map as read: stats.json was not read again');
    assert.equal(reader.stats.has(B), false, 'a removal applies');
    assert.equal(reader.journalLines, 3);
    assert.equal(reads, 2);
  });

  it('a journal naming another stats.json is not applied, and the next append starts a new one', () => {
    writer.refresh();
    writer.write(statsBytes({ [A]: entry(1) }));
    writer.appendJournal([journalLine(A, entry(9))]);
    // stats.json rewritten by someone else (an older LTM, a hand edit): a rename brings another inode.
    const other = writeTempFile(paths.stats, toJsonText({ version: 1, memories: { [A]: entry(3) } }));
    replaceWithTemp(other, paths.stats);
    reader.refresh();
    assert.deepEqual(reader.stats.get(A), entry(3), 'the newer stats.json wins');
    assert.equal(reader.journalLines, 0);
    assert.equal(reader.hasJournal, true, 'the stale journal is still there');
    reader.appendJournal([journalLine(B, entry(4))]);
    const next = new StatsFile(paths);
    next.refresh();
    assert.deepEqual(next.stats.get(A), entry(3));
    assert.deepEqual(next.stats.get(B), entry(4));
    assert.equal(next.journalLines, 1);
  });

  it('a line cut short by a kill is skipped, and the next append starts on a line of its own', () => {
    writer.refresh();
    writer.write(statsBytes({}));
    writer.appendJournal([journalLine(A, entry(1))]);
    reader.refresh();
    fs.appendFileSync(paths.statsJournal, journalLine(B, entry(7)).slice(0, 20));
    // The reader sees the cut line's bytes but keeps them unread: no newline ends them.
    reader.refresh();
    assert.equal(reader.stats.has(B), false);
    reader.appendJournal([journalLine(B, entry(8))]);
    const next = new StatsFile(paths);
    next.refresh();
    assert.deepEqual(next.stats.get(A), entry(1));
    assert.deepEqual(next.stats.get(B), entry(8), 'the appended line was not glued to the cut one');
  });

  it('refuses to start a journal without stats.json to name', () => {
    writer.refresh();
    assert.throws(() => writer.appendJournal([journalLine(A, entry(1))]), /needs stats\.json/);
    assert.equal(fs.existsSync(paths.statsJournal), false);
  });
});
