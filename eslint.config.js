// ESLint: TypeScript rules plus the module boundaries of docs/ARCHITECTURE.md "The layers" (the per-folder tsconfigs
// make the same boundaries a type error) and the no-Math.random rule for worker/ and kernels/.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const restrict = (patterns) => ({
  '@typescript-eslint/no-restricted-imports': ['error', { patterns }],
});

/** What worker/ may not import (a later config for the same files replaces the rule, so it is repeated from here). */
const WORKER_IMPORTS = [
  { group: ['**/app/**', '**/cli/**', '**/e2e/**'], message: 'worker/ may import kernels/ and itself only.' },
  {
    group: ['**/companion/**', '!**/companion/protocol'],
    message: 'worker/ talks to the companion over HTTP; only `import type` from companion/protocol.ts.',
  },
  {
    group: ['**/companion/protocol'],
    allowTypeImports: true,
    message: 'worker/ may only `import type` from companion/protocol.ts.',
  },
];

export default tseslint.config(
  {
    ignores: [
      'dist/',
      'dist-*/',
      '.tsbuild/',
      'node_modules/',
      'test-results/',
      'playwright-report/',
      'demo-out/',
      'public/',
      'kernels/wasm/assembly/',
      'kernels/wasm/build/',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { ecmaVersion: 2022, sourceType: 'module' },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-non-null-assertion': 'off',
      'no-empty': ['error', { allowEmptyCatch: false }],
    },
  },
  {
    files: ['**/*.mjs', '**/*.js'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } },
  },
  {
    // The wasm backend's helper thread runs in a Web Worker or a worker_threads Worker.
    files: ['kernels/wasm/thread.mjs'],
    languageOptions: { globals: { self: 'readonly', WebAssembly: 'readonly' } },
  },
  {
    files: ['app/**/*.{ts,tsx}'],
    rules: restrict([
      {
        group: ['**/worker/**', '!**/worker/protocol'],
        message: 'app/ sees the worker only through worker/protocol.ts (types) and app/worker-client.ts.',
      },
      {
        group: ['**/worker/protocol'],
        allowTypeImports: true,
        message: 'app/ may only `import type` from worker/protocol.ts.',
      },
      {
        group: ['**/kernels/**', '**/companion/**', '**/cli/**'],
        message: 'app/ may not import kernels/, companion/ or cli/.',
      },
    ]),
  },
  {
    files: ['worker/**/*.ts'],
    rules: {
      ...restrict(WORKER_IMPORTS),
      'no-restricted-properties': [
        'error',
        { object: 'Math', property: 'random', message: 'Use the seeded generator (kernels/common/random.ts).' },
      ],
    },
  },
  {
    // protocol.ts is the app's view of the worker; the worker's own modules import the contract
    // files (worker/contract/). The restrictions above, plus that one.
    files: ['worker/**/*.ts'],
    ignores: ['worker/api.ts', 'worker/**/*.test.ts'],
    rules: restrict([
      ...WORKER_IMPORTS,
      {
        group: ['**/protocol', '!**/companion/protocol'],
        message:
          'worker modules import the contract types from worker/contract/; protocol.ts is the API as the app sees it.',
      },
    ]),
  },
  {
    files: ['kernels/**/*.ts'],
    rules: {
      ...restrict([
        {
          group: ['**/app/**', '**/worker/**', '**/companion/**', '**/cli/**', '**/e2e/**'],
          message: 'kernels/ imports nothing above it.',
        },
      ]),
      'no-restricted-properties': [
        'error',
        { object: 'Math', property: 'random', message: 'Use the seeded generator (kernels/common/random.ts).' },
      ],
    },
  },
  {
    files: ['companion/**/*.ts'],
    rules: restrict([
      {
        group: ['**/app/**', '**/worker/**', '**/kernels/**', '**/cli/**'],
        message: 'companion/ imports its own files only.',
      },
    ]),
  },
);
