import { userInfo } from 'node:os';
import pg from 'pg';
import type { AppConfig } from '../config/app-config.js';
import { directDatabaseUrl } from './data-source-options.js';
import { connectionFailure, DATABASE_CONNECT_TIMEOUT_MS } from './ensure-database.js';
import { sessionDefaultsFor } from './pg-clients.js';
import { quoteIdentifier } from './sql.js';

/** The role and database DATABASE_URL logs in as, by libpq's rules (the user defaults to PGUSER, then the OS user; the database to the user). */
export function pooledLogin(url: string): { user: string; database: string } {
  const parsed = new URL(url);
  const user = decodeURIComponent(parsed.username) || process.env.PGUSER || userInfo().username;
  const database = decodeURIComponent(parsed.pathname.replace(/^\//, '')) || user;
  return { user, database };
}

/** Instances starting together take turns on this transaction lock: two altering one role at once would collide. */
const ROLE_DEFAULTS_LOCK_KEY = 7_241_860_114;

/**
 * A transaction pooler (PgBouncer) refuses `statement_timeout` and the other
 * limits as startup parameters, and a `SET` would stay on a server
 * connection another client gets next. So the limits become the defaults of
 * DATABASE_URL's role in its database (`ALTER ROLE … IN DATABASE … SET`), set
 * over DATABASE_DIRECT_URL when they differ, before anything reaches the
 * pooler: every server connection it opens has them. Then a first pooled
 * connection checks the pooler answers (a StartupFailure naming DATABASE_URL
 * if not) and whether the limits hold (a pooler that logs in as another role
 * or database does not get them: a warning says what to run).
 */
export async function applyPooledSessionDefaults(config: AppConfig): Promise<{ info: string[]; warnings: string[] }> {
  const info: string[] = [];
  const warnings: string[] = [];
  const { user, database } = pooledLogin(config.database.url);
  const wanted = sessionDefaultsFor(config.database);
  const assignments = Object.entries(wanted).map(([name, value]) => `${name} = ${value}`);
  const alter = `ALTER ROLE ${quoteIdentifier(user)} IN DATABASE ${quoteIdentifier(database)} SET `;
  const directUrl = directDatabaseUrl(config.database);
  const direct = new pg.Client({ connectionString: directUrl, connectionTimeoutMillis: DATABASE_CONNECT_TIMEOUT_MS });
  let connected = false;
  try {
    await direct.connect();
    connected = true;
    await direct.query('BEGIN');
    await direct.query('SELECT pg_advisory_xact_lock($1)', [ROLE_DEFAULTS_LOCK_KEY]);
    const { rows } = await direct.query<{ setconfig: string[] | null }>(
      `SELECT s.setconfig FROM pg_db_role_setting s
         JOIN pg_roles r ON r.oid = s.setrole JOIN pg_database d ON d.oid = s.setdatabase
        WHERE r.rolname = $1 AND d.datname = $2`,
      [user, database],
    );
    const current = new Set(rows[0]?.setconfig ?? []);
    const missing = Object.entries(wanted).filter(([name, value]) => !current.has(`${name}=${value}`));
    for (const [name, value] of missing) await direct.query(`${alter}${name} = ${value}`);
    await direct.query('COMMIT');
    if (missing.length) info.push(`DATABASE_URL is a transaction pooler: set ${assignments.join(', ')} (ms) as the defaults of role "${user}" in database "${database}"`);
  } catch (error) {
    if (!connected) throw connectionFailure('DATABASE_DIRECT_URL', 'PostgreSQL', directUrl, error);
    warnings.push(
      `DATABASE_URL is a transaction pooler, and the statement and lock limits could not be set for its connections (${(error as Error).message}); run: ${assignments.map((assignment) => `${alter}${assignment};`).join(' ')}`,
    );
  } finally {
    await direct.end().catch(() => undefined);
  }
  const seen = await pooledSettings(config.database.url, Object.keys(wanted)).catch((error: unknown) => {
    throw connectionFailure('DATABASE_URL', 'the pooler', config.database.url, error);
  });
  const off = Object.entries(wanted).filter(([name, value]) => seen[name] !== String(value));
  if (off.length) {
    warnings.push(
      `DATABASE_URL is a transaction pooler, but its connections run with ${off.map(([name]) => `${name}=${seen[name]}`).join(', ')}, not ${off.map(([, value]) => String(value)).join(', ')}: ` +
        `does it log in as another role or database than "${user}"/"${database}"? Set them on the role it uses (ALTER ROLE … IN DATABASE … SET), or in its connect_query`,
    );
  }
  return { info, warnings };
}

async function pooledSettings(url: string, names: string[]): Promise<Record<string, string>> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: DATABASE_CONNECT_TIMEOUT_MS });
  try {
    await client.connect();
    const result = await client.query<{ name: string; setting: string }>('SELECT name, setting FROM pg_settings WHERE name = ANY($1)', [names]);
    return Object.fromEntries(result.rows.map((row) => [row.name, row.setting]));
  } finally {
    await client.end().catch(() => undefined);
  }
}
