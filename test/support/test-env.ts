/** Where the end-to-end run keeps its own database and Redis logical database. */
export const TEST_PG_SERVER = process.env.TEST_PG_SERVER ?? 'postgres://postgres@127.0.0.1:5432';
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379/15';
export const TEST_JWT_SECRET = 'test-secret-for-the-e2e-suite-only';

export function testDatabaseUrl(): string {
  const url = process.env.E2E_DATABASE_URL;
  if (!url) throw new Error('E2E_DATABASE_URL is not set: run the e2e project through jest (global setup)');
  return url;
}
