/**
 * `npm run pack:cli`: the `ltm` command as an npm package, for people who use
 * Claude Code without VS Code. `npm install -g out/ltm-cli-<version>.tgz`
 * puts `ltm` on the PATH.
 *
 * The package is staged in out/cli-package/ rather than packed from the
 * repository root: the root package.json is the VS Code extension's manifest,
 * and its dependencies are already inside the bundle (dist/cli-main.js, which dist/cli.js runs), so the
 * CLI package has none to install. Its version and Node engine are the
 * extension's, read from the root manifest: one source for both.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import CLI_FILES from '../src/shared/cliFiles.json';

const ROOT = path.resolve(__dirname, '..');
const OUT = path.join(ROOT, 'out');
const STAGE = path.join(OUT, 'cli-package');

/** What the package holds besides its manifest: the bundle, the hook scripts `ltm init` installs, and the docs. */
const FILES = [CLI_FILES.launcher, CLI_FILES.bundle, CLI_FILES.codeCache, CLI_FILES.indexWorker, 'hooks/ltm-hook.sh', 'hooks/ltm-hook.ps1', 'README.md', 'LICENSE'];

export const CLI_PACKAGE_NAME = 'ltm-cli';

interface RootManifest {
  version: string;
  description: string;
  license: string;
  engines: { node: string };
  repository: unknown;
  homepage: string;
  keywords: string[];
}

export function packCli(): string {
  const root = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as RootManifest;
  if (!fs.existsSync(path.join(ROOT, 'dist', 'cli.js'))) throw new Error('dist/cli.js is missing: run `npm run build` first');
  fs.rmSync(STAGE, { recursive: true, force: true });
  for (const file of FILES) {
    fs.mkdirSync(path.dirname(path.join(STAGE, file)), { recursive: true });
    fs.copyFileSync(path.join(ROOT, file), path.join(STAGE, file));
  }
  fs.chmodSync(path.join(STAGE, 'dist', 'cli.js'), 0o755);
  fs.chmodSync(path.join(STAGE, 'hooks', 'ltm-hook.sh'), 0o755);
  const manifest = {
    name: CLI_PACKAGE_NAME,
    version: root.version,
    description: `The ltm command: ${root.description}`,
    license: root.license,
    bin: { ltm: 'dist/cli.js' },
    files: ['dist/', 'hooks/'],
    engines: { node: root.engines.node },
    repository: root.repository,
    homepage: root.homepage,
    keywords: root.keywords,
  };
  fs.writeFileSync(path.join(STAGE, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  const packed = execFileSync('npm', ['pack', '--silent', '--pack-destination', OUT], { cwd: STAGE, encoding: 'utf8' }).trim().split('\n').at(-1)!;
  return path.join(OUT, packed);
}

if (require.main === module) {
  console.log(packCli());
}
