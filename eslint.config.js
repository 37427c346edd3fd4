// Flat config: typescript-eslint's recommended rules, and no console in library code (house style: injected Logger).
const js = require('@eslint/js');
const tseslint = require('typescript-eslint');

module.exports = tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      'coverage/**',
      '.lango/**',
      'scripts/bench/.build/**',
      'scripts/screenshots/.build/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      // Late-bound values (the runner the tools call) are read in closures before their one assignment.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
    },
  },
  { files: ['src/**/*.ts'], ignores: ['src/cli/**'], rules: { 'no-console': 'error' } },
  // Tests read loosely typed JSON bodies.
  { files: ['test/**/*.ts'], rules: { '@typescript-eslint/no-explicit-any': 'off' } },
  {
    files: ['**/*.mjs'],
    languageOptions: { sourceType: 'module', globals: { process: 'readonly', console: 'readonly' } },
  },
  // Control characters are matched on purpose where untrusted text is sanitised.
  { rules: { 'no-control-regex': 'off' } },
  {
    files: ['**/*.js'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
    languageOptions: {
      sourceType: 'commonjs',
      globals: { module: 'writable', require: 'readonly', __dirname: 'readonly', process: 'readonly' },
    },
  },
);
