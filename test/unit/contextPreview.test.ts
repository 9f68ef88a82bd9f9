import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { contextText, previewContext } from '../../src/core/contextPreview';
import { ensureCliBuilt, statsOnDisk, useProject } from '../support/storeKit';
import { ltmJson } from '../support/ltmProcess';

describe('contextPreview (ltm context)', () => {
  const ctx = useProject('ltm-context-');

  async function seed(): Promise<{ top: string; low: string }> {
    const store = ctx.open();
    const top = (await store.store({ topic: 'Always run migrations before tests', content: 'The test database needs the latest schema.', tags: ['importance:critical'] })).memory.id;
    const low = (await store.store({ topic: 'Invoice import deadlocks in Postgres', content: 'Workers locked invoice rows in different orders; sort IDs first.', tags: ['importance:low'] })).memory.id;
    for (let i = 0; i < 5; i++) await store.store({ topic: `Unrelated note ${i}`, content: `About CSS grid ${i}.` });
    await store.updateState((s) => {
      s.config.memories_to_load = 1;
    });
    return { top, low };
  }

  it('shows the session-start injection and what a prompt or a failure would bring, with why, counting nothing', async () => {
    const { top, low } = await seed();
    const store = ctx.open();
    const statsBefore = statsOnDisk(ctx.root);
    const preview = previewContext(store, {
      prompt: 'the invoice import deadlocked again in postgres',
      error: 'ERROR: deadlock detected while importing invoices',
      budgetTokens: 2000,
    });
    assert.deepEqual(preview.session_start.memories, [top]);
    assert.match(preview.session_start.text, /Always run migrations before tests/);
    assert.deepEqual(preview.prompt?.memories.map((m) => m.id), [low]);
    assert.ok(preview.prompt!.memories[0]!.matched.includes('invoice'));
    assert.deepEqual(preview.error?.memories.map((m) => m.id), [low]);
    assert.deepEqual(statsOnDisk(ctx.root), statsBefore, 'no access counted (stats.json with its journal)');
    const text = contextText(preview);
    assert.match(text, /^== At session start: 1 memory, ~\d+ tokens ==\n/);
    assert.match(text, /== With this prompt: 1 memory, ~\d+ tokens ==\n## Long-term memory \(LTM\): related to this prompt/);
    assert.match(text, /== With this failure: 1 memory/);
  });

  it('never offers with a prompt what the session start already injects, and nothing for a short prompt', async () => {
    const { top } = await seed();
    const store = ctx.open();
    assert.deepEqual(previewContext(store, { prompt: 'run the migrations before the tests', budgetTokens: 2000 }).prompt?.memories, []);
    assert.ok(previewContext(store, { budgetTokens: 2000 }).session_start.memories.includes(top));
    assert.deepEqual(previewContext(store, { prompt: 'yes', budgetTokens: 2000 }).prompt, { text: '', memories: [], estimated_tokens: 0 });
  });

  it('shows the situation session start ranked by, and why each memory relates to it', async () => {
    const { low, top } = await seed();
    const store = ctx.open();
    const situation = { branch: 'fix/invoice-deadlock', changedFiles: ['src/import.ts'], recentFiles: [] };
    const preview = previewContext(store, { budgetTokens: 2000, situation });
    assert.deepEqual(preview.session_start.memories, [low], 'the memory about the branch before the critical one (1 to load)');
    assert.deepEqual(preview.session_start.situation, situation);
    assert.deepEqual(preview.session_start.related, [{ id: low, reasons: ['branch fix/invoice-deadlock (invoice, deadlock)'] }]);
    const text = contextText(preview);
    assert.match(text, /\n-- situation: branch fix\/invoice-deadlock; changed: src\/import\.ts; in recent commits: none\n/);
    assert.ok(text.includes(`\n-- ${low} related to branch fix/invoice-deadlock (invoice, deadlock)`));
    const plain = contextText(previewContext(store, { budgetTokens: 2000 }));
    assert.match(plain, /-- situation: none \(not a git repository, or a detached HEAD\): ranked by priority alone/);
    assert.ok(plain.includes(top));
  });

  it('shows what a file tool would bring, and offers within the prompt budget it is given', async () => {
    const { low } = await seed();
    const store = ctx.open();
    const extra = (await store.store({ topic: 'Deadlock retries in the invoice worker', content: 'src/billing/invoiceImport.ts retries a deadlocked invoice import three times.' })).memory.id;
    const statsBefore = statsOnDisk(ctx.root);
    const preview = previewContext(store, { file: 'src/billing/invoiceImport.ts', budgetTokens: 2000 });
    assert.deepEqual(preview.file?.memories, [{ id: extra, topic: 'Deadlock retries in the invoice worker', matched: ['src/billing/invoiceImport.ts'] }]);
    assert.match(preview.file!.text, /^## Long-term memory \(LTM\): related to this file\n/);
    assert.match(contextText(preview), /== With this file: 1 memory, ~\d+ tokens ==/);
    assert.deepEqual(previewContext(store, { file: path.join(ctx.project, 'src', 'billing', 'invoiceImport.ts'), budgetTokens: 2000 }).file?.memories.map((m) => m.id), [extra], 'an absolute path too');

    const prompt = 'the invoice import deadlocked again in postgres';
    const roomy = previewContext(store, { prompt, budgetTokens: 2000 }).prompt!;
    assert.deepEqual(new Set(roomy.memories.map((m) => m.id)), new Set([low, extra]));
    const tight = previewContext(store, { prompt, budgetTokens: 2000, promptBudgetTokens: 100 }).prompt!;
    assert.ok(tight.memories.length < roomy.memories.length, 'a smaller prompt budget offers less');
    assert.ok(tight.text.length <= 100 * 4);
    assert.deepEqual(statsOnDisk(ctx.root), statsBefore, 'no access counted (stats.json with its journal)');
  });

  it('is the `ltm context` command', async () => {
    ensureCliBuilt();
    const { low } = await seed();
    const out = ltmJson<{ prompt: { memories: { id: string }[] } }>(['context', '--project', ctx.project, '--prompt', 'the invoice import deadlocked again in postgres', '--json']);
    assert.deepEqual(out.prompt.memories.map((m) => m.id), [low]);
    const withFile = ltmJson<{ file: { memories: { id: string }[] } }>(['context', '--project', ctx.project, '--file', 'notes/invoice.md', '--prompt-budget', '100', '--json']);
    assert.deepEqual(withFile.file.memories, []);
  });

  it('`ltm context` reads the situation from git', async () => {
    ensureCliBuilt();
    const { low } = await seed();
    const git = (...args: string[]) => assert.equal(spawnSync('git', args, { cwd: ctx.project }).status, 0, args.join(' '));
    git('init', '-q', '-b', 'invoice-deadlock');
    const out = ltmJson<{ session_start: { memories: string[]; situation: { branch: string } | null } }>(['context', '--project', ctx.project, '--json']);
    assert.equal(out.session_start.situation?.branch, 'invoice-deadlock');
    assert.deepEqual(out.session_start.memories, [low]);
  });
});
