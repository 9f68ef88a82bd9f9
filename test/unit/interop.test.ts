import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { splitFrontmatter } from '../../src/core/memoryFile';
import { MemoryStore } from '../../src/core/store';
import { NO_USAGE } from '../../src/core/usage';
import { statsOnDisk } from '../support/storeKit';

/**
 * A store written by the reference Python implementation (claude-ltm 0.2.5).
 * Every test works on a copy in a temporary directory; the fixture is never opened in place.
 */
const FIXTURE = path.join(__dirname, '..', 'fixtures', 'claude-ltm-0.2.5');
const FINAL = '.claude/ltm';
const STORES = [FINAL, 'snapshots/1-after-store', 'snapshots/2-after-evict-1', 'snapshots/3-after-evict-2', 'snapshots/4-after-evict-3'] as const;
const BROKEN = 'broken-example/.claude/ltm';
const PARSE_CACHE = 'parse-cache.json';

/** Every file under `dir`, by relative path (with `/`), as bytes. */
function readTree(dir: string, exclude: readonly string[] = []): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  const walk = (sub: string) => {
    for (const entry of fs.readdirSync(path.join(dir, sub), { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const rel = sub ? `${sub}/${entry.name}` : entry.name;
      if (exclude.includes(rel)) continue;
      if (entry.isDirectory()) walk(rel);
      else files.set(rel, fs.readFileSync(path.join(dir, rel)));
    }
  };
  walk('');
  return files;
}

function assertSameTree(after: Map<string, Buffer>, before: Map<string, Buffer>, what: string): void {
  assert.deepEqual([...after.keys()], [...before.keys()], `${what}: the set of files changed`);
  for (const [name, bytes] of before) {
    assert.ok(after.get(name)!.equals(bytes), `${what}: ${name} is not byte-identical`);
  }
}

const fixtureBefore = readTree(FIXTURE);

const temps: string[] = [];
const stores: MemoryStore[] = [];

/** Copies a store directory of the fixture to <tmp>/.claude/ltm and returns the project dir and store root. */
function copyStore(source: string): { project: string; root: string } {
  const project = fs.mkdtempSync(path.join(os.tmpdir(), 'ltm-interop-'));
  temps.push(project);
  const root = path.join(project, '.claude', 'ltm');
  fs.cpSync(path.join(FIXTURE, source), root, { recursive: true });
  return { project, root };
}

function open(project: string): MemoryStore {
  const store = MemoryStore.open(project);
  stores.push(store);
  return store;
}

interface ReferenceMemory {
  id: string;
  topic: string;
  tags: string[];
  phase: number;
  difficulty: number;
  created_at: string;
  created_session: number;
  body: string;
}

/**
 * Reads a file as the reference implementation writes it, independently of the
 * codec under test: `key: "string"` or `key: number`, tags as `  - item` lines.
 */
function readReferenceFile(text: string): ReferenceMemory {
  const lines = text.split('\n');
  assert.equal(lines[0], '---');
  const close = lines.indexOf('---', 1);
  assert.ok(close > 0, 'closing ---');
  const fields: Record<string, string | number> = {};
  const tags: string[] = [];
  for (const line of lines.slice(1, close)) {
    const item = /^ {2}- (.*)$/.exec(line);
    if (item) {
      tags.push(item[1]!);
      continue;
    }
    const pair = /^([a-z_]+): ?(.*)$/.exec(line);
    assert.ok(pair, `unexpected frontmatter line ${JSON.stringify(line)}`);
    const [, key, value] = pair;
    if (value === '') continue; // "tags:" header
    const quoted = /^"(.*)"$/.exec(value!);
    fields[key!] = quoted ? quoted[1]! : Number(value);
  }
  return {
    id: fields.id as string,
    topic: fields.topic as string,
    tags,
    phase: fields.phase as number,
    difficulty: fields.difficulty as number,
    created_at: fields.created_at as string,
    created_session: fields.created_session as number,
    body: lines.slice(close + 1).join('\n'),
  };
}

/** The summaries a reader must derive for the reference's bodies without sections. */
const DERIVED_SUMMARIES: Record<string, string> = {
  'curl to localhost resolved to ::1 and the container only bound IPv4, giving connection resets. Always use 127.0.0.1 in hook scripts.\n':
    'curl to localhost resolved to ::1 and the container only bound IPv4, giving connection resets.',
  'Team convention: ruff for linting and formatting; line length 100.\n': 'Team convention: ruff for linting and formatting; line length 100.',
  '*Abstract: Team convention: ruff for linting and formatting; line length 100.*\n\n*[Full content archived]*\n':
    '*Abstract: Team convention: ruff for linting and formatting; line length 100.*',
};

describe('interop with claude-ltm 0.2.5 stores', () => {
  afterEach(() => {
    for (const store of stores.splice(0)) store.dispose();
    for (const dir of temps.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
  });

  describe('reading every memory as the reference wrote it', () => {
    for (const source of STORES) {
      it(`${source}: topic, tags, phase, difficulty, created_at, created_session, summary and content match the file text`, async () => {
        const { project, root } = copyStore(source);
        const store = open(project);
        const names = fs.readdirSync(path.join(root, 'memories')).filter((n) => n.endsWith('.md')).sort();
        assert.ok(names.length >= 2);
        const listed = store.list({ limit: 100 });
        assert.deepEqual(listed.memories.map((m) => m.id).sort(), names.map((n) => n.slice(0, -3)));
        assert.equal(listed.total, names.length);

        for (const name of names) {
          const text = fs.readFileSync(path.join(root, 'memories', name), 'utf8');
          const ref = readReferenceFile(text);
          assert.equal(`${ref.id}.md`, name);
          const memory = await store.get(ref.id, { countAccess: false });
          assert.equal(memory.id, ref.id);
          assert.equal(memory.topic, ref.topic);
          assert.deepEqual(memory.tags, ref.tags);
          assert.equal(memory.phase, ref.phase);
          assert.equal(memory.difficulty, ref.difficulty);
          assert.equal(memory.created_at, ref.created_at);
          assert.equal(typeof memory.created_at, 'string');
          assert.equal(memory.created_session, ref.created_session);

          const sectioned = /^## Summary\n([\s\S]*?)\n\n## Content\n([\s\S]*)\n$/.exec(ref.body);
          if (sectioned) {
            assert.equal(memory.hasSections, true, `${ref.id} has sections`);
            assert.equal(memory.summary, sectioned[1]);
            assert.equal(memory.content, sectioned[2]);
          } else {
            assert.equal(memory.hasSections, false, `${ref.id} has no sections`);
            assert.equal(memory.content, ref.body.replace(/\n$/, ''), `${ref.id}: the content is the body`);
            const expected = DERIVED_SUMMARIES[ref.body];
            assert.ok(expected !== undefined, `no expected summary for the body of ${ref.id}`);
            assert.equal(memory.summary, expected, `${ref.id}: the summary is the first sentence`);
            assert.ok(memory.content.startsWith(memory.summary));
          }
        }
      });
    }

    it('reads the values of the final store exactly (spot checks)', async () => {
      const { project } = copyStore(FINAL);
      const store = open(project);
      const pool = await store.get('mem_db545e7e', { countAccess: false });
      assert.equal(pool.topic, 'Fix postgres connection pool exhaustion');
      assert.deepEqual(pool.tags, ['py', 'postgres']);
      assert.equal(pool.difficulty, 0.131056);
      assert.equal(pool.created_at, '2026-11-22T05:09:09.117707+00:00');
      assert.equal(pool.created_session, 2);
      assert.equal(pool.summary, 'Pool of 10 was exhausted by batch jobs; raised to 50 with 60s timeout.');
      assert.equal(
        pool.content,
        '### Problem\nBatch jobs opened connections faster than they were returned.\n\n### Solution\nRaise pool size, add timeout, close cursors in finally blocks (see db/pool.py).',
      );
      const curl = await store.get('mem_56b2d1cd', { countAccess: false });
      assert.equal(curl.topic, 'Use 127.0.0.1 not localhost for hook curl');
      assert.equal(curl.created_at, '2026-11-22T05:09:09.118530+00:00');
      assert.equal(curl.phase, 0);
      assert.equal(curl.difficulty, 0.8);
      assert.equal(curl.hasSections, false);
      assert.equal(curl.summary, 'curl to localhost resolved to ::1 and the container only bound IPv4, giving connection resets.');
    });
  });

  describe('reading changes nothing', () => {
    for (const source of [...STORES, BROKEN]) {
      it(`${source}: open, list, search, get with countAccess:false, status and check leave every file byte-identical`, async () => {
        const { project, root } = copyStore(source);
        const before = readTree(root);
        assert.ok(before.size > 0);
        const store = open(project);
        const { memories } = store.list({ limit: 100 });
        assert.ok(memories.length > 0);
        store.list({ phase: 3 });
        store.list({ tag: 'postgres' });
        store.search('ruff');
        store.search('postgres pool', { scope: 'all' });
        store.search('ruff', { scope: 'archives' });
        for (const m of memories) {
          await store.get(m.id, { countAccess: false });
          store.peek(m.id);
        }
        store.status();
        store.check();
        // A second process opening the same store (with the parse cache now present).
        const again = open(project);
        again.list();
        again.search('curl');
        assertSameTree(readTree(root, [PARSE_CACHE]), before, source);
      });
    }
  });

  describe('usage counters (LTM’s own) in a reference store', () => {
    it('its stats read as never used; what LTM writes keeps the reference’s four fields first, with their types, in every entry', async () => {
      const { project, root } = copyStore(FINAL);
      const store = open(project);
      const ids = store.list({ limit: 100 }).memories.map((m) => m.id);
      for (const id of ids) assert.deepEqual(store.peek(id).usage, NO_USAGE);
      await store.recordUsageBySession(new Map([[3, { injected: ids }]]));
      await store.recordRecalls([ids[0]!]);
      await store.get(ids[0]!);
      // What a server leaves when it stops: the stats journal written into stats.json.
      await store.compactStats();
      const memories = (JSON.parse(fs.readFileSync(path.join(root, 'stats.json'), 'utf8')) as { version: number; memories: Record<string, Record<string, unknown>> }).memories;
      for (const id of ids) {
        const entry = memories[id]!;
        // The reference reads entries as dictionaries (`.get("access_count", 0)`) and updates them in place: added keys are kept by it and harmless.
        assert.deepEqual(Object.keys(entry).slice(0, 4), ['access_count', 'accessed_at', 'last_session', 'priority']);
        assert.deepEqual([typeof entry.access_count, typeof entry.accessed_at, typeof entry.last_session, typeof entry.priority], ['number', 'string', 'number', 'number']);
        assert.equal(entry.injected_sessions, 1);
      }
      assert.deepEqual([memories[ids[0]!]!.recall_count, memories[ids[0]!]!.read_count], [1, 1]);
    });
  });

  describe('the stats journal (stats.log) in a reference store', () => {
    it('with changes pending in the journal, every file the reference reads is still a valid store of its format, and the journal is git-ignored', async () => {
      const { project, root } = copyStore(FINAL);
      const store = open(project);
      const ids = store.list({ limit: 100 }).memories.map((m) => m.id);
      await store.get(ids[0]!);
      await store.store({ topic: 'Journal pending', content: 'Stored while the stats journal holds changes.' });
      await store.recordAccesses(ids);
      assert.ok(fs.existsSync(path.join(root, 'stats.log')), 'changes wait in the journal');
      // stats.json as the reference reads it: a dictionary of entries with its four fields, each with its type.
      const statsJson = JSON.parse(fs.readFileSync(path.join(root, 'stats.json'), 'utf8')) as { memories: Record<string, Record<string, unknown>> };
      for (const entry of Object.values(statsJson.memories)) {
        assert.deepEqual([typeof entry.access_count, typeof entry.accessed_at, typeof entry.last_session, typeof entry.priority], ['number', 'string', 'number', 'number']);
      }
      // index.json lists every memory file, and every memory file reads as the reference writes it.
      const index = JSON.parse(fs.readFileSync(path.join(root, 'index.json'), 'utf8')) as { memories: Record<string, unknown> };
      const files = fs.readdirSync(path.join(root, 'memories')).filter((n) => n.endsWith('.md'));
      assert.deepEqual(Object.keys(index.memories).sort(), files.map((n) => n.slice(0, -3)).sort());
      for (const name of files) readReferenceFile(fs.readFileSync(path.join(root, 'memories', name), 'utf8'));
      assert.match(fs.readFileSync(path.join(root, '.gitignore'), 'utf8'), /^stats\.log$/m);
      // LTM itself reads the journal: every access counted.
      const fresh = MemoryStore.open(project);
      stores.push(fresh);
      assert.equal(fresh.peek(ids[0]!).access_count, store.peek(ids[0]!).access_count);
      assert.equal(statsOnDisk(root)[ids[1]!]!.access_count, store.peek(ids[1]!).access_count);
    });
  });

  describe('a derived summary is not written back until the memory is edited', () => {
    it('get() counts an access in stats.json but leaves the memory file byte-identical; updateSummary() gives it sections', async () => {
      const { project, root } = copyStore(FINAL);
      const file = path.join(root, 'memories', 'mem_56b2d1cd.md');
      const original = fs.readFileSync(file);
      const others = readTree(path.join(root, 'memories'), ['mem_56b2d1cd.md']);
      const statsBefore = fs.readFileSync(path.join(root, 'stats.json'), 'utf8');
      const store = open(project);

      const view = await store.get('mem_56b2d1cd');
      assert.equal(view.access_count, 2);
      // The access is in the stats journal; stats.json (what the reference reads) gets it at compaction.
      assert.equal(fs.readFileSync(path.join(root, 'stats.json'), 'utf8'), statsBefore, 'get() appends to the journal');
      assert.equal(statsOnDisk(root).mem_56b2d1cd!.access_count, 2);
      await store.compactStats();
      const statsAfter = fs.readFileSync(path.join(root, 'stats.json'), 'utf8');
      assert.notEqual(statsAfter, statsBefore, 'compaction writes stats.json');
      assert.equal((JSON.parse(statsAfter) as { memories: Record<string, { access_count: number }> }).memories.mem_56b2d1cd!.access_count, 2);
      assert.ok(fs.readFileSync(file).equals(original), 'the memory file is byte-identical after get()');
      assert.equal(view.hasSections, false);

      const originalText = original.toString('utf8');
      const { body: oldBody } = splitFrontmatter(originalText);
      const head = originalText.slice(0, originalText.length - oldBody.length);
      const oldContent = oldBody.replace(/\n$/, '');
      const updated = await store.updateSummary('mem_56b2d1cd', 'Use 127.0.0.1, not localhost, in hook scripts.');
      const text = fs.readFileSync(file, 'utf8');
      assert.ok(text.startsWith(head), 'the frontmatter is byte-identical');
      assert.equal(text.slice(head.length), `\n## Summary\nUse 127.0.0.1, not localhost, in hook scripts.\n\n## Content\n${oldContent}\n`);
      assert.equal(updated.hasSections, true);
      assert.equal(updated.summary, 'Use 127.0.0.1, not localhost, in hook scripts.');
      assert.equal(updated.content, oldContent);
      const reopened = await open(project).get('mem_56b2d1cd', { countAccess: false });
      assert.equal(reopened.hasSections, true);
      assert.equal(reopened.summary, 'Use 127.0.0.1, not localhost, in hook scripts.');
      assert.equal(reopened.content, oldContent);
      assertSameTree(readTree(path.join(root, 'memories'), ['mem_56b2d1cd.md']), others, 'the other memory files');
    });
  });

  describe('the archived memory mem_4a55fb98 of the final store', () => {
    it('is found by search in the archives and listed at phase 3', () => {
      const { project } = copyStore(FINAL);
      const store = open(project);
      const hits = store.search('ruff', { scope: 'archives' });
      const hit = hits.find((h) => h.id === 'mem_4a55fb98');
      assert.ok(hit, `search found ${JSON.stringify(hits.map((h) => h.id))}`);
      assert.equal(hit.archived, true);
      assert.equal(hit.phase, 3);
      assert.equal(hit.topic, 'Prefer ruff over flake8');
      assert.deepEqual(
        store.search('ruff').map((h) => h.id),
        [],
        'the active scope does not contain the archived memory',
      );
      const listed = store.list({ phase: 3 });
      assert.deepEqual(listed.memories.map((m) => m.id), ['mem_4a55fb98']);
      assert.equal(listed.memories[0]!.topic, 'Prefer ruff over flake8');
      assert.deepEqual(listed.memories[0]!.tags, ['conventions']);
      assert.ok(!store.list().memories.some((m) => m.id === 'mem_4a55fb98'));
    });

    it('restore() brings it back at phase 0 with its original body byte-for-byte', async () => {
      const { project, root } = copyStore(FINAL);
      const archiveText = fs.readFileSync(path.join(root, 'archives', 'mem_4a55fb98.md'), 'utf8');
      const store = open(project);
      const restored = await store.restore('mem_4a55fb98');
      assert.equal(restored.phase, 0);
      assert.equal(restored.topic, 'Prefer ruff over flake8');
      assert.deepEqual(restored.tags, ['conventions']);
      assert.equal(restored.created_at, '2026-11-22T05:09:09.119350+00:00');
      assert.equal(restored.content, 'Team convention: ruff for linting and formatting; line length 100.');

      const text = fs.readFileSync(path.join(root, 'memories', 'mem_4a55fb98.md'), 'utf8');
      assert.equal(splitFrontmatter(text).body, splitFrontmatter(archiveText).body, 'the body is the archive body, byte for byte');
      assert.match(splitFrontmatter(text).frontmatter, /^phase: 0$/m);
      assert.ok(store.list().memories.some((m) => m.id === 'mem_4a55fb98'));
      assert.equal(store.list({ phase: 3 }).total, 0);
      assert.equal((await open(project).get('mem_4a55fb98', { countAccess: false })).phase, 0);
      assert.equal(store.check().healthy, true);
    });
  });

  describe('check()', () => {
    it('reports the final interop store healthy: the archive of an evicted memory is not an orphan', () => {
      const { project } = copyStore(FINAL);
      const report = open(project).check();
      assert.deepEqual(report.problems, []);
      assert.equal(report.healthy, true);
      assert.equal(report.counts.archived_memories, 1);
    });

    for (const source of STORES.slice(1)) {
      it(`reports ${source} healthy`, () => {
        const { project } = copyStore(source);
        const report = open(project).check();
        assert.deepEqual(report.problems, []);
      });
    }

    it('reports exactly the damage of the broken example, and not the archive of mem_4a55fb98', () => {
      const { project } = copyStore(BROKEN);
      const report = open(project).check();
      assert.equal(report.healthy, false);
      assert.deepEqual(
        report.problems.map((p) => `${p.kind} ${p.id}`).sort(),
        ['missing_file mem_missing1', 'not_indexed mem_deadbeef', 'orphaned_stats mem_statonly'],
      );
      assert.ok(!report.problems.some((p) => p.kind === 'orphaned_archive'));
    });
  });

  // Suites run in order after the tests of their parent: this one runs last.
  describe('the fixture', () => {
    it('was left untouched by all of the above', () => {
      assertSameTree(readTree(FIXTURE), fixtureBefore, 'the fixture');
    });
  });
});
