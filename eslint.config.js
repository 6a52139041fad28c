// ESLint flat config: typescript-eslint's recommended rules everywhere, type-aware promise rules where
// a forgotten await loses data or hides an error, and the layout rule of docs/development.md.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import prettier from 'eslint-config-prettier';
import globals from 'globals';

/** Capabilities: engines usable without HTTP. Everything under src/ but the HTTP surface and the top-level wiring. */
const ENGINES = [
  'admin',
  'alarms',
  'auth',
  'config',
  'db',
  'export',
  'images',
  'mqtt',
  'provisioning',
  'schemas',
  'sites',
  'stream',
  'telemetry',
  'transactions',
];

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      'data/**',
      'coverage/**',
      'bench/results/**',
      'console/src/api-types.ts',
      // Written into the tree while tests run (see .prettierignore).
      '**/*.timestamp-*.mjs',
      '.openapi-client-*/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: { ...globals.node },
    },
    rules: {
      // Unused names are errors unless they say so with a leading underscore (a rest-sibling drop, say).
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
      // Tests, benches and the console may use `any` at the edges of untyped data; the service may not.
      '@typescript-eslint/no-explicit-any': 'off',
      eqeqeq: ['error', 'always', { null: 'ignore' }],
      'no-console': 'off',
    },
  },
  {
    // Type-aware rules that pay: a promise nobody awaits is a write nobody waits for, or an error nobody sees.
    files: ['src/**/*.ts', 'test/**/*.ts', 'test-browser/**/*.ts', 'bench/**/*.ts'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
      '@typescript-eslint/await-thenable': 'error',
    },
  },
  {
    files: ['src/**/*.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
    },
  },
  {
    // The layout rule: an engine never reaches into HTTP.
    files: ENGINES.map((e) => `src/${e}/**/*.ts`),
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^fastify$|^fastify/|^@fastify/',
              message:
                'Engines stay free of HTTP: take plain values and return them; the route speaks Fastify.',
            },
            {
              regex: '(^|/)routes/',
              message:
                'Engines never import the HTTP surface (src/routes/); move the shared piece into the engine.',
            },
            {
              regex: '(^|/)plugins/',
              message:
                'Engines never import Fastify plugins (src/plugins/); move the shared piece into the engine.',
            },
          ],
        },
      ],
    },
  },
  {
    // A request's database calls end by its deadline, counted from its arrival (src/plugins/deadline.ts).
    files: ['src/routes/**/*.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: "MemberExpression[object.name='app'][property.name='db']",
          message:
            "Routes use request.db: its calls end by the request's deadline; app.db is for background work.",
        },
        {
          selector: "VariableDeclarator[init.name='app'] > ObjectPattern > Property[key.name='db']",
          message:
            "Routes use request.db: its calls end by the request's deadline; app.db is for background work.",
        },
      ],
    },
  },
  {
    files: ['console/**/*.{ts,tsx}'],
    languageOptions: { globals: { ...globals.browser } },
  },
  prettier,
);
