import { strict as assert } from 'node:assert';
import fc from 'fast-check';
import MiniSearch from 'minisearch';
import { indexTerm, matchesAsPrefix, queryWords, tokenize, typosAllowed } from '../../src/core/analyzer';
import type { FileSignature } from '../../src/core/files';
import { MemorySearchIndex } from '../../src/core/search';
import { searchedTextDigest, type SearchableMemory } from '../../src/core/searchedText';

/** A file version for each document ID, different for each: what a store saves an index with. */
function versionOf(id: string): FileSignature {
  const n = [...id].reduce((sum, c) => sum * 31 + c.charCodeAt(0), 7) % 1e9;
  return { size: 100 + n, mtimeMs: 1.7e12 + n + 0.375, ino: 2 ** 40 + n };
}
/** One version for every document. */
const ANY_VERSION = (): FileSignature => ({ size: 1, mtimeMs: 2, ino: 3 });

/**
 * MiniSearch configured as the index scores, searched the way the index
 * searches: words and prefixes first, typos only for the words that matched
 * nothing. It is the reference the hand-written scoring must agree with.
 */
function referenceSearch(memories: readonly SearchableMemory[], query: string): Map<string, number> {
  const mini = new MiniSearch<{ id: string; topic: string; tags: string; keywords: string; summary: string; content: string }>({
    fields: ['topic', 'tags', 'keywords', 'summary', 'content'],
    tokenize,
    processTerm: (t) => indexTerm(t),
    searchOptions: { boost: { topic: 3, tags: 2, keywords: 2, summary: 1.5 }, prefix: matchesAsPrefix, maxFuzzy: 2, combineWith: 'OR' },
  });
  mini.addAll(memories.map((m) => ({ ...m, tags: m.tags.join(' '), keywords: (m.keywords ?? []).join(' ') })));
  let results = mini.search(query, { fuzzy: false });
  const matched = new Set(results.flatMap((r) => r.queryTerms));
  if (queryWords(query).some((w) => !matched.has(w))) {
    results = mini.search(query, { fuzzy: (term) => (matched.has(term) || typosAllowed(term) === 0 ? false : 0.2) });
  }
  const best = results[0]?.score ?? 0;
  return new Map(best > 0 ? results.map((r) => [r.id as string, r.score / best]) : []);
}

function assertSameHits(index: MemorySearchIndex, memories: readonly SearchableMemory[], query: string): void {
  const hits = [...index.search(query)];
  const expected = referenceSearch(memories, query);
  assert.deepEqual(hits.map((h) => h.id).sort(), [...expected.keys()].sort(), `the same memories match "${query}"`);
  for (const hit of hits) {
    assert.ok(Math.abs(hit.relevance - expected.get(hit.id)!) < 1e-9, `relevance of ${hit.id} for "${query}": ${hit.relevance} vs ${expected.get(hit.id)}`);
  }
  for (let i = 1; i < hits.length; i++) assert.ok(hits[i - 1]!.relevance >= hits[i]!.relevance, 'hits come best first');
}

// Few words, so that memories share terms, prefixes and near-misses.
const VOCABULARY = ['postgres', 'postgresql', 'post', 'migration', 'migrate', 'deadlock', 'deadline', 'the', 'a', 'index', 'indexes', 'react', 'render', 'rendering', 'cache', 'caching', 'café', 'x'];
const word = fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...VOCABULARY) }, { weight: 1, arbitrary: fc.string({ minLength: 1, maxLength: 6 }) });
const text = (max: number) => fc.array(word, { maxLength: max }).map((words) => words.join(' '));
const memoryArb = (id: string): fc.Arbitrary<SearchableMemory> =>
  fc.record({ id: fc.constant(id), topic: text(6), tags: fc.array(fc.constantFrom('db', 'react', 'postgres', 'ci'), { maxLength: 3 }), keywords: fc.array(text(2), { maxLength: 2 }), summary: text(8), content: text(30) });
// Queries as typed: whole words, prefixes, and words with a typo.
const queryArb = fc.array(
  fc.oneof(
    fc.constantFrom(...VOCABULARY),
    fc.constantFrom(...VOCABULARY).map((w) => w.slice(0, Math.max(1, w.length - 3))),
    fc.constantFrom(...VOCABULARY).map((w) => (w.length > 4 ? w.slice(0, 2) + w.slice(3) : w + 'z')),
  ),
  { minLength: 1, maxLength: 4 },
).map((words) => words.join(' '));

/** Without word forms, and with MiniSearch's coordination bonus, the index ranks exactly as MiniSearch does: the parity tests use it. */
const EXACT = { wordForms: false, coordination: 'words' } as const;


type Step = { upsert: SearchableMemory } | { remove: string } | { removeMany: string[] };

/** Any step on memories of these IDs: an add or replacement, a removal, or several removals at once (some IDs repeated or absent). */
function stepArb(ids: readonly string[]): fc.Arbitrary<Step> {
  return fc.oneof(
    fc.constantFrom(...ids).chain((id) => memoryArb(id).map((memory) => ({ upsert: memory }))),
    fc.constantFrom(...ids).map((id) => ({ remove: id })),
    fc.array(fc.constantFrom(...ids, 'absent'), { maxLength: 6 }).map((removeMany) => ({ removeMany })),
  );
}

/** Runs upserts and removals on the index; returns the memories it should then hold, by ID (`current`, updated). */
function applySteps(
  index: MemorySearchIndex,
  steps: readonly Step[],
  current = new Map<string, SearchableMemory>(),
): Map<string, SearchableMemory> {
  for (const s of steps) {
    if ('upsert' in s) {
      index.upsert(s.upsert);
      current.set(s.upsert.id, s.upsert);
    } else if ('remove' in s) {
      index.remove(s.remove);
      current.delete(s.remove);
    } else {
      index.removeMany(s.removeMany);
      for (const id of s.removeMany) current.delete(id);
    }
  }
  return current;
}

describe('search index', () => {
  it('scores exactly as MiniSearch does, after any sequence of adds, replacements and removals', () => {
    const step = stepArb(['m0', 'm1', 'm2', 'm3', 'm4', 'm5', 'm6', 'm7']);
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 25 }), fc.array(queryArb, { minLength: 1, maxLength: 4 }), (steps, queries) => {
        const index = new MemorySearchIndex(EXACT);
        const current = applySteps(index, steps);
        assert.equal(index.size, current.size);
        for (const query of queries) assertSameHits(index, [...current.values()], query);
      }),
      { numRuns: 300 },
    );
  });

  it('a serialized index, loaded again, answers exactly as the original, and keeps doing so after any further changes', () => {
    const step = stepArb(['m0', 'm1', 'm2', 'm3', 'm4', 'm5', 'm6', 'm7']);
    fc.assert(
      fc.property(fc.array(step, { maxLength: 20 }), fc.array(step, { maxLength: 10 }), fc.array(queryArb, { minLength: 1, maxLength: 3 }), (before, after, queries) => {
        const original = new MemorySearchIndex(EXACT);
        const current = applySteps(original, before);
        const bytes = original.serialize(versionOf);
        const saved = Buffer.from(bytes);
        // The numbers are read in place where aligned, and copied where not (bytes at an odd offset of their buffer).
        // The versions (doubles) likewise: bytes 4 bytes into their buffer have their numbers in place, their versions copied.
        const unaligned = Buffer.alloc(bytes.length + 1).subarray(1);
        bytes.copy(unaligned);
        const halfAligned = Buffer.alloc(bytes.length + 4).subarray(4);
        bytes.copy(halfAligned);
        const loaded = MemorySearchIndex.deserialize(bytes, EXACT);
        const loadedUnaligned = MemorySearchIndex.deserialize(unaligned, EXACT);
        const loadedHalfAligned = MemorySearchIndex.deserialize(halfAligned, EXACT);
        assert.ok(loaded && loadedUnaligned && loadedHalfAligned, 'the bytes load');
        for (const id of current.keys()) {
          for (const other of [loadedUnaligned, loadedHalfAligned]) assert.ok(other.versions.isAt(other.index.slotOfDocument(id)!, versionOf(id)), `${id}: its version, from bytes out of place`);
        }
        // The terms in ascending order, which a loaded index's prefix lookups take as they are (termDictionary.ts).
        const terms = (JSON.parse(bytes.toString('utf8', 4, 4 + bytes.readUInt32LE(0))) as { terms: string[] }).terms;
        assert.deepEqual(terms, [...terms].sort());
        for (const query of queries) assert.deepEqual([...loadedUnaligned.index.search(query)], [...original.search(query)], `"${query}" loaded from unaligned bytes`);
        for (const query of queries) assert.deepEqual([...loadedHalfAligned.index.search(query)], [...original.search(query)], `"${query}" loaded from bytes 4 bytes in`);
        for (const id of current.keys()) {
          const slot: number = loaded.index.slotOfDocument(id)!;
          assert.ok(loaded.versions.isAt(slot, versionOf(id)), `${id}: its version, saved`);
          assert.ok(!loaded.versions.isAt(slot, { ...versionOf(id), mtimeMs: versionOf(id).mtimeMs + 0.001 }), `${id}: only its version`);
          assert.equal(loaded.index.textDigestAt(slot), searchedTextDigest(current.get(id)!), `${id}: the digest of its text, saved`);
        }
        for (const query of queries) assert.deepEqual([...loaded.index.search(query)], [...original.search(query)], `"${query}" right after loading`);
        // Saved again with some terms read by the searches and the rest not (their numbers are copied as they are).
        assert.ok(loaded.index.serialize(versionOf).equals(bytes), 'saved again unchanged, the same bytes');
        // Changes after loading copy the loaded lists before touching them, and free slots are reused.
        applySteps(loaded.index, after, current);
        assert.ok(bytes.equals(saved), 'changes never write into the bytes the index was loaded from');
        assert.equal(loaded.index.size, current.size);
        for (const query of queries) assertSameHits(loaded.index, [...current.values()], query);
        for (const [id, memory] of current) assert.equal(loaded.index.textDigestAt(loaded.index.slotOfDocument(id)!), searchedTextDigest(memory), `${id}: the digest of its text, after changes`);
      }),
      { numRuns: 300 },
    );
  });

  it('a loaded index whose long lists were changed in every way (typed copies with room) scores as one built afresh from the same memories', () => {
    const ids = Array.from({ length: 90 }, (_, i) => `m${i}`);
    const step = stepArb(ids);
    fc.assert(
      fc.property(fc.tuple(...ids.map((id) => memoryArb(id))), fc.array(step, { maxLength: 40 }), fc.array(queryArb, { minLength: 1, maxLength: 3 }), (memories, after, queries) => {
        const original = new MemorySearchIndex();
        const current = applySteps(original, memories.map((m) => ({ upsert: m })));
        const loaded = MemorySearchIndex.deserialize(original.serialize(ANY_VERSION))!;
        applySteps(loaded.index, after, current);
        const fresh = new MemorySearchIndex();
        for (const m of current.values()) fresh.upsert(m);
        const scores = (index: MemorySearchIndex, query: string) => [...index.search(query)].map((h) => [h.id, h.score.toFixed(9), h.words] as const).sort((a, b) => a[0].localeCompare(b[0]));
        for (const query of queries) assert.deepEqual(scores(loaded.index, query), scores(fresh, query), `"${query}"`);
      }),
      { numRuns: 40 },
    );
  });

  it('a loaded index changed in any way and saved again loads as the same index (entries added beside its frozen lists included)', () => {
    const ids = Array.from({ length: 30 }, (_, i) => `m${i}`);
    fc.assert(
      fc.property(fc.tuple(...ids.map((id) => memoryArb(id))), fc.array(stepArb([...ids, 'n0', 'n1', 'n2']), { maxLength: 30 }), fc.array(queryArb, { minLength: 1, maxLength: 3 }), (memories, after, queries) => {
        const original = new MemorySearchIndex(EXACT);
        const current = applySteps(original, memories.map((m) => ({ upsert: m })));
        const loaded = MemorySearchIndex.deserialize(original.serialize(ANY_VERSION), EXACT)!;
        applySteps(loaded.index, after, current);
        const again = MemorySearchIndex.deserialize(loaded.index.serialize(ANY_VERSION), EXACT);
        assert.ok(again, 'the changed index saves whole');
        for (const query of queries) assert.deepEqual([...again.index.search(query)], [...loaded.index.search(query)], `"${query}"`);
        for (const query of queries) assertSameHits(again.index, [...current.values()], query);
      }),
      { numRuns: 100 },
    );
  });

  it('the bytes given a piece at a time through a small block are serialize()\'s, whatever the changes since loading', () => {
    const ids = Array.from({ length: 12 }, (_, i) => `m${i}`);
    fc.assert(
      fc.property(fc.tuple(...ids.map((id) => memoryArb(id))), fc.array(stepArb([...ids, 'n0']), { maxLength: 12 }), fc.integer({ min: 1, max: 9 }), (memories, after, blockNumbers) => {
        const original = new MemorySearchIndex();
        applySteps(original, memories.map((m) => ({ upsert: m })));
        const loaded = MemorySearchIndex.deserialize(original.serialize(ANY_VERSION))!.index;
        applySteps(loaded, after);
        const pieces: Buffer[] = [];
        // Copied as they come: the block is the writer's again once write returns.
        loaded.writeSerialized(versionOf, (piece) => pieces.push(Buffer.from(piece)), blockNumbers);
        assert.ok(Buffer.concat(pieces).equals(loaded.serialize(versionOf)));
      }),
      { numRuns: 100 },
    );
  });

  it('an index built in one go (build) answers as one built by upserts, and keeps doing so after any changes', () => {
    const ids = ['m0', 'm1', 'm2', 'm3', 'm4', 'm5', 'm6', 'm7'];
    fc.assert(
      fc.property(fc.tuple(...ids.map((id) => memoryArb(id))), fc.array(stepArb(ids), { maxLength: 20 }), fc.array(queryArb, { minLength: 1, maxLength: 3 }), (memories, after, queries) => {
        const built = MemorySearchIndex.build(memories, EXACT);
        const upserted = new MemorySearchIndex(EXACT);
        const current = applySteps(upserted, memories.map((m) => ({ upsert: m })));
        for (const query of queries) assert.deepEqual([...built.search(query)], [...upserted.search(query)], `"${query}" after building`);
        // Its first removal derives what upserts kept per document.
        applySteps(built, after, current);
        applySteps(upserted, after);
        for (const query of queries) assert.deepEqual([...built.search(query)], [...upserted.search(query)], `"${query}" after changes`);
        for (const query of queries) assertSameHits(built, [...current.values()], query);
      }),
      { numRuns: 200 },
    );
  });

  it('a loaded index takes new documents without doubling the room it keeps per document', () => {
    const original = new MemorySearchIndex();
    const memory = (n: number): SearchableMemory => ({ id: `m${n}`, topic: `topic ${n} widget`, tags: [], summary: '', content: `content ${n}` });
    for (let n = 0; n < 2_000; n++) original.upsert(memory(n));
    const loaded = MemorySearchIndex.deserialize(original.serialize(ANY_VERSION))!.index;
    const room = loaded.slotCapacity;
    assert.ok(room >= 2_000 && room <= 2_000 * 1.2, `${room} slots of room for 2,000 documents`);
    // Some new documents fit in the room made when loading; more grow it by an eighth, not twice.
    for (let n = 2_000; n < 2_100; n++) loaded.upsert(memory(n));
    assert.equal(loaded.slotCapacity, room);
    for (let n = 2_100; n < room + 1; n++) loaded.upsert(memory(n));
    assert.ok(loaded.slotCapacity > room + 1 && loaded.slotCapacity <= (room + 1) * 1.2, `${loaded.slotCapacity} slots of room for ${room + 1}`);
    assert.equal([...loaded.search('widget')].length, room + 1);
    assert.equal([...loaded.search(`${room}`)][0]?.id, `m${room}`);
  });

  it('keeps each field\'s lengths as its room grows, built or loaded: the scores stay MiniSearch\'s', () => {
    // Past 64 documents (the first room) and again past what a loaded index has room for: field lengths move with the room.
    const many = (from: number, count: number) => fc.tuple(...Array.from({ length: count }, (_, i) => memoryArb(`m${from + i}`)));
    fc.assert(
      fc.property(many(0, 150), many(150, 40), queryArb, (first, more, query) => {
        const index = new MemorySearchIndex(EXACT);
        for (const m of first) index.upsert(m);
        assertSameHits(index, first, query);
        const loaded = MemorySearchIndex.deserialize(index.serialize(ANY_VERSION), EXACT)!.index;
        const room = loaded.slotCapacity;
        for (const m of more) loaded.upsert(m);
        assert.ok(loaded.slotCapacity > room, 'the loaded index made more room');
        assertSameHits(loaded, [...first, ...more], query);
      }),
      { numRuns: 15 },
    );
  });

  it('a document saved without a version matches none, and the others keep theirs', () => {
    const index = new MemorySearchIndex();
    for (const id of ['m1', 'm2', 'm3']) index.upsert({ id, topic: `topic ${id}`, tags: [], summary: '', content: '' });
    index.remove('m2');
    const loaded = MemorySearchIndex.deserialize(index.serialize((id) => (id === 'm3' ? undefined : versionOf(id))))!;
    assert.ok(loaded.versions.isAt(loaded.index.slotOfDocument('m1')!, versionOf('m1')));
    const m3 = loaded.index.slotOfDocument('m3')!;
    for (const version of [versionOf('m3'), { size: NaN, mtimeMs: NaN, ino: NaN }, { size: 0, mtimeMs: 0, ino: 0 }]) assert.ok(!loaded.versions.isAt(m3, version));
    // Past the slots: none.
    assert.ok(!loaded.versions.isAt(3, versionOf('m1')));
  });

  it('refuses bytes that are not a whole index of this format, instead of answering from them', () => {
    const index = new MemorySearchIndex();
    index.upsert({ id: 'm1', topic: 'postgres deadlock', tags: ['db'], summary: 'lock order', content: 'take locks in one order' });
    index.upsert({ id: 'm2', topic: 'react render', tags: [], summary: 'memo', content: 'rendering twice in strict mode' });
    const bytes = index.serialize(ANY_VERSION);
    assert.ok(MemorySearchIndex.deserialize(bytes));
    assert.equal(MemorySearchIndex.deserialize(Buffer.alloc(0)), null, 'empty');
    assert.equal(MemorySearchIndex.deserialize(bytes.subarray(0, bytes.length - 4)), null, 'cut short');
    assert.equal(MemorySearchIndex.deserialize(Buffer.concat([bytes, Buffer.alloc(4)])), null, 'trailing numbers');
    assert.equal(MemorySearchIndex.deserialize(Buffer.from('not an index at all')), null, 'not an index');
    const otherFormat = Buffer.from(bytes);
    const at = otherFormat.indexOf('ltm-search-');
    otherFormat.write('ltm-search-0', at);
    assert.equal(MemorySearchIndex.deserialize(otherFormat), null, 'another format version');
    // A slot number past the documents (a flipped bit in the numbers) is refused, not followed.
    const single = new MemorySearchIndex();
    single.upsert({ id: 'm1', topic: 'deadlock', tags: [], summary: '', content: '' });
    const singleBytes = Buffer.from(single.serialize(ANY_VERSION));
    // Last, the postings (2 bytes a number): the one term's topic field, slot 0 and frequency 1 (its other fields are empty).
    assert.deepEqual([singleBytes.readUInt16LE(singleBytes.length - 4), singleBytes.readUInt16LE(singleBytes.length - 2)], [0, 1]);
    singleBytes.writeUInt16LE(7, singleBytes.length - 4);
    assert.equal(MemorySearchIndex.deserialize(singleBytes), null, 'a slot that holds no document');
    // Nor a posting naming the free slot of a removed document.
    const withFreeSlot = new MemorySearchIndex();
    withFreeSlot.upsert({ id: 'm1', topic: 'deadlock', tags: [], summary: '', content: '' });
    withFreeSlot.upsert({ id: 'm2', topic: 'render', tags: [], summary: '', content: '' });
    withFreeSlot.remove('m1');
    const freeBytes = Buffer.from(withFreeSlot.serialize(ANY_VERSION));
    // The postings: "render" in slot 1, once.
    assert.deepEqual([freeBytes.readUInt16LE(freeBytes.length - 4), freeBytes.readUInt16LE(freeBytes.length - 2)], [1, 1]);
    assert.ok(MemorySearchIndex.deserialize(freeBytes), 'as saved');
    freeBytes.writeUInt16LE(0, freeBytes.length - 4);
    assert.equal(MemorySearchIndex.deserialize(freeBytes), null, 'a free slot');
    // A term no document holds (never written: a query word reaching it would count as matched).
    const whole = single.serialize(ANY_VERSION);
    const jsonLength = whole.readUInt32LE(0);
    const header = JSON.parse(whole.toString('utf8', 4, 4 + jsonLength)) as { terms: string[] };
    header.terms.push('ghost');
    const json = Buffer.from(JSON.stringify(header), 'utf8');
    // After the header (padded to 8 bytes): the versions and numbers, to which the ghost's five empty counts
    // are added, then the postings (the last 4 bytes).
    const rest = whole.subarray(Math.ceil((4 + jsonLength) / 8) * 8);
    const padded = Math.ceil((4 + json.length) / 8) * 8;
    const withGhost = Buffer.alloc(padded + rest.length + 4 * 5);
    withGhost.writeUInt32LE(json.length, 0);
    json.copy(withGhost, 4);
    rest.subarray(0, rest.length - 4).copy(withGhost, padded);
    rest.subarray(rest.length - 4).copy(withGhost, withGhost.length - 4);
    assert.ok(MemorySearchIndex.deserialize(whole), 'the same bytes without the extra term load');
    assert.equal(MemorySearchIndex.deserialize(withGhost), null, 'a term no document holds');
  });

  const memories: SearchableMemory[] = [
    { id: 'topic', topic: 'Postgres deadlock in migrations', tags: ['db'], summary: 'Lock order.', content: 'Take locks in id order.' },
    { id: 'content', topic: 'Nightly jobs', tags: ['jobs'], summary: 'Batch runs.', content: 'The job talks to postgres through a pool.' },
    { id: 'other', topic: 'React rendering', tags: ['react'], summary: 'Memoise.', content: 'useMemo around the list.' },
  ];

  it('ranks a topic match above a content match, and finds prefixes and typos', () => {
    const index = new MemorySearchIndex();
    for (const m of memories) index.upsert(m);
    assert.deepEqual([...index.search('postgres')].map((h) => h.id), ['topic', 'content']);
    assert.equal([...index.search('postgres')][0]!.relevance, 1);
    assert.deepEqual([...index.search('postg')].map((h) => h.id), ['topic', 'content'], 'a prefix of three or more letters');
    assert.deepEqual([...index.search('po')].map((h) => h.id), [], 'two letters are not a prefix');
    assert.deepEqual([...index.search('postgress')].map((h) => h.id), ['topic', 'content'], 'one typo');
    assert.deepEqual([...index.search('deadlok migratoins')].map((h) => h.id), ['topic'], 'a typo in each word');
    assert.deepEqual([...index.search('the of and')], [], 'stop words alone match nothing');
    assert.deepEqual([...index.search('rendering postgres')].map((h) => h.id).sort(), ['content', 'other', 'topic']);
  });

  it('without prefixes, a word reaches itself and its other forms only', () => {
    const index = new MemorySearchIndex();
    for (const m of memories) index.upsert(m);
    const words = { prefixes: false };
    assert.deepEqual([...index.search('postg', undefined, undefined, words)].map((h) => h.id), [], 'no longer word it begins');
    assert.deepEqual([...index.search('migration', undefined, undefined, words)].map((h) => h.id), ['topic'], 'another form of the word');
    assert.deepEqual([...index.search('postgres', undefined, undefined, words)].map((h) => h.id), ['topic', 'content']);
    assert.deepEqual([...index.search('dead')].map((h) => h.id), ['topic'], 'with prefixes, "dead" reaches "deadlock"');
    assert.deepEqual([...index.search('dead', undefined, undefined, words)].map((h) => h.id), [], 'without, it does not');
  });

  it('a longer word that is another form of the query word counts as that form, not as a mere prefix', () => {
    const index = new MemorySearchIndex();
    const memory = (id: string, topic: string): SearchableMemory => ({ id, topic, summary: '', content: 'background work', tags: [] });
    index.upsert(memory('plural', 'nightly jobs'));
    index.upsert(memory('longer', 'nightly jobsite'));
    const score = (query: string, id: string) => [...index.search(query)].find((h) => h.id === id)!.score;
    // "jobs" is "job" in another form (same stem): the word-form weight, 0.6 of the word as written.
    assert.ok(Math.abs(score('job', 'plural') / score('jobs', 'plural') - 0.6) < 1e-9, `jobs for job: ${score('job', 'plural') / score('jobs', 'plural')}`);
    // "jobsite" only begins with it: the prefix weight, well below.
    assert.ok(score('job', 'longer') / score('jobsite', 'longer') < 0.4);
    assert.deepEqual([...index.search('job')].map((h) => h.id), ['plural', 'longer']);
  });

  it('applies the filter before normalising relevance', () => {
    const index = new MemorySearchIndex();
    for (const m of memories) index.upsert(m);
    const hits = [...index.search('postgres', (id) => id !== 'topic')];
    assert.deepEqual(hits.map((h) => [h.id, h.relevance, h.words]), [['content', 1, 1]]);
    assert.ok(hits[0]!.score > 0, 'the hit keeps its own score');
  });

  it('forgets a removed memory, its terms and its prefixes; re-adding reuses nothing stale', () => {
    const index = new MemorySearchIndex(EXACT);
    for (const m of memories) index.upsert(m);
    index.remove('topic');
    index.remove('missing');
    assert.equal(index.size, 2);
    assert.deepEqual([...index.search('deadlock')], []);
    assert.deepEqual([...index.search('deadl')], []);
    assert.deepEqual([...index.search('deadlok')], [], 'no typo match against a term nobody holds');
    index.upsert({ ...memories[0]!, topic: 'Postgres vacuum' });
    assert.deepEqual([...index.search('vacuum')].map((h) => h.id), ['topic']);
    assert.deepEqual([...index.search('deadlock')], [], 'the replaced text is gone');
    assertSameHits(index, [{ ...memories[0]!, topic: 'Postgres vacuum' }, memories[1]!, memories[2]!], 'postgres vacuum job');
  });

  it('ranks a memory sharing a prompt\'s rare words above one sharing more of its everyday words, and keeps the score the gate measures', () => {
    // Everyday words ("every", "time", "again", "keep") in many memories; the prompt is long, as a person types it.
    const filler = (i: number): SearchableMemory => ({ id: `f${i}`, topic: `Nightly job ${i}`, tags: [], summary: 'It runs every night.', content: 'The job runs again every time the clock passes midnight, and we keep it that way.' });
    const prompt = [
      ...Array.from({ length: 8 }, (_, i) => filler(i)),
      { id: 'rare', topic: 'Users stay signed in across visits', tags: ['auth'], summary: 'The session is persisted.', content: 'Persist the auth store so that users stay signed in.' },
      { id: 'everyday', topic: 'Retry the sync', tags: [], summary: 'We keep trying again.', content: 'Every time the sync fails we keep trying again, every time, until it is back.' },
    ];
    const query = 'why do users keep having to sign in again every time';
    const hitsWith = (options: { coordination?: 'words' | 'informative' }) => {
      const index = new MemorySearchIndex(options);
      for (const m of prompt) index.upsert(m);
      return [...index.search(query)];
    };
    const counted = hitsWith({ coordination: 'words' });
    const informative = hitsWith({});
    assert.deepEqual(counted.slice(0, 2).map((h) => [h.id, h.words]), [['everyday', 4], ['rare', 2]], 'counting words alone: four everyday words beat two rare ones');
    assert.deepEqual(informative.slice(0, 2).map((h) => h.id), ['rare', 'everyday'], 'the default weighs the matched words by IDF');
    const scoreOf = (hits: typeof counted) => new Map(hits.map((h) => [h.id, [h.score, h.words]]));
    assert.deepEqual(scoreOf(informative), scoreOf(counted), 'only the rank changes: each hit keeps its score and matched words');
    assert.ok(informative.every((h, i) => h.relevance <= 1 && (i === 0 || h.relevance <= informative[i - 1]!.relevance)), 'relevance follows the rank');
  });

  it('scores and ranks a query of more words than a slot\'s bits hold (up to 80) as BM25+ and informative coordination define them', () => {
    // Words of one length and no common prefix of three letters, none a stop word: each query word reaches itself only.
    const letters = 'bcdfghjklmnpqrstvwxz';
    const vocabulary = Array.from({ length: 60 }, (_, i) => `${letters[i % 20]}${letters[Math.floor(i / 20) + 5]}${'aeiou'[i % 5]}${letters[(i * 7) % 20]}k`);
    const words = (max: number) => fc.array(fc.constantFrom(...vocabulary), { maxLength: max });
    const memoryOf = (id: string) => fc.record({ id: fc.constant(id), topic: words(3).map((w) => w.join(' ')), tags: words(2), keywords: fc.constant([]), summary: words(4).map((w) => w.join(' ')), content: words(12).map((w) => w.join(' ')) });
    const memoriesArb = fc.array(fc.nat(), { minLength: 2, maxLength: 25 }).chain((ns) => fc.tuple(...ns.map((_, i) => memoryOf(`m${i}`))));
    fc.assert(
      fc.property(memoriesArb, fc.array(fc.constantFrom(...vocabulary), { minLength: 25, maxLength: 80 }), (memories, queryList) => {
        const index = new MemorySearchIndex({ wordForms: false });
        for (const m of memories) index.upsert(m);
        const fields = (m: SearchableMemory) => [m.topic, m.tags.join(' '), '', m.summary, m.content].map((t) => t.split(' ').filter((w) => w.length > 0));
        const boosts = [3, 2, 2, 1.5, 1];
        const n = memories.length;
        const idf = (count: number) => Math.log(1 + (n - count + 0.5) / (count + 0.5));
        // A field's length is its number of distinct tokens, as MiniSearch counts it (an empty text is one empty token).
        const lengthOf = (m: SearchableMemory, f: number) => new Set([m.topic, m.tags.join(' '), '', m.summary, m.content][f]!.split(' ')).size;
        const average = boosts.map((_, f) => memories.reduce((sum, m) => sum + lengthOf(m, f), 0) / n);
        const holding = (w: string, f: number) => memories.filter((m) => fields(m)[f]!.includes(w)).length;
        // Only words some memory holds: a word no memory holds would reach others by its typos.
        const query = queryList.filter((w) => memories.some((m) => fields(m).some((t) => t.includes(w))));
        const repeats = new Map<string, number>();
        for (const w of query) repeats.set(w, (repeats.get(w) ?? 0) + 1);
        const expected = new Map<string, { score: number; words: number; rank: number }>();
        for (const m of memories) {
          let sum = 0;
          let matched = 0;
          let information = 0;
          for (const [w, times] of repeats) {
            const texts = fields(m);
            if (!texts.some((t) => t.includes(w))) continue;
            matched++;
            information += idf(Math.max(...boosts.map((_, f) => holding(w, f))));
            texts.forEach((t, f) => {
              const tf = t.filter((x) => x === w).length;
              if (tf > 0) sum += times * boosts[f]! * idf(holding(w, f)) * (0.5 + (tf * 2.2) / (tf + 1.2 * (0.3 + (0.7 * lengthOf(m, f)) / average[f]!)));
            });
          }
          if (matched > 0) expected.set(m.id, { score: sum * matched, words: matched, rank: sum * Math.sqrt(matched * information) });
        }
        const hits = [...index.search(query.join(' '))];
        assert.deepEqual(hits.map((h) => h.id).sort(), [...expected.keys()].sort(), 'the memories holding a query word');
        const best = Math.max(...[...expected.values()].map((e) => e.rank));
        for (const hit of hits) {
          const e = expected.get(hit.id)!;
          assert.equal(hit.words, e.words, `words matched by ${hit.id}`);
          assert.ok(Math.abs(hit.score / e.score - 1) < 1e-9, `score of ${hit.id}: ${hit.score} vs ${e.score}`);
          assert.ok(Math.abs(hit.relevance - e.rank / best) < 1e-9, `relevance of ${hit.id}: ${hit.relevance} vs ${e.rank / best}`);
        }
      }),
      { numRuns: 60 },
    );
  });

  it('returns ties in a stable order and stops early when the caller does', () => {
    const index = new MemorySearchIndex();
    for (let i = 0; i < 50; i++) index.upsert({ id: `same${i}`, topic: 'cache', tags: [], summary: '', content: '' });
    const all = [...index.search('cache')];
    assert.equal(all.length, 50);
    assert.ok(all.every((h) => h.relevance === 1));
    assert.deepEqual([...index.search('cache')], all, 'the same order every time');
    const first = index.search('cache').next();
    assert.equal(first.done, false);
  });

  describe('scoring chosen documents (scoresOf)', () => {
    const step = stepArb(['m0', 'm1', 'm2', 'm3', 'm4', 'm5', 'm6', 'm7']);
    // The developer vocabulary's kind of expansions: query words reaching other stems at a weight.
    const relatedArb = fc.array(fc.tuple(fc.constantFrom(...VOCABULARY), fc.constantFrom('postgr', 'index', 'render', 'cach', 'deadlin'), fc.double({ min: 0.1, max: 1, noNaN: true })), { maxLength: 4 });

    it('gives each document exactly the score search() gives it, with word forms, related words and typos, after any changes', () => {
      fc.assert(
        fc.property(
          fc.array(step, { minLength: 1, maxLength: 25 }),
          fc.array(fc.oneof(queryArb, text(20)), { minLength: 1, maxLength: 4 }),
          relatedArb,
          fc.boolean(),
          (steps, queries, relatedList, wordForms) => {
            const index = new MemorySearchIndex({ wordForms });
            const current = applySteps(index, steps);
            const related = new Map<string, Map<string, number>>();
            for (const [word, stem, weight] of relatedList) related.set(word, new Map([...(related.get(word) ?? []), [stem, weight]]));
            const documents = [...current.values()].map((m) => index.scoringDocument(m)!);
            for (const query of queries) {
              const scores = index.scoresOf(query, documents, related);
              const searched = new Map([...index.search(query, undefined, related)].map((h) => [h.id, h.score]));
              for (const id of current.keys()) assert.equal(scores.get(id), searched.get(id) ?? 0, `score of ${id} for "${query}"`);
              // Alone, a document's words are all the walk visits; whether a query word matched is still the whole index's say.
              for (const document of documents) {
                assert.equal(index.scoresOf(query, [document], related).get(document.id), searched.get(document.id) ?? 0, `score of ${document.id} alone for "${query}"`);
              }
            }
          },
        ),
        { numRuns: 300 },
      );
    });

    it('scores only documents as the index holds them, and refuses documents read before a change', () => {
      const index = new MemorySearchIndex();
      const memory = { id: 'a', topic: 'Postgres deadlock', tags: [], summary: 'Lock order', content: 'Take the row locks in id order.' };
      index.upsert(memory);
      index.upsert({ id: 'b', topic: 'React render', tags: [], summary: '', content: '' });
      assert.equal(index.scoringDocument({ ...memory, id: 'unknown' }), null, 'a document the index does not hold');
      assert.equal(index.scoringDocument({ ...memory, content: 'Another text altogether, longer.' }), null, 'another text than the one indexed');
      const document = index.scoringDocument(memory)!;
      assert.ok(index.scoresOf('deadlock', [document]).get('a')! > 0);
      // A changed text of the same field lengths passes the cheap check; its words the index lacks are never visited.
      const changed = index.scoringDocument({ ...memory, topic: 'Postgres deadlocked' })!;
      assert.ok(changed, 'the same field lengths');
      assert.equal(index.scoresOf('deadl', [changed]).get('a'), 0);
      index.remove('b');
      assert.throws(() => index.scoresOf('deadlock', [document]), /outlived a change/);
    });
  });

  it('distinctiveWords: the words that weigh most in a text, by repeats times rarity; none the index lacks', () => {
    const index = new MemorySearchIndex();
    for (let i = 0; i < 20; i++) index.upsert({ id: `c${i}`, topic: 'cache', tags: [], summary: '', content: i < 2 ? 'vacuum' : '' });
    index.upsert({ id: 'x', topic: 'cache vacuum', tags: [], summary: '', content: 'xmin horizon' });
    // xmin and horizon: one document each; vacuum: three, but repeated; cache: all 21.
    assert.deepEqual(index.distinctiveWords('cache vacuum vacuum vacuum xmin horizon nowhere', 10), ['vacuum', 'xmin', 'horizon', 'cache']);
    assert.deepEqual(index.distinctiveWords('cache vacuum xmin horizon', 2), ['xmin', 'horizon']);
  });
});
