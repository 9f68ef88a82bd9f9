// Bundles what ships: the CLI (dist/cli.js, its launcher, dist/cli-main.js with its code cache, and its search index worker),
// dist/extension.js and dist/webview.js.
// `node esbuild.mjs [--production] [--watch]`
import * as esbuild from 'esbuild';
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';

const CLI_FILES = JSON.parse(fs.readFileSync('src/shared/cliFiles.json', 'utf8'));
const PLUGIN_MCP_NODE_OPTIONS = JSON.parse(fs.readFileSync('src/shared/pluginMcpNodeOptions.json', 'utf8'));
/** Names this build of the CLI bundle; its code cache starts with the same line (see src/cliLauncher.ts). */
const CLI_BUILD_ID = `// ltm-build ${randomUUID()}`;

const production = process.argv.includes('--production');
const withTests = process.argv.includes('--tests');
const watch = process.argv.includes('--watch');

/**
 * The developer vocabulary's tables (src/core/relatedTerms.ts), computed from this build's sources
 * and embedded in the bundles that run the engine: a fresh process then reads them instead of
 * stemming the vocabulary's ~6,000 words. Not in watch builds, which would keep tables of the
 * vocabulary as it was when the watch started: there the engine builds them on first use.
 */
async function developerVocabularyDefine() {
  if (watch) return {};
  const result = await esbuild.build({
    stdin: {
      contents: "import { vocabularyTables } from './src/core/relatedTerms'; import { DEVELOPER_TERM_GROUPS } from './src/core/developerTerms'; module.exports = vocabularyTables(DEVELOPER_TERM_GROUPS);",
      resolveDir: process.cwd(),
      loader: 'ts',
    },
    bundle: true,
    platform: 'node',
    format: 'cjs',
    write: false,
    logLevel: 'warning',
  });
  const module = { exports: {} };
  new Function('module', 'exports', 'require', result.outputFiles[0].text)(module, module.exports, createRequire(import.meta.url));
  return { LTM_DEVELOPER_VOCABULARY: JSON.stringify(JSON.stringify(module.exports)) };
}
const engineDefine = await developerVocabularyDefine();

/** @type {import('esbuild').BuildOptions[]} */
const builds = [
  {
    entryPoints: ['src/cliLauncher.ts'],
    outfile: CLI_FILES.launcher,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    banner: { js: '#!/usr/bin/env node' },
  },
  {
    entryPoints: ['src/cli.ts'],
    outfile: CLI_FILES.bundle,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    banner: { js: CLI_BUILD_ID },
    define: engineDefine,
  },
  {
    // The worker that builds a store's search index while it opens without a saved one (src/core/searchIndexAside.ts).
    entryPoints: ['src/searchIndexWorker.ts'],
    outfile: CLI_FILES.indexWorker,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
  },
  {
    entryPoints: ['src/extension.ts'],
    outfile: 'dist/extension.js',
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: ['vscode'],
    define: engineDefine,
  },
  {
    entryPoints: ['webview/main.ts'],
    outfile: 'dist/webview.js',
    platform: 'browser',
    format: 'iife',
    target: 'chrome120',
  },
];

if (withTests) {
  // The extension-host suite: mocha and vscode come from the host at run time.
  builds.push({
    entryPoints: ['test/vscode/suite/index.ts', ...fs.readdirSync('test/vscode/suite').filter((f) => f.endsWith('.test.ts')).map((f) => `test/vscode/suite/${f}`)],
    outdir: 'out/test/vscode/suite',
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: ['vscode', 'mocha'],
  });
}

/** Static files the webview loads next to its bundle. */
const assets = [
  ['node_modules/@vscode/codicons/dist/codicon.css', 'dist/codicon.css'],
  ['node_modules/@vscode/codicons/dist/codicon.ttf', 'dist/codicon.ttf'],
  ['webview/style.css', 'dist/webview.css'],
];
fs.mkdirSync('dist', { recursive: true });
for (const [from, to] of assets) fs.copyFileSync(from, to);

/** Reports errors the way VS Code's esbuild problem matcher reads them. */
const problemMatcher = {
  name: 'problem-matcher',
  setup(build) {
    build.onStart(() => {
      // A rebuilt bundle keeps this run's build ID: its old code caches must go.
      for (const cache of [CLI_FILES.codeCache, CLI_FILES.pluginMcpCodeCache]) fs.rmSync(cache, { force: true });
      console.log('[watch] build started');
    });
    build.onEnd((result) => {
      for (const { text, location } of result.errors) {
        console.error(`✘ [ERROR] ${text}`);
        if (location) console.error(`    ${location.file}:${location.line}:${location.column}:`);
      }
      console.log('[watch] build finished');
    });
  },
};

const contexts = await Promise.all(
  builds.map((options) =>
    esbuild.context({
      bundle: true,
      sourcemap: !production,
      minify: production,
      legalComments: 'none',
      // ESM builds first: jsonc-parser's UMD build loads its parts with a require() esbuild cannot follow.
      mainFields: options.platform === 'browser' ? ['browser', 'module', 'main'] : ['module', 'main'],
      logLevel: 'warning',
      plugins: watch ? [problemMatcher] : [],
      ...options,
    }),
  ),
);

if (watch) {
  await Promise.all(contexts.map((c) => c.watch()));
} else {
  await Promise.all(contexts.map((c) => c.rebuild()));
  await Promise.all(contexts.map((c) => c.dispose()));
  fs.chmodSync(CLI_FILES.launcher, 0o755);
  if (production) for (const bundle of [CLI_FILES.bundle, 'dist/extension.js']) assertLatin1(bundle);
  const project = await codeCacheProject();
  try {
    writeCliCodeCache(CLI_FILES.codeCache, [], project, 'serveSession');
    writeCliCodeCache(CLI_FILES.pluginMcpCodeCache, PLUGIN_MCP_NODE_OPTIONS, project, 'mcpSession');
  } finally {
    if (project) fs.rmSync(project, { recursive: true, force: true });
  }
}

/**
 * V8 holds a script's source as one byte a character only while every character is Latin-1: one
 * other (a `•` in a regular expression did it) doubles the memory the source takes in every
 * process, 1.3 MB more for the CLI. A minified build has no comments left, so any such character
 * is in code: write it as an escape.
 */
function assertLatin1(file) {
  const text = fs.readFileSync(file, 'utf8');
  for (let i = 0; i < text.length; i++) {
    if (text.charCodeAt(i) > 0xff) {
      console.error(`${file}: "${text.slice(Math.max(0, i - 40), i + 10)}" has a character past Latin-1 (U+${text.charCodeAt(i).toString(16).toUpperCase()}); write it as an escape`);
      process.exit(1);
    }
  }
}

/**
 * Saves V8's code for the CLI bundle, made in a fresh `node` started with `nodeOptions` (none, as
 * `ltm` runs; the plugin's for `ltm mcp`: V8 takes cached code only in a process started with the
 * same V8 options) that compiled the bundle with the launcher's own code, ran its module
 * initialisation and then, given a `project`, served a session on a copy of it (`session`, of
 * scripts/codeCacheWorkload.mjs: `ltm serve`'s or `ltm mcp`'s), into `cacheFile`. The file starts
 * with the bundle's build-ID line, so that a launcher never uses it with another build of the bundle.
 */
function writeCliCodeCache(cacheFile, nodeOptions, project, session) {
  fs.rmSync(cacheFile, { force: true });
  const launcher = path.resolve(CLI_FILES.launcher);
  const target = path.resolve(cacheFile);
  const copy = project && fs.mkdtempSync(path.join(os.tmpdir(), 'ltm-code-cache-'));
  if (copy) fs.cpSync(project, copy, { recursive: true });
  const script = `
    const fs = require('node:fs');
    const launcher = require(${JSON.stringify(launcher)});
    const { bundle } = launcher.bundleFiles();
    const { script } = launcher.compileBundle(bundle, null);
    const { main } = launcher.runBundle(script, bundle);
    const save = () => {
      const id = launcher.buildIdOf(fs.readFileSync(bundle, 'utf8'));
      fs.writeFileSync(${JSON.stringify(target + '.tmp')}, Buffer.concat([Buffer.from(id + '\\n'), script.createCachedData()]));
      fs.renameSync(${JSON.stringify(target + '.tmp')}, ${JSON.stringify(target)});
      process.exit(0);
    };
    const project = ${JSON.stringify(copy || null)};
    if (!project) save();
    else import(${JSON.stringify(pathToFileURL(path.resolve('scripts/codeCacheWorkload.mjs')).href)})
      .then((workload) => workload[${JSON.stringify(session)}](main, project))
      .then(save, (error) => {
        console.warn('code cache made without serving a session first: ' + error.message);
        save();
      });
  `;
  try {
    // Its stdout is the server's ("serving on …"), not the build's.
    execFileSync(process.execPath, [...nodeOptions, '-e', script], { stdio: ['ignore', 'ignore', 'inherit'] });
  } finally {
    if (copy) fs.rmSync(copy, { recursive: true, force: true });
  }
}

/** A project filled by a server of the bundle's own, for writeCliCodeCache; null (with a warning) when none could be made. */
async function codeCacheProject() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ltm-code-cache-project-'));
  try {
    const { prepareProject } = await import('./scripts/codeCacheWorkload.mjs');
    await prepareProject(path.resolve(CLI_FILES.launcher), dir);
    return dir;
  } catch (error) {
    console.warn(`code caches made without serving a session first: ${error.message}`);
    fs.rmSync(dir, { recursive: true, force: true });
    return null;
  }
}
