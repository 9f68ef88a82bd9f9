import { strict as assert } from 'node:assert';
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { InvalidMemoryFile, parseFrontmatter } from '../../src/core/memoryFile';
import {
  DEFAULT_CONFIG,
  DEFAULT_LIST_LIMIT,
  DEFAULT_SEARCH_LIMIT,
  FRONTMATTER_KEYS,
  MEMORY_ID_FORMAT,
  MEMORY_ID_HEX_DIGITS,
  MEMORY_ID_PATTERN,
  MEMORY_ID_PREFIX,
  PHASE_NAMES,
  Phase,
  isMemoryId,
  type MemoryMeta,
} from '../../src/core/model';

describe('model', () => {
  describe('isMemoryId', () => {
    it('accepts mem_ followed by exactly 8 lowercase hex digits', () => {
      for (const id of ['mem_00000000', 'mem_6f1e26b8', 'mem_ffffffff', 'mem_0123abcd']) assert.ok(isMemoryId(id), id);
    });

    it('rejects anything else: other lengths, upper case, other prefixes, padding, line breaks, paths', () => {
      const bad = [
        '',
        'mem_',
        'mem_1234567',
        'mem_123456789',
        'mem_6F1E26B8',
        'MEM_6f1e26b8',
        'mem-6f1e26b8',
        'mem_6f1e26bg',
        ' mem_6f1e26b8',
        'mem_6f1e26b8 ',
        'mem_6f1e26b8\n',
        '\nmem_6f1e26b8',
        'mem_6f1e26b8.md',
        '../mem_6f1e26b8',
        'x/mem_6f1e26b8',
        '6f1e26b8',
      ];
      for (const id of bad) assert.ok(!isMemoryId(id), JSON.stringify(id));
    });

    it('agrees with a character-by-character reading of the rule on any string', () => {
      const rule = (s: string) => s.length === 12 && s.startsWith('mem_') && [...s.slice(4)].every((c) => '0123456789abcdef'.includes(c));
      fc.assert(
        fc.property(fc.oneof(fc.string(), fc.stringMatching(/^mem_[0-9a-fA-F]{7,9}\n?$/)), (s) => isMemoryId(s) === rule(s)),
        { numRuns: 2000 },
      );
    });

    it('is stateless: the shared pattern has no global flag, so calls in a row agree', () => {
      assert.equal(MEMORY_ID_PATTERN.global, false);
      assert.equal(MEMORY_ID_PATTERN.sticky, false);
      for (let i = 0; i < 3; i++) assert.ok(isMemoryId('mem_6f1e26b8'));
    });
  });

  describe('the ID constants agree with each other', () => {
    it('an ID made as the store makes them (prefix + HEX_DIGITS/2 random bytes in hex) is always a memory ID', () => {
      assert.equal(MEMORY_ID_HEX_DIGITS % 2, 0, 'a whole number of bytes');
      for (let i = 0; i < 200; i++) {
        const id = `${MEMORY_ID_PREFIX}${randomBytes(MEMORY_ID_HEX_DIGITS / 2).toString('hex')}`;
        assert.ok(isMemoryId(id), id);
      }
      assert.ok(!isMemoryId(`${MEMORY_ID_PREFIX}${'a'.repeat(MEMORY_ID_HEX_DIGITS - 1)}`));
      assert.ok(!isMemoryId(`${MEMORY_ID_PREFIX}${'a'.repeat(MEMORY_ID_HEX_DIGITS + 1)}`));
    });

    it('MEMORY_ID_FORMAT says the prefix and the number of digits', () => {
      assert.ok(MEMORY_ID_FORMAT.startsWith(MEMORY_ID_PREFIX));
      assert.match(MEMORY_ID_FORMAT, new RegExp(`\\b${MEMORY_ID_HEX_DIGITS} hex\\b`));
    });

    it('a frontmatter ID is accepted exactly when isMemoryId accepts it', () => {
      fc.assert(
        fc.property(fc.oneof(fc.stringMatching(/^[a-z_0-9A-F]{1,14}$/), fc.stringMatching(/^mem_[0-9a-f]{8}$/)), (id) => {
          let accepted = true;
          try {
            parseFrontmatter(`id: "${id}"\ntopic: t\n`);
          } catch (error) {
            if (!(error instanceof InvalidMemoryFile)) throw error;
            accepted = false;
          }
          return accepted === isMemoryId(id);
        }),
        { numRuns: 300 },
      );
    });
  });

  describe('phases', () => {
    it('are 0 to 3 in eviction order, each with a name', () => {
      assert.deepEqual([Phase.Full, Phase.Hint, Phase.Abstract, Phase.Archived], [0, 1, 2, 3]);
      assert.deepEqual(Object.keys(PHASE_NAMES).map(Number), [0, 1, 2, 3]);
      for (const [name, value] of Object.entries(Phase)) assert.equal(PHASE_NAMES[value], name);
    });
  });

  describe('FRONTMATTER_KEYS', () => {
    it('are the fields of MemoryMeta LTM writes for a new memory, id first, without duplicates', () => {
      const meta: Record<keyof MemoryMeta, true> = {
        id: true,
        topic: true,
        tags: true,
        phase: true,
        difficulty: true,
        created_at: true,
        created_session: true,
        phase_history: true,
        keywords: true,
        anchors: true,
        unreadable_anchors: true,
        status: true,
      };
      assert.equal(FRONTMATTER_KEYS[0], 'id');
      assert.equal(new Set(FRONTMATTER_KEYS).size, FRONTMATTER_KEYS.length);
      // phase_history is written only once the phase changes, keywords and anchors only when there are some, status only for a memory awaiting
      // review; unreadable_anchors is never written (it names what loading left out of the file's own anchors).
      assert.deepEqual([...FRONTMATTER_KEYS].sort(), Object.keys(meta).filter((k) => !['phase_history', 'keywords', 'anchors', 'unreadable_anchors', 'status'].includes(k)).sort());
    });
  });

  describe('defaults', () => {
    it('the default limits are whole numbers ≥ 1 that fit together', () => {
      for (const value of [DEFAULT_CONFIG.max_memories, DEFAULT_CONFIG.eviction_batch_size, DEFAULT_LIST_LIMIT, DEFAULT_SEARCH_LIMIT]) {
        assert.ok(Number.isInteger(value) && value >= 1, String(value));
      }
      assert.ok(Number.isInteger(DEFAULT_CONFIG.memories_to_load) && DEFAULT_CONFIG.memories_to_load >= 0);
      assert.ok(DEFAULT_CONFIG.memories_to_load <= DEFAULT_CONFIG.max_memories, 'a session start cannot load more than the store keeps');
      assert.ok(DEFAULT_CONFIG.eviction_batch_size <= DEFAULT_CONFIG.max_memories);
    });
  });
});
