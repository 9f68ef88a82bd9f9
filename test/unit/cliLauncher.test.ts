/**
 * dist/cli.js runs the CLI bundle from the V8 code cache the build saves
 * (src/cliLauncher.ts): the cache is used for its own build only, and the CLI
 * runs the same without it.
 */
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { buildIdOf, bundleFiles, compileBundle } from '../../src/cliLauncher';
import CLI_FILES from '../../src/shared/cliFiles.json';
import { pluginMcpLaunch } from '../../src/servers/pluginFiles';
import { REPO_ROOT, ensureCliBuilt } from '../support/storeKit';

const VERSION = (JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;

describe('the CLI launcher (dist/cli.js)', function () {
  this.timeout(120_000);
  let dir: string;

  before(() => ensureCliBuilt());
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ltm-launcher-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  /** A copy of the built CLI's files in `dir`, as an install would lay them out. */
  function copyCli(files: readonly string[]): void {
    fs.mkdirSync(path.join(dir, 'dist'), { recursive: true });
    for (const file of files) fs.copyFileSync(path.join(REPO_ROOT, file), path.join(dir, file));
  }

  function version(): string {
    const r = spawnSync(process.execPath, [path.join(dir, CLI_FILES.launcher), '--version'], { encoding: 'utf8' });
    assert.equal(r.stderr, '');
    assert.equal(r.status, 0);
    return r.stdout;
  }

  it('the build saves a code cache that V8 takes for the bundle', () => {
    const { bundle, codeCache } = bundleFiles(path.join(REPO_ROOT, 'dist'));
    assert.ok(buildIdOf(fs.readFileSync(bundle, 'utf8')), 'the bundle starts with its build ID');
    assert.equal(compileBundle(bundle, codeCache).cacheUsed, true);
  });

  it('the build made its code cache after serving a session: it holds the code of a server\'s first answers, not only the module initialisation\'s', () => {
    // What a cache made right after the module initialisation holds (as the build made it before).
    const r = spawnSync(
      process.execPath,
      [
        '-e',
        `const launcher = require(${JSON.stringify(path.join(REPO_ROOT, CLI_FILES.launcher))});
         const { bundle } = launcher.bundleFiles();
         const { script } = launcher.compileBundle(bundle, null);
         launcher.runBundle(script, bundle);
         console.log(script.createCachedData().length);`,
      ],
      { encoding: 'utf8' },
    );
    assert.equal(r.status, 0, r.stderr);
    const initialisationOnly = Number(r.stdout);
    for (const cache of [CLI_FILES.codeCache, CLI_FILES.pluginMcpCodeCache]) {
      const built = fs.statSync(path.join(REPO_ROOT, cache)).size;
      // ~0.7 MB against ~1.6 MB when measured: the store's opening, the MCP SDK's server, the tools and the hooks.
      assert.ok(built > initialisationOnly * 1.5, `${cache}: ${built} bytes, against ${initialisationOnly} after the module initialisation alone`);
    }
  });

  it("a process started with the Claude Code plugin's options for `ltm mcp` takes the code cache the build made for them", () => {
    // V8 rejects cached code made in a process started with other V8 options: the default cache would
    // leave every plugin session compiling the bundle anew.
    const probe = path.join(dir, 'probe.js');
    fs.writeFileSync(
      probe,
      `const launcher = require(${JSON.stringify(path.join(REPO_ROOT, CLI_FILES.launcher))});
       const { bundle, codeCache } = launcher.bundleFiles(${JSON.stringify(path.join(REPO_ROOT, 'dist'))});
       console.log(JSON.stringify({ codeCache, cacheUsed: launcher.compileBundle(bundle, codeCache).cacheUsed }));`,
    );
    const run = (options: readonly string[]) => {
      const r = spawnSync(process.execPath, [...options, probe], { encoding: 'utf8' });
      assert.equal(r.status, 0, r.stderr);
      return JSON.parse(r.stdout) as { codeCache: string; cacheUsed: boolean };
    };
    const launch = pluginMcpLaunch(REPO_ROOT);
    const options = launch.args.slice(0, launch.args.indexOf(path.join(REPO_ROOT, CLI_FILES.launcher)));
    assert.ok(options.length > 0, 'the plugin starts ltm mcp with Node options');
    assert.deepEqual(run(options), { codeCache: path.join(REPO_ROOT, CLI_FILES.pluginMcpCodeCache), cacheUsed: true });
    assert.deepEqual(run([]), { codeCache: path.join(REPO_ROOT, CLI_FILES.codeCache), cacheUsed: true });
  });

  it('runs the CLI without a code cache', () => {
    copyCli([CLI_FILES.launcher, CLI_FILES.bundle]);
    assert.equal(version(), `${VERSION}\n`);
    const { bundle, codeCache } = bundleFiles(path.join(dir, 'dist'));
    assert.equal(compileBundle(bundle, codeCache).cacheUsed, false);
  });

  it("does not use another build's code cache, even for a bundle of the same length", () => {
    copyCli([CLI_FILES.launcher, CLI_FILES.bundle, CLI_FILES.codeCache]);
    const { bundle, codeCache } = bundleFiles(path.join(dir, 'dist'));
    const source = fs.readFileSync(bundle, 'utf8');
    const id = buildIdOf(source)!;
    const otherId = `// ltm-build ${'0'.repeat(id.length - '// ltm-build '.length)}`;
    fs.writeFileSync(bundle, otherId + source.slice(id.length));
    assert.equal(fs.statSync(bundle).size, Buffer.byteLength(source));
    assert.equal(compileBundle(bundle, codeCache).cacheUsed, false);
    assert.equal(version(), `${VERSION}\n`);
  });

  it('a damaged code cache is ignored', () => {
    copyCli([CLI_FILES.launcher, CLI_FILES.bundle, CLI_FILES.codeCache]);
    const { bundle, codeCache } = bundleFiles(path.join(dir, 'dist'));
    const bytes = fs.readFileSync(codeCache);
    const header = buildIdOf(fs.readFileSync(bundle, 'utf8'))!.length + 1;
    fs.writeFileSync(codeCache, Buffer.concat([bytes.subarray(0, header), Buffer.alloc(bytes.length - header, 0xab)]));
    assert.equal(compileBundle(bundle, codeCache).cacheUsed, false);
    assert.equal(version(), `${VERSION}\n`);
  });
});
