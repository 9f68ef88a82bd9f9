/**
 * The workspace the extension-host suite runs on: the claude-ltm 0.2.5 interop
 * store, set up for Claude Code with `ltm init`.
 *
 *   node --import tsx test/vscode/workspace.ts <dir>   (for @vscode/test-cli, see .vscode-test.mjs)
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { initProject } from '../../src/servers/claudeSetup';

const INTEROP_STORE = path.resolve(__dirname, '..', 'fixtures', 'claude-ltm-0.2.5', '.claude');

export function prepareSuiteWorkspace(dir: string): void {
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  fs.cpSync(INTEROP_STORE, path.join(dir, '.claude'), { recursive: true });
  initProject(dir);
}

if (require.main === module) {
  const dir = process.argv[2];
  if (!dir) throw new Error('usage: node --import tsx test/vscode/workspace.ts <dir>');
  prepareSuiteWorkspace(path.resolve(dir));
}
