/**
 * Entry point inside the extension host (the @vscode/test-electron `run()`
 * contract): runs every compiled *.test.js next to this file with mocha.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import Mocha from 'mocha';

export async function run(): Promise<void> {
  const mocha = new Mocha({ ui: 'bdd', timeout: 120_000, color: false, reporter: 'spec' });
  // LTM_HOST_TESTS=memoryPanel,usage runs only those files (a developer's focused run); unset, all of them.
  const only = process.env.LTM_HOST_TESTS?.split(',').map((name) => `${name.trim()}.test.js`);
  for (const file of fs.readdirSync(__dirname).filter((f) => f.endsWith('.test.js') && (!only || only.includes(f))).sort()) {
    mocha.addFile(path.join(__dirname, file));
  }
  await new Promise<void>((resolve, reject) => {
    mocha.run((failures) => (failures > 0 ? reject(new Error(`${failures} extension test(s) failed`)) : resolve()));
  });
}
