// ESLint (flat config): typescript-eslint's recommended rules for every TypeScript file, the React hooks rules for the
// web client, and eslint-config-prettier last so that formatting is Prettier's business alone.
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import reactHooks from 'eslint-plugin-react-hooks';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'build/**', 'coverage/**', '**/node_modules/**', 'web/dist/**', 'clients/typescript/dist/**', 'clients/typescript/src/schema.d.ts'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
    },
  },
  {
    // Each trace DTO is a class (for Swagger's decorators) merged with an interface derived from its field table.
    files: ['src/trace/trace.protocol.ts'],
    rules: { '@typescript-eslint/no-unsafe-declaration-merging': 'off', '@typescript-eslint/no-empty-object-type': 'off' },
  },
  {
    // Tests read untyped JSON: log lines, SSE payloads, and what a browser page's globals hand back.
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    files: ['web/src/**/*.{ts,tsx}'],
    languageOptions: { globals: { ...globals.browser } },
    plugins: { 'react-hooks': reactHooks },
    rules: reactHooks.configs.recommended.rules,
  },
  prettier,
);
