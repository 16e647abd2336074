import pg from 'pg';
import { PG_SERVER, WORKER_DATABASES_VARIABLE } from './global-setup.mjs';

export default async function globalTeardown() {
  const urls = (process.env[WORKER_DATABASES_VARIABLE] ?? '').split(',').filter((url) => url !== '');
  if (urls.length === 0 || process.env.E2E_KEEP_DATABASE === 'true') return;
  const admin = new pg.Client({ connectionString: `${PG_SERVER}/postgres` });
  await admin.connect();
  try {
    for (const url of urls) {
      const name = new URL(url).pathname.slice(1);
      await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    }
  } finally {
    await admin.end();
  }
}
