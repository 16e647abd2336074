import { readFileSync } from 'node:fs';
import request from 'supertest';
import { ChatService } from '../src/chat/chat.service.js';
import { ensureDatabase } from '../src/database/ensure-database.js';
import { adminAuth } from './support/admin.js';
import { FakeWeatherServer } from './support/fake-weather-server.js';
import { heldWeatherTurn } from './support/held-turn.js';
import { declaredNames, metricNamesOf, parseExposition, PROMTOOL, promtoolCheck, promtoolCheckExpressions, Sample, sampleSum } from './support/prometheus-text.js';
import { openSse, readSse } from './support/sse-client.js';
import { createTestApp, TestApp, uniqueUser } from './support/test-app.js';
import { dropDatabase, freshDatabaseUrl } from './support/test-module.js';

/**
 * GET /metrics after real traffic: two knowledge turns (one whole, one
 * streamed), a turn held inside a tool while the metrics are read, an
 * upload ingested by the queue, a search refused by its rate limit and an
 * unknown path. The counters move by exactly what was done, the labels
 * carry route templates and no ids, and Debian's promtool accepts the
 * exposition (.ci/run installs it and sets REQUIRE_PROMTOOL=1, so a missing
 * promtool fails there rather than skipping).
 */

const METRICS_TOKEN = 'metrics-token-of-the-test-0123';
const QUESTION = 'How do I reset the Aurora X1 router to factory settings?';
const DOCUMENT = Buffer.from(`# Zephyr kettle\n${Array.from({ length: 30 }, (_, i) => `The Zephyr kettle manual, part ${i}: 说明书第${i}节。`).join('\n')}`, 'utf8');

const itWithPromtool = PROMTOOL || process.env.REQUIRE_PROMTOOL === '1' ? it : it.skip;

describe('Prometheus metrics at /metrics', () => {
  const weather = new FakeWeatherServer();
  let databaseUrl: string;
  let t: TestApp;
  let base: string;

  beforeAll(async () => {
    await weather.start();
    databaseUrl = freshDatabaseUrl();
    await ensureDatabase(databaseUrl);
    t = await createTestApp({
      DATABASE_URL: databaseUrl,
      METRICS_TOKEN,
      RATE_LIMIT_SEARCH_PER_MINUTE: '1',
      WEATHER_BASE_URL: weather.url,
      WEATHER_GEOCODING_URL: weather.url,
      // The counts below say what was read from the cache: a busy machine must not turn a slow cache call into a fallback.
      CACHE_COMMAND_TIMEOUT_MS: '5000',
    });
    base = await t.listen();
  });

  afterAll(async () => {
    weather.release();
    await t?.close();
    await weather.stop();
    await dropDatabase(databaseUrl);
  });

  const scrapeText = async () => {
    const res = await request(t.app.getHttpServer()).get('/metrics').set('Authorization', `Bearer ${METRICS_TOKEN}`).expect(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    return res.text;
  };
  const scrape = async () => parseExposition(await scrapeText());
  /** Scrapes until `ready` holds of the samples: for what is recorded after the response (token counts), or not yet ended. */
  const scrapeUntil = async (ready: (samples: Sample[]) => boolean): Promise<Sample[]> => {
    for (;;) {
      const samples = await scrape();
      if (ready(samples)) return samples;
      await new Promise((resolve) => setImmediate(resolve));
    }
  };

  it('needs METRICS_TOKEN when it is set', async () => {
    const server = t.app.getHttpServer();
    const missing = await request(server).get('/metrics').expect(401);
    expect(missing.body.code).toBe('unauthorized');
    expect(missing.headers['www-authenticate']).toMatch(/^Bearer/);
    await request(server).get('/metrics').set('Authorization', 'Bearer not-the-token').expect(401);
    await request(server).get('/metrics').set('Authorization', `Bearer ${METRICS_TOKEN}x`).expect(401);
    await request(server).get('/metrics').set('Authorization', `Basic ${METRICS_TOKEN}`).expect(401);
    // A user's token is not the metrics token.
    await request(server).get('/metrics').set(t.auth(uniqueUser())).expect(401);
  });

  it('counts turns, model calls, stages, streams, uploads, refusals and cache reads by exactly what happened', async () => {
    const server = t.app.getHttpServer();
    const user = uniqueUser('metrics');
    const before = await scrape();
    const delta = (after: Sample[], name: string, labels: Record<string, string> = {}) => sampleSum(after, name, labels) - sampleSum(before, name, labels);

    // A whole turn and a streamed one, each a knowledge search (two model calls: the tool call, then the answer).
    const whole = await request(server).post('/api/chat').set(t.auth(user)).send({ message: QUESTION }).expect(200);
    const sessionId: string = whole.body.session_id;
    const streamed = await readSse(`${base}/api/chat/stream`, {
      method: 'POST',
      headers: { ...t.auth(user), 'Content-Type': 'application/json' },
      body: JSON.stringify({ message: QUESTION }),
    });
    expect(streamed.events.at(-1)?.event).toBe('done');

    // A turn held inside the weather tool: in flight, its stream open and followed.
    const held = await heldWeatherTurn(base, t.auth(uniqueUser('metrics-held')), weather);
    const during = await scrape();
    expect(sampleSum(during, 'chat_runs_in_flight')).toBe(1);
    expect(sampleSum(during, 'http_server_sse_streams_active', { http_route: '/api/chat/stream' })).toBe(1);
    expect(sampleSum(during, 'chat_run_followers', { source: 'local' })).toBe(1);
    weather.release();
    await held.stream.ended;
    await t.app.get(ChatService).drain();

    // An upload, ingested by the queue.
    const admin = adminAuth(t);
    const upload = await request(server).post('/api/knowledge/documents').set(admin).attach('file', DOCUMENT, 'zephyr.md').expect(202);
    const jobEvents = await openSse(`${base}/api/knowledge/jobs/${upload.body.job.id}/events`, { headers: admin });
    expect((await jobEvents.waitFor((e) => e.event === 'job' && ['completed', 'failed'].includes(e.data.status))).data.status).toBe('completed');
    jobEvents.close();

    // A search within the budget, one refused, an unknown path, the session list and transcript read twice each.
    await request(server).post('/api/knowledge/search').set(t.auth(user)).send({ query: 'router reset' }).expect(200);
    await request(server).post('/api/knowledge/search').set(t.auth(user)).send({ query: 'router reset' }).expect(429);
    await request(server).get('/api/no-such-route').set(t.auth(user)).expect(404);
    for (let read = 0; read < 2; read += 1) {
      await request(server).get('/api/sessions').set(t.auth(user)).expect(200);
      await request(server).get(`/api/sessions/${sessionId}/messages`).set(t.auth(user)).expect(200);
    }

    // Token counts are recorded once counted, after the call returned.
    const chatCall = { gen_ai_operation_name: 'chat', gen_ai_provider_name: 'local', gen_ai_request_model: 'local' };
    const after = await scrapeUntil(
      (samples) =>
        sampleSum(samples, 'gen_ai_client_token_usage_count', { ...chatCall, gen_ai_token_type: 'output' }) -
          sampleSum(before, 'gen_ai_client_token_usage_count', { ...chatCall, gen_ai_token_type: 'output' }) >=
        6,
    );

    expect(delta(after, 'http_server_request_duration_seconds_count', { http_request_method: 'POST', http_route: '/api/chat', http_response_status_code: '200' })).toBe(1);
    expect(delta(after, 'http_server_request_duration_seconds_count', { http_request_method: 'POST', http_route: '/api/chat/stream', http_response_status_code: '200' })).toBe(2);
    expect(delta(after, 'http_server_request_duration_seconds_count', { http_route: '/api/knowledge/search', http_response_status_code: '429' })).toBe(1);
    expect(delta(after, 'http_server_request_duration_seconds_count', { http_route: '/api/sessions/:session_id/messages', http_response_status_code: '200' })).toBe(2);
    expect(delta(after, 'http_server_request_duration_seconds_count', { http_route: 'unmatched', http_response_status_code: '404' })).toBe(1);

    // Three turns answered, two of them streamed (a first token each); none in flight now.
    expect(delta(after, 'chat_turn_duration_seconds_count', { outcome: 'success' })).toBe(3);
    expect(delta(after, 'chat_turn_duration_seconds_count')).toBe(3);
    expect(delta(after, 'chat_turn_time_to_first_token_seconds_count')).toBe(2);
    expect(sampleSum(after, 'chat_runs_in_flight')).toBe(0);
    expect(sampleSum(after, 'http_server_sse_streams_active')).toBe(0);

    // Two model calls per turn, each with its input and output tokens.
    expect(delta(after, 'gen_ai_client_operation_duration_seconds_count', { ...chatCall, error_type: '' })).toBe(6);
    expect(delta(after, 'gen_ai_client_token_usage_count', { ...chatCall, gen_ai_token_type: 'input' })).toBe(6);
    expect(delta(after, 'gen_ai_client_token_usage_sum', { ...chatCall, gen_ai_token_type: 'input' })).toBeGreaterThan(6);
    // The query embeddings: the two turns' searches and the search route's (sub-questions may add more).
    expect(delta(after, 'gen_ai_client_operation_duration_seconds_count', { gen_ai_operation_name: 'embeddings' })).toBeGreaterThanOrEqual(3);

    // Each search ran the recall legs and the pipeline's stages; each turn's search was graded.
    for (const stage of ['full_text', 'dense', 'recall', 'rerank', 'threshold']) {
      expect({ stage, count: delta(after, 'rag_retrieval_stage_duration_seconds_count', { stage }) >= 3 }).toEqual({ stage, count: true });
    }
    expect(delta(after, 'rag_retrieval_stage_duration_seconds_count', { stage: 'grade' })).toBeGreaterThanOrEqual(2);

    expect(delta(after, 'knowledge_ingest_jobs_finished_total', { outcome: 'completed' })).toBe(1);
    expect(delta(after, 'knowledge_ingest_jobs_finished_total', { outcome: 'failed' })).toBe(0);
    expect(sampleSum(after, 'knowledge_ingest_queue_depth', { status: 'queued' })).toBe(0);
    expect(after.some((sample) => sample.name === 'knowledge_ingest_queue_depth' && sample.labels.status === 'active')).toBe(true);

    expect(delta(after, 'rate_limit_refusals_total', { bucket: 'search', spent_by: 'user' })).toBe(1);
    expect(delta(after, 'rate_limit_refusals_total')).toBe(1);

    // The second read of each is served from the cache.
    expect(delta(after, 'cache_lookups_total', { cache: 'session_list', result: 'hit' })).toBeGreaterThanOrEqual(1);
    expect(delta(after, 'cache_lookups_total', { cache: 'transcript', result: 'hit' })).toBeGreaterThanOrEqual(1);
    expect(delta(after, 'cache_lookups_total', { cache: 'transcript' })).toBe(2);

    expect(sampleSum(after, 'db_client_connections_max', { pool_name: 'main' })).toBe(t.config.database.poolSize);
    expect(after.some((sample) => sample.name === 'db_client_connections_usage' && sample.labels.pool_name === 'checkpoints')).toBe(true);
    expect(sampleSum(after, 'process_resident_memory_bytes')).toBeGreaterThan(0);
  });

  it('labels nothing with an id or a text a client sent', async () => {
    const user = uniqueUser('metrics-private');
    const res = await request(t.app.getHttpServer()).post('/api/chat').set(t.auth(user)).send({ message: 'Where is the Zephyr kettle manual?' }).expect(200);
    const text = await scrapeText();
    for (const secret of [user, res.body.session_id, res.body.run_id, 'Zephyr', 'Aurora']) expect({ secret, found: text.includes(secret) }).toEqual({ secret, found: false });
    const labelValues = new Set(parseExposition(text).flatMap((sample) => Object.values(sample.labels)));
    for (const value of labelValues) expect(value).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-/);
  });

  describe('the Grafana dashboard (docs/grafana-dashboard.json)', () => {
    const dashboard = JSON.parse(readFileSync('docs/grafana-dashboard.json', 'utf8')) as { panels: Array<{ title: string; targets?: Array<{ expr: string }> }> };
    const expressions = dashboard.panels.flatMap((panel) => (panel.targets ?? []).map((target) => ({ panel: panel.title, expr: target.expr })));
    /** As Grafana sends them: its variables replaced. */
    const asSent = (expr: string) => expr.replace(/\$__rate_interval/g, '1m').replace(/\$instance/g, '.*');

    it('queries only metrics the service exposes', async () => {
      expect(expressions.length).toBeGreaterThan(15);
      const exposed = declaredNames(await scrapeText());
      for (const { panel, expr } of expressions) {
        const names = metricNamesOf(expr);
        expect({ panel, names: names.length > 0 }).toEqual({ panel, names: true });
        for (const name of names) expect({ panel, name, exposed: exposed.has(name) }).toEqual({ panel, name, exposed: true });
      }
    });

    itWithPromtool('is valid PromQL (promtool check rules)', () => {
      const { status, output } = promtoolCheckExpressions(expressions.map(({ expr }) => asSent(expr)));
      expect({ status, output: status === 0 ? '' : output }).toEqual({ status: 0, output: '' });
    });
  });

  itWithPromtool('passes promtool check metrics, with no lint problem', async () => {
    const { status, output } = promtoolCheck(await scrapeText());
    expect({ status, output }).toEqual({ status: 0, output: '' });
  });
});
