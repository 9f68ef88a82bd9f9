// Bundles what ships: dist/cli.js now; dist/extension.js and dist/webview.js as they arrive.
// `node esbuild.mjs [--production] [--watch]`
import * as esbuild from 'esbuild';
import * as fs from 'node:fs';

const production = process.argv.includes('--production');
const withTests = process.argv.includes('--tests');
const watch = process.argv.includes('--watch');

/** @type {import('esbuild').BuildOptions[]} */
const builds = [
  {
    entryPoints: ['src/cli.ts'],
    outfile: 'dist/cli.js',
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    banner: { js: '#!/usr/bin/env node' },
  },
  {
    entryPoints: ['src/extension.ts'],
    outfile: 'dist/extension.js',
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: ['vscode'],
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
    build.onStart(() => console.log('[watch] build started'));
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
  fs.chmodSync('dist/cli.js', 0o755);
}
