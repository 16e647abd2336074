/**
 * NestJS 12 ships ES modules only, so Jest runs in its native ESM mode
 * (node --experimental-vm-modules, see package.json). Three projects: unit
 * specs beside the code, integration specs (one module on real PostgreSQL
 * and Redis, without the app) and end-to-end specs (the whole app). Jest runs
 * a global setup shared by several projects once.
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
  // A global option (Jest ignores it inside a project): a test waits for its events, never against the clock, so
  // this only stops a genuine hang, on a loaded 2-core machine too.
  testTimeout: 120000,
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/src/**/*.spec.ts'] },
    {
      ...common,
      displayName: 'e2e',
      testMatch: ['<rootDir>/test/**/*.e2e-spec.ts'],
      setupFilesAfterEnv: ['<rootDir>/test/support/error-body-check.ts'],
      globalSetup: '<rootDir>/test/support/global-setup.mjs',
      globalTeardown: '<rootDir>/test/support/global-teardown.mjs',
    },
    {
      ...common,
      displayName: 'integration',
      testMatch: ['<rootDir>/test/integration/**/*.int-spec.ts'],
      globalSetup: '<rootDir>/test/support/global-setup.mjs',
      globalTeardown: '<rootDir>/test/support/global-teardown.mjs',
    },
  ],
};
