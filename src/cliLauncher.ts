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
import PLUGIN_MCP_NODE_OPTIONS from './shared/pluginMcpNodeOptions.json';

/**
 * Where the bundle and its code cache are, next to this file. V8 takes cached code only from a
 * process started with the same V8 options as the one that made it, so the build makes two: one
 * for `node` without options (the `ltm` bin, hooks, VS Code's terminal), one for the options the
 * Claude Code plugin starts `ltm mcp` with (pluginMcpNodeOptions.json); a process started with any
 * other options gets the first, which V8 may reject (then the bundle is compiled as without a cache).
 */
export function bundleFiles(dir = __dirname, execArgv: readonly string[] = process.execArgv): { bundle: string; codeCache: string } {
  const forPluginMcp = execArgv.length === PLUGIN_MCP_NODE_OPTIONS.length && execArgv.every((option, i) => option === PLUGIN_MCP_NODE_OPTIONS[i]);
  const codeCache = forPluginMcp ? CLI_FILES.pluginMcpCodeCache : CLI_FILES.codeCache;
  return { bundle: path.join(dir, path.basename(CLI_FILES.bundle)), codeCache: path.join(dir, path.basename(codeCache)) };
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
