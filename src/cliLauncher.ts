/**
 * dist/cli.js, the `ltm` command: runs the CLI bundle (dist/cli-main.js) from
 * the V8 code cache `npm run build` saves next to it (dist/cli-main.js.cache).
 *
 * Node 20 compiles a 2.6 MB bundle anew in every process (~25 ms of a ~300 ms
 * command at 10,000 memories) and has no compile cache of its own; with the
 * code V8 saved, it only checks and loads it. The cache is an optimisation and
 * nothing more: V8 rejects one made by another V8 version or with other flags
 * (VS Code's Electron, `node --expose-gc`), and a rejected or missing cache
 * compiles the bundle as Node would. It is made by the build, never at run
 * time: nothing is written next to an installed CLI.
 *
 * Only Node's built-in modules here, so this file stays a few lines.
 */
import * as fs from 'node:fs';
import Module, { createRequire } from 'node:module';
import * as path from 'node:path';
import * as vm from 'node:vm';
import CLI_FILES from './shared/cliFiles.json';

/** Where the bundle and its code cache are, next to this file. */
export function bundleFiles(dir = __dirname): { bundle: string; codeCache: string } {
  return { bundle: path.join(dir, path.basename(CLI_FILES.bundle)), codeCache: path.join(dir, path.basename(CLI_FILES.codeCache)) };
}

/** The bundle's build ID: its first line, `// ltm-build <uuid>` (esbuild.mjs), or null. */
export function buildIdOf(source: string): string | null {
  const firstLine = source.slice(0, source.indexOf('\n'));
  return firstLine.startsWith('// ltm-build ') ? firstLine : null;
}

/**
 * The code cache saved for this very build of the bundle, or undefined. V8 checks only the
 * source's length before using cached code, so the cache names the build it was made from
 * (its first line) and a cache of any other build is not used.
 */
function cacheFor(source: string, codeCache: string): Buffer | undefined {
  const id = buildIdOf(source);
  let bytes: Buffer;
  try {
    bytes = fs.readFileSync(codeCache);
  } catch {
    // No cache (a build without one, or a copy that left it out): compiled as without the launcher.
    return undefined;
  }
  const header = Buffer.from(`${id}\n`);
  return id !== null && bytes.subarray(0, header.length).equals(header) ? bytes.subarray(header.length) : undefined;
}

/** The bundle compiled as a CommonJS module's function, from the code cache when there is one V8 accepts. */
export function compileBundle(bundle: string, codeCache: string | null): { script: vm.Script; cacheUsed: boolean } {
  // The bytes, then their text: faster than readFileSync(bundle, 'utf8') on Node 20 (2.7 MB: ~3 ms less here).
  const source = fs.readFileSync(bundle).toString('utf8');
  const cachedData = codeCache ? cacheFor(source, codeCache) : undefined;
  const script = new vm.Script(Module.wrap(source), { filename: bundle, cachedData });
  return { script, cacheUsed: cachedData !== undefined && !script.cachedDataRejected };
}

/** Runs the compiled bundle as the module `bundle` and returns its exports. */
export function runBundle(script: vm.Script, bundle: string): { main?: () => Promise<void> } {
  const module = new Module(bundle);
  module.filename = bundle;
  module.loaded = true;
  const run = script.runInThisContext() as (exports: unknown, require: NodeJS.Require, module: Module, filename: string, dirname: string) => void;
  run.call(module.exports, module.exports, createRequire(bundle), module, bundle, path.dirname(bundle));
  return module.exports as { main?: () => Promise<void> };
}

if (require.main === module) {
  const { bundle, codeCache } = bundleFiles();
  const cli = runBundle(compileBundle(bundle, codeCache).script, bundle);
  if (typeof cli.main !== 'function') throw new Error(`${bundle} does not export main()`);
  void cli.main();
}
