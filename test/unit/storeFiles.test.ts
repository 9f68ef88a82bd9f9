import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import fc from 'fast-check';
import { toJsonText } from '../../src/core/files';
import { DEFAULT_CONFIG, STALE_MEMORY_MODES, type ArchiveEntry, type MemoryMeta, type SessionCounters } from '../../src/core/model';
import {
  GITIGNORE_LINES,
  GITIGNORE_TEXT,
  archiveIndexJson,
  defaultState,
  indexEntryOf,
  initStoreFiles,
  jsonObjectOf,
  readArchiveIndex,
  readIndexEntries,
  readIndexIds,
  readState,
  readStats,
  readStatsBySchema,
  STATS_KEYS,
  stateJson,
  statsEntryJson,
  storePaths,
  type ArchiveIndex,
  type JsonFileStatus,
  type StoreState,
} from '../../src/core/storeFiles';
import { makeTempProject, removeDir } from '../support/storeKit';

const PROTO_KEYS = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf'] as const;
const CONFLICTED = '{\n<<<<<<< HEAD\n  "memories": {}\n=======\n  "memories": {"mem_00000001": {}}\n>>>>>>> theirs\n}\n';

/** Every reader, with the empty value it answers when the file cannot be used. */
const READERS = [
  ['readIndexIds', (t: string | null) => readIndexIds(t)],
  ['readStats', (t: string | null) => readStats(t)],
  ['readArchiveIndex', (t: string | null) => readArchiveIndex(t)],
  ['readState', (t: string | null) => readState(t)],
] as const;

/** Object.prototype's own keys, to show that reading leaves it as it was. */
function prototypeSnapshot(): string[] {
  return Reflect.ownKeys(Object.prototype).map(String).sort();
}

function session(n: number, over: Partial<SessionCounters> = {}): SessionCounters {
  return { number: n, started_at: `2026-01-0${n}T00:00:00.000Z`, last_activity: `2026-01-0${n}T01:00:00.000Z`, tool_successes: n, tool_failures: 0, compacted: false, ...over };
}

describe('storeFiles', () => {
  describe('storePaths', () => {
    it('lays out a store under <project>/.claude/ltm, with the project resolved', () => {
      const project = path.resolve('some', 'where', '..', 'project');
      const p = storePaths(path.join('some', 'where', '..', 'project'));
      const root = path.join(project, '.claude', 'ltm');
      assert.deepEqual(p, {
        project,
        root,
        memories: path.join(root, 'memories'),
        archives: path.join(root, 'archives'),
        quarantine: path.join(root, 'quarantine'),
        index: path.join(root, 'index.json'),
        indexPending: path.join(root, 'index-pending.json'),
        archiveIndex: path.join(root, 'archive_index.json'),
        stats: path.join(root, 'stats.json'),
        statsJournal: path.join(root, 'stats.log'),
        state: path.join(root, 'state.json'),
        gitignore: path.join(root, '.gitignore'),
        lock: path.join(root, '.lock'),
        parseCache: path.join(root, 'parse-cache.json'),
        searchIndex: path.join(root, 'search-index.bin'),
        server: path.join(root, 'server.json'),
      });
    });
  });

  describe('.gitignore', () => {
    it('ignores every per-machine file of the layout, temporary files and quarantine/, and nothing shared through git', () => {
      const p = storePaths('/project');
      for (const file of [p.stats, p.state, p.server, p.parseCache, p.lock]) {
        assert.ok((GITIGNORE_LINES as readonly string[]).includes(path.basename(file)), `${path.basename(file)} is ignored`);
      }
      for (const line of ['server-identity.json', '*.ltm-tmp', 'quarantine/']) assert.ok((GITIGNORE_LINES as readonly string[]).includes(line), line);
      for (const shared of ['index.json', 'archive_index.json', 'memories', 'memories/', 'archives', 'archives/', '*', '*.md', '*.json']) {
        assert.ok(!(GITIGNORE_LINES as readonly string[]).includes(shared), `${shared} is not ignored`);
      }
    });

    it('is a comment line, then one pattern a line, ending with a newline', () => {
      const lines = GITIGNORE_TEXT.split('\n');
      assert.match(lines[0]!, /^# LTM: /);
      assert.deepEqual(lines.slice(1), [...GITIGNORE_LINES, '']);
    });

    it('initStoreFiles creates memories/, archives/ and the .gitignore, adds only missing lines to an older one, and reads no memory', () => {
      const project = makeTempProject('ltm-init-files-');
      try {
        const p = storePaths(project);
        initStoreFiles(p);
        assert.ok(fs.statSync(p.memories).isDirectory() && fs.statSync(p.archives).isDirectory());
        assert.equal(fs.readFileSync(p.gitignore, 'utf8'), GITIGNORE_TEXT);
        // An older version's .gitignore, with a line of its own and a memory file that is not one.
        fs.writeFileSync(p.gitignore, `# mine\nnotes.txt\n${GITIGNORE_LINES[0]}\n`);
        fs.writeFileSync(path.join(p.memories, 'mem_00000001.md'), 'not a memory');
        initStoreFiles(p);
        const lines = fs.readFileSync(p.gitignore, 'utf8').split('\n');
        assert.deepEqual(lines.slice(0, 3), ['# mine', 'notes.txt', GITIGNORE_LINES[0]]);
        assert.deepEqual(lines.slice(3), [...GITIGNORE_LINES.slice(1), '']);
        assert.deepEqual(fs.readdirSync(p.root).sort(), ['.gitignore', 'archives', 'memories']);
      } finally {
        removeDir(project);
      }
    });
  });

  describe('reading: status', () => {
    for (const [name, read] of READERS) {
      it(`${name}: a missing file is "missing", conflict markers are "conflicted", bad JSON is "unreadable" naming the parse error`, () => {
        const missing = read(null);
        assert.deepEqual(missing.status, { kind: 'missing' });
        assert.deepEqual(read(CONFLICTED).status, { kind: 'conflicted' });
        const bad = read('{"memories": {');
        assert.equal(bad.status.kind, 'unreadable');
        assert.match((bad.status as { reason: string }).reason, /^not valid JSON \(.+\)$/);
        // The value of an unusable file is the empty one.
        assert.deepEqual(read(CONFLICTED).value, missing.value);
        assert.deepEqual(bad.value, missing.value);
      });

      it(`${name}: a file that is not a JSON object is "unreadable", naming the file`, () => {
        for (const text of ['[]', 'null', '42', '"text"']) {
          const result = read(text);
          assert.equal(result.status.kind, 'unreadable', text);
          assert.match((result.status as { reason: string }).reason, /^file: .*expected object/, text);
        }
      });
    }

    it('reports a wrong shape naming the field that has it', () => {
      const reason = (status: JsonFileStatus) => (status.kind === 'unreadable' ? status.reason : `(${status.kind})`);
      assert.equal(reason(readIndexIds('{"memories": []}').status), 'memories: expected an object');
      assert.equal(reason(readIndexIds('{"version": 1}').status), 'memories: expected an object');
      assert.equal(reason(readStats('{"memories": null}').status), 'memories: expected an object');
      assert.match(reason(readStats('{"memories": {"mem_00000001": {"access_count": 1}, "mem_00000002": "often"}}').status), /^memories\.mem_00000002: .*expected object/);
      assert.match(reason(readArchiveIndex('{"memories": {"mem_00000003": 7}}').status), /^memories\.mem_00000003: /);
      assert.equal(reason(readArchiveIndex('{"memories": {}, "purged": []}').status), 'purged: expected an object');
      assert.match(reason(readArchiveIndex('{"memories": {}, "purged": {"mem_00000004": true}}').status), /^purged\.mem_00000004: /);
      // And the value is then the empty one, not a part of the file.
      assert.equal(readStats('{"memories": {"mem_00000001": {"access_count": 1}, "mem_00000002": "often"}}').value.size, 0);
    });

    it('a conflict marker must start a line to count; JSON that only mentions one is read', () => {
      const result = readIndexIds('{"memories": {"mem_00000001": {"topic": "<<<<<<< not a marker"}}}');
      assert.deepEqual(result.status, { kind: 'ok' });
      assert.deepEqual([...result.value], ['mem_00000001']);
    });
  });

  describe('readIndexIds / readIndexEntries', () => {
    it('reads the IDs of index.json and what it says of each, whatever the entries hold', () => {
      const text = JSON.stringify({ version: 1, memories: { mem_00000002: { topic: 'b', tags: ['x'] }, mem_00000001: 5 }, tag_index: { x: ['mem_00000002'] } });
      const ids = readIndexIds(text);
      assert.deepEqual(ids.status, { kind: 'ok' });
      assert.deepEqual([...ids.value], ['mem_00000002', 'mem_00000001']);
      assert.deepEqual(
        [...readIndexEntries(text)],
        [
          ['mem_00000002', { topic: 'b', tags: ['x'] }],
          ['mem_00000001', 5],
        ],
      );
      assert.equal(readIndexEntries(null).size, 0);
      assert.equal(readIndexEntries('[').size, 0);
    });

    it('reads `__proto__`, `constructor`, `toString` as ordinary IDs and leaves Object.prototype untouched', () => {
      const before = prototypeSnapshot();
      const text = '{"memories": {"__proto__": {"polluted": true}, "constructor": {"topic": "c"}, "toString": 1, "mem_00000001": {}}}';
      assert.deepEqual([...readIndexIds(text).value], ['__proto__', 'constructor', 'toString', 'mem_00000001']);
      const entries = readIndexEntries(text);
      assert.deepEqual(entries.get('__proto__'), { polluted: true });
      assert.deepEqual(entries.get('constructor'), { topic: 'c' });
      assert.equal(entries.get('toString'), 1);
      assert.equal(({} as Record<string, unknown>).polluted, undefined);
      assert.deepEqual(prototypeSnapshot(), before);
    });
  });

  describe('readStats', () => {
    it('reads each memory’s stats', () => {
      const result = readStats('{"version": 1, "memories": {"mem_00000001": {"access_count": 3, "accessed_at": "2026-01-01T00:00:00.000Z", "last_session": 4, "priority": 0.61}}}');
      assert.deepEqual(result.status, { kind: 'ok' });
      assert.deepEqual([...result.value], [['mem_00000001', { access_count: 3, accessed_at: '2026-01-01T00:00:00.000Z', last_session: 4, priority: 0.61 }]]);
    });

    it('replaces a single bad or missing field by its default and keeps the rest (status ok)', () => {
      const result = readStats('{"memories": {"mem_00000001": {"access_count": -1, "accessed_at": 5, "last_session": 1.5, "priority": "high", "extra": 1}, "mem_00000002": {"access_count": 2}}}');
      assert.deepEqual(result.status, { kind: 'ok' });
      assert.deepEqual(result.value.get('mem_00000001'), { access_count: 0, accessed_at: '', last_session: 0, priority: 0 });
      assert.deepEqual(result.value.get('mem_00000002'), { access_count: 2, accessed_at: '', last_session: 0, priority: 0 });
    });

    it('reads memories named like Object.prototype’s keys as ordinary entries', () => {
      const before = prototypeSnapshot();
      const entries = PROTO_KEYS.map((k, i) => `"${k}": {"access_count": ${i + 1}, "accessed_at": "t", "last_session": 1, "priority": 0.5}`);
      const result = readStats(`{"memories": {${entries.join(', ')}}}`);
      assert.deepEqual(result.status, { kind: 'ok' });
      assert.deepEqual([...result.value.keys()], [...PROTO_KEYS]);
      assert.deepEqual(result.value.get('__proto__'), { access_count: 1, accessed_at: 't', last_session: 1, priority: 0.5 });
      assert.equal(result.value.get('valueOf')!.access_count, 5);
      assert.deepEqual(prototypeSnapshot(), before);
    });

    it('reads any file as the schema alone does: the fast path for well-formed entries changes nothing', () => {
      // Values the schema keeps, corrects or rejects, mixed in every field, counters present or absent.
      const anyValue = fc.oneof(fc.nat(), fc.integer({ min: -3, max: 3 }), fc.double(), fc.constant(2 ** 60), fc.string(), fc.constant(null), fc.boolean(), fc.constant([]));
      const field = (good: fc.Arbitrary<unknown>) => fc.option(fc.oneof({ weight: 4, arbitrary: good }, { weight: 1, arbitrary: anyValue }), { nil: undefined, freq: 3 });
      const entry = fc.record({
        access_count: field(fc.nat()),
        accessed_at: field(fc.string()),
        last_session: field(fc.nat()),
        priority: field(fc.double({ noNaN: true, noDefaultInfinity: true })),
        injected_sessions: field(fc.nat()),
        last_injected_session: field(fc.nat()),
        offer_count: field(fc.nat()),
        recall_count: field(fc.nat()),
        read_count: field(fc.nat()),
        last_used_session: field(fc.nat()),
        last_used_at: field(fc.string()),
        extra: field(fc.nat()),
      });
      // The schema gives its keys in its own order, whatever the file's: some entries are written in another.
      const anyOrder = fc.tuple(entry, fc.boolean()).map(([fields, reversed]) => (reversed ? Object.fromEntries(Object.entries(fields).reverse()) : fields));
      const key = fc.oneof(fc.constantFrom(...PROTO_KEYS), fc.string());
      fc.assert(
        fc.property(fc.dictionary(key, fc.oneof({ weight: 8, arbitrary: anyOrder }, { weight: 1, arbitrary: anyValue })), (memories) => {
          const text = JSON.stringify({ memories });
          const fast = readStats(text);
          const schema = readStatsBySchema(text);
          assert.deepStrictEqual(fast.status, schema.status);
          assert.deepStrictEqual([...fast.value], [...schema.value]);
          assert.equal(JSON.stringify([...fast.value]), JSON.stringify([...schema.value]));
        }),
        { numRuns: 300 },
      );
    });

    it('reads a file LTM wrote with any one field of one entry edited by hand as the schema alone does', () => {
      // Mostly well-formed files, so that the fast path reads them, and each field's check is what decides.
      const anyValue = fc.oneof(fc.integer({ min: -3, max: 3 }), fc.double(), fc.constant(2 ** 60), fc.string(), fc.constant(null), fc.boolean(), fc.constant([]));
      const good = {
        access_count: fc.nat(),
        accessed_at: fc.string(),
        last_session: fc.nat(),
        priority: fc.double({ noNaN: true, noDefaultInfinity: true }),
        injected_sessions: fc.nat(),
        last_injected_session: fc.nat(),
        offer_count: fc.nat(),
        recall_count: fc.nat(),
        read_count: fc.nat(),
        last_used_session: fc.nat(),
        last_used_at: fc.string(),
      };
      // Every key the schema reads: a key added to it without a check of its own in wellFormedStats must fail here.
      assert.deepEqual(Object.keys(good), STATS_KEYS);
      const entry = fc.record(good, { requiredKeys: ['access_count', 'accessed_at', 'last_session', 'priority'] });
      const edit = fc.record({ at: fc.nat(), field: fc.constantFrom(...Object.keys(good), 'extra'), value: anyValue, kind: fc.constantFrom('set', 'delete', 'reverse') });
      fc.assert(
        fc.property(fc.dictionary(fc.string(), entry, { minKeys: 1, maxKeys: 6 }), fc.option(edit, { nil: undefined }), (memories, change) => {
          if (change) {
            const id = Object.keys(memories)[change.at % Object.keys(memories).length]!;
            const fields: Record<string, unknown> = { ...memories[id] };
            if (change.kind === 'set') fields[change.field] = change.value;
            else if (change.kind === 'delete') delete fields[change.field];
            memories[id] = (change.kind === 'reverse' ? Object.fromEntries(Object.entries(fields).reverse()) : fields) as (typeof memories)[string];
          }
          const text = toJsonText({ version: 1, memories });
          const fast = readStats(text);
          const schema = readStatsBySchema(text);
          assert.deepStrictEqual(fast.status, schema.status);
          assert.equal(JSON.stringify([...fast.value]), JSON.stringify([...schema.value]));
          assert.deepStrictEqual([...fast.value], [...schema.value]);
        }),
        { numRuns: 500 },
      );
    });

    it('statsEntryJson writes exactly the four fields, in order', () => {
      const withExtra = { priority: 0.5, last_session: 2, accessed_at: 'a', access_count: 1, extra: true } as unknown as Parameters<typeof statsEntryJson>[0];
      assert.deepEqual(Object.keys(statsEntryJson(withExtra)), ['access_count', 'accessed_at', 'last_session', 'priority']);
      assert.deepEqual(statsEntryJson(withExtra), { access_count: 1, accessed_at: 'a', last_session: 2, priority: 0.5 });
    });
  });

  describe('readArchiveIndex / archiveIndexJson', () => {
    const entry = (topic: string, over: Partial<ArchiveEntry> = {}): ArchiveEntry => ({ topic, tags: ['t'], archived_at: '2026-02-01T00:00:00.000Z', original_phase: 2, reason: 'eviction', ...over });

    it('reads entries and purged IDs; a file without `purged` has none', () => {
      const result = readArchiveIndex(JSON.stringify({ version: 1, memories: { mem_00000001: entry('one') }, purged: { mem_00000009: { purged_at: 'p' } } }));
      assert.deepEqual(result.status, { kind: 'ok' });
      assert.deepEqual([...result.value.memories], [['mem_00000001', entry('one')]]);
      assert.deepEqual([...result.value.purged], [['mem_00000009', { purged_at: 'p' }]]);
      const noPurged = readArchiveIndex('{"memories": {}}');
      assert.deepEqual(noPurged.status, { kind: 'ok' });
      assert.equal(noPurged.value.purged.size, 0);
      assert.equal(readArchiveIndex(null).value.purged.size, 0);
    });

    it('replaces single bad fields by lenient defaults (reason "recovered", phase 0) and keeps the entry', () => {
      const result = readArchiveIndex('{"memories": {"mem_00000001": {"topic": 1, "tags": ["a", 2], "archived_at": null, "original_phase": 4, "reason": "deleted"}, "mem_00000002": {"original_phase": 3, "reason": "forgotten"}}, "purged": {"mem_00000003": {"purged_at": 5}}}');
      assert.deepEqual(result.status, { kind: 'ok' });
      assert.deepEqual(result.value.memories.get('mem_00000001'), { topic: '', tags: [], archived_at: '', original_phase: 0, reason: 'recovered' });
      assert.deepEqual(result.value.memories.get('mem_00000002'), { topic: '', tags: [], archived_at: '', original_phase: 3, reason: 'forgotten' });
      assert.deepEqual(result.value.purged.get('mem_00000003'), { purged_at: '' });
    });

    it('writes version 1, then memories and purged with sorted keys and fields in a fixed order; no `purged` when there is none', () => {
      const index: ArchiveIndex = {
        memories: new Map([
          ['mem_0000000b', { reason: 'forgotten', original_phase: 0, archived_at: 'b', tags: [], topic: 'B' } as ArchiveEntry],
          ['mem_0000000a', entry('A')],
        ]),
        purged: new Map([
          ['mem_000000ff', { purged_at: 'y' }],
          ['mem_000000ee', { purged_at: 'x' }],
        ]),
      };
      const json = archiveIndexJson(index) as Record<string, Record<string, Record<string, unknown>>>;
      assert.deepEqual(Object.keys(json), ['version', 'memories', 'purged']);
      assert.equal(json.version as unknown, 1);
      assert.deepEqual(Object.keys(json.memories!), ['mem_0000000a', 'mem_0000000b']);
      assert.deepEqual(Object.keys(json.memories!.mem_0000000b!), ['topic', 'tags', 'archived_at', 'original_phase', 'reason']);
      assert.deepEqual(Object.keys(json.purged!), ['mem_000000ee', 'mem_000000ff']);
      assert.deepEqual(Object.keys(archiveIndexJson({ memories: new Map(), purged: new Map() }) as object), ['version', 'memories']);
    });

    it('round-trips through readArchiveIndex, IDs named like Object.prototype’s keys included', () => {
      const before = prototypeSnapshot();
      const index: ArchiveIndex = {
        memories: new Map([...PROTO_KEYS.map((k, i) => [k, entry(`topic ${i}`)] as const), ['mem_00000001', entry('plain', { reason: 'legacy', original_phase: 1 })]]),
        purged: new Map([['__proto__', { purged_at: 'gone' }]]),
      };
      const text = toJsonText(archiveIndexJson(index));
      assert.match(text, /\n {4}"__proto__": \{\n/);
      const back = readArchiveIndex(text);
      assert.deepEqual(back.status, { kind: 'ok' });
      assert.deepEqual(new Map([...back.value.memories].sort()), new Map([...index.memories].sort()));
      assert.deepEqual(back.value.purged, index.purged);
      assert.equal(toJsonText(archiveIndexJson(back.value)), text, 'writing what was read gives the same bytes');
      assert.deepEqual(prototypeSnapshot(), before);
    });
  });

  describe('readState / stateJson', () => {
    it('reads a state.json, keeping keys this version does not know', () => {
      const text = JSON.stringify({
        version: 1,
        session_count: 5,
        sessions: { 'abc-123': session(5, { compacted: true }) },
        compaction_count: 2,
        last_eviction: '2026-03-01T00:00:00.000Z',
        config: { max_memories: 50, memories_to_load: 4, eviction_batch_size: 3, future_option: 'x' },
        current_session: 'abc-123',
      });
      const { value, status } = readState(text);
      assert.deepEqual(status, { kind: 'ok' });
      assert.equal(value.session_count, 5);
      assert.deepEqual([...value.sessions], [['abc-123', session(5, { compacted: true })]]);
      assert.equal(value.compaction_count, 2);
      assert.equal(value.last_eviction, '2026-03-01T00:00:00.000Z');
      // A state.json of an earlier version has no review_new_memories (review is off) nor stale_memories (labelled).
      assert.deepEqual(value.config, { max_memories: 50, memories_to_load: 4, eviction_batch_size: 3, review_new_memories: false, stale_memories: 'label', future_option: 'x' });
      assert.equal(value.current_session, 'abc-123');
    });

    it('defaults missing and bad fields one by one, and the config to DEFAULT_CONFIG field by field (status ok)', () => {
      const { value, status } = readState('{"session_count": -2, "compaction_count": "x", "last_eviction": 5, "config": {"max_memories": 0, "memories_to_load": 0, "eviction_batch_size": 2.5, "review_new_memories": "yes", "stale_memories": "hide"}}');
      assert.deepEqual(status, { kind: 'ok' });
      assert.equal(value.session_count, 0);
      assert.equal(value.compaction_count, 0);
      assert.equal(value.last_eviction, null);
      assert.equal(value.sessions.size, 0);
      // memories_to_load may be 0; the other two must be positive integers.
      // review_new_memories is a boolean or off: "yes" does not turn it on.
      // stale_memories is label or skip; anything else labels: nothing is left out that was not asked to be.
      assert.deepEqual(value.config, { max_memories: DEFAULT_CONFIG.max_memories, memories_to_load: 0, eviction_batch_size: DEFAULT_CONFIG.eviction_batch_size, review_new_memories: false, stale_memories: 'label' });
      assert.equal(readState('{"config": {"stale_memories": "skip"}}').value.config.stale_memories, 'skip');
      assert.deepEqual(readState('{}').value, defaultState());
      assert.deepEqual(readState('{"config": 7, "sessions": []}').value, defaultState());
      assert.deepEqual(readState('{"config": 7}').status, { kind: 'ok' });
    });

    it('defaults a single bad session field and keeps the session', () => {
      const { value } = readState('{"sessions": {"s1": {"number": 3, "tool_failures": -1, "compacted": "yes", "bogus": 1}}}');
      assert.deepEqual(value.sessions.get('s1'), { number: 3, started_at: '', last_activity: '', tool_successes: 0, tool_failures: 0, compacted: false });
    });

    it('answers a fresh default state each time, never one shared with an earlier answer', () => {
      const first = readState(null).value;
      first.sessions.set('x', session(1));
      first.config.max_memories = 1;
      const second = readState(null).value;
      assert.equal(second.sessions.size, 0);
      assert.equal(second.config.max_memories, DEFAULT_CONFIG.max_memories);
      assert.equal(DEFAULT_CONFIG.max_memories, 100);
    });

    it('reads a session named `__proto__` (or `constructor`) as an ordinary session and leaves Object.prototype untouched', () => {
      const before = prototypeSnapshot();
      const { value, status } = readState(`{"session_count": 2, "sessions": {"__proto__": ${JSON.stringify(session(1))}, "constructor": ${JSON.stringify(session(2))}}}`);
      assert.deepEqual(status, { kind: 'ok' });
      assert.deepEqual([...value.sessions.keys()], ['__proto__', 'constructor']);
      assert.deepEqual(value.sessions.get('__proto__'), session(1));
      assert.equal(Object.getPrototypeOf(value), Object.prototype);
      assert.deepEqual(prototypeSnapshot(), before);
    });

    it('writes version 1 first, then the known keys in a fixed order, then unknown keys sorted', () => {
      const state: StoreState = {
        zeta: true,
        config: { ...DEFAULT_CONFIG },
        alpha: { nested: 1 },
        last_eviction: null,
        compaction_count: 1,
        sessions: new Map([['s', session(1)]]),
        session_count: 3,
        version: 7,
      };
      const json = stateJson(state) as Record<string, unknown>;
      assert.deepEqual(Object.keys(json), ['version', 'session_count', 'sessions', 'compaction_count', 'last_eviction', 'config', 'alpha', 'zeta']);
      assert.equal(json.version, 1, 'always version 1');
      assert.equal(JSON.stringify(json.sessions), JSON.stringify({ s: session(1) }));
    });

    it('writes and reads back a session named `__proto__`', () => {
      const state = defaultState();
      state.session_count = 2;
      state.sessions.set('__proto__', session(2, { compacted: true, tool_failures: 4 }));
      state.sessions.set('toString', session(1));
      const text = toJsonText(stateJson(state));
      assert.match(text, /\n {4}"__proto__": \{\n {6}"number": 2,/);
      const back = readState(text);
      assert.deepEqual(back.status, { kind: 'ok' });
      assert.deepEqual(back.value.sessions, state.sessions);
      assert.equal(toJsonText(stateJson(back.value)), text);
    });

    it('round-trips any state through its JSON text (property)', () => {
      const counters = fc.record({
        number: fc.nat(1000),
        started_at: fc.string(),
        last_activity: fc.string(),
        tool_successes: fc.nat(),
        tool_failures: fc.nat(),
        compacted: fc.boolean(),
      }, { noNullPrototype: true });
      const sessionKey = fc.oneof(fc.string(), fc.constantFrom(...PROTO_KEYS));
      const stateArb = fc.record({
        session_count: fc.nat(),
        sessions: fc.uniqueArray(fc.tuple(sessionKey, counters), { selector: ([k]) => k, maxLength: 6 }),
        compaction_count: fc.nat(),
        last_eviction: fc.option(fc.string(), { nil: null }),
        config: fc.record({ max_memories: fc.integer({ min: 1, max: 10_000 }), memories_to_load: fc.nat(100), eviction_batch_size: fc.integer({ min: 1, max: 100 }), review_new_memories: fc.boolean(), stale_memories: fc.constantFrom(...STALE_MEMORY_MODES) }, { noNullPrototype: true }),
        extras: fc.dictionary(fc.stringMatching(/^x_[a-z]{1,6}$/), fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.parse(JSON.stringify(v)) as unknown), { maxKeys: 3 }),
      });
      fc.assert(
        fc.property(stateArb, (s) => {
          const state: StoreState = { ...s.extras, session_count: s.session_count, sessions: new Map(s.sessions), compaction_count: s.compaction_count, last_eviction: s.last_eviction, config: s.config };
          const text = toJsonText(stateJson(state));
          const back = readState(text);
          assert.deepEqual(back.status, { kind: 'ok' });
          assert.deepEqual(back.value.sessions, state.sessions);
          assert.deepEqual([back.value.session_count, back.value.compaction_count, back.value.last_eviction, back.value.config], [s.session_count, s.compaction_count, s.last_eviction, s.config]);
          for (const [key, v] of Object.entries(s.extras)) assert.deepEqual(back.value[key], v, key);
          assert.equal(toJsonText(stateJson(back.value)), text);
        }),
        { numRuns: 300 },
      );
    });
  });

  describe('jsonObjectOf / indexEntryOf', () => {
    it('makes an object whose keys can be anything, `__proto__` as an own key', () => {
      const obj = jsonObjectOf(
        [
          ['__proto__', 1],
          ['b', 2],
        ] as const,
        (v) => v * 10,
      );
      assert.equal(Object.getPrototypeOf(obj), null);
      assert.deepEqual(Object.keys(obj), ['__proto__', 'b']);
      assert.equal(JSON.stringify(obj), '{"__proto__":10,"b":20}');
    });

    it('indexEntryOf keeps exactly topic, tags, phase, difficulty and created_at, in that order', () => {
      const meta: MemoryMeta = { id: 'mem_00000001', topic: 'T', tags: ['a'], phase: 1, difficulty: 0.3, created_at: 'c', created_session: 4, phase_history: [{ phase: 1, at: 'x', event: 'evicted' }], keywords: [], anchors: [] };
      const e = indexEntryOf(meta);
      assert.deepEqual(Object.keys(e), ['topic', 'tags', 'phase', 'difficulty', 'created_at']);
      assert.deepEqual(e, { topic: 'T', tags: ['a'], phase: 1, difficulty: 0.3, created_at: 'c' });
    });
  });
});
