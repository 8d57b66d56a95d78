// Lint: typescript-eslint with type information everywhere, and fences that keep deterministic code pure.
import tseslint from 'typescript-eslint';

const nodeBuiltins = [
  'assert',
  'async_hooks',
  'buffer',
  'child_process',
  'cluster',
  'crypto',
  'dgram',
  'dns',
  'events',
  'fs',
  'fs/promises',
  'http',
  'http2',
  'https',
  'net',
  'os',
  'path',
  'perf_hooks',
  'process',
  'readline',
  'stream',
  'timers',
  'tls',
  'url',
  'util',
  'v8',
  'vm',
  'worker_threads',
  'zlib',
];

// Modules that do I/O or hold clocks: never in workflow code (Temporal replays it) nor in pure code.
const ioModules = [
  { group: ['node:*', ...nodeBuiltins], message: 'Node built-ins do I/O or break determinism; do it in an activity.' },
  { group: ['@kubernetes/client-node'], allowTypeImports: true, message: 'Kubernetes calls belong in activities/ (type imports are fine).' },
  { group: ['**/activities/**', '../activities/*'], allowTypeImports: true, message: 'Workflows import only activity *types*.' },
  { group: ['**/watcher/**', '**/workers/**', '**/dev/**'], message: 'I/O folders are off limits here.' },
  {
    group: ['pino', 'prom-client', '@temporalio/client', '@temporalio/worker', '@temporalio/activity', 'node-forge'],
    message: 'Not deterministic; use @temporalio/workflow APIs (log, sleep, condition).',
  },
];

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', '.tidal/', 'eslint.config.js', '**/*.mjs'] },
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    files: ['workflows/**/*.ts', 'api/**/*.ts', 'resources/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: ioModules }],
      'no-restricted-globals': [
        'error',
        { name: 'setTimeout', message: 'Use sleep() or condition() from @temporalio/workflow.' },
        { name: 'setInterval', message: 'Use a durable timer.' },
        { name: 'fetch', message: 'I/O belongs in activities.' },
        { name: 'process', message: 'No environment in deterministic code.' },
      ],
      'no-restricted-properties': [
        'error',
        { object: 'Math', property: 'random', message: 'Randomness breaks replay; use uuid4() from @temporalio/workflow.' },
        { object: 'Date', property: 'now', message: 'Pure code takes time as a parameter; workflows use workflow time.' },
      ],
    },
  },
  {
    files: ['api/**/*.ts', 'resources/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [...ioModules, { group: ['@temporalio/*'], message: 'Pure code depends on nothing.' }] }],
    },
  },
  {
    files: ['test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/require-await': 'off', // fakes implement async interfaces synchronously
    },
  },
);
