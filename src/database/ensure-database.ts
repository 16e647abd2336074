import { Client } from 'pg';
import { hostPort, networkFailure } from '../common/network-failure.js';
import { EXIT_CONFIG, EXIT_UNAVAILABLE, StartupFailure } from '../common/startup-failure.js';

/** How long the start-up check waits for PostgreSQL to accept a connection. */
export const DATABASE_CONNECT_TIMEOUT_MS = 5000;

/**
 * Creates the database named in `url` when it does not exist, connecting to
 * the server's `postgres` database to do so. Lets the service start on a
 * fresh PostgreSQL with one command.
 */
export async function ensureDatabase(url: string): Promise<boolean> {
  const name = databaseName(url);
  if (!name) return false;
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new Client({ connectionString: admin.toString(), connectionTimeoutMillis: DATABASE_CONNECT_TIMEOUT_MS });
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount) return false;
    await client.query(`CREATE DATABASE "${name.replace(/"/g, '""')}"`);
    return true;
  } catch (error) {
    // Another instance may have created it in between.
    if ((error as { code?: string }).code === '42P04') return false;
    throw error;
  } finally {
    await client.end();
  }
}

function databaseName(url: string): string {
  return decodeURIComponent(new URL(url).pathname.replace(/^\//, ''));
}

/** Where a PostgreSQL URL points, for messages: host:port (or the socket directory of `?host=`), never the password. */
export function postgresServer(url: string): string {
  const socket = new URL(url).searchParams.get('host');
  return socket?.startsWith('/') ? socket : hostPort(url, 5432);
}

export interface DatabaseCheck {
  /** The database was absent and has been created (DATABASE_CREATE_IF_MISSING). */
  created?: { name: string; server: string };
}

/**
 * The start-up check of DATABASE_URL (DATABASE_DIRECT_URL past a pooler): connects once, and says in one line
 * what stops the service when that fails (StartupFailure): the server
 * refused, timed out, refused the role or its password, TLS failed, or the
 * database does not exist and may not be created. With `createIfMissing`
 * an absent database is created instead.
 */
export async function checkDatabase(url: string, createIfMissing: boolean, variable = 'DATABASE_URL'): Promise<DatabaseCheck> {
  const server = postgresServer(url);
  const fail = (problem: string, exitCode: typeof EXIT_CONFIG | typeof EXIT_UNAVAILABLE) => new StartupFailure(variable, `PostgreSQL at ${server}: ${problem}`, exitCode);
  const client = new Client({ connectionString: url, connectionTimeoutMillis: DATABASE_CONNECT_TIMEOUT_MS });
  try {
    await client.connect();
    return {};
  } catch (error) {
    const name = databaseName(url);
    if (postgresCode(error) === '3D000') {
      if (!createIfMissing) {
        throw fail(
          `database "${name}" does not exist and DATABASE_CREATE_IF_MISSING is false (unset, it is false with NODE_ENV=production): create the database, or set DATABASE_CREATE_IF_MISSING=true`,
          EXIT_CONFIG,
        );
      }
      try {
        await ensureDatabase(url);
      } catch (creating) {
        const described = describePostgresFailure(creating);
        throw fail(`database "${name}" does not exist and could not be created: ${described.problem}`, described.exitCode);
      }
      return { created: { name, server } };
    }
    const described = describePostgresFailure(error);
    throw fail(described.problem, described.exitCode);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** A failed connection to `url` as the one line that stops the start-up, naming `variable`. */
export function connectionFailure(variable: string, what: string, url: string, error: unknown): StartupFailure {
  const described = describePostgresFailure(error);
  return new StartupFailure(variable, `${what} at ${postgresServer(url)}: ${described.problem}`, described.exitCode);
}

function postgresCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown })?.code;
  return typeof code === 'string' ? code : undefined;
}

/** A failed connection or statement in our words; the server's own message where it names the role, database or rule. */
function describePostgresFailure(error: unknown): { problem: string; exitCode: typeof EXIT_CONFIG | typeof EXIT_UNAVAILABLE } {
  const code = postgresCode(error);
  const message = error instanceof Error ? error.message : String(error);
  // Authentication and authorisation (28000: role missing, pg_hba.conf rule; 28P01: wrong password), and no right to create (42501).
  if (code === '28000' || code === '28P01' || code === '42501') return { problem: `authentication failed: ${message}`, exitCode: EXIT_CONFIG };
  if (code === '3D000') return { problem: message, exitCode: EXIT_CONFIG };
  if (code === '57P03') return { problem: `the server is not accepting connections yet: ${message}`, exitCode: EXIT_UNAVAILABLE };
  if (code === '53300') return { problem: `too many connections: ${message}`, exitCode: EXIT_UNAVAILABLE };
  if (/does not support SSL/i.test(message)) return { problem: 'TLS failed: the server does not support SSL connections (drop sslmode from DATABASE_URL)', exitCode: EXIT_CONFIG };
  if (message === 'timeout expired' || /connection timeout/i.test(message)) {
    return { problem: `timed out (no answer within ${DATABASE_CONNECT_TIMEOUT_MS} ms)`, exitCode: EXIT_UNAVAILABLE };
  }
  const network = networkFailure(error);
  if (network) return { problem: network.words, exitCode: network.kind === 'tls' ? EXIT_CONFIG : EXIT_UNAVAILABLE };
  return { problem: message, exitCode: EXIT_UNAVAILABLE };
}
