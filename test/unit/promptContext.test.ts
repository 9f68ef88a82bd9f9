import { strict as assert } from 'node:assert';
import {
  DEFAULT_RELEVANCE_GATE,
  buildPromptContext,
  failureText,
  fileOfToolCall,
  isSearchablePrompt,
  mentionsFile,
  matchedWords,
  passesGate,
  type OfferedMemory,
} from '../../src/core/promptContext';
import type { MemoryView } from '../../src/core/storeTypes';
import { memoryView, useProject } from '../support/storeKit';

function view(id: string, topic: string, summary: string, content: string, tags: string[] = []): MemoryView {
  return memoryView({ id, topic, summary, content, tags, accessed_at: '2026-01-01T00:00:00.000Z' });
}

describe('promptContext', () => {
  it('searches only prompts with at least two content words, and never slash commands', () => {
    for (const prompt of ['yes', 'continue', 'ok', 'do it', 'the', '', '   ', '/recall invoice deadlock', '/compact']) assert.equal(isSearchablePrompt(prompt), false, prompt);
    for (const prompt of ['invoice deadlock again', 'Why does the gradle build fail?']) assert.equal(isSearchablePrompt(prompt), true, prompt);
  });

  it('gates on matched words (fewer only for shorter prompts) and on the score per matched word', () => {
    const { minWords, minStrength } = DEFAULT_RELEVANCE_GATE;
    assert.equal(passesGate({ score: minStrength * minWords, words: minWords }, 10), true);
    assert.equal(passesGate({ score: minStrength * 10, words: minWords - 1 }, 10), false, 'too few words of a long prompt');
    assert.equal(passesGate({ score: minStrength, words: 1 }, 1), true, 'a one-word prompt needs one word');
    assert.equal(passesGate({ score: minStrength * minWords * 0.9, words: minWords }, 10), false, 'too weak');
  });

  it('names the prompt words a memory holds: as written, in another form, or as a prefix', () => {
    const memory = view('mem_00000001', 'Invoice imports deadlocked', 'Workers deadlocked on invoices.', 'Sort IDs before locking.', ['postgres']);
    assert.deepEqual(matchedWords('The invoice import deadlocks in postgres again, help', memory), ['invoice', 'import', 'deadlocks', 'postgres']);
    assert.deepEqual(matchedWords('write a haiku', memory), []);
  });

  it('names a word matched through the words people use for the same thing, with the memory\'s word', () => {
    const memory = view('mem_00000002', 'API pods OOMKilled at the memory limit', 'The heap outgrew the container.', 'Exit code 137.', ['kubernetes']);
    assert.deepEqual(matchedWords('my pods keep getting terminated for hogging RAM', memory), ['pods', 'terminated ~ killed', 'ram ~ memory']);
  });

  it('says why each memory is offered, keeps to the budget, and offers nothing rather than a cut memory', () => {
    const offers: OfferedMemory[] = [1, 2, 3].map((i) => ({
      view: view(`mem_0000000${i}`, `Topic ${i}`, `Summary ${i}.`, `Content ${i} `.repeat(60)),
      matched: ['alpha', 'beta'],
    }));
    const roomy = buildPromptContext(offers, 600);
    assert.deepEqual(roomy.offeredIds, ['mem_00000001', 'mem_00000002', 'mem_00000003']);
    assert.match(roomy.text, /^## Long-term memory \(LTM\): related to this prompt\n/);
    assert.match(roomy.text, /_mem_00000001 · matched: alpha, beta_\nSummary 1\.\nContent 1/);
    assert.ok(roomy.text.length <= 600 * 4, `${roomy.text.length} characters`);
    const tight = buildPromptContext(offers, 80);
    assert.ok(tight.text.length <= 80 * 4);
    assert.ok(tight.offeredIds.length < 3 && tight.offeredIds.length >= 1, 'fewer, shorter: summaries only');
    assert.ok(!tight.text.includes('Content 1'));
    assert.deepEqual(buildPromptContext(offers, 10), { text: '', offeredIds: [], estimatedTokens: 0 });
    assert.deepEqual(buildPromptContext([], 600), { text: '', offeredIds: [], estimatedTokens: 0 });
  });

  it("stays under Claude Code's 10,000-character hook context limit whatever the budget", () => {
    const offers: OfferedMemory[] = Array.from({ length: 40 }, (_, i) => ({
      view: view(`mem_${(i + 1).toString(16).padStart(8, '0')}`, `Topic ${i}`, `Summary ${i}.`, `Content ${i} `.repeat(60)),
      matched: ['alpha'],
    }));
    const huge = buildPromptContext(offers, 1_000_000);
    assert.ok(huge.text.length < 10_000, `${huge.text.length} characters`);
    assert.ok(huge.offeredIds.length >= 10);
  });

  it('does not say a Summary twice when it is the first sentence of the Content', () => {
    const text = buildPromptContext([{ view: view('mem_00000001', 'T', 'First sentence.', 'First sentence. Then more.'), matched: [] }]).text;
    assert.equal(text.split('First sentence.').length - 1, 1);
  });

  it('searches a failure with what the tool was asked and what it answered, bounded', () => {
    assert.equal(failureText({ tool_input: { command: 'pnpm install', description: 'install' }, error: 'ERR_PNPM_OUTDATED_LOCKFILE' }), 'pnpm install\nERR_PNPM_OUTDATED_LOCKFILE');
    assert.equal(failureText({ tool_input: { file_path: '/p/legacy-config.txt' }, tool_response: [{ type: 'text', text: 'File does not exist.' }] }), '/p/legacy-config.txt\nFile does not exist.');
    assert.equal(failureText({ tool_response: { stdout: '', stderr: 'fatal: not a git repository', interrupted: false } }), 'fatal: not a git repository');
    assert.equal(failureText({ error: 'x'.repeat(10_000) }).length, 2000);
    assert.equal(failureText({}), '');
  });

  it('knows the file of a file tool call, and when a memory names a file', () => {
    assert.equal(fileOfToolCall({ file_path: '/p/src/db/pool.ts' }), '/p/src/db/pool.ts');
    assert.equal(fileOfToolCall({ notebook_path: '/p/n.ipynb' }), '/p/n.ipynb');
    assert.equal(fileOfToolCall({ command: 'ls' }), undefined);
    assert.equal(fileOfToolCall(null), undefined);
    const memory = (content: string) => view('mem_00000001', 'T', 'S.', content);
    assert.equal(mentionsFile(memory('see src/db/pool.ts for the cap'), 'src/db/pool.ts', 'pool.ts'), true);
    assert.equal(mentionsFile(memory('pool.ts caps connections'), 'src/db/pool.ts', 'pool.ts'), true);
    assert.equal(mentionsFile(memory('db/pool.ts caps connections'), 'src/db/pool.ts', 'pool.ts'), true);
    assert.equal(mentionsFile(memory('spool.ts writes the queue'), 'src/db/pool.ts', 'pool.ts'), false, 'another file');
    assert.equal(mentionsFile(memory('a.ts is tiny'), 'src/a.ts', 'a.ts'), false, 'too short a name alone');
    assert.equal(mentionsFile(memory('see src/a.ts'), 'src/a.ts', 'a.ts'), true, 'but its path names it');
    assert.equal(mentionsFile(memory('pool.tsx renders the pool'), 'src/db/pool.ts', 'pool.ts'), false, 'a longer name');
    assert.equal(mentionsFile(memory('see src/db/pool.tsx'), 'src/db/pool.ts', 'pool.ts'), false, 'a longer path');
    assert.equal(mentionsFile(memory('spool.ts first, then pool.ts'), 'src/db/pool.ts', 'pool.ts'), true, 'any occurrence, not only the first');
    assert.equal(mentionsFile(memory('The cap lives in pool.ts.'), 'src/db/pool.ts', 'pool.ts'), true, 'a full stop after it');
    assert.equal(mentionsFile(memory('see pool.ts.bak'), 'src/db/pool.ts', 'pool.ts'), false, 'another file with more extension');
  });

  describe('through the store', () => {
    const ctx = useProject('ltm-prompt-');

    it('offers the memory a prompt is about, not one that shares a common word, and nothing excluded', async () => {
      const store = ctx.open();
      const deadlock = (await store.store({ topic: 'Invoice import deadlocks in Postgres', content: 'Workers locked invoice rows in different orders; sort the IDs first.' })).memory.id;
      await store.store({ topic: 'Import order of CSS files', content: 'Reset styles are imported first.' });
      for (let i = 0; i < 10; i++) await store.store({ topic: `Unrelated note ${i}`, content: `Nothing about locks ${i}.` });
      const offered = store.relevantTo('the invoice import deadlocked again in postgres');
      assert.deepEqual(offered.map((o) => o.view.id), [deadlock]);
      assert.ok(offered[0]!.matched.includes('deadlocked') || offered[0]!.matched.includes('invoice'));
      assert.deepEqual(store.relevantTo('the invoice import deadlocked again in postgres', { exclude: new Set([deadlock]) }), []);
      assert.deepEqual(store.relevantTo('write a haiku about autumn leaves'), []);
      assert.deepEqual(store.relevantTo('postgres'), [], 'one word is not enough');
    });
  });
});
