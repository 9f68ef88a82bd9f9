/**
 * The demo: the packaged LTM extension in a real VS Code (code-server) on a
 * sample project whose memories are in every phase. Prints the address to
 * open, saves a screenshot of the window, and serves until Ctrl-C.
 *
 *   node --import tsx scripts/demo.ts [out/ltm.vsix]
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CodeServer, launchBrowser, openWorkbench } from '../test/vscode/codeServer';
import { createSampleProject } from './sample-project';

async function main(): Promise<void> {
  const repo = path.resolve(__dirname, '..');
  const vsix = path.resolve(process.argv[2] ?? path.join(repo, 'out', 'ltm.vsix'));
  const project = path.join(repo, 'out', 'demo-project');
  fs.rmSync(project, { recursive: true, force: true });
  await createSampleProject(project);
  const port = Number(process.env.LTM_DEMO_PORT ?? 8080);
  const server = await CodeServer.start({ vsix, port, lifetimeSeconds: 8 * 3600, userSettings: { 'workbench.secondarySideBar.defaultVisibility': 'hidden' } });
  const url = `${server.url}/?folder=${encodeURIComponent(project)}`;

  // A look at the window, for machines without a screen.
  const browser = await launchBrowser();
  const page = await openWorkbench(browser, server, project);
  await page.locator('.activitybar [aria-label^="LTM"]').first().click();
  await page.locator('.part.sidebar .monaco-list-row').first().waitFor({ timeout: 60_000 });
  const screenshot = path.join(repo, 'out', 'demo.png');
  await page.screenshot({ path: screenshot });
  await browser.close();

  process.stdout.write(
    [
      '',
      'LTM demo: the extension in VS Code on a sample project with memories in every phase.',
      `  Open:        ${url}`,
      `  Project:     ${project}`,
      `  Screenshot:  ${screenshot}`,
      '  Try: the LTM view in the activity bar; click a memory; edit its Summary; F1 → "LTM: Check integrity";',
      '       in a VS Code terminal, `claude` finds the memories through the hooks and the MCP server.',
      `  Outside VS Code: node ${path.join(repo, 'dist', 'cli.js')} list --project ${project}`,
      '  Ctrl-C stops the demo.',
      '',
    ].join('\n'),
  );
  const stop = async () => {
    await server.stop();
    process.exit(0);
  };
  process.once('SIGINT', () => void stop());
  process.once('SIGTERM', () => void stop());
  // Serve until stopped (or until code-server's own lifetime ends).
  await new Promise(() => undefined);
}

void main().catch((error: unknown) => {
  process.stderr.write(`demo failed: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
