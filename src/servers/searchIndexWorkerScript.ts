/**
 * Where the search index worker (dist/search-index-worker.js, built from
 * src/searchIndexWorker.ts) is: next to the bundle that runs this code, the
 * CLI's or the extension's. Run from the sources (tests, tsx) there is none,
 * and a store builds its index where it searches.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import CLI_FILES from '../shared/cliFiles.json';

/** The store options that give it the worker (OpenOptions.searchIndexWorker), or none when it is not there. */
export function searchIndexWorkerOptions(): { searchIndexWorker?: string } {
  const script = path.join(__dirname, path.basename(CLI_FILES.indexWorker));
  return fs.existsSync(script) ? { searchIndexWorker: script } : {};
}
