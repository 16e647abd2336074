import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { createTestApp, TestApp, uniqueUser } from './support/test-app.js';
import { FakeWeatherServer } from './support/fake-weather-server.js';
import { heldWeatherTurn } from './support/held-turn.js';
import { ServiceProcess, startService, waitUntil } from './support/service-process.js';
import { LiveSse, openSse, ParsedEvent } from './support/sse-client.js';
import { testDatabaseUrl } from './support/test-env.js';

/**
 * The built service shut down (SIGTERM) or killed (SIGKILL) with turns held
 * in the weather tool, beside an in-process instance on the same PostgreSQL
 * and Redis that takes over.
 */
describe('Shutting down and dying with turns in flight', () => {
  const weather = new FakeWeatherServer();
  const services: ServiceProcess[] = [];
  let survivor: TestApp;
  let survivorBase: string;

  const serviceEnv = {
    DATABASE_URL: testDatabaseUrl(),
    DATABASE_CREATE_IF_MISSING: 'false',
    KNOWLEDGE_SEED_ON_START: 'false',
    RATE_LIMIT_CHAT_PER_MINUTE: '0',
    WEATHER_TIMEOUT_MS: '60000',
    // Dead runs are given up within seconds; a live one on a busy machine is not.
    RUN_HEARTBEAT_MS: '250',
    RUN_STALE_AFTER_MS: '3000',
  };

  beforeAll(async () => {
    await weather.start();
    // Migrates the run's database before the built services start on it.
    survivor = await createTestApp({ ...serviceEnv, WEATHER_BASE_URL: weather.url, WEATHER_GEOCODING_URL: weather.url });
    survivorBase = await survivor.listen();
  }, 60_000);
  afterEach(async () => {
    weather.release();
    await Promise.allSettled(services.splice(0).map((service) => service.stop()));
  }, 60_000);
  afterAll(async () => {
    await survivor?.close();
    await weather.stop();
  }, 60_000);

  const start = async (env: Record<string, string> = {}) => {
    const service = await startService({ ...serviceEnv, WEATHER_BASE_URL: weather.url, WEATHER_GEOCODING_URL: weather.url, ...env });
    services.push(service);
    return service;
  };

  const humanMessages = async (sessionId: string): Promise<Array<{ content: string; status: string }>> =>
    survivor.dataSource.query(`SELECT content, status FROM chat_messages WHERE session_id = $1 AND type = 'human' ORDER BY seq`, [sessionId]);

  const checkpointRows = async (threadId: string): Promise<number> => {
    const [row] = await survivor.dataSource.query(
      `SELECT (SELECT count(*) FROM checkpoints WHERE thread_id = $1)
            + (SELECT count(*) FROM checkpoint_writes WHERE thread_id = $1)
            + (SELECT count(*) FROM checkpoint_blobs WHERE thread_id = $1) AS rows`,
      [threadId],
    );
    return Number(row.rows);
  };

  const runStatus = async (runId: string): Promise<{ status: string; error: string | null }> =>
    (await survivor.dataSource.query(`SELECT status, error FROM chat_runs WHERE id = $1`, [runId]))[0];

  /** Every event until the server ended the stream (a stream cut off ends without a terminal event). */
  const eventsToTheEnd = async (stream: LiveSse): Promise<ParsedEvent[]> => {
    await stream.ended.catch(() => undefined);
    return stream.events;
  };

  it('on SIGTERM refuses new turns, ends the turns that outlast the drain with shutting_down and their messages kept, and another instance takes the retry', async () => {
    const doomed = await start({ SHUTDOWN_DRAIN_MS: '1500', SHUTDOWN_TIMEOUT_MS: '20000' });
    const user = uniqueUser('sigterm');
    const auth = survivor.auth(user);
    const turns: Array<{ stream: LiveSse; runId: string; sessionId: string; message: string }> = [];
    for (let i = 0; i < 6; i += 1) {
      const turn = await heldWeatherTurn(doomed.baseUrl, auth, weather);
      turns.push({ ...turn, message: 'What is the weather in Paris?' });
    }
    // Turns of the other routes, held the same way: each must end properly too.
    const json = { ...auth, 'Content-Type': 'application/json' };
    const heldRequest = async (path: string, body: unknown, headers: Record<string, string> = {}) => {
      const arrived = weather.nextRequest();
      const response = fetch(`${doomed.baseUrl}${path}`, { method: 'POST', headers: { ...json, ...headers }, body: JSON.stringify(body) }).then(async (res) => ({
        status: res.status,
        text: await res.text(),
      }));
      await arrived;
      return { response };
    };
    const question = 'What is the weather in Paris?';
    const model = survivor.config.chat.openAiModelId;
    const otherRoutes = {
      sync: await heldRequest('/api/chat', { message: question }),
      ui: await heldRequest('/api/chat/ui', { id: `drain-${user}`, messages: [{ id: 'm1', role: 'user', parts: [{ type: 'text', text: question }] }], trigger: 'submit-message' }),
      openAiSession: await heldRequest('/v1/chat/completions', { model, stream: true, messages: [{ role: 'user', content: question }] }, { 'X-Session-Id': randomUUID() }),
      openAiStateless: await heldRequest('/v1/chat/completions', { model, stream: true, messages: [{ role: 'user', content: question }] }),
    };

    // Followers: a rejoin on the instance going down, and one on the survivor (through Redis).
    const localRejoin = await openSse(`${doomed.baseUrl}/api/chat/runs/${turns[0].runId}/stream`, { headers: auth });
    const remoteRejoin = await openSse(`${survivorBase}/api/chat/runs/${turns[1].runId}/stream`, { headers: auth });
    await localRejoin.waitFor((event) => event.event === 'metadata');
    await remoteRejoin.waitFor((event) => event.event === 'metadata');
    // A turn of the survivor, followed from the instance going down: that follower must end properly too.
    const survivorTurn = await heldWeatherTurn(survivorBase, auth, weather);
    const followerOfSurvivor = await openSse(`${doomed.baseUrl}/api/chat/runs/${survivorTurn.runId}/stream`, { headers: auth });
    await followerOfSurvivor.waitFor((event) => event.event === 'metadata');

    const fromLine = doomed.lines().length;
    doomed.kill('SIGTERM');
    await doomed.waitForLog(/shutting down/, 10_000, fromLine);

    // While it drains, every turn route answers 503 shutting_down with Retry-After, before starting anything.
    const turnRequests: Array<[string, unknown]> = [
      ['/api/chat/stream', { message: 'hello' }],
      ['/api/chat/ui', { id: 'drain-chat', messages: [{ id: 'm1', role: 'user', parts: [{ type: 'text', text: 'hello' }] }], trigger: 'submit-message' }],
      ['/v1/chat/completions', { model: survivor.config.chat.openAiModelId, stream: true, messages: [{ role: 'user', content: 'hello' }] }],
      ['/api/chat', { message: 'hello' }],
    ];
    for (const [path, body] of turnRequests) {
      const res = await fetch(`${doomed.baseUrl}${path}`, { method: 'POST', headers: json, body: JSON.stringify(body) });
      expect({ path, status: res.status, retryAfter: res.headers.get('retry-after') }).toEqual({ path, status: 503, retryAfter: expect.stringMatching(/^\d+$/) });
      expect(JSON.stringify(await res.json())).toContain('shutting_down');
    }

    // Liveness holds while it drains: the process is alive and finishing its turns.
    const health = await fetch(`${doomed.baseUrl}/health`);
    expect({ status: health.status, body: await health.json() }).toMatchObject({ status: 200, body: { status: 'shutting_down' } });
    const ready = await fetch(`${doomed.baseUrl}/health/ready`);
    expect({ status: ready.status, body: await ready.json() }).toMatchObject({ status: 503, body: { status: 'not_ready', details: { drain: { status: 'down' } } } });

    // The turns outlast the drain (the weather service still holds them): each stream ends with its turn's end.
    for (const turn of turns) {
      const events = await eventsToTheEnd(turn.stream);
      expect(events.at(-1)).toMatchObject({ event: 'error', data: { code: 'shutting_down', message_saved: true } });
    }
    for (const follower of [localRejoin, remoteRejoin]) {
      expect((await eventsToTheEnd(follower)).at(-1)).toMatchObject({ event: 'error', data: { code: 'shutting_down', message_saved: true } });
    }
    // The follower of a run that goes on elsewhere is told to follow it from another instance.
    expect((await eventsToTheEnd(followerOfSurvivor)).at(-1)).toMatchObject({ event: 'error', data: { code: 'shutting_down' } });
    const sync = await otherRoutes.sync.response;
    expect({ status: sync.status, body: JSON.parse(sync.text) }).toMatchObject({
      status: 503,
      body: { code: 'shutting_down', message: expect.stringMatching(/Your message was saved/) },
    });
    const ui = await otherRoutes.ui.response;
    expect(ui.text).toMatch(
      /"type":"error","errorText":"shutting_down: [^"]*Your message was saved[^"]*"}\n\ndata: \{"type":"finish","finishReason":"error","messageMetadata":\{[^\n]*"message_saved":true\}\}\n\ndata: \[DONE\]\n\n$/,
    );
    for (const completion of [await otherRoutes.openAiSession.response, await otherRoutes.openAiStateless.response]) {
      expect(completion.text).toMatch(/"code":"shutting_down"[^\n]*\n\n$/);
    }
    expect(await doomed.exited).toEqual({ code: 0, signal: null });

    for (const turn of turns) {
      // Stored exactly once, and the run says how it ended (not paused for the user: no pending question).
      expect(await humanMessages(turn.sessionId)).toEqual([{ content: turn.message, status: 'failed' }]);
      expect(await runStatus(turn.runId)).toEqual({ status: 'interrupted', error: expect.stringMatching(/shut/) });
      expect(await checkpointRows(turn.runId)).toBe(0);
    }

    // The retry goes to the other instance, which takes the session at once.
    weather.release();
    for (const turn of turns) {
      const retry = await request(survivor.app.getHttpServer()).post('/api/chat').set(auth).send({ message: turn.message, session_id: turn.sessionId });
      expect(retry.status).toBe(200);
      expect(retry.body.pending_hitl).toBeNull();
    }
    expect((await eventsToTheEnd(survivorTurn.stream)).at(-1)).toMatchObject({ event: 'done' });
  }, 120_000);

  it('a run given up after its instance was killed keeps no checkpoint, whether its session moves on or nobody looks', async () => {
    const doomed = await start();
    const user = uniqueUser('killed');
    const auth = survivor.auth(user);
    const nextTurnTakesOver = await heldWeatherTurn(doomed.baseUrl, auth, weather);
    const nobodyLooks = await heldWeatherTurn(doomed.baseUrl, auth, weather);
    // Held in the tool, each run checkpoints its steps so far (the saver writes beside the steps, so wait for the rows).
    for (const { runId } of [nextTurnTakesOver, nobodyLooks]) {
      await waitUntil(async () => (await checkpointRows(runId)) > 0, `checkpoints of run ${runId}`, 10_000, 20);
    }
    doomed.kill('SIGKILL');
    await doomed.exited;
    weather.release();

    // The session's next turn gives the dead run up once its heartbeat is stale (409 until then), and takes its place.
    let next: request.Response | undefined;
    await waitUntil(
      async () => {
        next = await request(survivor.app.getHttpServer()).post('/api/chat').set(auth).send({ message: 'weather in Berlin?', session_id: nextTurnTakesOver.sessionId });
        return next.status !== 409;
      },
      'the session taking a turn again',
      20_000,
      100,
    );
    expect(next!.status).toBe(200);
    expect((await runStatus(nextTurnTakesOver.runId)).status).toBe('abandoned');
    expect(await checkpointRows(nextTurnTakesOver.runId)).toBe(0);

    // Nobody touches the other session: the instances still give its run up.
    await waitUntil(async () => (await runStatus(nobodyLooks.runId)).status === 'abandoned', 'the dead run given up', 20_000, 50);
    expect(await checkpointRows(nobodyLooks.runId)).toBe(0);
    expect(await humanMessages(nobodyLooks.sessionId)).toEqual([]);
  }, 120_000);
});
