/**
 * NestJS 12 ships ES modules only, so Jest runs in its native ESM mode
 * (node --experimental-vm-modules, see package.json). Two projects: unit
 * specs beside the code, and end-to-end specs on real PostgreSQL and Redis.
 */
const common = {
  testEnvironment: 'node',
  rootDir: '.',
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json', useESM: true, diagnostics: false }] },
  setupFiles: ['reflect-metadata'],
};

export default {
  reporters: ['default', '<rootDir>/test/support/summary-reporter.mjs'],
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/src/**/*.spec.ts'] },
    {
      ...common,
      displayName: 'e2e',
      testMatch: ['<rootDir>/test/**/*.e2e-spec.ts'],
      globalSetup: '<rootDir>/test/support/global-setup.mjs',
      globalTeardown: '<rootDir>/test/support/global-teardown.mjs',
      testTimeout: 30000,
    },
  ],
};
