import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { StartupFailure } from '../common/startup-failure.js';
import { EmbeddedPostgres, embeddedDataDir, startEmbeddedPostgres } from './embedded-postgres.js';

describe('embeddedDataDir', () => {
  it('resolves the directory a pglite:// URL names, ./data/pglite for none', () => {
    expect(embeddedDataDir('pglite://')).toBe(path.resolve('data/pglite'));
    expect(embeddedDataDir('pglite://./var/db')).toBe(path.resolve('var/db'));
    expect(embeddedDataDir('pglite:///srv/rag')).toBe('/srv/rag');
  });
});

const LARGE = 'x'.repeat(300_000);

describe('the embedded PostgreSQL server', () => {
  let dir: string;
  let embedded: EmbeddedPostgres;
  const clients: pg.Client[] = [];
  const connect = async () => {
    const client = new pg.Client({ connectionString: embedded.url });
    await client.connect();
    clients.push(client);
    return client;
  };

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'rag-pglite-'));
    embedded = await startEmbeddedPostgres(path.join(dir, 'db'));
  }, 60_000);
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.end().catch(() => undefined)));
    await embedded?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('keeps each connection’s parameterised statements whole when many run at once (Parse, Bind and Execute never interleave)', async () => {
    const connections = await Promise.all(Array.from({ length: 8 }, () => connect()));
    await connections[0].query('CREATE TABLE interleaved (c int, i int, tag text, body text)');
    // Each connection runs its statements one after another; the eight connections run side by side.
    const queries = connections.map(async (client, c) => {
      const rows: { tag: string }[] = [];
      for (let i = 0; i < 40; i += 1) {
        // A parameter count of their own per connection, and large values: a Bind that arrives in several TCP chunks
        // leaves the backend idle in between, and a Bind meeting another connection's Parse fails.
        const result =
          c % 2 === 0
            ? await client.query<{ tag: string }>('INSERT INTO interleaved (c, i, tag, body) VALUES ($1, $2, $3, $4) RETURNING tag', [c, i, `${c}/${i}`, LARGE])
            : await client.query<{ tag: string }>('INSERT INTO interleaved (c, tag, body) VALUES ($1, $2, $3) RETURNING tag', [c, `${c}/${i}`, LARGE]);
        rows.push(result.rows[0]);
      }
      return rows;
    });
    const rows = (await Promise.all(queries)).flat();
    expect(rows.map((row) => row.tag)).toEqual(connections.flatMap((_, c) => Array.from({ length: 40 }, (__, i) => `${c}/${i}`)));
  });

  it('runs a transaction alone: another connection sees it only as a whole, and nothing of one rolled back', async () => {
    const [writer, reader] = await Promise.all([connect(), connect()]);
    await writer.query('CREATE TABLE apart (n int)');
    await writer.query('BEGIN');
    await writer.query('INSERT INTO apart VALUES ($1)', [1]);
    const read = reader.query<{ count: string }>('SELECT count(*) FROM apart');
    await writer.query('INSERT INTO apart VALUES ($1)', [2]);
    await writer.query('ROLLBACK');
    expect((await read).rows[0].count).toBe('0');

    await writer.query('BEGIN');
    await writer.query('INSERT INTO apart VALUES ($1), ($2)', [3, 4]);
    const later = reader.query<{ count: string }>('SELECT count(*) FROM apart');
    await writer.query('COMMIT');
    expect((await later).rows[0].count).toBe('2');
  });

  it('rolls back the transaction of a connection that goes away, and the others go on', async () => {
    const [leaving, staying] = await Promise.all([connect(), connect()]);
    await leaving.query('CREATE TABLE left_behind (n int)');
    await leaving.query('BEGIN');
    await leaving.query('INSERT INTO left_behind VALUES (1)');
    const waiting = staying.query<{ count: string }>('SELECT count(*) FROM left_behind');
    await leaving.end();
    expect((await waiting).rows[0].count).toBe('0');
  });

  it('closes a connection that holds a transaction open and sends nothing while others wait, rolling it back (idle in transaction)', async () => {
    // A server of its own with a short limit: the others' transactions may pause longer than that on a busy machine.
    const strict = await startEmbeddedPostgres(path.join(dir, 'strict'), { idleTransactionMs: 300 });
    const [idle, waiting] = [new pg.Client({ connectionString: strict.url }), new pg.Client({ connectionString: strict.url })];
    await Promise.all([idle.connect(), waiting.connect()]);
    idle.on('error', () => undefined); // its socket is closed under it
    await idle.query('CREATE TABLE held (n int)');
    await idle.query('BEGIN');
    await idle.query('INSERT INTO held VALUES (1)');
    // Resolves only once the idle owner has been put out: nothing else frees the backend.
    expect((await waiting.query<{ count: string }>('SELECT count(*) FROM held')).rows[0].count).toBe('0');
    await expect(idle.query('COMMIT')).rejects.toThrow();
    await waiting.end();
    await strict.stop();
  }, 60_000);

  it('has pgvector', async () => {
    const client = await connect();
    await client.query('CREATE EXTENSION IF NOT EXISTS vector');
    const result = await client.query<{ distance: number }>("SELECT '[1,2,3]'::vector <-> '[1,2,4]'::vector AS distance");
    expect(result.rows[0].distance).toBe(1);
  });

  it('refuses a directory that holds something else, and an unreadable lock, in one line each', async () => {
    const notes = path.join(dir, 'notes');
    mkdirSync(notes);
    writeFileSync(path.join(notes, 'todo.txt'), 'mine');
    await expect(startEmbeddedPostgres(notes)).rejects.toThrow(
      new StartupFailure('DATABASE_URL', `${notes} is not empty and holds no database: choose an empty or new directory for the embedded database`, 78),
    );
    const garbled = path.join(dir, 'garbled');
    mkdirSync(garbled);
    writeFileSync(path.join(garbled, 'service.pid'), '');
    await expect(startEmbeddedPostgres(garbled)).rejects.toThrow(
      new StartupFailure('DATABASE_URL', `the embedded database at ${garbled} has an unreadable ${path.join(garbled, 'service.pid')}: remove it if no service runs on it`, 78),
    );
  });

  it('refuses a directory another live process holds, naming it', async () => {
    const other = path.join(dir, 'other');
    await startEmbeddedPostgres(other).then((started) => started.stop());
    writeFileSync(path.join(other, 'service.pid'), String(process.ppid));
    await expect(startEmbeddedPostgres(other)).rejects.toThrow(
      new StartupFailure('DATABASE_URL', `the embedded database at ${other} is in use by process ${process.ppid}; stop it or choose another directory`, 78),
    );
  }, 60_000);
});
