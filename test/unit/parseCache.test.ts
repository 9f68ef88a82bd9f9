import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { renderNewMemoryFile, splitFrontmatter } from '../../src/core/memoryFile';
import { FrontmatterParseCache } from '../../src/core/parseCache';
import { makeTempProject, removeDir } from './storeTestKit';

function memoryText(id: string, topic: string): string {
  return renderNewMemoryFile({
    id,
    topic,
    tags: ['alpha'],
    phase: 0,
    difficulty: 0.5,
    created_at: '2026-01-15T10:30:00.000Z',
    created_session: 1,
    summary: 'A summary.',
    content: 'Some content.',
  });
}

const frontmatterOf = (raw: string) => splitFrontmatter(raw).frontmatter;

describe('FrontmatterParseCache', () => {
  let dir: string;
  let file: string;
  const a = memoryText('mem_0000000a', 'Topic A');
  const b = memoryText('mem_0000000b', 'Topic B');

  beforeEach(() => {
    dir = makeTempProject('ltm-parse-cache-');
    file = path.join(dir, 'parse-cache.json');
  });
  afterEach(() => removeDir(dir));

  it('returns copies: changing a parsed result does not change the next one', () => {
    const cache = new FrontmatterParseCache(file);
    const first = cache.parse(frontmatterOf(a));
    first.tags.push('changed');
    first.topic = 'changed';
    const second = cache.parse(frontmatterOf(a));
    assert.equal(second.topic, 'Topic A');
    assert.deepEqual(second.tags, ['alpha']);
  });

  it('is keyed by the text, so an entry is never stale: an edited frontmatter parses anew', () => {
    const cache = new FrontmatterParseCache(file);
    cache.parse(frontmatterOf(a));
    const edited = a.replace('Topic A', 'Topic A, edited');
    assert.equal(cache.parse(frontmatterOf(edited)).topic, 'Topic A, edited');
    assert.equal(cache.parse(frontmatterOf(a)).topic, 'Topic A');
  });

  it('saves the entries of live files only, and a new process loads them', () => {
    const cache = new FrontmatterParseCache(file);
    cache.parse(frontmatterOf(a));
    cache.parse(frontmatterOf(b));
    cache.save([a]);
    const saved = fs.readFileSync(file, 'utf8');
    assert.ok(saved.includes('Topic A') && !saved.includes('Topic B'));
    const next = new FrontmatterParseCache(file);
    next.load();
    assert.equal(next.parse(frontmatterOf(a)).topic, 'Topic A');
    // Everything parsed was a hit: there is nothing new to save.
    fs.rmSync(file);
    next.save([a]);
    assert.ok(!fs.existsSync(file));
  });

  for (const [what, text] of [
    ['not JSON', '{"version": '],
    ['another version', JSON.stringify({ version: 'ltm-frontmatter-0', entries: [] })],
    ['entries that are not a list', JSON.stringify({ version: 'ltm-frontmatter-1', entries: {} })],
    ['malformed entries', JSON.stringify({ version: 'ltm-frontmatter-1', entries: [[1, {}], ['x'], 'y', null] })],
  ] as const) {
    it(`treats a damaged cache (${what}) as empty: only a slower open`, () => {
      fs.writeFileSync(file, text);
      const cache = new FrontmatterParseCache(file);
      cache.load();
      assert.equal(cache.parse(frontmatterOf(a)).topic, 'Topic A');
      cache.save([a]);
      assert.ok(fs.readFileSync(file, 'utf8').includes('Topic A'), 'the next save replaces the damaged file');
    });
  }

  it('drops a purged text so that the next save no longer holds it', () => {
    const cache = new FrontmatterParseCache(file);
    cache.parse(frontmatterOf(a));
    cache.save([a]);
    assert.equal(cache.drop(a), true);
    // The store drops and saves before it deletes the memory file: still live, the text must go.
    cache.save([a]);
    assert.ok(!fs.readFileSync(file, 'utf8').includes('Topic A'));
    assert.equal(cache.drop('no frontmatter here'), false);
  });

  it('does not throw when the cache cannot be written (a read-only checkout)', () => {
    const cache = new FrontmatterParseCache(path.join(dir, 'missing', 'dir', 'parse-cache.json'));
    cache.parse(frontmatterOf(a));
    cache.save([a]);
  });
});
