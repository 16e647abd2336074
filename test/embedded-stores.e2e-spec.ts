import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { adminBearer } from './support/admin.js';
import { createNetworkNamespace, namespaceSupport, NetworkNamespace } from './support/network-namespace.js';
import { ServiceProcess, startService } from './support/service-process.js';
import { readSse } from './support/sse-client.js';

/**
 * A machine with nothing installed: the built service started where no
 * PostgreSQL and no Redis answer (a network namespace of its own, its
 * loopback empty), with DATABASE_URL and REDIS_URL unset. It runs on the
 * embedded database and without Redis, says so in one line, and serves a
 * chat turn, an upload, a search, a pause and its resume; restarted on the
 * same directory, it has kept them all.
 */
const support = namespaceSupport();
if (!support.ok && process.env.REQUIRE_NETNS === '1') throw new Error(`network namespaces are required (REQUIRE_NETNS=1): ${support.reason}`);
const describeWithNamespaces = support.ok ? describe : describe.skip;

/** The warning lines, but for the development JWT secret's (these tests run with it). */
const warnings = (service: ServiceProcess) => service.messages(40).filter((message) => !message.startsWith('JWT_SECRET'));

const FACT = 'The Zephyr-9 kettle boils a full litre in 97 seconds.';

describeWithNamespaces('Embedded stores: the embedded database and no Redis', () => {
  let namespace: NetworkNamespace;
  let workingDirectory: string;
  const running: ServiceProcess[] = [];
  const admin = adminBearer();

  beforeAll(() => {
    namespace = createNetworkNamespace();
    workingDirectory = mkdtempSync(path.join(tmpdir(), 'rag-embedded-'));
  });
  afterAll(async () => {
    for (const service of running.splice(0)) await service.stop();
    namespace?.remove();
    if (workingDirectory) rmSync(workingDirectory, { recursive: true, force: true });
  });

  const start = async () => {
    const service = await startService(
      // The sample corpus is seeded from the repository; the data directory is the default, under the working directory.
      { KNOWLEDGE_CORPUS_DIR: path.resolve('corpus'), WEB_CLIENT_ENABLED: 'false' },
      { workingDirectory, namespace, unset: ['DATABASE_URL', 'REDIS_URL'], startupTimeoutMs: 120_000 },
    );
    running.push(service);
    return service;
  };

  it('with no PostgreSQL and no Redis reachable, chooses both by itself and serves a turn, an upload, a search, a pause and its resume; a restart keeps them', async () => {
    let service = await start();
    const dataDir = path.join(workingDirectory, 'data', 'pglite');
    expect(service.messages()).toContain(
      `running on embedded PostgreSQL (PGlite with pgvector) in ${dataDir} (DATABASE_URL unset and nothing answers on 127.0.0.1:5432), one statement at a time; ` +
        'no Redis (REDIS_URL unset and nothing answers on 127.0.0.1:6379): cache, run events, cancels, rate limits and the ingest queue in this process, for one instance only',
    );
    expect(warnings(service)).toEqual([]);
    const http = () => request(service.baseUrl);
    const health = await http().get('/health').expect(200);
    expect(health.body).toEqual({
      status: 'ok',
      details: { database: expect.objectContaining({ status: 'up' }), cache: { status: 'up', message: 'in this process: no Redis (one instance)' } },
    });

    const turn = await http().post('/api/chat').set(admin).send({ message: 'How long is the Aurora X2 warranty?' }).expect(200);
    expect(turn.body.response).toContain('three-year');
    const sessionId = turn.body.session_id as string;

    // A streamed turn, then a rejoin from its first event: its events are kept in this process.
    const bearer = { ...admin, 'Content-Type': 'application/json' };
    const streamed = await readSse(`${service.baseUrl}/api/chat/stream`, { method: 'POST', headers: bearer, body: JSON.stringify({ message: '会员积分多久过期？' }) });
    expect(streamed.events.at(-1)?.event).toBe('done');
    const runId = streamed.events[0].data.run_id as string;
    const rejoined = await readSse(`${service.baseUrl}/api/chat/runs/${runId}/stream`, { headers: { ...admin, 'Last-Event-ID': '0' } });
    expect(rejoined.events).toEqual(streamed.events);

    const upload = await http()
      .post('/api/knowledge/documents?wait=true')
      .set(admin)
      .attach('file', Buffer.from(`# Zephyr-9 kettle\n\n${FACT}\n`), 'zephyr-9.md');
    expect(upload.status).toBe(201);
    expect(upload.body.job).toMatchObject({ status: 'completed' });
    const search = await http().post('/api/knowledge/search').set(admin).send({ query: 'How fast does the Zephyr-9 kettle boil a litre?', top_k: 3 }).expect(200);
    expect((search.body.chunks as { text: string }[]).map((result) => result.text).join('\n')).toContain('97 seconds');

    // Turns side by side share the one embedded backend: each statement and transaction runs whole.
    const together = await Promise.all(
      [
        'How do I reset the Aurora X1?',
        '退货政策是什么？',
        'What is the hotel limit in London?',
        '会员积分多久过期？',
        'How long is the Aurora X2 warranty?',
        'When do firmware updates install on the X1?',
      ].map((message) => http().post('/api/chat').set(admin).send({ message })),
    );
    expect(together.map((res) => res.status)).toEqual([200, 200, 200, 200, 200, 200]);

    const paused = await http().post('/api/chat').set(admin).send({ message: 'How long is the warranty?' }).expect(200);
    expect(paused.body.pending_hitl).toMatchObject({ hitl_type: 'choose' });
    const option = (paused.body.pending_hitl.options as string[]).find((title) => title.includes('X2'));
    expect(option).toBeDefined();
    const resumed = await http().post('/api/chat').set(admin).send({ session_id: paused.body.session_id, message: option }).expect(200);
    expect(resumed.body.rag_trace.hitl_resumed).toBe(true);
    expect(resumed.body.response).toContain('three-year');

    expect((await service.stop()).code).toBe(0);
    service = await start();
    const kept = await request(service.baseUrl).get(`/api/sessions/${sessionId}/messages`).set(admin).expect(200);
    expect(JSON.stringify(kept.body)).toContain('three-year');
    const again = await request(service.baseUrl).post('/api/knowledge/search').set(admin).send({ query: 'Zephyr-9 kettle litre', top_k: 3 }).expect(200);
    expect((again.body.chunks as { text: string }[]).map((result) => result.text).join('\n')).toContain('97 seconds');
    expect((await service.stop()).code).toBe(0);
  });

  it('takes DATABASE_URL=pglite://<directory> and REDIS_URL=none as asked, with PostgreSQL and Redis up, and warns of nothing', async () => {
    const dataDir = path.join(workingDirectory, 'explicit');
    const service = await startService(
      { DATABASE_URL: `pglite://${dataDir}`, REDIS_URL: 'none', KNOWLEDGE_CORPUS_DIR: path.resolve('corpus'), WEB_CLIENT_ENABLED: 'false' },
      { workingDirectory, startupTimeoutMs: 120_000 },
    );
    running.push(service);
    expect(service.messages()).toContain(
      `running on embedded PostgreSQL (PGlite with pgvector) in ${dataDir}, one statement at a time; no Redis: cache, run events, cancels, rate limits and the ingest queue in this process, for one instance only`,
    );
    expect(warnings(service)).toEqual([]);
    const turn = await request(service.baseUrl).post('/api/chat').set(admin).send({ message: '会员积分多久过期？' }).expect(200);
    expect(turn.body.response).toContain('12 个月');
    expect((await service.stop()).code).toBe(0);
  });
});
