/**
 * ts-jest in CommonJS mode. The SDK's CJS build requires `jose`, which is
 * ESM-only: jest's module system cannot load it untransformed, so jose is the
 * one package under node_modules that ts-jest compiles (allowJs in
 * tsconfig.test.json).
 */
/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: {
    '^.+\\.[tj]s$': ['ts-jest', { tsconfig: '<rootDir>/tsconfig.test.json' }],
  },
  // Examples and tests import the package by its name, as an embedder would; here that is the source.
  moduleNameMapper: { '^lango$': '<rootDir>/src/index.ts' },
  transformIgnorePatterns: ['/node_modules/(?!(@a2a-js/sdk/node_modules/)?jose/)', '<rootDir>/dist/'],
  testTimeout: 30000,
  maxWorkers: 2,
};
