import path from 'node:path';
import { loadConfig } from './config/app-config.js';
import type { EmbeddedPostgres } from './database/embedded-postgres.js';
import { chooseStores, PortProbe, portAnswers } from './embedded-stores.js';

/** A probe that answers for the ports listed, and records what it was asked. */
function probe(open: number[]) {
  const asked: number[] = [];
  const answers: PortProbe = async (_host, port) => {
    asked.push(port);
    return open.includes(port);
  };
  return { answers, asked };
}

function fakeEmbedded() {
  const started: string[] = [];
  const startEmbedded = async (dataDir: string): Promise<EmbeddedPostgres> => {
    started.push(dataDir);
    return { url: 'postgres://postgres@127.0.0.1:40000/postgres', dataDir, stop: async () => undefined };
  };
  return { startEmbedded, started };
}

describe('chooseStores', () => {
  it('keeps the servers when both answer on their default ports', async () => {
    const { answers } = probe([5432, 6379]);
    const { startEmbedded, started } = fakeEmbedded();
    const choice = await chooseStores(loadConfig({}), { answers, startEmbedded });
    expect(started).toEqual([]);
    expect(choice.config.database.url).toBe('postgres://postgres@127.0.0.1:5432/rag_chat');
    expect(choice.config.redis.url).toBe('redis://127.0.0.1:6379');
    expect(choice.line).toBeUndefined();
  });

  it('chooses the embedded database and no Redis when neither is set and nothing answers, and says why in one line', async () => {
    const { answers } = probe([]);
    const { startEmbedded, started } = fakeEmbedded();
    const choice = await chooseStores(loadConfig({}), { answers, startEmbedded });
    expect(started).toEqual([path.resolve('data/pglite')]);
    expect(choice.config.database).toMatchObject({ url: 'postgres://postgres@127.0.0.1:40000/postgres', createIfMissing: false });
    expect(choice.config.redis.url).toBeNull();
    expect(choice.line).toBe(
      `running on embedded PostgreSQL (PGlite with pgvector) in ${path.resolve('data/pglite')} (DATABASE_URL unset and nothing answers on 127.0.0.1:5432), one statement at a time; ` +
        'no Redis (REDIS_URL unset and nothing answers on 127.0.0.1:6379): cache, run events, cancels, rate limits and the ingest queue in this process, for one instance only',
    );
  });

  it('chooses each on its own: PostgreSQL found, Redis not', async () => {
    const { answers } = probe([5432]);
    const { startEmbedded, started } = fakeEmbedded();
    const choice = await chooseStores(loadConfig({}), { answers, startEmbedded });
    expect(started).toEqual([]);
    expect(choice.config.redis.url).toBeNull();
    expect(choice.line).toMatch(/^running on no Redis \(REDIS_URL unset/);
  });

  it('never second-guesses a variable that is set: no probe, and a server that is down is left to the start-up check', async () => {
    const { answers, asked } = probe([]);
    const { startEmbedded, started } = fakeEmbedded();
    const config = loadConfig({ DATABASE_URL: 'postgres://app@db.internal:5432/rag', REDIS_URL: 'redis://cache.internal:6379' });
    const choice = await chooseStores(config, { answers, startEmbedded });
    expect(asked).toEqual([]);
    expect(started).toEqual([]);
    expect(choice.config).toEqual(config);
  });

  it('takes pglite://<directory> and REDIS_URL=none as asked, without probing and without saying why', async () => {
    const { answers, asked } = probe([5432, 6379]);
    const { startEmbedded, started } = fakeEmbedded();
    const choice = await chooseStores(loadConfig({ DATABASE_URL: 'pglite://./var/rag', REDIS_URL: 'none' }), { answers, startEmbedded });
    expect(asked).toEqual([]);
    expect(started).toEqual([path.resolve('var/rag')]);
    expect(choice.config.redis.url).toBeNull();
    expect(choice.line).toBe(
      `running on embedded PostgreSQL (PGlite with pgvector) in ${path.resolve('var/rag')}, one statement at a time; ` +
        'no Redis: cache, run events, cancels, rate limits and the ingest queue in this process, for one instance only',
    );
  });

  it('refuses a DATABASE_URL or REDIS_URL of another scheme', () => {
    expect(() => loadConfig({ DATABASE_URL: 'mysql://root@127.0.0.1/rag' })).toThrow(/DATABASE_URL/);
    expect(() => loadConfig({ REDIS_URL: 'nothing' })).toThrow(/REDIS_URL/);
  });
});

describe('portAnswers', () => {
  it('says no for a port nothing listens on, yes for one that accepts', async () => {
    const { createServer } = await import('node:net');
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    await expect(portAnswers('127.0.0.1', port)).resolves.toBe(true);
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await expect(portAnswers('127.0.0.1', port)).resolves.toBe(false);
  });
});
