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
import type { Browser, FrameLocator, Page } from 'playwright-core';
import { createSampleProject, SAMPLE_MEMORIES } from '../../scripts/sample-project';
import { splitFrontmatter } from '../../src/core/memoryFile';
import { REPO_ROOT, ltm, ltmJson } from '../support/ltmProcess';
import { CodeServer, launchBrowser, openWorkbench, requireVsCodeTools } from '../vscode/codeServer';

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

  it('opens a memory in its panel with the priority broken down, and saves an edited Summary', async () => {
    const target = ltmJson<ListJson>(['list', '--project', project]).memories.find((m) => m.topic === SAMPLE_MEMORIES[1]!.topic)!;
    const file = memoryFile(project, target.id);
    const before = fs.readFileSync(file, 'utf8');
    await row(target.topic).click();
    const frame = webview();
    await frame.locator('#topic', { hasText: target.topic }).waitFor({ timeout: 30_000 });
    await frame.locator('#priority-total').waitFor();
    for (const part of ['Difficulty', 'Recency', 'Frequency', 'Importance']) await frame.locator('table.priority th', { hasText: part }).waitFor();
    await shot('memory-panel');

    const edited = 'Pool of 10 ran dry under batch jobs: raised to 50, 60 s timeout, cursors closed in finally.';
    await frame.locator('#summary textarea').fill(edited);
    await frame.locator('#save-summary').click();
    await frame.locator('#notice', { hasText: 'Summary saved' }).waitFor();
    const after = fs.readFileSync(file, 'utf8');
    const oldSummary = SAMPLE_MEMORIES[1]!.summary;
    assert.ok(before.includes(`## Summary\n${oldSummary}\n\n## Content\n`));
    assert.equal(after, before.replace(`## Summary\n${oldSummary}\n`, `## Summary\n${edited}\n`), 'only the Summary section changed');
    assert.equal(splitFrontmatter(after).frontmatter, splitFrontmatter(before).frontmatter);
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
    fs.writeFileSync(path.join(ltmDir, 'memories', 'mem_0badc0de.md'), '---\nid: "mem_0badc0de"\ntopic: "Unlisted after a bad merge"\n---\nMerged body.\n');
    const index = JSON.parse(fs.readFileSync(path.join(ltmDir, 'index.json'), 'utf8')) as { memories: Record<string, unknown> };
    index.memories.mem_1ee7c0de = { topic: 'gone', tags: [], phase: 0, difficulty: 0.5, created_at: '2026-01-01T00:00:00Z' };
    fs.writeFileSync(path.join(ltmDir, 'index.json'), JSON.stringify(index, null, 2));
    const check = ltm(['check', '--project', project, '--json']);
    assert.equal(check.status, 1, 'check fails on a store with problems');
    const broken = JSON.parse(check.stdout) as { healthy: boolean; problems: { kind: string }[] };
    assert.deepEqual(broken.problems.map((p) => p.kind).sort(), ['missing_file', 'not_indexed']);

    await runCommand('LTM: Check integrity');
    await webview().locator('#integrity-status', { hasText: '2 issue(s) found' }).waitFor({ timeout: 30_000 });
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
    await frame.locator('#integrity-status', { hasText: 'Healthy, with 1 warning(s) for you to correct.' }).waitFor({ timeout: 30_000 });
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
    const info = JSON.parse(fs.readFileSync(path.join(project, '.claude', 'ltm', 'server.json'), 'utf8')) as { port: number; token: string };
    const topic = 'Stored by Claude Code through MCP just now';
    const started = Date.now();
    const response = await fetch(`http://127.0.0.1:${info.port}/mcp`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${info.token}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'store_memory', arguments: { topic, content: 'It appears in the Memories view by itself.', tags: ['mcp'] } },
      }),
    });
    assert.equal(response.status, 200);
    await row(topic).waitFor({ timeout: 5_000 });
    const elapsed = Date.now() - started;
    assert.ok(elapsed < 2_000, `the tree showed it after ${elapsed} ms`);
    await shot('tree-after-mcp-store');
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
