import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CLI_SHIM_MARK, cliShimText, defaultCliShimFile, installCliShim, isOnPath, refreshCliShim } from '../../src/servers/cliShim';
import CLI_FILES from '../../src/shared/cliFiles.json';
import { REPO_ROOT, requireBuiltCli } from '../support/ltmProcess';

describe('cliShim: the `ltm` script of "LTM: Install command-line tool"', function () {
  this.timeout(30_000);
  let dir: string;
  let version: string;

  before(() => {
    requireBuiltCli();
    version = (JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8')) as { version: string }).version;
  });
  beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ltm-shim-'))));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  /** The CLI files (launcher, bundle, code cache) where an extension folder would hold them, under a path that needs quoting. */
  function extensionCli(folder = "ext dir with 'quote' and $HOME"): string {
    const root = path.join(dir, folder);
    for (const file of Object.values(CLI_FILES)) {
      fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
      fs.copyFileSync(path.join(REPO_ROOT, file), path.join(root, file));
    }
    return path.join(root, CLI_FILES.launcher);
  }

  it('runs the shipped CLI by name from another folder, with arguments passed on intact', () => {
    const file = path.join(dir, 'bin', 'ltm');
    const installed = installCliShim(file, { runtime: process.execPath, cli: extensionCli() }, 'linux');
    assert.deepEqual(installed, { file, onPath: false, replaced: false });
    assert.equal(fs.statSync(file).mode & 0o777, 0o755);
    const env = { ...process.env, PATH: `${path.dirname(file)}${path.delimiter}${process.env.PATH ?? ''}` };
    const run = spawnSync('sh', ['-c', 'ltm --version'], { cwd: os.tmpdir(), env, encoding: 'utf8' });
    assert.equal(run.status, 0, run.stderr);
    assert.equal(run.stdout, `${version}\n`);
    // An argument with spaces and a quote reaches the CLI as one argument.
    const project = path.join(dir, "a project's folder");
    fs.mkdirSync(project);
    const status = spawnSync('sh', ['-c', `ltm status --project "${project}"`], { env, encoding: 'utf8' });
    assert.equal(status.status, 0, status.stderr);
    assert.match(status.stdout, new RegExp(`No memory store yet at ${project.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
  });

  it('never replaces a file it did not write, and changes nothing then', () => {
    const file = path.join(dir, 'ltm');
    fs.writeFileSync(file, '#!/bin/sh\necho "the npm-installed ltm"\n');
    assert.throws(() => installCliShim(file, { runtime: process.execPath, cli: extensionCli() }, 'linux'), /already exists and was not installed by LTM/);
    assert.equal(fs.readFileSync(file, 'utf8'), '#!/bin/sh\necho "the npm-installed ltm"\n');
    assert.equal(refreshCliShim(file, { runtime: process.execPath, cli: extensionCli() }, 'linux'), false);
    assert.equal(fs.readFileSync(file, 'utf8'), '#!/bin/sh\necho "the npm-installed ltm"\n');
  });

  it('after an update, activation points its own script at the new extension folder, and only then', () => {
    const file = path.join(dir, 'ltm');
    assert.equal(refreshCliShim(file, { runtime: process.execPath, cli: extensionCli('v1') }, 'linux'), false, 'no script: none is created');
    assert.equal(fs.existsSync(file), false);
    installCliShim(file, { runtime: process.execPath, cli: extensionCli('v1') }, 'linux');
    const v2 = { runtime: process.execPath, cli: extensionCli('v2') };
    assert.equal(refreshCliShim(file, v2, 'linux'), true);
    assert.equal(fs.readFileSync(file, 'utf8'), cliShimText(v2, 'posix'));
    assert.equal(refreshCliShim(file, v2, 'linux'), false, 'already current: not written again');
    assert.equal(installCliShim(file, v2, 'linux').replaced, true);
  });

  it('on Windows: a .cmd script with the mark, or a clear refusal for a path cmd cannot quote', () => {
    assert.equal(defaultCliShimFile('C:\\Users\\me', 'win32'), path.join('C:\\Users\\me', '.local', 'bin', 'ltm.cmd'));
    const text = cliShimText({ runtime: 'C:\\Code\\Code.exe', cli: 'C:\\ext\\dist\\cli.js' }, 'win32');
    assert.equal(text, `@echo off\r\nrem ${CLI_SHIM_MARK}\r\nsetlocal\r\nset ELECTRON_RUN_AS_NODE=1\r\n"C:\\Code\\Code.exe" "C:\\ext\\dist\\cli.js" %*\r\n`);
    assert.throws(() => cliShimText({ runtime: 'C:\\Code\\Code.exe', cli: 'C:\\100%\\cli.js' }, 'win32'), /cannot write a command script/);
  });

  it('knows whether a folder is on the PATH', () => {
    assert.equal(isOnPath('/usr/local/bin', ['/usr/bin', '/usr/local/bin/'].join(path.delimiter)), true);
    assert.equal(isOnPath('/home/me/.local/bin', ['/usr/bin', ''].join(path.delimiter)), false);
  });
});
