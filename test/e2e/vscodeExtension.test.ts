/**
 * Runs the extension-host suite (test/vscode/suite) in a real VS Code
 * (code-server + Chromium), on a workspace holding the interop store set up
 * for Claude Code.
 */
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { claudeBinary } from '../support/claudeCode';
import { REPO_ROOT, requireBuiltCli } from '../support/ltmProcess';
import { requireVsCodeTools } from '../vscode/codeServer';
import { runExtensionTests } from '../vscode/runExtensionTests';
import { prepareSuiteWorkspace } from '../vscode/workspace';
import { initStoreFiles } from '../../src/core/store';
import { storePaths } from '../../src/core/storeFiles';

describe('the extension in a real VS Code (mocha inside the extension host)', function () {
  this.timeout(600_000);
  let root: string;

  before(function () {
    requireBuiltCli();
    requireVsCodeTools();
    const build = spawnSync(process.execPath, ['esbuild.mjs', '--tests'], { cwd: REPO_ROOT, encoding: 'utf8' });
    assert.equal(build.status, 0, build.stderr);
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'ltm-vscode-'));
  });

  after(() => {
    if (root) fs.rmSync(root, { recursive: true, force: true });
  });

  it('passes the extension-host suite', async () => {
    const workspace = path.join(root, 'project');
    prepareSuiteWorkspace(workspace);
    const run = await runExtensionTests({
      extensionDevelopmentPath: REPO_ROOT,
      extensionTestsPath: path.join(REPO_ROOT, 'out', 'test', 'vscode', 'suite', 'index.js'),
      workspace,
      extensionEnvironment: { LTM_TEST_CLAUDE: claudeBinary(), ...(process.env.LTM_TEST_SUITE_FILES ? { LTM_TEST_SUITE_FILES: process.env.LTM_TEST_SUITE_FILES } : {}) },
    });
    const report = run.log.join('\n');
    for (const line of run.log.filter((l) => /✔|^\s*\d+ (passing|failing)|^\s+\d+\) /.test(l))) process.stdout.write(`      [host] ${line}\n`);
    assert.equal(run.exitCode, 0, `the extension-host suite failed:\n${report}`);
    assert.match(report, /passing/, 'mocha ran and reported');
    assert.doesNotMatch(report, /failing/);
  });

  it('passes the suite of a store just initialized and empty (emptyStore.test.ts)', async () => {
    const workspace = path.join(root, 'empty');
    fs.mkdirSync(workspace, { recursive: true });
    initStoreFiles(storePaths(workspace));
    const run = await runExtensionTests({
      extensionDevelopmentPath: REPO_ROOT,
      extensionTestsPath: path.join(REPO_ROOT, 'out', 'test', 'vscode', 'suite', 'index.js'),
      workspace,
      extensionEnvironment: { LTM_TEST_SUITE_FILES: 'emptyStore.test.js' },
    });
    const report = run.log.join('\n');
    for (const line of run.log.filter((l) => /✔|^\s*\d+ (passing|failing)|^\s+\d+\) /.test(l))) process.stdout.write(`      [host] ${line}\n`);
    assert.equal(run.exitCode, 0, `the empty-store suite failed:\n${report}`);
    assert.match(report, /2 passing/);
  });
});
