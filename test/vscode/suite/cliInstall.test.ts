/**
 * LTM: Install command-line tool, run in the extension host: the script it
 * writes runs the CLI this extension ships with VS Code's own runtime.
 */
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { EXTENSION_ID } from './hostKit';

describe('LTM: Install command-line tool', function () {
  this.timeout(60_000);
  let dir: string;

  beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ltm-install-cli-'))));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('writes an `ltm` that runs the shipped CLI with VS Code\'s runtime, and refuses to replace a file of another origin', async () => {
    const file = path.join(dir, 'bin', 'ltm');
    const installed = (await vscode.commands.executeCommand('ltm.installCli', file)) as { file: string; replaced: boolean } | undefined;
    assert.equal(installed?.file, file);
    assert.equal(installed.replaced, false);
    const version = (vscode.extensions.getExtension(EXTENSION_ID)!.packageJSON as { version: string }).version;
    const run = spawnSync('sh', [file, '--version'], { cwd: dir, encoding: 'utf8' });
    assert.equal(run.status, 0, run.stderr);
    assert.equal(run.stdout, `${version}\n`);
    const again = (await vscode.commands.executeCommand('ltm.installCli', file)) as { replaced: boolean } | undefined;
    assert.equal(again?.replaced, true);

    const foreign = path.join(dir, 'other-ltm');
    fs.writeFileSync(foreign, '#!/bin/sh\necho mine\n');
    assert.equal(await vscode.commands.executeCommand('ltm.installCli', foreign), undefined);
    assert.equal(fs.readFileSync(foreign, 'utf8'), '#!/bin/sh\necho mine\n');
  });
});
