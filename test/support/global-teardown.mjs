import pg from 'pg';
import { PG_SERVER } from './global-setup.mjs';

export default async function globalTeardown() {
  const url = process.env.E2E_DATABASE_URL;
  if (!url || process.env.E2E_KEEP_DATABASE === 'true') return;
  const name = new URL(url).pathname.slice(1);
  const admin = new pg.Client({ connectionString: `${PG_SERVER}/postgres` });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  } finally {
    await admin.end();
  }
}
