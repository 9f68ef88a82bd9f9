import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { toJsonText } from '../../src/core/files';
import { IndexWriter } from '../../src/core/indexWriter';
import { PROBLEM_TITLES, checkIntegrity, type IntegrityReport, type ProblemKind } from '../../src/core/integrity';
import { fixStore, integritySnapshot, repairProblems, type RepairTarget } from '../../src/core/repair';
import { StatsWriter } from '../../src/core/statsWriter';
import { StoreQueries } from '../../src/core/storeQueries';
import { filesUnder, makeMirror, makeParts, makeTempProject, memoryKeys, statsOnDisk, memoryText, removeDir, splitFile, testId, writeArchive, writeMemory } from '../support/storeKit';

/** A store's parts wired as MemoryStore wires them, with the RepairTarget its fix() builds. */
function repairHarness(project: string) {
  const h = makeMirror(project);
  const index = new IndexWriter(h.mirror);
  const queries = new StoreQueries(h.mirror);
  const stats = new StatsWriter(h.mirror, { score: (id, m) => queries.score(id, m), touched: (id) => queries.touched(id) });
  h.on.memoryChanged = (id, next) => {
    index.memoryChanged(id);
    queries.memoryChanged(id, next);
  };
  h.on.indexChanged = () => index.indexChanged();
  h.on.statsRead = () => {
    stats.replaced();
    queries.statsRead();
  };
  h.on.archivesChanged = () => queries.archivesChanged();
  const { mirror } = h;
  let next = 0xf000;
  const target: RepairTarget = {
    paths: h.paths,
    files: mirror.files,
    get archiveIndex() {
      return mirror.archiveIndex;
    },
    newId: () => {
      while (mirror.fileSignatures.has(`${testId(next)}.md`) || mirror.archiveFiles.has(testId(next))) next++;
      return testId(next++);
    },
    register: (id) => index.register(id),
    unregister: (id) => index.unregister(id),
    writeMemoryFile: (id, raw) => mirror.writeMemoryFile(id, raw),
    forgetFileName: (name) => mirror.forgetFileName(name),
    writeArchiveFile: (id, raw) => mirror.writeArchiveFile(id, raw),
    deleteArchiveFile: (id) => mirror.deleteArchiveFile(id),
    readArchive: (id) => mirror.readArchive(id),
  };
  const check = (): IntegrityReport => {
    mirror.refresh({ full: true });
    return checkIntegrity(integritySnapshot(mirror, index));
  };
  /** What the store writes once after the repairs: everything derived again from the repaired memories. */
  const rewriteDerived = (report: IntegrityReport) => {
    index.replaceIds(new Set(mirror.files.keys()));
    for (const id of [...mirror.stats.keys()]) if (!mirror.files.has(id)) stats.set(id, undefined);
    index.write();
    stats.write();
    mirror.writeArchiveIndex();
    if (report.problems.some((p) => p.kind === 'state_unreadable')) mirror.stateFile.writeAnew();
  };
  return { ...h, index, stats, queries, target, check, rewriteDerived };
}

const A = testId(0xa);
const B = testId(0xb);
const C = testId(0xc);
const X = testId(0x5a5a);

const describeProblems = (r: IntegrityReport) => JSON.stringify(r.problems, null, 1);

/** A memory file's text with a hand-added anchors entry LTM cannot read (its path leaves the project). */
const withBrokenAnchor = (text: string) => text.replace(/\n---\n/, '\nanchors:\n  - path: "../outside.ts"\n    hash: "poly64:0000000000000000"\n---\n');

/** The bodies (text after the frontmatter) of every memory file and archive, or the whole text when it has no frontmatter. */
function textsUnder(root: string, dirs: string[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const dir of dirs) {
    for (const name of filesUnder(path.join(root, dir))) {
      if (!name.endsWith('.md')) continue;
      const text = fs.readFileSync(path.join(root, dir, name), 'utf8');
      let body = text;
      try {
        body = splitFile(text).body;
      } catch {
        // kept whole
      }
      out.set(`${dir}/${name}`, body);
    }
  }
  return out;
}

describe('repair', () => {
  let project: string;
  let h: ReturnType<typeof repairHarness>;

  /** A healthy store of three memories, one of them forgotten into archives/, with every JSON file written. */
  function healthyStore(): void {
    for (const id of [A, B, C]) writeMemory(h.paths.root, id, { topic: `Topic ${id}`, content: `The lesson of ${id}.`, tags: ['t'] });
    writeArchive(h.paths.root, testId(0xd), { topic: 'Forgotten', content: 'The forgotten lesson.' });
    h.mirror.refresh();
    h.mirror.archiveIndex.memories.set(testId(0xd), { topic: 'Forgotten', tags: [], archived_at: '2026-01-01T00:00:00.000Z', original_phase: 0, reason: 'forgotten' });
    h.mirror.writeArchiveIndex();
    h.stats.recordAccess([A, B, C], 1);
    h.stats.write();
    h.index.write();
    h.mirror.stateFile.writeAnew();
    const report = h.check();
    assert.equal(report.healthy, true, describeProblems(report));
  }

  const oldTemp = () => {
    const file = path.join(h.paths.memories, `.${A}.md.1.abcd.ltm-tmp`);
    fs.writeFileSync(file, 'partial');
    const past = new Date(Date.now() - 120_000);
    fs.utimesSync(file, past, past);
    return file;
  };
  const editJson = (file: string, edit: (json: { memories: Record<string, unknown> }) => void) => {
    const json = JSON.parse(fs.readFileSync(file, 'utf8')) as { memories: Record<string, unknown> };
    edit(json);
    fs.writeFileSync(file, toJsonText(json));
  };
  const archiveEntry = { topic: 'x', tags: [], archived_at: '2026-01-01T00:00:00.000Z', original_phase: 0, reason: 'forgotten' };

  /** One way to cause each kind of problem integrity.ts reports, and what the repair must leave. */
  const cases: Record<ProblemKind, { cause: () => void; after?: () => void }> = {
    temp_file: {
      cause: () => void oldTemp(),
      after: () => assert.deepEqual(h.mirror.tempFiles(), []),
    },
    invalid_file: {
      cause: () => fs.writeFileSync(path.join(h.paths.memories, 'mem_0badf00d.md'), '---\nid: [unclosed\n---\nA hand edit gone wrong.\n'),
      after: () => {
        const [moved, ...rest] = fs.readdirSync(h.paths.quarantine);
        assert.equal(rest.length, 0);
        assert.match(moved!, /mem_0badf00d\.md$/);
        assert.equal(fs.readFileSync(path.join(h.paths.quarantine, moved!), 'utf8'), '---\nid: [unclosed\n---\nA hand edit gone wrong.\n');
      },
    },
    duplicate_id: {
      cause: () => fs.copyFileSync(path.join(h.paths.memories, `${A}.md`), path.join(h.paths.memories, `${X}.md`)),
      after: () => {
        assert.ok(!fs.existsSync(path.join(h.paths.memories, `${X}.md`)));
        const copies = [...h.mirror.files.values()].filter((f) => f.memory.topic === `Topic ${A}`);
        assert.equal(copies.length, 2, 'the original and the copy under its own ID');
      },
    },
    id_mismatch: {
      cause: () => fs.writeFileSync(path.join(h.paths.memories, `${X}.md`), memoryText(testId(0x77), { topic: 'Renamed by hand' })),
      after: () => assert.equal([...h.mirror.files.values()].filter((f) => f.memory.topic === 'Renamed by hand').length, 1),
    },
    not_indexed: {
      cause: () => void writeMemory(h.paths.root, X, { topic: 'From another branch' }),
      after: () => assert.ok(h.index.ids.has(X)),
    },
    missing_file: {
      cause: () => fs.rmSync(path.join(h.paths.memories, `${B}.md`)),
      after: () => assert.ok(!h.index.ids.has(B)),
    },
    missing_full_text: {
      cause: () => {
        writeMemory(h.paths.root, B, { topic: `Topic ${B}`, content: 'Reduced.', tags: ['t'], phase: 1 });
      },
      after: () => assert.equal(fs.readFileSync(path.join(h.paths.archives, `${B}.md`), 'utf8'), h.mirror.files.get(B)!.raw),
    },
    archive_entry_active: {
      cause: () => editJson(h.paths.archiveIndex, (j) => (j.memories[A] = archiveEntry)),
      after: () => assert.ok(!h.mirror.archiveIndex.memories.has(A)),
    },
    archive_entry_without_file: {
      cause: () => editJson(h.paths.archiveIndex, (j) => (j.memories[X] = archiveEntry)),
      after: () => assert.ok(!h.mirror.archiveIndex.memories.has(X)),
    },
    orphaned_archive: {
      cause: () => void writeArchive(h.paths.root, X, { topic: 'Lost archive', tags: ['lost'], phase: 1 }),
      after: () => {
        const entry = h.mirror.archiveIndex.memories.get(X);
        assert.deepEqual({ ...entry, archived_at: '' }, { topic: 'Lost archive', tags: ['lost'], archived_at: '', original_phase: 1, reason: 'recovered' });
      },
    },
    orphaned_stats: {
      cause: () => editJson(h.paths.stats, (j) => (j.memories[X] = { access_count: 1, accessed_at: 'x', last_session: 1, priority: 0 })),
      after: () => assert.ok(!h.mirror.stats.has(X)),
    },
    index_stale: {
      cause: () => void writeMemory(h.paths.root, A, { topic: 'Edited by hand', content: `The lesson of ${A}.`, tags: ['t'] }),
      after: () => assert.equal(JSON.parse(fs.readFileSync(h.paths.index, 'utf8')).memories[A].topic, 'Edited by hand'),
    },
    index_conflicted: { cause: () => fs.writeFileSync(h.paths.index, '<<<<<<< HEAD\n{}\n=======\n{}\n>>>>>>> other\n') },
    index_unreadable: { cause: () => fs.writeFileSync(h.paths.index, '{ not json') },
    index_missing: { cause: () => fs.rmSync(h.paths.index) },
    archive_index_unreadable: {
      cause: () => fs.writeFileSync(h.paths.archiveIndex, 'nonsense'),
      after: () => assert.ok(h.mirror.archiveIndex.memories.has(testId(0xd)), 'the forgotten memory is listed again'),
    },
    stats_unreadable: { cause: () => fs.writeFileSync(h.paths.stats, '{"memories": [') },
    state_unreadable: {
      cause: () => fs.writeFileSync(h.paths.state, '{ broken state'),
      after: () => {
        const moved = fs.readdirSync(h.paths.quarantine);
        assert.equal(moved.length, 1);
        assert.equal(fs.readFileSync(path.join(h.paths.quarantine, moved[0]!), 'utf8'), '{ broken state');
      },
    },
    // A warning: a person's text, which fix leaves as it is (and which leaves the store healthy).
    unreadable_anchor: {
      cause: () => fs.writeFileSync(path.join(h.paths.memories, `${A}.md`), withBrokenAnchor(fs.readFileSync(path.join(h.paths.memories, `${A}.md`), 'utf8'))),
      after: () => {
        assert.match(fs.readFileSync(path.join(h.paths.memories, `${A}.md`), 'utf8'), /\nanchors:\n  - path: "\.\.\/outside\.ts"\n    hash: "poly64:0000000000000000"\n/, 'the entry is kept, byte for byte');
        assert.deepEqual(h.check().problems.map((p) => [p.kind, p.level]), [['unreadable_anchor', 'warning']], 'and still named');
      },
    },
  };

  beforeEach(() => {
    project = makeTempProject('ltm-repair-');
    h = repairHarness(project);
    healthyStore();
  });
  afterEach(() => {
    h.mirror.dispose();
    removeDir(project);
  });

  it('every kind of problem integrity.ts knows has a case here', () => {
    assert.deepEqual(Object.keys(cases).sort(), Object.keys(PROBLEM_TITLES).sort());
  });

  describe('repairProblems repairs each kind of problem; a re-check, also by a fresh process, is clean', () => {
    for (const [kind, { cause, after }] of Object.entries(cases) as [ProblemKind, (typeof cases)[ProblemKind]][]) {
      it(kind, () => {
        cause();
        const texts = textsUnder(h.paths.root, ['memories', 'archives']);
        const report = h.check();
        assert.ok(report.problems.some((p) => p.kind === kind), describeProblems(report));
        const actions = repairProblems(report, h.target);
        // One action per error; warnings are left for a person.
        assert.equal(actions.length, report.problems.filter((p) => p.level === 'error').length, actions.join('\n'));
        h.rewriteDerived(report);
        const again = h.check();
        assert.equal(again.healthy, true, `${describeProblems(again)}\nactions:\n${actions.join('\n')}`);
        const fresh = repairHarness(project);
        assert.equal(fresh.check().healthy, true, describeProblems(fresh.check()));
        fresh.mirror.dispose();
        after?.();
        // No memory's text was lost: each is still in memories/, archives/ or quarantine/.
        const left = [...textsUnder(h.paths.root, ['memories', 'archives', 'quarantine']).values()];
        for (const [file, text] of texts) assert.ok(left.some((t) => t.includes(text)), `the text of ${file} was lost`);
      });
    }
  });

  describe('orphaned archives', () => {
    it('are listed as restorable archived memories by default, deleted (and their ID kept as purged) with cleanArchives', () => {
      writeArchive(h.paths.root, X, { topic: 'Lost archive' });
      let report = h.check();
      repairProblems(report, h.target);
      assert.equal(h.mirror.archiveIndex.memories.get(X)?.reason, 'recovered');
      assert.ok(fs.existsSync(path.join(h.paths.archives, `${X}.md`)));

      const Y = testId(0x6b6b);
      writeArchive(h.paths.root, Y, { topic: 'Another lost archive' });
      report = h.check();
      const actions = repairProblems(report, h.target, { cleanArchives: true });
      assert.ok(actions.some((a) => a.includes(`Deleted orphaned archive ${Y}.md`)), actions.join('\n'));
      assert.ok(!fs.existsSync(path.join(h.paths.archives, `${Y}.md`)));
      assert.ok(h.mirror.archiveIndex.purged.has(Y), 'its ID is never given again');
      assert.ok(fs.existsSync(path.join(h.paths.archives, `${X}.md`)), 'a listed archive is not an orphan');
      assert.ok(fs.existsSync(path.join(h.paths.archives, `${testId(0xd)}.md`)));
    });
  });

  describe('many problems at once', () => {
    it('one pass repairs them all and loses no memory’s text', () => {
      for (const kind of ['invalid_file', 'duplicate_id', 'id_mismatch', 'not_indexed', 'missing_file', 'orphaned_archive', 'orphaned_stats', 'temp_file', 'state_unreadable'] as const) cases[kind].cause();
      const texts = textsUnder(h.paths.root, ['memories', 'archives']);
      const report = h.check();
      const actions = repairProblems(report, h.target);
      assert.equal(actions.length, report.problems.length);
      h.rewriteDerived(report);
      assert.equal(h.check().healthy, true, describeProblems(h.check()));
      const left = [...textsUnder(h.paths.root, ['memories', 'archives', 'quarantine']).values()];
      for (const [file, text] of texts) assert.ok(left.some((t) => t.includes(text)), `the text of ${file} was lost`);
    });
  });

  describe('fixStore', () => {
    it('repairs every problem on a store\'s parts in one pass, then writes index.json, stats.json and the archive index from the repaired memories', () => {
      for (const kind of ['invalid_file', 'duplicate_id', 'id_mismatch', 'not_indexed', 'missing_file', 'orphaned_archive', 'orphaned_stats', 'temp_file', 'state_unreadable'] as const) cases[kind].cause();
      const texts = textsUnder(h.paths.root, ['memories', 'archives']);
      // Another process's parts, as MemoryStore.fix finds the store (under the lock, refreshed).
      const parts = makeParts(project);
      try {
        const problems = h.check().problems.length;
        const { actions, report } = fixStore(parts);
        assert.equal(actions.length, problems);
        assert.equal(report.healthy, true, describeProblems(report));
        assert.equal(h.check().healthy, true, describeProblems(h.check()));
        const active = [...parts.mirror.files.keys()].sort();
        assert.deepEqual(memoryKeys(parts.paths.index), active);
        for (const id of Object.keys(statsOnDisk(parts.paths.root))) assert.ok(active.includes(id), `stats of ${id}, which is not active`);
        assert.ok(!fs.existsSync(path.join(parts.paths.root, 'stats.log')), 'stats.json whole again');
        const left = [...textsUnder(h.paths.root, ['memories', 'archives', 'quarantine']).values()];
        for (const [file, text] of texts) assert.ok(left.some((t) => t.includes(text)), `the text of ${file} was lost`);
      } finally {
        parts.mirror.dispose();
      }
    });
  });

  describe('integritySnapshot', () => {
    it('is the mirror and the index as last seen', () => {
      const snapshot = integritySnapshot(h.mirror, h.index);
      assert.equal(snapshot.files, h.mirror.files);
      assert.deepEqual([...snapshot.activeIds].sort(), [A, B, C]);
      assert.deepEqual([...snapshot.indexIds].sort(), [A, B, C]);
      assert.deepEqual([...snapshot.statsIds].sort(), [A, B, C]);
      assert.deepEqual([...snapshot.archiveFiles], [testId(0xd)]);
      assert.deepEqual([...snapshot.indexEntries.keys()].sort(), [A, B, C]);
      for (const status of [snapshot.indexStatus, snapshot.statsStatus, snapshot.stateStatus, snapshot.archiveIndexStatus]) assert.equal(status.kind, 'ok');
      assert.deepEqual(snapshot.tempFiles, []);
    });
  });
});
