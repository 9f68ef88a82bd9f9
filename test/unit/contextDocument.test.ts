import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { contextDocument, fenced, markdownText } from '../../src/core/contextDocument';
import { previewContext } from '../../src/core/contextPreview';
import { snapshotDiff, snapshotFiles, useProject } from '../support/storeKit';

/** The fenced blocks of a document, as CommonMark reads them: [info string, text]. */
function fencedBlocks(markdown: string): [string, string][] {
  const blocks: [string, string][] = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = /^(`{3,})(.*)$/.exec(lines[i]!);
    if (!open) continue;
    const body: string[] = [];
    let j = i + 1;
    // Closed by a line of backticks at least as long as the opening fence, and nothing else.
    while (j < lines.length && !(new RegExp(`^\`{${open[1]!.length},}\\s*$`).test(lines[j]!))) body.push(lines[j++]!);
    blocks.push([open[2]!, body.join('\n')]);
    i = j;
  }
  return blocks;
}

describe('contextDocument (the editor’s "Preview injected context")', () => {
  const ctx = useProject('ltm-context-doc-');
  const budgets = { sessionStart: 2000, prompt: 600 };

  async function seed(): Promise<{ top: string; pool: string }> {
    const store = ctx.open();
    const top = (await store.store({ topic: 'Always run migrations before tests', content: 'The test database needs the latest schema.', tags: ['importance:critical'] })).memory.id;
    const pool = (
      await store.store({
        topic: 'Postgres pool | <img src=x onerror=alert(1)> *exhaustion* under [batch](http://x) jobs',
        content: 'A pool of 10 ran dry when batch jobs held connections (see src/db/pool.ts).\n````\n```\nraised to 50\n',
      })
    ).memory.id;
    for (let i = 0; i < 4; i++) await store.store({ topic: `Unrelated note ${i}`, content: `About CSS grid ${i}.` });
    await store.updateState((s) => {
      s.config.memories_to_load = 1;
    });
    return { top, pool };
  }

  it('quotes exactly what `ltm context` shows, with why each memory was chosen, and changes no file', async () => {
    const { top, pool } = await seed();
    const store = ctx.open();
    const before = snapshotFiles(ctx.root);
    const prompt = 'why does the postgres connection pool run dry during batch jobs';
    const doc = contextDocument(store, { projectName: 'shop', question: { prompt }, budgets });
    const preview = previewContext(store, { prompt, budgetTokens: budgets.sessionStart, promptBudgetTokens: budgets.prompt });
    assert.deepEqual(preview.prompt!.memories.map((m) => m.id), [pool]);

    const blocks = fencedBlocks(doc);
    assert.deepEqual(blocks, [
      ['text', prompt],
      ['markdown', preview.prompt!.text],
      ['markdown', preview.session_start.text],
    ], 'the prompt, then both injections, each exactly and whole');
    assert.match(doc, /^# What Claude Code would be given: shop\n/);
    assert.match(doc, /## With this prompt: 1 memory, ~\d+ tokens/);
    assert.match(doc, new RegExp(`\\| \`${pool}\` \\| .* \\| postgres, connection, pool, dry, batch, jobs \\|`), 'the words it matched');
    assert.match(doc, /## At session start: 1 memory, ~\d+ tokens/);
    assert.match(doc, new RegExp(`\\| 1 \\| \`${top}\` \\| Always run migrations before tests \\| Full \\| \\d\\.\\d\\d \\|`), 'rank, phase and priority');
    assert.match(doc, /6 active memories in all/);
    assert.match(doc, /600 with a prompt/);
    assert.deepEqual(snapshotDiff(before, snapshotFiles(ctx.root)), [], 'no access counted, no file written');
  });

  it('says why nothing is injected for an unrelated prompt, a short answer, a failure or a file no memory names', async () => {
    await seed();
    const store = ctx.open();
    const unrelated = contextDocument(store, { projectName: 'shop', question: { prompt: 'make the login button blue and round' }, budgets });
    assert.match(unrelated, /## With this prompt: nothing\n/);
    assert.match(unrelated, /Nothing would be injected: no memory that the session start does not already give matches enough of the prompt\. A memory is offered when it matches at least 3 distinct words/);
    assert.equal(fencedBlocks(unrelated).length, 2, 'the prompt and the session start; no prompt injection');
    assert.match(contextDocument(store, { projectName: 'shop', question: { prompt: 'yes' }, budgets }), /Nothing would be injected: short answers \("yes", "continue"\) and slash commands are not searched/);
    assert.match(contextDocument(store, { projectName: 'shop', question: { error: 'TypeError: undefined is not a function' }, budgets }), /## With this failure: nothing\n[\s\S]*The error:\n\n```text\nTypeError: undefined is not a function\n```/);
    const file = contextDocument(store, { projectName: 'shop', question: { file: 'src/db/pool.ts' }, budgets });
    assert.match(file, /## With this file: 1 memory[\s\S]*\| Memory \| Topic \| Names it as \|[\s\S]*\| src\/db\/pool\.ts \|/);
    assert.match(contextDocument(store, { projectName: 'shop', question: { file: 'src/other.ts' }, budgets }), /## With this file: nothing\n/);
  });

  it('keeps memory text from being read as Markdown: escaped in prose and tables, fenced so that it cannot close its block', async () => {
    const { pool } = await seed();
    const store = ctx.open();
    const doc = contextDocument(store, { projectName: 'a *bold* <b>name</b>', question: { prompt: 'why does the postgres connection pool run dry during batch jobs\n```\n# not a heading' }, budgets });
    assert.match(doc, /^# What Claude Code would be given: a \\\*bold\\\* \\<b\\>name\\<\/b\\>\n/);
    const row = doc.split('\n').find((l) => l.startsWith(`| \`${pool}\``))!;
    assert.equal(row.split(/(?<!\\)\|/).length, 5, `the topic's "|" does not add a table cell: ${row}`);
    assert.ok(row.includes('\\<img src=x onerror=alert(1)\\>'), row);
    assert.ok(row.includes('\\*exhaustion\\* under \\[batch\\](http://x)'), row);
    // The memory's ```` and ``` lines stay inside the injection's block; so do the prompt's.
    const blocks = fencedBlocks(doc);
    assert.equal(blocks.length, 3);
    assert.match(blocks[0]![1], /\n```\n# not a heading$/);
    assert.match(blocks[1]![1], /\n````\n```\nraised to 50$/);
  });

  it('fences and escapes any text', () => {
    assert.equal(fenced('plain'), '```\nplain\n```');
    assert.equal(fenced('a ``` b\n````', 'md'), '`````md\na ``` b\n````\n`````');
    assert.equal(markdownText('a|b <c> [d](e) *f* _g_ `h` &amp; ~i~ \\'), 'a\\|b \\<c\\> \\[d\\](e) \\*f\\* \\_g\\_ \\`h\\` \\&amp; \\~i\\~ \\\\');
    assert.equal(markdownText('two\nlines\tand  spaces'), 'two lines and spaces');
    assert.equal(markdownText('x'.repeat(300)).length, 200);
  });

  it('names the project by its folder', async () => {
    await seed();
    const doc = contextDocument(ctx.open(), { projectName: path.basename(ctx.project), question: {}, budgets, note: 'Another process (pid 1) serves this folder.' });
    assert.match(doc, /_Another process \(pid 1\) serves this folder\._/);
    assert.equal(fencedBlocks(doc).length, 1, 'the session start alone');
  });
});
