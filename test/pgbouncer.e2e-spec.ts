import path from 'node:path';
import { JwtService } from '@nestjs/jwt';
import pg from 'pg';
import request from 'supertest';
import { MIGRATIONS } from '../src/database/data-source-options.js';
import { adminBearer } from './support/admin.js';
import { FakeWeatherServer } from './support/fake-weather-server.js';
import { heldWeatherTurn } from './support/held-turn.js';
import { OwnPgBouncer } from './support/own-pgbouncer.js';
import { OwnPostgres } from './support/own-postgres.js';
import { readSse } from './support/sse-client.js';
import { ServiceProcess, startService } from './support/service-process.js';
import { uniqueUser } from './support/test-app.js';
import { TEST_JWT_SECRET } from './support/test-env.js';

const POOL_SIZE = 3;
const STATEMENT_TIMEOUT_MS = 12000;
const FACT = 'The Quokka-7 lantern runs 41 hours on one charge.';

// .ci/run installs it and sets REQUIRE_PGBOUNCER: there a missing pgbouncer fails the suite instead of skipping it.
const describeWithPgBouncer = OwnPgBouncer.available() || process.env.REQUIRE_PGBOUNCER ? describe : describe.skip;

/**
 * PgBouncer in transaction mode with 3 server connections in front of a
 * PostgreSQL of the test's own, and two instances of the built service
 * through it (DATABASE_URL the pooler, DATABASE_DIRECT_URL the server).
 */
describeWithPgBouncer('Through PgBouncer in transaction mode (3 server connections), two instances', () => {
  const postgres = new OwnPostgres();
  const weather = new FakeWeatherServer();
  let bouncer: OwnPgBouncer;
  let direct: pg.Client;
  let a: ServiceProcess;
  let b: ServiceProcess;
  const admin = adminBearer();

  beforeAll(async () => {
    await Promise.all([postgres.start(), weather.start()]);
    await postgres.createDatabase('bounced');
    bouncer = await new OwnPgBouncer({ serverPort: postgres.port, poolSize: POOL_SIZE }).start();
    const env = {
      DATABASE_URL: bouncer.url('bounced'),
      DATABASE_DIRECT_URL: postgres.url('bounced'),
      DATABASE_STATEMENT_TIMEOUT_MS: String(STATEMENT_TIMEOUT_MS),
      DATABASE_POOL_SIZE: '8',
      WEATHER_BASE_URL: weather.url,
      WEATHER_GEOCODING_URL: weather.url,
      KNOWLEDGE_CORPUS_DIR: path.resolve('corpus'),
      WEB_CLIENT_ENABLED: 'false',
      // HNSW index builds (a session lock, CREATE INDEX CONCURRENTLY, a session setting) go to DATABASE_DIRECT_URL.
      RAG_DENSE_BACKEND: 'pgvector',
    };
    // Both instances start together on a database nobody migrated: they take turns on the migration lock.
    [a, b] = await Promise.all([startService(env, { startupTimeoutMs: 120_000 }), startService(env, { startupTimeoutMs: 120_000 })]);
    direct = new pg.Client({ connectionString: postgres.url('bounced') });
    await direct.connect();
  }, 180_000);

  afterAll(async () => {
    weather.release();
    await Promise.all([a?.stop(), b?.stop()]);
    await direct?.end().catch(() => undefined);
    await bouncer?.stop();
    await Promise.all([postgres.destroy(), weather.stop()]);
  });

  const http = (service: ServiceProcess) => request(service.baseUrl);
  const json = (auth: Record<string, string>) => ({ ...auth, 'Content-Type': 'application/json' });
  const userAuth = (user: string) => ({ Authorization: `Bearer ${new JwtService({ secret: TEST_JWT_SECRET }).sign({ sub: user }, { algorithm: 'HS256', expiresIn: '1h' })}` });

  it('started both instances together: each migration ran once, no session lock was left behind, and the pooled connections have the limits', async () => {
    const { rows } = await direct.query<{ name: string }>('SELECT name FROM typeorm_migrations ORDER BY id');
    expect(rows.map((row) => row.name)).toEqual(MIGRATIONS.map((migration) => migration.name));
    const locks = await direct.query(`SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted`);
    expect(locks.rowCount).toBe(0);
    // The limits cannot travel through the pooler at connect: they are the role's defaults in the database.
    const through = new pg.Client({ connectionString: bouncer.url('bounced') });
    await through.connect();
    try {
      const settings = await through.query<{ name: string; setting: string }>(
        `SELECT name, setting FROM pg_settings WHERE name IN ('statement_timeout', 'lock_timeout', 'idle_in_transaction_session_timeout') ORDER BY name`,
      );
      expect(Object.fromEntries(settings.rows.map((row) => [row.name, row.setting]))).toEqual({
        idle_in_transaction_session_timeout: String(STATEMENT_TIMEOUT_MS * 2),
        lock_timeout: '5000',
        statement_timeout: String(STATEMENT_TIMEOUT_MS),
      });
    } finally {
      await through.end();
    }
    for (const service of [a, b]) expect(service.messages(40).filter((message) => !message.startsWith('JWT_SECRET'))).toEqual([]);
  });

  it('serves turns on both instances, and a streamed turn rejoined on the other one', async () => {
    const user = uniqueUser('bounced');
    const first = await http(a).post('/api/chat').set(userAuth(user)).send({ message: 'How long is the Aurora X2 warranty?' }).expect(200);
    expect(first.body.response).toContain('three-year');
    const second = await http(b).post('/api/chat').set(userAuth(user)).send({ message: '会员积分多久过期？', session_id: first.body.session_id }).expect(200);
    expect(second.body.session_id).toBe(first.body.session_id);

    const streamed = await readSse(`${a.baseUrl}/api/chat/stream`, {
      method: 'POST',
      headers: json(userAuth(user)),
      body: JSON.stringify({ message: 'How do I reset the Aurora X1?', session_id: first.body.session_id }),
    });
    expect(streamed.events.at(-1)?.event).toBe('done');
    const runId = streamed.events[0].data.run_id as string;
    const rejoined = await readSse(`${b.baseUrl}/api/chat/runs/${runId}/stream`, { headers: { ...userAuth(user), 'Last-Event-ID': '0' } });
    expect(rejoined.events).toEqual(streamed.events);

    const transcript = await http(b).get(`/api/sessions/${first.body.session_id}/messages`).set(userAuth(user)).expect(200);
    const messages = (Array.isArray(transcript.body) ? transcript.body : transcript.body.messages) as Array<{ type: string }>;
    expect(messages.map((message) => message.type)).toEqual(['human', 'ai', 'human', 'ai', 'human', 'ai']);
  });

  it('pauses a turn on one instance and resumes it on the other', async () => {
    const user = uniqueUser('bounced-hitl');
    const paused = await http(a).post('/api/chat').set(userAuth(user)).send({ message: 'How long is the warranty?' }).expect(200);
    expect(paused.body.pending_hitl).toMatchObject({ hitl_type: 'choose' });
    const option = (paused.body.pending_hitl.options as string[]).find((title) => title.includes('X2'));
    expect(option).toBeDefined();
    const resumed = await http(b).post('/api/chat').set(userAuth(user)).send({ session_id: paused.body.session_id, message: option }).expect(200);
    expect(resumed.body.rag_trace.hitl_resumed).toBe(true);
    expect(resumed.body.response).toContain('three-year');
  });

  it('cancels a run held in a tool on one instance from the other', async () => {
    const user = uniqueUser('bounced-cancel');
    const { stream, runId } = await heldWeatherTurn(a.baseUrl, userAuth(user), weather);
    try {
      const cancelled = await http(b).post(`/api/chat/runs/${runId}/cancel`).set(userAuth(user)).expect(200);
      expect(cancelled.body).toMatchObject({ run_id: runId, status: 'cancelled' });
      const last = await stream.waitFor((event) => event.event === 'error');
      expect(last.data).toMatchObject({ code: 'cancelled', message_saved: true });
    } finally {
      weather.release();
      stream.close();
    }
  });

  it('races 20 turns on one session across both instances: one is answered, 19 are refused with 409', async () => {
    const user = uniqueUser('bounced-race');
    const start = await http(a).post('/api/chat').set(userAuth(user)).send({ message: 'Hello' }).expect(200);
    const session = start.body.session_id as string;
    // The winner waits in the weather tool until every other request has been answered.
    weather.hold();
    const racing = Array.from({ length: 20 }, (_, i) =>
      http(i % 2 ? b : a)
        .post('/api/chat')
        .set(userAuth(user))
        .send({ message: 'What is the weather in Paris?', session_id: session })
        .then((res) => res),
    );
    const refused: number[] = [];
    const settled = racing.map((pending) =>
      pending.then((res) => {
        if (res.status === 409) refused.push(409);
        if (refused.length === 19) weather.release();
        return res;
      }),
    );
    const results = await Promise.all(settled);
    weather.release();
    const statuses = results.map((res) => res.status).sort();
    expect(statuses).toEqual([200, ...Array(19).fill(409)]);
    for (const res of results.filter((refusedTurn) => refusedTurn.status === 409)) expect(res.body.message).toMatch(/already has a turn in progress/);
    const transcript = await http(b).get(`/api/sessions/${session}/messages`).set(userAuth(user)).expect(200);
    const messages = (Array.isArray(transcript.body) ? transcript.body : transcript.body.messages) as Array<{ type: string }>;
    expect(messages).toHaveLength(4);
  });

  it('runs ingest jobs queued on one instance, searchable from the other', async () => {
    const upload = await http(a)
      .post('/api/knowledge/documents')
      .set(admin)
      .attach('file', Buffer.from(`# Quokka-7 lantern\n\n${FACT}\n`), 'quokka-7.md');
    expect(upload.status).toBe(202);
    const jobId = upload.body.job.id as string;
    let job: { status: string };
    do {
      job = (await http(b).get(`/api/knowledge/jobs/${jobId}`).set(admin).expect(200)).body;
    } while (!['completed', 'failed', 'cancelled'].includes(job.status));
    expect(job.status).toBe('completed');
    const search = await http(b).post('/api/knowledge/search').set(admin).send({ query: 'How long does the Quokka-7 lantern run?', top_k: 3 }).expect(200);
    expect((search.body.chunks as Array<{ text: string }>).map((chunk) => chunk.text).join('\n')).toContain('41 hours');
    const waited = await http(b)
      .post('/api/knowledge/documents?wait=true')
      .set(admin)
      .attach('file', Buffer.from('# Second lantern\n\nThe Quokka-8 lantern runs 52 hours.\n'), 'quokka-8.md');
    expect(waited.status).toBe(201);
    expect(waited.body.job).toMatchObject({ status: 'completed' });
    const indexes = await direct.query<{ valid: boolean }>(
      `SELECT i.indisvalid AS valid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am am ON am.oid = c.relam WHERE am.amname = 'hnsw'`,
    );
    expect(indexes.rows).toEqual([{ valid: true }]);
  });

  it('creates an API key on one instance that authenticates on the other, and revokes it', async () => {
    const user = uniqueUser('bounced-keys');
    const created = await http(a).post('/api/keys').set(userAuth(user)).send({ name: 'ci' }).expect(201);
    const key = { Authorization: `Bearer ${created.body.key}` };
    await http(b).post('/api/chat').set(key).send({ message: 'Hello' }).expect(200);
    await http(b).delete(`/api/keys/${created.body.id}`).set(userAuth(user)).expect(200);
    await http(a).get('/api/sessions').set(key).expect(401);
  });

  it('kept to the pool of 3 server connections, with no named prepared statement and no error logged', async () => {
    const pools = (await bouncer.admin('SHOW POOLS')).filter((pool) => pool.database === 'bounced');
    expect(pools).toHaveLength(1);
    expect(Number(pools[0].sv_active) + Number(pools[0].sv_idle) + Number(pools[0].sv_used) + Number(pools[0].sv_tested) + Number(pools[0].sv_login)).toBeLessThanOrEqual(
      POOL_SIZE,
    );
    const servers = await direct.query<{ n: string }>(
      `SELECT count(*) AS n FROM pg_stat_activity WHERE datname = 'bounced' AND pid <> pg_backend_pid() AND backend_type = 'client backend'`,
    );
    expect(Number(servers.rows[0].n)).toBeLessThanOrEqual(POOL_SIZE);
    expect(postgres.log(1_000_000)).not.toMatch(/prepared statement .* (does not exist|already exists)/);
    for (const service of [a, b]) expect(service.messages(50)).toEqual([]);
  });
});
