/**
 * Values that must be written twice because one copy lives in a file that
 * cannot import (package.json's setting defaults): they are checked to agree.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DEFAULT_INJECTION_BUDGET_TOKENS, MIN_INJECTION_BUDGET_TOKENS } from '../../src/core/injection';
import { DEFAULT_PROMPT_BUDGET_TOKENS, MIN_PROMPT_BUDGET_TOKENS } from '../../src/core/promptContext';
import { DEFAULT_CONFIG, STALE_MEMORY_MODES, MEMORY_ID_FORMAT, MEMORY_ID_HEX_DIGITS, MEMORY_ID_PATTERN, MEMORY_ID_PREFIX, isMemoryId } from '../../src/core/model';

interface SettingSchema {
  default?: unknown;
  minimum?: number;
  enum?: unknown[];
}

const manifest = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8')) as {
  contributes: { configuration: { properties: Record<string, SettingSchema> } };
};
const setting = (key: string): SettingSchema => {
  const schema = manifest.contributes.configuration.properties[key];
  assert.ok(schema, `package.json declares ${key}`);
  return schema;
};

describe('shared defaults', () => {
  it("package.json's store limits default to DEFAULT_CONFIG", () => {
    assert.equal(setting('ltm.maxMemories').default, DEFAULT_CONFIG.max_memories);
    assert.equal(setting('ltm.memoriesToLoad').default, DEFAULT_CONFIG.memories_to_load);
    assert.equal(setting('ltm.evictionBatchSize').default, DEFAULT_CONFIG.eviction_batch_size);
    assert.equal(setting('ltm.reviewNewMemories').default, DEFAULT_CONFIG.review_new_memories);
    assert.equal(setting('ltm.staleMemories').default, DEFAULT_CONFIG.stale_memories);
    // The setting offers exactly the modes state.json accepts.
    assert.deepEqual(setting('ltm.staleMemories').enum, [...STALE_MEMORY_MODES]);
  });

  it("package.json's injection budget has the engine's default and minimum", () => {
    assert.equal(setting('ltm.injectionTokenBudget').default, DEFAULT_INJECTION_BUDGET_TOKENS);
    assert.equal(setting('ltm.injectionTokenBudget').minimum, MIN_INJECTION_BUDGET_TOKENS);
  });

  it("package.json's prompt budget has the engine's default and minimum", () => {
    assert.equal(setting('ltm.promptTokenBudget').default, DEFAULT_PROMPT_BUDGET_TOKENS);
    assert.equal(setting('ltm.promptTokenBudget').minimum, MIN_PROMPT_BUDGET_TOKENS);
  });

  it('describes, builds and checks memory IDs from one definition', () => {
    assert.equal(MEMORY_ID_PATTERN.source, '^mem_[0-9a-f]{8}$');
    assert.equal(MEMORY_ID_FORMAT, 'mem_ followed by 8 hex characters');
    const id = `${MEMORY_ID_PREFIX}${'0123456789abcdef'.slice(0, MEMORY_ID_HEX_DIGITS)}`;
    assert.ok(isMemoryId(id));
    for (const bad of ['mem_1234', 'mem_0123456789', 'mem_0123456G', 'MEM_01234567', 'mem_01234567 ', `x${id}`]) assert.ok(!isMemoryId(bad), bad);
  });
});
