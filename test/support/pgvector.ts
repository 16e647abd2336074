import pg from 'pg';
import { TEST_PG_SERVER } from './test-env.js';

async function serverHasPgvector(): Promise<boolean> {
  const client = new pg.Client({ connectionString: `${TEST_PG_SERVER}/postgres` });
  await client.connect();
  try {
    return (await client.query(`SELECT 1 FROM pg_available_extensions WHERE name = 'vector'`)).rowCount === 1;
  } finally {
    await client.end();
  }
}

const pgvectorAvailable = await serverHasPgvector();
if (!pgvectorAvailable) console.warn('pgvector is not installed on this PostgreSQL server: the tests that need it are skipped');

/**
 * `describe` for tests that need pgvector; `describe.skip` on a server without it. .ci/run sets
 * REQUIRE_PGVECTOR=1 once it has installed the extension: then these tests fail rather than skip.
 */
export const describeWithPgvector = pgvectorAvailable || process.env.REQUIRE_PGVECTOR === '1' ? describe : describe.skip;
