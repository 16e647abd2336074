/**
 * NestJS 12 ships ES modules only, so Jest runs in its native ESM mode
 * (node --experimental-vm-modules, see package.json). TypeScript is stripped by
 * SWC, which keeps Nest's decorator metadata (design:paramtypes) and does no
 * type checking: `npm run typecheck` does that, and `npm test` runs it first.
 *
 * Projects: unit specs beside the code, integration specs (one module on real
 * PostgreSQL and Redis, without the app) and three end-to-end projects (the
 * whole app): api, resilience (faults: own PostgreSQL clusters and Redis
 * servers, TCP proxies, kills, stalls, drains, parse bombs, the built
 * service's start-up failures and messages) and browser (the
 * files that drive Chromium). The end-to-end and integration projects share
 * one global setup, which Jest runs once; it gives every worker its own
 * database and Redis logical database (test/support/test-env.ts), so the
 * projects can run on two workers at once.
 */
const swc = {
  jsc: {
    parser: { syntax: 'typescript', decorators: true },
    transform: { legacyDecorator: true, decoratorMetadata: true, useDefineForClassFields: true },
    target: 'es2022',
    keepClassNames: true,
    // JSON modules (`import … with { type: 'json' }`) keep their attribute, which Jest's ESM loader requires.
    experimental: { keepImportAttributes: true },
  },
  sourceMaps: 'inline',
};

const common = {
  testEnvironment: 'node',
  rootDir: '.',
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: { '^.+\\.ts$': ['@swc/jest', swc] },
  setupFiles: ['reflect-metadata'],
};

/** What every project that starts the app or a module on the real PostgreSQL and Redis shares. */
const withServers = {
  ...common,
  globalSetup: '<rootDir>/test/support/global-setup.mjs',
  globalTeardown: '<rootDir>/test/support/global-teardown.mjs',
};

/** What every end-to-end project shares: add e2e-wide setup files here. */
const e2e = { ...withServers, setupFilesAfterEnv: ['<rootDir>/test/support/error-body-check.ts'] };

/** Fault tests: their own servers, proxies, kills, stalls, drains, parse bombs, ingest faults, and start-ups of the built service. */
const RESILIENCE = [
  'cache-outage',
  'concurrent-start',
  'embedded-stores',
  'fault-support',
  'faults',
  'health-and-shutdown',
  'ingest-jobs',
  'ingest-jobs-deferred-build',
  'ingest-jobs-delete',
  'ingest-jobs-faults',
  'ingest-jobs-hostile',
  'parse-limits',
  'pgbouncer',
  'read-replica',
  'readiness',
  'redis-cluster',
  'redis-sentinel',
  'run-events',
  'shutdown-drain',
  'startup-failures',
  'startup-messages',
  'tracing-export',
  'turn-integrity',
  'turn-outcome',
  'turn-stall',
];
/** The files that drive Chromium. */
const BROWSER = [
  'browser-cors',
  'docs-headers',
  'langgraph-use-stream',
  'web-accessibility',
  'web-chat',
  'web-cross-origin',
  'web-hostile',
  'web-knowledge',
  'web-rough-edges',
  'web-signin',
  'web-trace-admin',
];

const e2eFiles = (names) => names.map((name) => `<rootDir>/test/${name}.e2e-spec.ts`);
const e2eFilePattern = (names) => `/test/(${names.join('|')})\\.e2e-spec\\.ts$`;

export default {
  reporters: ['default', '<rootDir>/test/support/summary-reporter.mjs'],
  // A global option (Jest ignores it inside a project): a test waits for its events, never against the clock, so
  // this only stops a genuine hang, on a loaded 2-core machine too.
  testTimeout: 120000,
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/src/**/*.spec.ts'] },
    { ...withServers, displayName: 'integration', testMatch: ['<rootDir>/test/integration/**/*.int-spec.ts'] },
    {
      ...e2e,
      displayName: 'api',
      testMatch: ['<rootDir>/test/*.e2e-spec.ts'],
      testPathIgnorePatterns: ['/node_modules/', e2eFilePattern([...RESILIENCE, ...BROWSER])],
    },
    { ...e2e, displayName: 'resilience', testMatch: e2eFiles(RESILIENCE) },
    { ...e2e, displayName: 'browser', testMatch: e2eFiles(BROWSER) },
  ],
};
