import * as fs from 'node:fs';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { CodeServer, launchBrowser, openWorkbench } from '/work/main/test/vscode/codeServer';
const ws = '/tmp/ui/ws'; fs.rmSync(ws, { recursive: true, force: true }); fs.mkdirSync(ws, { recursive: true });
fs.cpSync('/work/main/test/fixtures/claude-ltm-0.2.5/.claude', path.join(ws, '.claude'), { recursive: true });
spawnSync('node', ['/work/main/dist/cli.js', 'store', '--project', ws, '--topic', 'Run mocha with tsx', '--content', 'Use node-option import=tsx in .mocharc.json.\n\nSecond paragraph.', '--tags', 'testing,typescript']);
const server = await CodeServer.start({ vsix: '/tmp/ltm.vsix' });
const browser = await launchBrowser();
try {
  const page = await openWorkbench(browser, server, ws);
  await page.waitForTimeout(4000);
  await page.screenshot({ path: '/tmp/ui/1-start.png' });
  const activity = page.locator('.activitybar [aria-label^="LTM"]');
  console.log('activity count', await activity.count());
  await activity.first().click();
  await page.waitForTimeout(2000);
  await page.screenshot({ path: '/tmp/ui/2-ltm.png' });
  const rows = page.locator('.monaco-list-row');
  console.log('rows', await rows.allInnerTexts());
} finally { await browser.close(); await server.stop(); }
