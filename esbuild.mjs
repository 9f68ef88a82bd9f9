// Bundles what ships: dist/cli.js now; dist/extension.js and dist/webview.js as they arrive.
// `node esbuild.mjs [--production] [--watch]`
import * as esbuild from 'esbuild';
import * as fs from 'node:fs';

const production = process.argv.includes('--production');
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
];

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
