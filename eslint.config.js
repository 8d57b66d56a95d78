// Lint: typescript-eslint with type information everywhere, and fences that keep deterministic code pure.
import tseslint from 'typescript-eslint';
import importX from 'eslint-plugin-import-x';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';

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

// The floors of the house, lowest first: a folder imports only from the folders it names (docs/architecture.md draws
// them). Type-only imports follow the same floors; the tools above them (dev/, bench/, examples/, test/) import freely.
const floors = {
  api: [],
  resources: ['api'],
  kube: ['api'],
  registry: ['api', 'kube'],
  pki: ['api', 'kube'],
  activities: ['api', 'resources', 'kube', 'registry', 'pki'],
  workflows: ['api', 'resources', 'activities'],
  watcher: ['api', 'resources', 'kube', 'activities'],
  webhook: ['api', 'kube', 'pki', 'activities'],
  workers: ['api', 'resources', 'kube', 'registry', 'pki', 'activities', 'workflows', 'watcher', 'webhook'],
  dev: ['api', 'resources', 'kube', 'registry', 'pki', 'activities', 'workflows', 'watcher', 'webhook', 'workers'],
  // `kubectl tidal`: reads the link (api/) and connects as the controller does (workers/temporal.ts).
  cli: ['api', 'workers'],
};
const allFolders = [...Object.keys(floors), 'bench', 'examples', 'test'];

/** The import patterns a folder may not use: every folder it does not name, at any depth of `../`. */
function aboveFloor(folder) {
  const banned = allFolders.filter((f) => f !== folder && !floors[folder].includes(f));
  return banned.length === 0
    ? []
    : [
        {
          group: banned.flatMap((f) => [`../${f}/**`, `../../${f}/**`, `../../../${f}/**`]),
          message: `${folder}/ imports only from ${floors[folder].join(', ') || 'itself'}.`,
        },
      ];
}

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
    plugins: { 'import-x': importX },
    settings: {
      'import-x/resolver-next': [createTypeScriptImportResolver({ project: 'tsconfig.json' })],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
      'import-x/extensions': ['.ts', '.js'],
    },
    rules: { 'import-x/no-cycle': 'error' },
  },
  ...Object.keys(floors)
    .filter((f) => !['workflows', 'api', 'resources'].includes(f))
    .map((f) => ({ files: [`${f}/**/*.ts`], rules: { 'no-restricted-imports': ['error', { patterns: aboveFloor(f) }] } })),
  {
    files: ['workflows/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [...ioModules, ...aboveFloor('workflows')] }] },
  },
  {
    // The entity loop's rules and state: pure, so unit tests run them without Temporal (workflows/entity.ts is their shell).
    files: ['workflows/entity-loop.ts', 'workflows/entity-state.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [...ioModules, { group: ['@temporalio/*'], message: 'Pure code depends on nothing.' }, ...aboveFloor('workflows')] },
      ],
    },
  },
  {
    files: ['workflows/**/*.ts', 'api/**/*.ts', 'resources/**/*.ts'],
    rules: {
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
  ...['api', 'resources'].map((f) => ({
    files: [`${f}/**/*.ts`],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [...ioModules, { group: ['@temporalio/*'], message: 'Pure code depends on nothing.' }, ...aboveFloor(f)] },
      ],
    },
  })),
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
