import { loadConfig } from '../config/app-config.js';
import { buildDataSourceOptions, directDatabaseUrl, throughPooler } from './data-source-options.js';
import { pooledLogin } from './pooled-session-defaults.js';

const POOLER = 'postgres://app@127.0.0.1:6432/rag_chat';
const SERVER = 'postgres://app@127.0.0.1:5432/rag_chat';

describe('Data source options past a transaction pooler', () => {
  it('sends the limits as startup parameters to PostgreSQL itself, and uses DATABASE_URL for everything', () => {
    const config = loadConfig({ DATABASE_URL: SERVER });
    expect(throughPooler(config.database)).toBe(false);
    expect(directDatabaseUrl(config.database)).toBe(SERVER);
    const app = buildDataSourceOptions(config) as { url: string; extra: Record<string, unknown> };
    expect(app.url).toBe(SERVER);
    expect(app.extra).toMatchObject({ statement_timeout: 15000, lock_timeout: 5000, idle_in_transaction_session_timeout: 30000, query_timeout: 17000 });
    const maintenance = buildDataSourceOptions(config, 'maintenance') as { url: string; extra: Record<string, unknown> };
    expect(maintenance.url).toBe(SERVER);
    expect(maintenance.extra).not.toHaveProperty('options');
    // The same URL twice is no pooler.
    expect(throughPooler(loadConfig({ DATABASE_URL: SERVER, DATABASE_DIRECT_URL: SERVER }).database)).toBe(false);
  });

  it('with DATABASE_DIRECT_URL: the pool sends no session settings; migrations and index builds go to the server, without limits', () => {
    const config = loadConfig({ DATABASE_URL: POOLER, DATABASE_DIRECT_URL: SERVER, DATABASE_STATEMENT_TIMEOUT_MS: '9000' });
    expect(throughPooler(config.database)).toBe(true);
    const app = buildDataSourceOptions(config) as { url: string; extra: Record<string, unknown> };
    expect(app.url).toBe(POOLER);
    for (const setting of ['statement_timeout', 'lock_timeout', 'idle_in_transaction_session_timeout', 'options']) expect(app.extra).not.toHaveProperty(setting);
    // The client still gives up on a pooler or server that does not answer.
    expect(app.extra.query_timeout).toBe(11000);
    const maintenance = buildDataSourceOptions(config, 'maintenance') as { url: string; extra: Record<string, unknown> };
    expect(maintenance.url).toBe(SERVER);
    expect(maintenance.extra.options).toBe('-c statement_timeout=0 -c lock_timeout=0 -c idle_in_transaction_session_timeout=0');
  });

  it('refuses a DATABASE_DIRECT_URL that is not a postgres:// URL', () => {
    expect(() => loadConfig({ DATABASE_DIRECT_URL: 'pglite://data' })).toThrow(/DATABASE_DIRECT_URL/);
  });

  it('reads the role and database the pooled URL logs in as, by libpq defaults where the URL is silent', () => {
    expect(pooledLogin('postgres://app%40x:secret@pooler:6432/rag%20chat')).toEqual({ user: 'app@x', database: 'rag chat' });
    const previous = process.env.PGUSER;
    process.env.PGUSER = 'from_env';
    try {
      expect(pooledLogin('postgres://pooler:6432')).toEqual({ user: 'from_env', database: 'from_env' });
    } finally {
      if (previous === undefined) delete process.env.PGUSER;
      else process.env.PGUSER = previous;
    }
  });
});
