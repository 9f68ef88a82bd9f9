import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { VERSION } from '../../src/cli';
import { REPO_ROOT, ensureCliBuilt } from '../support/storeKit';

const MANIFEST = path.join(REPO_ROOT, 'package.json');
const CLI = path.join(REPO_ROOT, 'dist', 'cli.js');

function manifest(): { version: string; description: string } {
  return JSON.parse(fs.readFileSync(MANIFEST, 'utf8')) as { version: string; description: string };
}

describe('version', function () {
  this.timeout(60_000);

  before(() => {
    ensureCliBuilt();
    // ensureCliBuilt looks at src/ only; a version bump touches package.json alone.
    if (fs.statSync(CLI).mtimeMs < fs.statSync(MANIFEST).mtimeMs) {
      const r = spawnSync('npm', ['run', 'build'], { cwd: REPO_ROOT, encoding: 'utf8' });
      assert.equal(r.status, 0, `npm run build failed:\n${r.stdout}\n${r.stderr}`);
    }
  });

  it("`ltm --version` (dist/cli.js) prints package.json's version", () => {
    const { version } = manifest();
    for (const flag of ['--version', '-v']) {
      const r = spawnSync(process.execPath, [CLI, flag], { encoding: 'utf8' });
      assert.equal(r.status, 0, r.stderr);
      assert.equal(r.stderr, '');
      assert.equal(r.stdout, `${version}\n`, `ltm ${flag}`);
    }
    const help = spawnSync(process.execPath, [CLI, '--help'], { encoding: 'utf8' });
    assert.ok(help.stdout.startsWith(`ltm ${version}: `), help.stdout.split('\n')[0]);
  });

  it('the CLI module exports the same version', () => {
    assert.equal(VERSION, manifest().version);
  });

  it('the bundles carry the version, not the whole manifest', () => {
    const { description } = manifest();
    for (const bundle of ['cli.js', 'cli-main.js', 'extension.js']) {
      const file = path.join(REPO_ROOT, 'dist', bundle);
      if (!fs.existsSync(file)) continue;
      assert.ok(!fs.readFileSync(file, 'utf8').includes(description), `dist/${bundle} holds package.json's description`);
    }
  });
});
