// The extension-host suite (test/vscode/suite) through @vscode/test-cli, for machines where VS Code can
// be downloaded (it cannot here: the tests use code-server instead, see test/e2e/vscodeExtension.test.ts):
//   npm run build && node esbuild.mjs --tests && node --import tsx test/vscode/workspace.ts out/test/vscode/workspace
//   npx @vscode/test-cli
// The suite's last test runs Claude Code: set LTM_TEST_CLAUDE to its binary (scripts/setup-test-deps.sh claude).
export default {
  files: 'out/test/vscode/suite/*.test.js',
  workspaceFolder: 'out/test/vscode/workspace',
  mocha: { ui: 'bdd', timeout: 120000 },
};
