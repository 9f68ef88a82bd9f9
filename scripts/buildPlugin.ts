/**
 * `npm run build:plugin`: stages the Claude Code plugin in dist/claude-plugin/,
 * where the repository's marketplace (.claude-plugin/marketplace.json) points.
 * Built, not committed: the plugin holds the CLI bundle (dist/cli.js, which
 * carries every dependency), and dist/ is git-ignored. Its manifest takes
 * the version and description from the extension's (one source), and its
 * hooks, MCP server and slash commands come from src/servers/pluginFiles.ts.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { PLUGIN_CLI, PLUGIN_HOOK_SCRIPT, pluginFiles, type PluginManifestSource } from '../src/servers/pluginFiles';
import CLI_FILES from '../src/shared/cliFiles.json';

const ROOT = path.resolve(__dirname, '..');
/** Where the marketplace's plugin entry points (its `source`, relative to the repository root). */
export const PLUGIN_DIR = path.join(ROOT, 'dist', 'claude-plugin');

/** Copied as they are: the CLI (launcher, bundle, its two code caches and the search index worker, side by side), the hook script, the license. */
const COPIED: readonly [from: string, to: string][] = [
  [CLI_FILES.launcher, PLUGIN_CLI],
  [CLI_FILES.bundle, path.join(path.dirname(PLUGIN_CLI), path.basename(CLI_FILES.bundle))],
  [CLI_FILES.codeCache, path.join(path.dirname(PLUGIN_CLI), path.basename(CLI_FILES.codeCache))],
  [CLI_FILES.pluginMcpCodeCache, path.join(path.dirname(PLUGIN_CLI), path.basename(CLI_FILES.pluginMcpCodeCache))],
  // Looked for next to the bundle: without it, a session in a fresh clone builds the search index on the thread that answers.
  [CLI_FILES.indexWorker, path.join(path.dirname(PLUGIN_CLI), path.basename(CLI_FILES.indexWorker))],
  ['hooks/ltm-hook.sh', PLUGIN_HOOK_SCRIPT],
  ['LICENSE', 'LICENSE'],
];

export function buildPlugin(outDir = PLUGIN_DIR): string {
  const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as PluginManifestSource;
  if (!fs.existsSync(path.join(ROOT, 'dist', 'cli.js'))) throw new Error('dist/cli.js is missing: run `npm run build` first');
  // Staged next to the old one and swapped in, so that a session running the plugin never sees half of it.
  const staging = `${outDir}.staging`;
  fs.rmSync(staging, { recursive: true, force: true });
  for (const [from, to] of COPIED) {
    fs.mkdirSync(path.dirname(path.join(staging, to)), { recursive: true });
    fs.copyFileSync(path.join(ROOT, from), path.join(staging, to));
  }
  fs.chmodSync(path.join(staging, PLUGIN_CLI), 0o755);
  fs.chmodSync(path.join(staging, PLUGIN_HOOK_SCRIPT), 0o755);
  for (const [file, text] of Object.entries(pluginFiles(manifest))) {
    fs.mkdirSync(path.dirname(path.join(staging, file)), { recursive: true });
    fs.writeFileSync(path.join(staging, file), text);
  }
  fs.rmSync(outDir, { recursive: true, force: true });
  fs.renameSync(staging, outDir);
  return outDir;
}

if (require.main === module) {
  console.log(buildPlugin());
}
