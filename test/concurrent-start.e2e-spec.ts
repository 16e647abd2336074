import pg from 'pg';
import { MIGRATIONS } from '../src/database/data-source-options.js';
import { createTestApp } from './support/test-app.js';
import { TEST_PG_SERVER } from './support/test-env.js';

/** Instances of one deployment start together on a database nobody migrated yet. */
describe('Two instances starting at once on an empty database', () => {
  const name = `rag_chat_test_concurrent_${process.pid}_${Date.now()}`;
  const admin = new pg.Client({ connectionString: `${TEST_PG_SERVER}/postgres` });

  beforeAll(async () => {
    await admin.connect();
    await admin.query(`CREATE DATABASE "${name}"`);
  });
  afterAll(async () => {
    await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await admin.end();
  });

  it('take turns migrating it, and both start', async () => {
    const env = { DATABASE_URL: `${TEST_PG_SERVER}/${name}`, KNOWLEDGE_SEED_ON_START: 'false' };
    const started = await Promise.allSettled([createTestApp(env), createTestApp(env), createTestApp(env)]);
    try {
      expect(started.map((result) => (result.status === 'rejected' ? String(result.reason) : 'started'))).toEqual(['started', 'started', 'started']);
      // Each migration ran once.
      const [first] = started as Array<PromiseFulfilledResult<Awaited<ReturnType<typeof createTestApp>>>>;
      const rows: Array<{ name: string }> = await first.value.dataSource.query('SELECT name FROM typeorm_migrations ORDER BY id');
      expect(rows.map((row) => row.name)).toEqual(MIGRATIONS.map((migration) => migration.name));
    } finally {
      await Promise.all(started.map((result) => (result.status === 'fulfilled' ? result.value.close() : undefined)));
    }
  }, 60_000);
});
