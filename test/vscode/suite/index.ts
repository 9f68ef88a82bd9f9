/**
 * Entry point inside the extension host (the @vscode/test-electron `run()`
 * contract): runs every compiled *.test.js next to this file with mocha.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import Mocha from 'mocha';

/** Files that need a workspace of their own (test/e2e/vscodeExtension.test.ts runs them on it), not the interop store. */
export const OWN_WORKSPACE_FILES: readonly string[] = ['emptyStore.test.js'];

export async function run(): Promise<void> {
  const mocha = new Mocha({ ui: 'bdd', timeout: 120_000, color: false, reporter: 'spec' });
  // LTM_TEST_SUITE_FILES: the files to run, comma-separated, with or without `.test.js` (a developer's focused run:
  // LTM_TEST_SUITE_FILES=memoryPanel,usage; or a run on another workspace); unset, every file but those with their own workspace.
  const only = process.env.LTM_TEST_SUITE_FILES?.split(',').filter(Boolean).map((name) => (name.trim().endsWith('.test.js') ? name.trim() : `${name.trim()}.test.js`));
  const chosen = (f: string) => (only ? only.includes(f) : !OWN_WORKSPACE_FILES.includes(f));
  for (const file of fs.readdirSync(__dirname).filter((f) => f.endsWith('.test.js') && chosen(f)).sort()) {
    mocha.addFile(path.join(__dirname, file));
  }
  await new Promise<void>((resolve, reject) => {
    mocha.run((failures) => (failures > 0 ? reject(new Error(`${failures} extension test(s) failed`)) : resolve()));
  });
}
