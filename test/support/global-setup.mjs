// Plain JavaScript: Jest loads global setup outside its TypeScript transform.
import pg from 'pg';
import { createClient } from '@keyv/redis';

export const PG_SERVER = process.env.TEST_PG_SERVER ?? 'postgres://postgres@127.0.0.1:5432';
/**
 * One Redis logical database per Jest worker: TEST_REDIS_URL lists them, comma-separated, worker 1's first;
 * without it, databases 15, 14, 13… of the local server.
 */
function redisUrls(workers) {
  if (process.env.TEST_REDIS_URL === undefined) return Array.from({ length: Math.min(workers, 16) }, (_, i) => `redis://127.0.0.1:6379/${15 - i}`);
  return process.env.TEST_REDIS_URL.split(',')
    .map((url) => url.trim())
    .filter((url) => url !== '');
}

/** The databases this run created, for the teardown (Jest runs both in its own process). */
export const WORKER_DATABASES_VARIABLE = 'E2E_DATABASE_URLS';

/**
 * Gives every Jest worker its own empty database (the app's start-up
 * migrations fill it, as in production) and its own emptied Redis logical
 * database, so that two test files running at once on two workers never see
 * each other's sessions, documents, caches, run streams or queues. A worker
 * finds its own through JEST_WORKER_ID (test/support/test-env.ts).
 */
export default async function globalSetup(globalConfig) {
  const workers = Math.max(1, globalConfig?.maxWorkers ?? 1);
  const redisUrlList = redisUrls(workers);
  if (redisUrlList.length < workers) {
    throw new Error(
      `${workers} Jest workers need ${workers} Redis logical databases, one each; TEST_REDIS_URL names ${redisUrlList.length} ` +
        `(give them comma-separated, e.g. redis://127.0.0.1:6379/15,redis://127.0.0.1:6379/14, or run with --runInBand)`,
    );
  }
  const run = `rag_chat_test_${Date.now()}_${process.pid}`;
  const admin = new pg.Client({ connectionString: `${PG_SERVER}/postgres` });
  await admin.connect();
  const urls = [];
  try {
    for (let worker = 1; worker <= workers; worker += 1) {
      const name = workers === 1 ? run : `${run}_w${worker}`;
      await admin.query(`CREATE DATABASE "${name}"`);
      const url = `${PG_SERVER}/${name}`;
      urls.push(url);
      process.env[`E2E_DATABASE_URL_${worker}`] = url;
      process.env[`E2E_REDIS_URL_${worker}`] = redisUrlList[worker - 1];
    }
  } finally {
    await admin.end();
  }
  process.env[WORKER_DATABASES_VARIABLE] = urls.join(',');

  for (const url of redisUrlList.slice(0, workers)) {
    const redis = createClient({ url });
    await redis.connect();
    await redis.flushDb();
    await redis.quit();
  }
}
