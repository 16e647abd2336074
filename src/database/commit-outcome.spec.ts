import net from 'node:net';
import pg from 'pg';
import { isNoReply, isUnanswered } from './commit-outcome.js';

/** A server that accepts connections and never says a word: a PostgreSQL that stalls. */
async function silentServer(): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => sockets.add(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

describe('what a failed statement says about the database', () => {
  let server: Awaited<ReturnType<typeof silentServer>>;
  beforeAll(async () => (server = await silentServer()));
  afterAll(() => server.close());

  it('a connection the server never answered, or none free in the pool in time, is unanswered', async () => {
    // One slot: the first query's new connection is never answered, the second waits for the slot in vain.
    const pool = new pg.Pool({ host: '127.0.0.1', port: server.port, user: 'x', database: 'x', max: 1, connectionTimeoutMillis: 100 });
    const failures = await Promise.all(
      [pool.query('SELECT 1'), pool.query('SELECT 2')].map((query) =>
        query.then(
          () => null,
          (e: unknown) => e as Error,
        ),
      ),
    );
    await pool.end();
    expect(failures.map((e) => e?.message).sort()).toEqual(['Connection terminated due to connection timeout', 'timeout exceeded when trying to connect']);
    for (const error of failures) expect(isUnanswered(error)).toBe(true);
    // A new connection cut at its limit already reads as a lost reply (its cause); a pool that had no connection
    // free in time does not: nothing was sent, yet the database is no more answering.
    const [unfree] = failures.filter((e) => e?.message === 'timeout exceeded when trying to connect');
    expect(isNoReply(unfree)).toBe(false);
  });

  it('an error the server answered with is not unanswered', () => {
    const answered = Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' });
    expect(isUnanswered(answered)).toBe(false);
    expect(isNoReply(answered)).toBe(false);
  });
});
