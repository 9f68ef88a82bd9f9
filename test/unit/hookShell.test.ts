/**
 * hookShell(): the shell LTM's hook commands run ltm-hook.sh with, found on a
 * PATH of real directories.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { hookShell } from '../../src/servers/hookShell';
import { removeDir } from '../support/storeKit';

describe('hookShell', function () {
  let dir: string;

  before(function () {
    // Executable bits are what this is about: Windows runs PowerShell hooks.
    if (process.platform === 'win32') this.skip();
  });
  beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ltm-hookshell-'))));
  afterEach(() => removeDir(dir));

  function make(sub: string, what: 'executable' | 'plain file' | 'folder'): string {
    const at = path.join(dir, sub);
    fs.mkdirSync(at, { recursive: true });
    if (what === 'folder') fs.mkdirSync(path.join(at, 'bash'));
    else fs.writeFileSync(path.join(at, 'bash'), '#!/bin/sh\n', { mode: what === 'executable' ? 0o755 : 0o644 });
    return at;
  }

  it('is bash when an executable bash is in some PATH directory, after others without one', () => {
    const none = path.join(dir, 'none');
    fs.mkdirSync(none);
    assert.equal(hookShell([none, path.join(dir, 'missing'), make('bin', 'executable')].join(path.delimiter)), 'bash');
  });

  it('is sh when no PATH directory holds an executable bash file', () => {
    assert.equal(hookShell(''), 'sh');
    assert.equal(hookShell([make('plain', 'plain file'), make('folder', 'folder'), path.join(dir, 'missing')].join(path.delimiter)), 'sh');
  });

  it('never takes bash from a relative PATH entry (the current directory, whatever it is)', () => {
    make('rel', 'executable');
    const cwd = process.cwd();
    process.chdir(dir);
    try {
      assert.equal(hookShell(['', '.', 'rel'].join(path.delimiter)), 'sh');
    } finally {
      process.chdir(cwd);
    }
  });
});
