// The architecture is enforced, not just described: only src/vscode/ (and the
// composition root) may import `vscode`, so the engine and servers run anywhere.
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'out/**', 'node_modules/**', '.vscode-test/**', 'media/**', '**/*.d.ts'] },
  {
    files: ['**/*.ts', '**/*.mjs'],
    languageOptions: { parser: tseslint.parser },
    plugins: { '@typescript-eslint': tseslint.plugin },
    rules: {
      'no-restricted-imports': [
        'error',
        { paths: [{ name: 'vscode', message: 'Only src/vscode/ and src/extension.ts may import vscode.' }] },
      ],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': 'off',
    },
  },
  {
    files: ['src/core/**/*.ts', 'webview/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [{ name: 'vscode', message: 'The engine and the webview must not depend on VS Code.' }],
          patterns: [{ group: ['**/servers/**', '**/vscode/**'], message: 'src/core is the innermost layer.' }],
        },
      ],
    },
  },
  {
    files: ['src/vscode/**/*.ts', 'src/extension.ts', 'test/vscode/**/*.ts'],
    rules: { 'no-restricted-imports': 'off' },
  },
);
