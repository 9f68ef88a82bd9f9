/**
 * The packaged extension in a real VS Code, driven as a person would: the
 * .vsix installed into code-server, its window in Chromium, a sample project
 * with memories in every phase. Screenshots go to test-results/screenshots/.
 */
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Browser, FrameLocator, Locator, Page } from 'playwright-core';
import { createSampleProject, SAMPLE_MEMORIES, SAMPLE_POOL_ANCHOR } from '../../scripts/sample-project';
import { splitFrontmatter } from '../../src/core/memoryFile';
import { REPO_ROOT, ltm, ltmJson } from '../support/ltmProcess';
import { CodeServer, launchBrowser, openWorkbench, requireVsCodeTools } from '../vscode/codeServer';
import { contrastOf, readColours, WCAG_AA_TEXT, type Contrast, type PageElement } from '../vscode/contrast';

const SCREENSHOTS = path.join(REPO_ROOT, 'test-results', 'screenshots');

/** Builds the .vsix as it would ship. */
function packageVsix(): string {
  const out = path.join(REPO_ROOT, 'out', 'ltm.vsix');
  fs.mkdirSync(path.dirname(out), { recursive: true });
  const r = spawnSync('npm', ['run', '--silent', 'package', '--', '-o', out], { cwd: REPO_ROOT, encoding: 'utf8' });
  assert.equal(r.status, 0, `packaging failed: ${r.stdout}${r.stderr}`);
  assert.doesNotMatch(`${r.stdout}${r.stderr}`, /WARNING/i, 'vsce packages without a warning');
  return out;
}

function memoryFile(project: string, id: string): string {
  return path.join(project, '.claude', 'ltm', 'memories', `${id}.md`);
}

interface ListJson {
  memories: { id: string; topic: string; phase: number; tags: string[] }[];
}

interface ReviewJson {
  review_new_memories: boolean;
  memories: { id: string; topic: string }[];
}

interface ArchiveIndexJson {
  memories: Record<string, { reason: string; merged_into?: string; version_of?: string }>;
}

function archiveIndex(project: string): ArchiveIndexJson {
  return JSON.parse(fs.readFileSync(path.join(project, '.claude', 'ltm', 'archive_index.json'), 'utf8')) as ArchiveIndexJson;
}

/** Calls a tool of the extension's MCP endpoint as Claude Code would (the port and token from server.json). */
async function callMcpTool(project: string, name: string, args: Record<string, unknown>): Promise<void> {
  const info = JSON.parse(fs.readFileSync(path.join(project, '.claude', 'ltm', 'server.json'), 'utf8')) as { port: number; token: string };
  const response = await fetch(`http://127.0.0.1:${info.port}/mcp`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${info.token}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
  });
  const body = await response.text();
  assert.equal(response.status, 200, body);
  assert.doesNotMatch(body, /"isError":\s*true/, body);
}

describe('the packaged extension in a real VS Code (UI)', function () {
  this.timeout(300_000);
  let root: string;
  let project: string;
  let server: CodeServer;
  let browser: Browser;
  let page: Page;

  const view = () => page.locator('.part.sidebar');
  const row = (text: string) => view().locator('.monaco-list-row', { hasText: text });
  /** A top-level group of the tree: a phase or a tag. */
  const group = (name: string) => view().locator('.monaco-list-row[aria-level="1"]', { hasText: new RegExp(`^${name}\\s*\\d+$`) });
  const webview = (): FrameLocator => page.frameLocator('iframe.webview.ready').last().frameLocator('#active-frame');
  const shot = async (name: string) => {
    fs.mkdirSync(SCREENSHOTS, { recursive: true });
    await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`) });
  };
  const runCommand = async (title: string) => {
    await page.keyboard.press('F1');
    const input = page.locator('.quick-input-widget input');
    await input.waitFor();
    await input.fill(`>${title}`);
    await page.locator('.quick-input-list .monaco-list-row', { hasText: title }).first().waitFor();
    await page.keyboard.press('Enter');
  };

  before(async function () {
    requireVsCodeTools();
    const vsix = packageVsix();
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'ltm-ui-'));
    project = path.join(root, 'sample-project');
    await createSampleProject(project);
    server = await CodeServer.start({ vsix, userSettings: { 'workbench.secondarySideBar.defaultVisibility': 'hidden' } });
    browser = await launchBrowser();
    page = await openWorkbench(browser, server, project);
  });

  afterEach(async function () {
    // What the window showed when a test failed, next to the screenshots.
    if (this.currentTest?.state === 'failed' && page) await shot(`failed-${this.currentTest.title.replace(/[^\w]+/g, '-').slice(0, 60)}`).catch(() => undefined);
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
    if (root) fs.rmSync(root, { recursive: true, force: true });
  });

  it('shows the memories by phase in the LTM view', async () => {
    await page.locator('.activitybar [aria-label^="LTM"]').first().click();
    for (const phase of ['Full', 'Hint', 'Abstract', 'Archived']) await group(phase).waitFor({ timeout: 30_000 });
    await row(SAMPLE_MEMORIES[0]!.topic).waitFor();
    assert.match(await row(SAMPLE_MEMORIES[0]!.topic).innerText(), /★ critical · 1\.00 · networking, hooks/);
    await page.locator('.statusbar-item', { hasText: '6 memories' }).waitFor();
    await shot('tree-by-phase');
  });

  it('groups them by tag from the view toolbar', async () => {
    await view().locator('.action-label[aria-label="Group by tag"]').first().click();
    for (const tag of ['hooks', 'testing', 'conventions']) await group(tag).waitFor();
    assert.equal(await group('Full').count(), 0, 'no phase groups while grouping by tag');
    await shot('tree-by-tag');
    await view().locator('.action-label[aria-label="Group by phase"]').first().click();
    await group('Archived').waitFor();
  });

  it('opens a memory in its panel with the priority broken down, and saves an edited Summary with Ctrl+S', async () => {
    const target = ltmJson<ListJson>(['list', '--project', project]).memories.find((m) => m.topic === SAMPLE_MEMORIES[1]!.topic)!;
    const file = memoryFile(project, target.id);
    const before = fs.readFileSync(file, 'utf8');
    await row(target.topic).click();
    const frame = webview();
    await frame.locator('#topic', { hasText: target.topic }).waitFor({ timeout: 30_000 });
    await frame.locator('#priority-total').waitFor();
    for (const part of ['Difficulty', 'Recency', 'Frequency', 'Importance']) await frame.locator('table.priority th', { hasText: part }).waitFor();
    await shot('memory-panel');

    const edited = 'Pool of 10 ran dry under batch jobs: raised to 50, 60 s timeout, clients released in finally.';
    await frame.locator('#edit').click();
    await frame.locator('#edit-summary textarea').fill(edited);
    await frame.locator('#dirty', { hasText: 'Unsaved changes' }).waitFor();
    await page.locator('.tab', { hasText: `● ${target.topic.slice(0, 20)}` }).first().waitFor();
    await shot('memory-panel-edit');
    await frame.locator('#edit-summary textarea').press('Control+s');
    await frame.locator('#notice', { hasText: 'Saved (summary)' }).waitFor();
    const after = fs.readFileSync(file, 'utf8');
    const oldSummary = SAMPLE_MEMORIES[1]!.summary;
    assert.ok(before.includes(`## Summary\n${oldSummary}\n\n## Content\n`));
    assert.equal(after, before.replace(`## Summary\n${oldSummary}\n`, `## Summary\n${edited}\n`), 'only the Summary section changed');
    assert.equal(splitFrontmatter(after).frontmatter, splitFrontmatter(before).frontmatter);
  });

  it('brings an unsaved edit back, still unsaved, after Developer: Reload Window', async () => {
    const target = ltmJson<ListJson>(['list', '--project', project]).memories.find((m) => m.topic === SAMPLE_MEMORIES[0]!.topic)!;
    const before = fs.readFileSync(memoryFile(project, target.id), 'utf8');
    const draft = 'A draft typed before the window reloaded: <b>kept</b> as text.';
    const tab = () => page.locator('.tab', { hasText: `● ${target.topic.slice(0, 20)}` }).first();
    await row(target.topic).click();
    let frame = webview();
    await frame.locator('#topic', { hasText: target.topic }).waitFor({ timeout: 30_000 });
    await frame.locator('#edit').click();
    await frame.locator('#edit-summary textarea').fill(draft);
    await frame.locator('#dirty', { hasText: 'Unsaved changes' }).waitFor();
    await tab().waitFor();

    await runCommand('Developer: Reload Window');
    await page.waitForSelector('.monaco-workbench', { timeout: 60_000 });
    await tab().waitFor({ timeout: 60_000 });
    await tab().click();
    frame = webview();
    await frame.locator('#dirty', { hasText: 'Unsaved changes' }).waitFor({ timeout: 30_000 });
    assert.equal(await frame.locator('#edit-summary textarea').inputValue(), draft, 'the draft is back in the editor');
    assert.equal(fs.readFileSync(memoryFile(project, target.id), 'utf8'), before, 'nothing was saved');
    await shot('memory-panel-restored-draft');
    // Back as it was for the tests after this one: the edit dropped, the tab closed.
    await frame.locator('#cancel-edit').click();
    await page.locator('.tab', { hasText: target.topic.slice(0, 20) }).first().waitFor();
    await runCommand('View: Close All Editors');
    await row(target.topic).waitFor();
  });

  it('brings a half-filled New memory form back after Developer: Reload Window, and also when its tab is shown again', async () => {
    const memories = ltmJson<ListJson>(['list', '--project', project]).memories.length;
    const formTab = () => page.locator('.tab', { hasText: 'New memory' }).first();
    await view().locator('.action-label[aria-label="New memory"]').first().click();
    let frame = webview();
    await frame.locator('#field-topic input').fill('Deploys wait for the migration');
    await frame.locator('#field-content textarea').fill('Run the migration job first; the deploy checks its marker.');
    await frame.locator('#field-tags input').fill('deploy, migrations');

    // A hidden webview is not kept: shown again, its page starts over from what it kept.
    await row(SAMPLE_MEMORIES[2]!.topic).click();
    await page.locator('.tab', { hasText: SAMPLE_MEMORIES[2]!.topic.slice(0, 20) }).first().waitFor();
    await formTab().click();
    frame = webview();
    await frame.locator('#new-memory').waitFor({ timeout: 30_000 });
    assert.equal(await frame.locator('#field-content textarea').inputValue(), 'Run the migration job first; the deploy checks its marker.');

    await runCommand('Developer: Reload Window');
    await page.waitForSelector('.monaco-workbench', { timeout: 60_000 });
    await formTab().waitFor({ timeout: 60_000 });
    await formTab().click();
    frame = webview();
    await frame.locator('#new-memory').waitFor({ timeout: 30_000 });
    assert.equal(await frame.locator('#field-topic input').inputValue(), 'Deploys wait for the migration');
    assert.equal(await frame.locator('#field-content textarea').inputValue(), 'Run the migration job first; the deploy checks its marker.');
    assert.equal(await frame.locator('#field-tags input').inputValue(), 'deploy, migrations');
    assert.equal(ltmJson<ListJson>(['list', '--project', project]).memories.length, memories, 'nothing was stored');
    await frame.locator('#cancel').click();
    await formTab().waitFor({ state: 'detached' });
    await runCommand('View: Close All Editors');
  });

  it('shows memory text as text: markup in a memory is never executed or rendered', async () => {
    const hostile = ltmJson<{ id: string }>([
      'store',
      '--project',
      project,
      '--topic',
      'Hostile <img src=x onerror="document.title=\'pwned\'"> topic',
      '--content',
      '<script>document.title="pwned"</script> and <b>bold</b>',
    ]);
    await row('Hostile <img').waitFor({ timeout: 10_000 });
    await row('Hostile <img').click();
    const frame = webview();
    await frame.locator('#topic', { hasText: 'Hostile <img src=x onerror=' }).waitFor();
    assert.equal(await frame.locator('#content').innerText(), '<script>document.title="pwned"</script> and <b>bold</b>');
    assert.equal(await frame.locator('#app img, #app script, #app b').count(), 0, 'no element was created from memory text');
    assert.notEqual(await frame.locator('html').evaluate('document.title'), 'pwned', 'no script from memory text ran');
    await fetchForget(project, hostile.id);
  });

  it('"LTM: Fix integrity" from the command palette repairs a broken store', async () => {
    const ltmDir = path.join(project, '.claude', 'ltm');
    // The extension's server writes index.json in pauses (at most 2 s): the hand edit below must not be overwritten by it.
    for (let waited = 0; fs.existsSync(path.join(ltmDir, 'index-pending.json')) && waited < 10_000; waited += 50) await new Promise((r) => setTimeout(r, 50));
    fs.writeFileSync(path.join(ltmDir, 'memories', 'mem_0badc0de.md'), '---\nid: "mem_0badc0de"\ntopic: "Unlisted after a bad merge"\n---\nMerged body.\n');
    const index = JSON.parse(fs.readFileSync(path.join(ltmDir, 'index.json'), 'utf8')) as { memories: Record<string, unknown> };
    index.memories.mem_1ee7c0de = { topic: 'gone', tags: [], phase: 0, difficulty: 0.5, created_at: '2026-01-01T00:00:00Z' };
    fs.writeFileSync(path.join(ltmDir, 'index.json'), JSON.stringify(index, null, 2));
    const check = ltm(['check', '--project', project, '--json']);
    assert.equal(check.status, 1, 'check fails on a store with problems');
    const broken = JSON.parse(check.stdout) as { healthy: boolean; problems: { kind: string }[] };
    assert.deepEqual(broken.problems.map((p) => p.kind).sort(), ['missing_file', 'not_indexed']);

    await runCommand('LTM: Check integrity');
    await webview().locator('#integrity-status', { hasText: '2 issues found' }).waitFor({ timeout: 30_000 });
    await shot('integrity-panel');

    await runCommand('LTM: Fix integrity');
    await page.locator('.notifications-toasts, .notifications-center').locator('text=/repaired 2 problem/').first().waitFor({ timeout: 30_000 });
    const fixed = ltmJson<{ healthy: boolean; problems: unknown[] }>(['check', '--project', project]);
    assert.equal(fixed.healthy, true, JSON.stringify(fixed.problems));
    assert.ok(fs.existsSync(path.join(ltmDir, 'memories', 'mem_0badc0de.md')), 'the unlisted memory is kept');
    assert.ok(Object.hasOwn((JSON.parse(fs.readFileSync(path.join(ltmDir, 'index.json'), 'utf8')) as { memories: object }).memories, 'mem_0badc0de'), 'and indexed');

    // A hand-edited anchors entry LTM cannot read: named in the panel as a warning, which leaves the store healthy.
    const memoryFile = path.join(ltmDir, 'memories', 'mem_0badc0de.md');
    const original = fs.readFileSync(memoryFile, 'utf8');
    fs.writeFileSync(memoryFile, original.replace(/\n---\n/, '\nanchors:\n  - path: "src/gone.ts"\n    hash: "nope"\n---\n'));
    await runCommand('LTM: Check integrity');
    const frame = webview();
    await frame.locator('#integrity-status', { hasText: 'Healthy, with 1 warning for you to correct.' }).waitFor({ timeout: 30_000 });
    const warning = frame.locator('.problem.warning');
    await warning.locator('h3', { hasText: 'Warning: Anchors entries that could not be read' }).waitFor();
    assert.match(await warning.innerText(), /mem_0badc0de: anchors\[0\] \(src\/gone\.ts\) is left out: anchors\[0\]\.hash must be poly64: and 16 hex digits/);
    assert.match(await warning.innerText(), /Fix leaves these as they are/);
    fs.writeFileSync(memoryFile, original);
  });

  it('restores an archived memory from the archives view', async () => {
    const archived = ltmJson<ListJson>(['list', '--phase', '3', '--project', project]).memories.find((m) => m.topic === SAMPLE_MEMORIES[4]!.topic)!;
    assert.ok(archived, 'the sample has an archived memory');
    await runCommand('LTM: Show archives');
    const frame = webview();
    await frame.locator('#archive-query').waitFor({ timeout: 30_000 });
    await frame.locator(`article[data-id="${archived.id}"]`).waitFor();
    await shot('archives-view');
    await frame.locator(`#restore-${archived.id}`).click();
    await waitForFile(memoryFile(project, archived.id));
    const restored = ltmJson<{ phase: number; content: string }>(['get', archived.id, '--project', project]);
    assert.equal(restored.phase, 0);
    assert.equal(restored.content, SAMPLE_MEMORIES[4]!.content, 'the full original text is back');
    await row(archived.topic).waitFor();
  });

  it('shows a memory stored through MCP in the tree without a manual refresh', async () => {
    const topic = 'Stored by Claude Code through MCP just now';
    const started = Date.now();
    await callMcpTool(project, 'store_memory', { topic, content: 'It appears in the Memories view by itself.', tags: ['mcp'] });
    await row(topic).waitFor({ timeout: 5_000 });
    const elapsed = Date.now() - started;
    assert.ok(elapsed < 2_000, `the tree showed it after ${elapsed} ms`);
    await shot('tree-after-mcp-store');
  });

  describe('memories people can trust', () => {
    const pool = SAMPLE_MEMORIES[1]!;
    const poolId = () => ltmJson<ListJson>(['list', '--project', project]).memories.find((m) => m.topic === pool.topic)!.id;
    const editor = () => page.locator('.part.editor .monaco-editor').first();
    const lens = (title: string) => editor().locator('.codelens-decoration a', { hasText: new RegExp(`^${title}$`) });
    const lineNumber = (n: number) => editor().locator('.margin-view-overlays .line-numbers', { hasText: new RegExp(`^${n}$`) });
    /**
     * The boxes of `targets`, measured together once all are laid out: a lens drawn again (the editor
     * refreshes its lenses when the store changes) has no box for a moment, and boundingBox() is null then.
     */
    type Box = NonNullable<Awaited<ReturnType<Locator['boundingBox']>>>;
    const boxesOf = async <T extends Locator[]>(...targets: T): Promise<{ [K in keyof T]: Box }> => {
      const deadline = Date.now() + 10_000;
      for (;;) {
        const boxes = await Promise.all(targets.map((t) => t.boundingBox({ timeout: 1_000 }).catch(() => null)));
        if (boxes.every((b) => b !== null)) return boxes as { [K in keyof T]: Box };
        if (Date.now() > deadline) throw new Error(`no box for ${boxes.map((b, i) => (b ? null : String(targets[i]))).filter(Boolean).join(', ')}`);
        await page.waitForTimeout(100);
      }
    };
    const tab = (name: string) => page.locator('.part.editor .tabs-container .tab', { hasText: name });
    const contextMenuItem = (label: string) => page.locator('.context-view .monaco-menu .action-item', { hasText: label });
    /** Quick Open: the palette without its ">" searches files. */
    const openFile = async (relative: string) => {
      await page.keyboard.press('F1');
      const input = page.locator('.quick-input-widget input');
      await input.waitFor();
      await input.fill(relative);
      await page.locator('.quick-input-list .monaco-list-row', { hasText: path.basename(relative) }).first().waitFor();
      await page.keyboard.press('Enter');
      await tab(path.basename(relative)).waitFor();
    };
    /** Clicks the line of the editor that shows `text`, types at its end as a person would, and saves with Ctrl+S. */
    const typeAtEndOfLineAndSave = async (text: string, typed: string) => {
      await editor().locator('.view-line', { hasText: text }).click();
      await page.keyboard.press('End');
      await page.keyboard.type(typed);
      await page.locator('.part.editor .tab.dirty').first().waitFor();
      await page.keyboard.press('Control+s');
      await page.locator('.part.editor .tab.dirty').waitFor({ state: 'detached' });
      assert.ok(fs.readFileSync(path.join(project, SAMPLE_POOL_ANCHOR.file), 'utf8').includes(typed), 'saved');
    };
    /**
     * Runs an action of a tree row (its inline button or an item of its context menu) until `done`.
     * VS Code gives the command the row's memory only while the extension host still holds that
     * item: clicked while the view refreshes (file events arrive a moment after each change), the
     * command runs without it and LTM asks which memory ("Memory to …"). Then that question is
     * closed and the action tried again, as a person would.
     */
    const rowAction = async (target: Locator, how: { inline: string } | { menu: string }, done: () => Promise<boolean>) => {
      const askedWhich = page.locator('.quick-input-widget input[placeholder^="Memory "]');
      for (let attempt = 1; ; attempt++) {
        if ('inline' in how) {
          await target.hover();
          await target.locator(`.action-label[aria-label="${how.inline}"]`).click();
        } else {
          await target.click({ button: 'right' });
          // Chosen with the keyboard: a menu ignores mouse clicks in its first 100 ms, which a test is quick enough to hit.
          const item = contextMenuItem(how.menu);
          await item.hover();
          await page.locator('.context-view .monaco-menu .action-item.focused', { hasText: how.menu }).waitFor();
          await page.keyboard.press('Enter');
        }
        const deadline = Date.now() + 5_000;
        while (Date.now() < deadline && !(await askedWhich.isVisible()) && !(await done().catch(() => false))) await page.waitForTimeout(50);
        if (await done().catch(() => false)) return;
        if (attempt === 3) throw new Error(`${JSON.stringify(how)} on "${await target.innerText()}" did not take effect`);
        await page.keyboard.press('Escape');
        await askedWhich.waitFor({ state: 'hidden' });
      }
    };
    const hasText = (target: Locator, text: string) => async () => (await target.innerText({ timeout: 1_000 })).includes(text);
    const staleOnDisk = () => ltmJson<{ stale: { id: string }[] }>(['stale', '--project', project]).stale.map((m) => m.id);

    before(async () => {
      // Open already when the tests above ran; opened here when only these run (--grep).
      if (!(await group('Full').isVisible())) await page.locator('.activitybar [aria-label^="LTM"]').first().click();
      await group('Full').waitFor({ timeout: 30_000 });
    });

    it('shows "LTM: 1 memory" over the anchored lines of src/db/pool.ts; clicking it opens the memory', async () => {
      await runCommand('View: Close All Editors');
      await runCommand('Notifications: Clear All Notifications');
      await openFile(SAMPLE_POOL_ANCHOR.file);
      await lens('LTM: 1 memory').waitFor({ timeout: 30_000 });
      // The lens sits above the first anchored line: below the line before it, above that line.
      const [first] = SAMPLE_POOL_ANCHOR.lines;
      const [lensBox, before, at] = await boxesOf(lens('LTM: 1 memory'), lineNumber(first - 1), lineNumber(first));
      assert.ok(lensBox.y >= before.y + before.height - 1 && lensBox.y + lensBox.height <= at.y + 1, `the lens (y ${lensBox.y}) is between lines ${first - 1} (y ${before.y}) and ${first} (y ${at.y})`);
      assert.equal(await editor().locator('.codelens-decoration a').count(), 1, 'one lens in the file');
      await shot('codelens');

      await lens('LTM: 1 memory').click();
      await webview().locator('#topic', { hasText: pool.topic }).waitFor({ timeout: 30_000 });
      await webview().locator(`#anchors li.anchor[data-state="fresh"]`, { hasText: `${SAMPLE_POOL_ANCHOR.file}#L${first}-${SAMPLE_POOL_ANCHOR.lines[1]}` }).waitFor();
    });

    it('marks the memory possibly outdated after an edit inside the anchored lines; "Still true — re-anchor" in its panel clears it', async () => {
      const id = poolId();
      await tab('pool.ts').click();
      await typeAtEndOfLineAndSave('max:', ' // the nightly import holds a client per chunk');
      await lens('LTM: 1 memory · possibly outdated').waitFor({ timeout: 10_000 });
      await row(pool.topic).filter({ hasText: 'possibly outdated' }).waitFor({ timeout: 10_000 });
      assert.deepEqual(staleOnDisk(), [id], 'the store on disk says so too');

      await lens('LTM: 1 memory · possibly outdated').click();
      const frame = webview();
      await frame.locator('#anchors.stale #stale-badge', { hasText: 'possibly outdated' }).waitFor({ timeout: 30_000 });
      const changed = frame.locator('#anchors li.anchor[data-state="changed"]');
      await changed.waitFor();
      assert.match(await changed.innerText(), /changed since the memory was written/);
      assert.match(await changed.locator('pre').innerText(), /max: 50, \/\/ the nightly import holds a client per chunk/, 'the text at the lines now');
      await frame.locator('#reanchor', { hasText: 'Still true — re-anchor' }).waitFor();
      await shot('memory-panel-outdated');

      await frame.locator('#reanchor').click();
      await frame.locator('#anchors:not(.stale) li.anchor[data-state="fresh"]').waitFor({ timeout: 10_000 });
      assert.equal(await frame.locator('#stale-badge').count(), 0);
      await row(pool.topic).filter({ hasNotText: 'possibly outdated' }).waitFor({ timeout: 10_000 });
      assert.deepEqual(staleOnDisk(), [], 'the store on disk agrees');
      await tab('pool.ts').click();
      await lens('LTM: 1 memory').waitFor({ timeout: 10_000 });
    });

    it('offers "Still true — re-anchor memory" in the tree’s context menu of a possibly outdated memory', async () => {
      await typeAtEndOfLineAndSave('connectionTimeoutMillis:', ' // waits a minute for a client');
      const stale = row(pool.topic).filter({ hasText: 'possibly outdated' });
      await stale.waitFor({ timeout: 10_000 });
      await rowAction(stale, { menu: 'Still true — re-anchor memory' }, async () => !(await hasText(row(pool.topic), 'possibly outdated')()));
      await lens('LTM: 1 memory').waitFor({ timeout: 10_000 });
      assert.deepEqual(staleOnDisk(), []);
      // A memory that holds is not offered it.
      await row(pool.topic).click({ button: 'right' });
      await contextMenuItem('Merge into…').waitFor();
      assert.equal(await contextMenuItem('Still true — re-anchor memory').count(), 0);
      await page.keyboard.press('Escape');
    });

    const duplicate = { topic: 'Nightly import holds pool connections for minutes', content: 'The nightly Postgres import keeps a pool client per chunk: release it between chunks, or the pool of 50 runs dry under batch jobs again.', tags: ['postgres', 'batch'] };
    const mistake = { topic: 'Temporary: debug print left in withClient', content: 'A console.log in withClient, to be removed before merging.', tags: ['debugging'] };

    it('holds what Claude stores for review in the Inbox: Approve makes it a memory, Reject archives it', async () => {
      await runCommand('Notifications: Clear All Notifications');
      ltmJson(['review', '--on', '--project', project]);
      await callMcpTool(project, 'store_memory', duplicate);
      await callMcpTool(project, 'store_memory', mistake);
      const inbox = view().locator('.monaco-list-row[aria-level="1"]', { hasText: /^Inbox\s*2 awaiting review$/ });
      await inbox.waitFor({ timeout: 10_000 });
      const waiting = ltmJson<ReviewJson>(['review', '--project', project]).memories;
      const approvedId = waiting.find((m) => m.topic === duplicate.topic)!.id;
      const rejectedId = waiting.find((m) => m.topic === mistake.topic)!.id;
      for (const m of [duplicate, mistake]) assert.match(await row(m.topic).innerText(), /awaiting review/);
      await row(duplicate.topic).hover();
      await shot('inbox');

      await rowAction(row(duplicate.topic), { inline: 'Approve' }, hasText(view().locator('.monaco-list-row[aria-level="1"]', { hasText: /^Inbox/ }), '1 awaiting review'));
      assert.doesNotMatch(await row(duplicate.topic).innerText(), /awaiting review/);
      const inboxGone = async () => (await view().locator('.monaco-list-row[aria-level="1"]', { hasText: /^Inbox/ }).count()) === 0;
      await rowAction(row(mistake.topic), { inline: 'Reject (archive)' }, inboxGone);

      assert.deepEqual(ltmJson<ReviewJson>(['review', '--project', project]).memories, [], 'nothing awaits review');
      assert.doesNotMatch(splitFrontmatter(fs.readFileSync(memoryFile(project, approvedId), 'utf8')).frontmatter, /^status:/m, 'approved: no status line');
      const ltmDir = path.join(project, '.claude', 'ltm');
      assert.ok(!fs.existsSync(memoryFile(project, rejectedId)), 'the rejected memory left memories/');
      assert.match(fs.readFileSync(path.join(ltmDir, 'archives', `${rejectedId}.md`), 'utf8'), /A console\.log in withClient/);
      assert.equal(archiveIndex(project).memories[rejectedId]?.reason, 'rejected');
      ltmJson(['review', '--off', '--project', project]);
    });

    it('merges a memory into another with "Merge into…": the view shows one, both originals are archived', async () => {
      const source = ltmJson<ListJson>(['list', '--project', project]).memories.find((m) => m.topic === duplicate.topic)!;
      const targetId = poolId();
      await runCommand('Notifications: Clear All Notifications');
      const choice = page.locator('.quick-input-list .monaco-list-row', { hasText: pool.topic });
      await rowAction(row(duplicate.topic), { menu: 'Merge into…' }, () => choice.isVisible());
      // The most similar memory first.
      assert.match(await page.locator('.quick-input-list .monaco-list-row').first().innerText(), new RegExp(`${pool.topic}[\\s\\S]*similar`));
      // The quick pick fades in: the picture is taken once it is drawn in full.
      type Animated = { getAnimations(options: { subtree: boolean }): { finished: Promise<unknown> }[] };
      await page.locator('.quick-input-widget').evaluate((el) => Promise.all((el as unknown as Animated).getAnimations({ subtree: true }).map((a) => a.finished)));
      await shot('merge');
      await choice.click();
      await page.locator('.monaco-dialog-box .monaco-button', { hasText: /^Merge$/ }).click();

      await row(duplicate.topic).waitFor({ state: 'detached', timeout: 10_000 });
      assert.equal(await row(pool.topic).count(), 1, 'one memory holds both');
      const target = fs.readFileSync(memoryFile(project, targetId), 'utf8');
      assert.ok(target.includes(pool.content.split('\n')[1]!) && target.includes(duplicate.content), 'the target holds both texts');
      assert.ok(!fs.existsSync(memoryFile(project, source.id)));
      const ltmDir = path.join(project, '.claude', 'ltm');
      const index = archiveIndex(project).memories;
      assert.deepEqual([index[source.id]?.reason, index[source.id]?.merged_into], ['merged', targetId]);
      assert.match(fs.readFileSync(path.join(ltmDir, 'archives', `${source.id}.md`), 'utf8'), /release it between chunks/);
      const [versionId] = Object.entries(index).find(([, e]) => e.version_of === targetId && e.reason === 'merged') ?? [];
      assert.ok(versionId, 'the target’s text before the merge is archived');
      assert.ok(!fs.readFileSync(path.join(ltmDir, 'archives', `${versionId}.md`), 'utf8').includes(duplicate.content));
    });
  });

  describe('legible in every theme, and usable from the keyboard', () => {
    /**
     * The four themes people use most: the names the theme picker shows, and their workbench.colorTheme IDs in
     * VS Code 1.139 (which migrates the "Default Light Modern" of older settings to "Light Modern").
     */
    const THEMES = [
      { name: 'light', label: 'Light Modern', id: 'Light Modern', kind: 'vs' },
      { name: 'hc-dark', label: 'Dark High Contrast', id: 'Default High Contrast', kind: 'hc-black' },
      { name: 'hc-light', label: 'Light High Contrast', id: 'Default High Contrast Light', kind: 'hc-light' },
      // Last: the tests' own default, so the window ends as it began.
      { name: 'dark', label: 'Dark Modern', id: 'Dark Modern', kind: 'vs-dark' },
    ] as const;
    /** Every coloured or dimmed text in the panels; a badge is measured where its text is painted. */
    const MEMORY_TEXT = {
      badge: 'vscode-badge',
      muted: '.muted',
      demotion: '.demotion',
      anchorState: '.anchor-state',
      anchorLink: 'a.anchor-path',
      staleNote: '.stale-note',
      priorityTotal: '.total',
      fact: 'dl.facts dt',
      notice: '.notice',
    };
    const INTEGRITY_TEXT = { status: '#integrity-status', problem: '.problem h3', hint: '.hint', fact: 'dl.facts dt', notice: '.notice' };
    const critical = SAMPLE_MEMORIES.find((m) => m.tags.includes('importance:critical'))!;
    const important = SAMPLE_MEMORIES.find((m) => m.tags.includes('importance:important'))!;
    const anchored = SAMPLE_MEMORIES.find((m) => m.anchors)!;

    const setColorTheme = async (theme: (typeof THEMES)[number]) => {
      // As a person would: Preferences: Color Theme, the theme's name, Enter.
      await page.keyboard.press('F1');
      const input = page.locator('.quick-input-widget input');
      await input.waitFor();
      await input.fill('>Preferences: Color Theme');
      // Not "Preferences: Browse Color Themes in Marketplace", which may come first.
      await page.locator('.quick-input-list .monaco-list-row').filter({ has: page.locator('.label-name', { hasText: /^Preferences: Color Theme$/ }) }).click();
      await page.locator('.quick-input-list .monaco-list-row', { hasText: 'Light Modern' }).first().waitFor();
      await input.fill(theme.label);
      await page.locator('.quick-input-list .monaco-list-row.focused', { hasText: new RegExp(`^${theme.label}`) }).waitFor();
      await page.keyboard.press('Enter');
      await page.locator(`.monaco-workbench.${theme.kind}`).waitFor({ timeout: 30_000 });
    };
    /** A tree row's tooltip lingers and may cover another row or the panel: the pointer leaves the tree until it is gone. */
    const pointerOffTree = async () => {
      await page.mouse.move(900, 10);
      await page.locator('.context-view .rendered-markdown').waitFor({ state: 'hidden' });
    };
    /** Opens a memory's panel and waits until it is drawn in the theme. */
    const openPanel = async (topic: string, theme: (typeof THEMES)[number]) => {
      const frame = webview();
      // A row clicked while the tree refreshes (a file event arriving) may be another one by then: click again.
      for (let attempt = 1; ; attempt++) {
        await pointerOffTree();
        await row(topic).first().click();
        await pointerOffTree();
        try {
          await frame.locator('#topic', { hasText: topic }).waitFor({ timeout: 10_000 });
          break;
        } catch (e) {
          if (attempt === 3) throw e;
        }
      }
      await frame.locator(`body[data-vscode-theme-id="${theme.id}"]`).waitFor();
      return frame;
    };
    /** Reads and rates the text the selectors find in a panel; asserted all at once, so a failure lists every poor pair. */
    const measure = async (frame: FrameLocator, selectors: Record<string, string>): Promise<Contrast[]> => (await readColours(frame.locator('body'), selectors)).map(contrastOf);
    const assertLegible = (measured: Contrast[], theme: string) => {
      const poor = measured.filter((c) => c.ratio < WCAG_AA_TEXT);
      assert.deepEqual(
        poor.map((c) => `${c.what} "${c.text}": ${c.ratio.toFixed(2)} (${c.color} on ${c.backgrounds.filter((b) => b !== 'rgba(0, 0, 0, 0)').join(' over ')})`),
        [],
        `text below ${WCAG_AA_TEXT}:1 in ${theme}`,
      );
    };
    const showMemoriesView = async () => {
      if (!(await group('Full').isVisible())) await page.locator('.activitybar [aria-label^="LTM"]').first().click();
      await group('Full').waitFor({ timeout: 30_000 });
    };
    beforeEach(showMemoriesView);

    for (const theme of THEMES) {
      it(`keeps badge and status text at WCAG AA contrast (4.5:1) in ${theme.id}`, async () => {
        await runCommand('View: Close All Editors');
        await runCommand('Notifications: Clear All Notifications');
        await setColorTheme(theme);

        const measured: Contrast[] = [];
        for (const m of [important, anchored, critical]) measured.push(...(await measure(await openPanel(m.topic, theme), MEMORY_TEXT)));
        await shot(`theme-${theme.name}`);

        // The integrity panel, unhealthy and healthy: a memory file the index does not list, then gone again.
        const stray = path.join(project, '.claude', 'ltm', 'memories', 'mem_c010c0de.md');
        // With an anchors entry LTM cannot read, so the panel shows a warning too.
        fs.writeFileSync(stray, '---\nid: "mem_c010c0de"\ntopic: "Not in the index"\nanchors:\n  - path: "src/gone.ts"\n    hash: "nope"\n---\nBody.\n');
        await runCommand('LTM: Check integrity');
        const integrity = webview();
        await integrity.locator('#integrity-status', { hasText: '1 issue found' }).waitFor({ timeout: 30_000 });
        await integrity.locator(`body[data-vscode-theme-id="${theme.id}"]`).waitFor();
        measured.push(...(await measure(integrity, INTEGRITY_TEXT)));
        fs.rmSync(stray);
        await row('Not in the index').waitFor({ state: 'detached', timeout: 10_000 });
        await pointerOffTree();
        await integrity.locator('#run-check').click();
        await integrity.locator('#integrity-status', { hasText: 'Healthy' }).waitFor({ timeout: 30_000 });
        measured.push(...(await measure(integrity, INTEGRITY_TEXT)));

        for (const text of ['importance: critical', 'importance: important', 'holds', '1 issue found', 'Warning:', 'Healthy']) assert.ok(measured.some((c) => c.text.includes(text)), `measured "${text}"`);
        assertLegible(measured, theme.id);
      });
    }

    /** Marks the focused element, through shadow roots (a vscode-textarea focuses the textarea inside it), with `data-ltm-focused="<step>"`. */
    const markFocused = (frame: FrameLocator, step: number) =>
      frame.locator('body').evaluate((bodyElement, mark) => {
        const body = bodyElement as unknown as PageElement;
        let el = body.ownerDocument.activeElement;
        while (el?.shadowRoot?.activeElement) el = el.shadowRoot.activeElement;
        if (!el || el === body || !body.ownerDocument.hasFocus()) return false;
        el.setAttribute('data-ltm-focused', mark);
        return true;
      }, String(step));
    /** Tabs from the panel's heading until focus leaves the panel or comes round again: each stop's role and accessible name. */
    const tabStops = async (frame: FrameLocator): Promise<{ role: string; name: string; snapshot: string }[]> => {
      await frame.locator('h1').first().click();
      const stops: { role: string; name: string; snapshot: string }[] = [];
      for (let i = 0; i < 40; i++) {
        await page.keyboard.press('Tab');
        if (!(await markFocused(frame, i))) break;
        // Playwright computes the accessible name (WAI-ARIA accname), shadow DOM included.
        const snapshot = (await frame.locator(`[data-ltm-focused="${i}"]`).ariaSnapshot()).split('\n')[0]!;
        if (stops[0]?.snapshot === snapshot) break;
        // `- textbox "Summary": "its value"`: the role, then the name in quotes.
        const m = /^- (\w+)(?: "((?:[^"\\]|\\.)*)")?/.exec(snapshot);
        stops.push({ role: m?.[1] ?? '', name: m?.[2] ?? '', snapshot });
      }
      return stops;
    };

    it('reaches every control of the memory and integrity panels with Tab, each with an accessible name', async () => {
      await runCommand('View: Close All Editors');
      const memoryPanel = await openPanel(anchored.topic, THEMES[THEMES.length - 1]!);
      const memoryStops = await tabStops(memoryPanel);
      assert.deepEqual(memoryStops.filter((s) => !s.name).map((s) => s.snapshot), [], 'every control has a name');
      for (const [role, name] of [['button', 'Open file'], ['button', 'Merge into…'], ['button', 'Edit'], ['button', 'Keep open'], ['link', `${SAMPLE_POOL_ANCHOR.file}#L${SAMPLE_POOL_ANCHOR.lines[0]}-${SAMPLE_POOL_ANCHOR.lines[1]}`]] as const) {
        assert.ok(memoryStops.some((s) => s.role === role && s.name === name), `${role} "${name}" is reached by Tab: ${memoryStops.map((s) => s.snapshot).join(', ')}`);
      }
      // Edit mode: every field named (a label on the custom element alone does not name the field inside it).
      await memoryPanel.locator('#edit').click();
      await memoryPanel.locator('#edit-summary').waitFor();
      const editStops = await tabStops(memoryPanel);
      assert.deepEqual(editStops.filter((s) => !s.name).map((s) => s.snapshot), [], 'every edit control has a name');
      for (const [role, name] of [['textbox', 'Topic'], ['textbox', 'Tags, separated by commas'], ['combobox', 'Importance'], ['textbox', 'Summary'], ['textbox', 'Content (Markdown)']] as const) {
        assert.ok(editStops.some((s) => s.role === role && s.name === name), `${role} "${name}" is reached by Tab in edit mode: ${editStops.map((s) => s.snapshot).join(', ')}`);
      }

      await runCommand('LTM: Check integrity');
      const integrity = webview();
      await integrity.locator('#integrity-status').waitFor({ timeout: 30_000 });
      const integrityStops = await tabStops(integrity);
      assert.deepEqual(integrityStops.filter((s) => !s.name).map((s) => s.snapshot), [], 'every control has a name');
      for (const [role, name] of [['button', 'Check again'], ['checkbox', 'Also delete orphaned archives (by default they are kept and listed as restorable)']] as const) {
        assert.ok(integrityStops.some((s) => s.role === role && s.name === name), `${role} "${name}" is reached by Tab: ${integrityStops.map((s) => s.snapshot).join(', ')}`);
      }
    });
  });

});

async function waitForFile(file: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!fs.existsSync(file)) {
    if (Date.now() > deadline) throw new Error(`${file} did not appear`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function fetchForget(project: string, id: string): Promise<void> {
  ltmJson(['forget', id, '--purge', '--project', project]);
}
