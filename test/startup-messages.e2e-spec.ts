import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import request from 'supertest';
import { adminBearer } from './support/admin.js';
import { freePort, ServiceProcess, startService } from './support/service-process.js';
import { TEST_PG_SERVER, testDatabaseUrl } from './support/test-env.js';

/**
 * The built service started with something wrong that does not stop it: a
 * misspelt variable, a dead model endpoint, Redis or the identity provider
 * down. Each is one warning line naming the variable, the host:port and what
 * happened; the service runs, and stops with exit 0. Also the lines a good
 * start-up writes: the database it created, the .env it read, and what it
 * runs with.
 */

const base = () => ({ DATABASE_URL: testDatabaseUrl(), KNOWLEDGE_SEED_ON_START: 'false' });

describe('Start-up warnings: the service runs, and says what is wrong in one line', () => {
  const running: ServiceProcess[] = [];
  const dirs: string[] = [];
  afterEach(async () => {
    for (const service of running.splice(0)) expect((await service.stop()).code).toBe(0);
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  const start = async (env: Record<string, string>, workingDirectory?: string) => {
    const service = await startService(env, { startupTimeoutMs: 60_000, workingDirectory });
    running.push(service);
    return service;
  };

  it('a misspelt variable: "did you mean", and the setting it was meant for is not applied', async () => {
    const service = await start({ ...base(), LLM_PROVDER: 'openai', WEB_CLIENT_ENABLED: 'false' });
    expect(service.messages(40)).toEqual(['LLM_PROVDER: did you mean LLM_PROVIDER? LLM_PROVDER is not a setting of this service and is ignored']);
    expect(service.messages()).toContain(
      'running with model local (offline, extractive); embeddings local (256 dimensions); reranker local; dense backend memory (RAG_DENSE_BACKEND=auto); web client off',
    );
  });

  it('a dead model endpoint: a start-up warning, and a turn that says the connection was refused (502 model_error)', async () => {
    const port = await freePort();
    const service = await start({ ...base(), LLM_PROVIDER: 'openai', LLM_BASE_URL: `http://127.0.0.1:${port}/v1`, LLM_API_KEY: 'test', WEB_CLIENT_ENABLED: 'false' });
    const warning = `LLM_BASE_URL: the model endpoint at 127.0.0.1:${port}: connection refused; chat turns fail (model_error) until it answers`;
    await service.waitForLog((_line, entry) => entry?.msg === warning);
    expect(service.messages()).toContain(
      `running with model openai at 127.0.0.1:${port} (main gpt-4o-mini, fast gpt-4o-mini); embeddings local (256 dimensions); reranker local; dense backend memory (RAG_DENSE_BACKEND=auto); web client off`,
    );

    const turn = await request(service.baseUrl).post('/api/chat').set(adminBearer()).send({ message: 'How do I reset the Aurora X1 router?' }).expect(502);
    expect(turn.body).toMatchObject({
      code: 'model_error',
      message: 'The model failed (its endpoint refused the connection). Your message was saved; retry to get an answer.',
    });
  });

  it('Redis refusing the connection: a warning, and the service runs without it', async () => {
    const port = await freePort();
    const service = await start({ ...base(), REDIS_URL: `redis://127.0.0.1:${port}/0` });
    expect(service.messages(40)).toContain(
      `REDIS_URL: Redis at 127.0.0.1:${port}: connection refused; starting without it (the cache falls back to PostgreSQL; rejoining runs from other instances, remote cancels and the ingest queue wait for it)`,
    );
    await request(service.baseUrl).get('/api/sessions').set(adminBearer()).expect(200);
  });

  it('no Redis Cluster node answering: a warning naming the nodes, and the service runs without it', async () => {
    const [first, second] = [await freePort(), await freePort()];
    const service = await start({ ...base(), REDIS_CLUSTER_NODES: `127.0.0.1:${first},127.0.0.1:${second}`, REDIS_URL: `redis://127.0.0.1:${first}` });
    expect(service.messages(40)).toContain(
      `REDIS_CLUSTER_NODES: Redis Cluster (nodes 127.0.0.1:${first}, 127.0.0.1:${second}): connection refused; starting without it (the cache falls back to PostgreSQL; rejoining runs from other instances, remote cancels and the ingest queue wait for it)`,
    );
    await request(service.baseUrl).get('/api/sessions').set(adminBearer()).expect(200);
  });

  it("the identity provider's key set unreachable: a warning; the service's own tokens work", async () => {
    const port = await freePort();
    const service = await start({ ...base(), JWT_JWKS_URL: `http://127.0.0.1:${port}/jwks`, JWT_ISSUER: 'https://idp.example', JWT_AUDIENCE: 'rag' });
    const warning =
      `JWT_JWKS_URL: the key set at 127.0.0.1:${port}: connection refused; ` +
      "identity-provider tokens get 503 identity_provider_unavailable until it answers (the service's own tokens and API keys work)";
    await service.waitForLog((_line, entry) => entry?.msg === warning);
    await request(service.baseUrl).get('/api/sessions').set(adminBearer()).expect(200);
  });

  it('a missing database in development: created, and the line names its host, port and name', async () => {
    const name = `rag_chat_created_${randomBytes(4).toString('hex')}`;
    const url = new URL(testDatabaseUrl());
    url.pathname = `/${name}`;
    const workingDirectory = mkdtempSync(path.join(tmpdir(), 'startup-create-'));
    dirs.push(workingDirectory);
    try {
      const service = await start({ ...base(), NODE_ENV: 'development', DATABASE_URL: url.toString(), DATABASE_CREATE_IF_MISSING: '' }, workingDirectory);
      expect(service.messages()).toContain(`created database "${name}" on PostgreSQL at ${url.hostname}:${url.port || 5432} (DATABASE_CREATE_IF_MISSING)`);
      expect((await running.pop()!.stop()).code).toBe(0);
    } finally {
      const admin = new pg.Client({ connectionString: `${TEST_PG_SERVER}/postgres` });
      await admin.connect();
      await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await admin.end();
    }
  });

  it('.env in the working directory: read, the real environment winning, its misspellings named as coming from it', async () => {
    const workingDirectory = mkdtempSync(path.join(tmpdir(), 'startup-env-file-'));
    dirs.push(workingDirectory);
    writeFileSync(path.join(workingDirectory, '.env'), '# local settings\nLLM_PROVDER=openai\nPORT=1\nRERANK_PROVIDER=none\n');
    const service = await start({ ...base(), NODE_ENV: 'development' }, workingDirectory);
    const file = path.join(workingDirectory, '.env');
    expect(service.messages()).toEqual(
      expect.arrayContaining([
        `read ${file}: 2 variables; 1 already set in the environment, kept from there (PORT)`,
        'LLM_PROVDER: did you mean LLM_PROVIDER? LLM_PROVDER (in .env) is not a setting of this service and is ignored',
        expect.stringContaining('; reranker none; '),
      ]),
    );
    // The environment's PORT, not the file's 1.
    await request(service.baseUrl).get('/health').expect(200);
  });
});
