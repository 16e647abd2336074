/**
 * Where this Jest worker keeps its own database and Redis logical database (the global setup,
 * test/support/global-setup.mjs, makes one of each per worker; --runInBand is worker 1).
 */
const WORKER = process.env.JEST_WORKER_ID ?? '1';

export const TEST_PG_SERVER = process.env.TEST_PG_SERVER ?? 'postgres://postgres@127.0.0.1:5432';
export const TEST_REDIS_URL = process.env[`E2E_REDIS_URL_${WORKER}`] ?? process.env.TEST_REDIS_URL?.split(',')[0].trim() ?? 'redis://127.0.0.1:6379/15';
export const TEST_JWT_SECRET = 'test-secret-for-the-e2e-suite-only';

export function testDatabaseUrl(): string {
  const url = process.env[`E2E_DATABASE_URL_${WORKER}`];
  if (!url) throw new Error(`E2E_DATABASE_URL_${WORKER} is not set: run the end-to-end projects through jest (global setup)`);
  return url;
}

/** The test Redis database's URL with its host and port replaced, e.g. by a TCP proxy's in front of it. */
export function testRedisUrlThrough(port: number, host = '127.0.0.1'): string {
  const url = new URL(TEST_REDIS_URL);
  url.hostname = host;
  url.port = String(port);
  return url.toString();
}
