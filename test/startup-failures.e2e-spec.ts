import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { freePort, spawnService } from './support/service-process.js';
import { TEST_PG_SERVER, TEST_REDIS_URL, testDatabaseUrl } from './support/test-env.js';

/**
 * The built service started against dependencies it cannot use: each case
 * ends the process with exactly one line on its output, naming the variable,
 * the server's host:port and what happened, and with the documented exit
 * code (78: a setting is wrong; 69: a server could not be reached).
 */

/**
 * Runs the built service until it exits: its exit code and every non-empty
 * line it wrote. In an empty working directory: outside NODE_ENV=test the
 * service reads a .env there, and a developer's own must not count.
 */
async function failedStart(env: Record<string, string>): Promise<{ code: number | null; lines: string[] }> {
  const workingDirectory = mkdtempSync(path.join(tmpdir(), 'startup-failure-'));
  try {
    const service = await spawnService({ KNOWLEDGE_SEED_ON_START: 'false', ...env }, { workingDirectory });
    const status = await service.closed;
    return { code: status.code, lines: service.lines().filter((line) => line.trim() !== '') };
  } finally {
    rmSync(workingDirectory, { recursive: true, force: true });
  }
}

/** The test PostgreSQL server's URL with another user, port or database. */
function postgresUrl(change: { user?: string; port?: number; database?: string }): string {
  const url = new URL(testDatabaseUrl());
  if (change.user) url.username = change.user;
  if (change.port) url.port = String(change.port);
  if (change.database) url.pathname = `/${change.database}`;
  return url.toString();
}

const server = new URL(TEST_PG_SERVER);
const PG_HOST_PORT = `${server.hostname}:${server.port || 5432}`;

async function databaseExists(name: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: `${TEST_PG_SERVER}/postgres` });
  await client.connect();
  try {
    return ((await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount ?? 0) > 0;
  } finally {
    await client.end();
  }
}

describe('Start-up failures: one line, no stack trace, a documented exit code', () => {
  it('PostgreSQL refusing the connection (nothing listens on the port): exit 69', async () => {
    const port = await freePort();
    const result = await failedStart({ DATABASE_URL: postgresUrl({ port }) });
    expect(result).toEqual({ code: 69, lines: [`failed to start: DATABASE_URL: PostgreSQL at 127.0.0.1:${port}: connection refused`] });
  });

  it('PostgreSQL accepting the connection and never answering: timed out, exit 69', async () => {
    const held = new Set<net.Socket>();
    const silent = net.createServer((socket) => held.add(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = silent.address() as net.AddressInfo;
      const result = await failedStart({ DATABASE_URL: postgresUrl({ port }) });
      expect(result).toEqual({ code: 69, lines: [`failed to start: DATABASE_URL: PostgreSQL at 127.0.0.1:${port}: timed out (no answer within 5000 ms)`] });
    } finally {
      for (const socket of held) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  it('a transaction pooler (DATABASE_URL, with DATABASE_DIRECT_URL) refusing the connection: the pooler named, exit 69', async () => {
    const name = `rag_chat_pooler_down_${process.pid}_${randomBytes(3).toString('hex')}`;
    const port = await freePort();
    const admin = new pg.Client({ connectionString: `${TEST_PG_SERVER}/postgres` });
    await admin.connect();
    await admin.query(`CREATE DATABASE "${name}"`);
    try {
      const result = await failedStart({ DATABASE_URL: postgresUrl({ port, database: name }), DATABASE_DIRECT_URL: postgresUrl({ database: name }) });
      expect(result).toEqual({ code: 69, lines: [`failed to start: DATABASE_URL: the pooler at 127.0.0.1:${port}: connection refused`] });
    } finally {
      await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await admin.end();
    }
  });

  it('a role the server does not have: authentication failed, exit 78', async () => {
    const role = `nobody_${randomBytes(4).toString('hex')}`;
    const result = await failedStart({ DATABASE_URL: postgresUrl({ user: role }) });
    expect(result).toEqual({ code: 78, lines: [`failed to start: DATABASE_URL: PostgreSQL at ${PG_HOST_PORT}: authentication failed: role "${role}" does not exist`] });
  });

  it('a missing database with DATABASE_CREATE_IF_MISSING=false: exit 78, and nothing is created', async () => {
    const name = `rag_chat_missing_${randomBytes(4).toString('hex')}`;
    const result = await failedStart({ DATABASE_URL: postgresUrl({ database: name }), DATABASE_CREATE_IF_MISSING: 'false' });
    expect(result).toEqual({
      code: 78,
      lines: [
        `failed to start: DATABASE_URL: PostgreSQL at ${PG_HOST_PORT}: database "${name}" does not exist and DATABASE_CREATE_IF_MISSING is false ` +
          '(unset, it is false with NODE_ENV=production): create the database, or set DATABASE_CREATE_IF_MISSING=true',
      ],
    });
    expect(await databaseExists(name)).toBe(false);
  });

  it('a missing database with NODE_ENV=production and DATABASE_CREATE_IF_MISSING unset: the same, nothing created on whatever server the URL reaches', async () => {
    const name = `rag_chat_missing_${randomBytes(4).toString('hex')}`;
    const result = await failedStart({ NODE_ENV: 'production', DATABASE_URL: postgresUrl({ database: name }), DATABASE_CREATE_IF_MISSING: '' });
    expect(result.code).toBe(78);
    expect(result.lines).toEqual([expect.stringContaining(`failed to start: DATABASE_URL: PostgreSQL at ${PG_HOST_PORT}: database "${name}" does not exist`)]);
    expect(await databaseExists(name)).toBe(false);
  });

  it('Redis refusing the password: exit 78 (a server that answers but refuses the settings does not get better by itself)', async () => {
    const redis = new URL(TEST_REDIS_URL);
    redis.username = 'nobody';
    redis.password = 'wrong';
    const result = await failedStart({ DATABASE_URL: testDatabaseUrl(), REDIS_URL: redis.toString() });
    expect(result).toEqual({
      code: 78,
      lines: [`failed to start: REDIS_URL: Redis at ${redis.hostname}:${redis.port || 6379}: authentication failed: WRONGPASS invalid username-password pair or user is disabled.`],
    });
  });

  it('REDIS_CLUSTER_NODES naming a Redis without cluster support: exit 78, the node’s own reply', async () => {
    const redis = new URL(TEST_REDIS_URL);
    const node = `${redis.hostname}:${redis.port || 6379}`;
    const result = await failedStart({ DATABASE_URL: testDatabaseUrl(), REDIS_CLUSTER_NODES: node, REDIS_URL: `redis://${node}` });
    expect(result).toEqual({ code: 78, lines: [`failed to start: REDIS_CLUSTER_NODES: Redis Cluster (nodes ${node}): ERR This instance has cluster support disabled`] });
  });

  it('a misspelt variable that a rule needed: the invalid setting, the hint at the misspelling, exit 78', async () => {
    const result = await failedStart({ DATABASE_URL: testDatabaseUrl(), LLM_PROVIDER: 'openai', LLM_API_KY: 'sk-test' });
    expect(result).toEqual({
      code: 78,
      lines: [
        'Invalid environment configuration:',
        'LLM_API_KEY: required when LLM_PROVIDER=openai (or set LLM_BASE_URL for a keyless local endpoint)',
        'LLM_API_KY: did you mean LLM_API_KEY? LLM_API_KY is not a setting of this service and is ignored',
      ],
    });
  });
});
