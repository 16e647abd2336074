// Plain JavaScript: Jest loads global setup outside its TypeScript transform.
import pg from 'pg';
import { createClient } from '@keyv/redis';

export const PG_SERVER = process.env.TEST_PG_SERVER ?? 'postgres://postgres@127.0.0.1:5432';
export const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379/15';

/**
 * Creates an empty database for this run (the app's start-up migrations fill
 * it, as in production) and empties the test Redis logical database.
 */
export default async function globalSetup() {
  const name = `rag_chat_test_${Date.now()}_${process.pid}`;
  const admin = new pg.Client({ connectionString: `${PG_SERVER}/postgres` });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE "${name}"`);
  } finally {
    await admin.end();
  }
  process.env.E2E_DATABASE_URL = `${PG_SERVER}/${name}`;

  const redis = createClient({ url: REDIS_URL });
  await redis.connect();
  await redis.flushDb();
  await redis.quit();
}
