/**
 * What session start and the offers give (src/core/memoryOffers.ts) on a
 * store's parts, with a stale memory (its anchored code changed) labelled or
 * left out as state.json `stale_memories` says.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { anchorsToFrontmatter } from '../../src/core/anchors';
import { updateFrontmatter } from '../../src/core/memoryFile';
import { aboutFile, candidatesFor, outdated, relevantTo, staleMemories, topForSession } from '../../src/core/memoryOffers';
import type { StoreParts } from '../../src/core/storeParts';
import { makeParts, makeTempProject, memoryText, removeDir, testId } from '../support/storeKit';

const numbered = (n: number) => Array.from({ length: n }, (_, i) => `const line${i + 1} = ${i + 1};`).join('\n') + '\n';
const PROMPT = 'the connection pool ran dry under load again';
const [STALE, FRESH, OTHER] = [testId(0x1), testId(0x2), testId(0x3)];
const REASON = 'src/db/pool.ts#L10-12: the lines changed';

describe('memoryOffers: what session start and the offers give', () => {
  let project: string;
  let parts: StoreParts;
  const write = (file: string, text: string) => {
    fs.mkdirSync(path.dirname(path.join(project, file)), { recursive: true });
    fs.writeFileSync(path.join(project, file), text);
  };
  const skip = () => {
    parts.mirror.state.config = { ...parts.mirror.state.config, stale_memories: 'skip' };
  };

  beforeEach(() => {
    project = makeTempProject('ltm-offers-');
    write('src/db/pool.ts', numbered(40));
    parts = makeParts(project);
    // A memory that outranks the other in every way (priority, relevance to PROMPT and to pool.ts), anchored to code that then changes.
    const anchors = anchorsToFrontmatter(parts.anchoring.anchorsFor(['src/db/pool.ts#L10-12']));
    const stale = memoryText(STALE, { topic: 'Connection pool ran dry under load', content: 'The connection pool in src/db/pool.ts ran dry under load; it is 50 now.', difficulty: 0.9 });
    fs.writeFileSync(path.join(parts.paths.memories, `${STALE}.md`), updateFrontmatter(stale, { anchors }));
    fs.writeFileSync(path.join(parts.paths.memories, `${FRESH}.md`), memoryText(FRESH, { topic: 'Pool under load: leaked connections', content: 'When the pool in src/db/pool.ts runs dry under load, look for leaked connections.', difficulty: 0.2 }));
    fs.writeFileSync(path.join(parts.paths.memories, `${OTHER}.md`), memoryText(OTHER, { topic: 'Release notes', content: 'Write them in CHANGELOG.md.', difficulty: 0.1 }));
    write('src/db/pool.ts', numbered(40).replace('line11 = 11', 'line11 = 99'));
    parts.mirror.refresh();
  });
  afterEach(() => {
    parts.mirror.dispose();
    removeDir(project);
  });

  it('staleMemories and outdated name the memory whose code changed, and why', () => {
    assert.deepEqual(staleMemories(parts), [{ id: STALE, topic: 'Connection pool ran dry under load', reasons: [REASON] }]);
    assert.deepEqual(outdated(parts, parts.queries.view(STALE)), [REASON]);
    assert.deepEqual(outdated(parts, parts.queries.view(FRESH)), []);
  });

  it('label (the default): the stale memory is given first, marked', () => {
    assert.deepEqual(topForSession(parts, 1, 1).memories.map((m) => m.id), [STALE]);
    assert.deepEqual(relevantTo(parts, PROMPT, { limit: 1 }).map((o) => [o.view.id, o.outdated]), [[STALE, [REASON]]]);
    assert.deepEqual(aboutFile(parts, 'src/db/pool.ts', { limit: 1 }).map((o) => [o.view.id, o.matched, o.outdated]), [[STALE, ['src/db/pool.ts'], [REASON]]]);
    assert.ok(candidatesFor(parts, ['connection pool dry'], 1).some((v) => v.id === STALE));
  });

  it('skip: each leaves the stale memory out and gives the next one in its place; the total still counts it', () => {
    skip();
    const top = topForSession(parts, 1, 1);
    assert.deepEqual(top.memories.map((m) => m.id), [FRESH]);
    assert.equal(top.total, 3);
    assert.deepEqual(relevantTo(parts, PROMPT, { limit: 1 }).map((o) => o.view.id), [FRESH]);
    assert.deepEqual(aboutFile(parts, 'src/db/pool.ts', { limit: 1 }).map((o) => o.view.id), [FRESH]);
    assert.deepEqual(candidatesFor(parts, ['connection pool dry'], 1).map((v) => v.id), [FRESH]);
  });

  it('skip with every ranked memory stale gives none, its total still counting it', () => {
    skip();
    fs.rmSync(path.join(parts.paths.memories, `${FRESH}.md`));
    fs.rmSync(path.join(parts.paths.memories, `${OTHER}.md`));
    parts.mirror.refresh();
    assert.deepEqual(topForSession(parts, 1, 1), { memories: [], total: 1, has_more: false });
  });

  it('aboutFile leaves out `exclude` and memories that only share a word with the file name; relevantTo gives nothing for a short text', () => {
    assert.deepEqual(aboutFile(parts, 'src/db/pool.ts', { exclude: new Set([STALE]) }).map((o) => o.view.id), [FRESH]);
    assert.deepEqual(aboutFile(parts, 'pool.py').map((o) => o.view.id), []);
    assert.deepEqual(aboutFile(parts, 'CHANGELOG.md').map((o) => [o.view.id, o.matched]), [[OTHER, ['CHANGELOG.md']]]);
    assert.deepEqual(relevantTo(parts, 'pool'), []);
  });

  it('topForSession refuses a limit that is not a whole number ≥ 1', () => {
    assert.throws(() => topForSession(parts, 1, 0), /limit must be a whole number/);
  });
});
