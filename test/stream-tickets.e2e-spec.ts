import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { JwtService } from '@nestjs/jwt';
import request from 'supertest';
import { STREAM_TICKET_AUDIENCE } from '../src/auth/stream-ticket.service.js';
import { FakeWeatherServer } from './support/fake-weather-server.js';
import { openSse, readSse } from './support/sse-client.js';
import { createTestApp, TestApp, uniqueUser } from './support/test-app.js';
import { TEST_JWT_SECRET } from './support/test-env.js';

describe('Stream tickets (EventSource rejoin without the Authorization header)', () => {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  const weather = new FakeWeatherServer();
  const jwt = new JwtService({ secret: TEST_JWT_SECRET });
  let t: TestApp;
  let base: string;

  beforeAll(async () => {
    await weather.start();
    t = await createTestApp({ LOG_LEVEL: 'info', WEATHER_BASE_URL: weather.url, WEATHER_GEOCODING_URL: weather.url }, sink);
    base = await t.listen();
  });
  afterAll(async () => {
    await t.close();
    await weather.stop();
  });

  const server = () => t.app.getHttpServer();

  /** Streams a quick turn to its end; its run id. */
  async function finishedRun(user: string): Promise<string> {
    const turn = await readSse(`${base}/api/chat/stream`, {
      method: 'POST',
      headers: { ...t.auth(user), 'Content-Type': 'application/json' },
      body: JSON.stringify({ message: 'hello' }),
    });
    expect(turn.events.at(-1)!.event).toBe('done');
    return turn.events[0].data.run_id as string;
  }

  async function ticketFor(user: string, runId: string): Promise<string> {
    const res = await request(server()).post(`/api/chat/runs/${runId}/ticket`).set(t.auth(user)).expect(200);
    expect(res.body).toEqual({ ticket: expect.any(String), expires_in: 60 });
    return res.body.ticket as string;
  }

  const rejoin = (runId: string, ticket: string) => request(server()).get(`/api/chat/runs/${runId}/stream`).query({ ticket });

  /** A ticket signed with the real secret, claims chosen by the test. */
  const forgedTicket = (claims: Record<string, unknown>) => jwt.sign({ aud: STREAM_TICKET_AUDIENCE, exp: Math.floor(Date.now() / 1000) + 60, ...claims }, { algorithm: 'HS256' });

  it('are issued only to the run owner (404 for another user or an unknown run, 401 without a token)', async () => {
    const owner = uniqueUser('ticket-owner');
    const runId = await finishedRun(owner);
    await ticketFor(owner, runId);
    await request(server())
      .post(`/api/chat/runs/${runId}/ticket`)
      .set(t.auth(uniqueUser('stranger')))
      .expect(404);
    await request(server()).post(`/api/chat/runs/${randomUUID()}/ticket`).set(t.auth(owner)).expect(404);
    await request(server()).post(`/api/chat/runs/${runId}/ticket`).expect(401);
    await request(server()).post('/api/chat/runs/not-a-uuid/ticket').set(t.auth(owner)).expect(400);
  });

  it("open their run's stream in place of the Authorization header", async () => {
    const user = uniqueUser('ticket-replay');
    const runId = await finishedRun(user);
    const ticket = await ticketFor(user, runId);
    const replay = await readSse(`${base}/api/chat/runs/${runId}/stream?ticket=${encodeURIComponent(ticket)}`, {});
    expect(replay.status).toBe(200);
    expect(replay.events[0]).toMatchObject({ id: 1, event: 'metadata', data: { run_id: runId } });
    expect(replay.events.at(-1)!.event).toBe('done');
    // Same URL again (an EventSource reconnect): the ticket is still good.
    const again = await readSse(`${base}/api/chat/runs/${runId}/stream?ticket=${encodeURIComponent(ticket)}`, { headers: { 'Last-Event-ID': '1' } });
    expect(again.events.map((e) => e.id)).toEqual(replay.events.slice(1).map((e) => e.id));
  });

  it("survive EventSource's own reconnect: the same URL with Last-Event-ID resumes a live run without gaps or repeats", async () => {
    const user = uniqueUser('ticket-reconnect');
    weather.hold(); // the run waits on the weather service while its reader comes and goes
    const arrived = weather.nextRequest();
    const first = await openSse(`${base}/api/chat/stream`, {
      method: 'POST',
      headers: { ...t.auth(user), 'Content-Type': 'application/json' },
      body: JSON.stringify({ message: 'weather in Paris?' }),
    });
    const metadata = await first.waitFor((e) => e.event === 'metadata');
    first.close();
    await arrived;
    const runId = metadata.data.run_id as string;
    const url = `${base}/api/chat/runs/${runId}/stream?ticket=${encodeURIComponent(await ticketFor(user, runId))}`;

    const joined = await openSse(url, {});
    expect(joined.status).toBe(200);
    await joined.waitFor((e) => e.event === 'tool');
    const seen = [...joined.events];
    joined.close(); // the connection drops while the run is still waiting
    weather.release();

    const resumed = await readSse(url, { headers: { 'Last-Event-ID': String(seen.at(-1)!.id) } });
    expect(resumed.status).toBe(200);
    const all = [...seen, ...resumed.events];
    expect(all.map((e) => e.id)).toEqual(all.map((_, i) => i + 1));
    expect(all.at(-1)!.event).toBe('done');
    expect(all.at(-1)!.data.response).toMatch(/Paris/);
  });

  it('are refused (401) on another run, for another user, after expiry and when tampered with', async () => {
    const alice = uniqueUser('ticket-alice');
    const bob = uniqueUser('ticket-bob');
    const runA = await finishedRun(alice);
    const runB = await finishedRun(alice);
    const bobsRun = await finishedRun(bob);
    const ticketA = await ticketFor(alice, runA);

    const otherRun = await rejoin(runB, ticketA).expect(401);
    expect(otherRun.body.message).toMatch(/another run/);
    await rejoin(bobsRun, ticketA).expect(401);

    // Signed with the real secret, but naming a user who does not own the run.
    const otherUser = await rejoin(runA, forgedTicket({ sub: bob, run_id: runA })).expect(401);
    expect(otherUser.body.message).toMatch(/does not belong/);

    const expired = await rejoin(runA, forgedTicket({ sub: alice, run_id: runA, exp: Math.floor(Date.now() / 1000) - 5 })).expect(401);
    expect(expired.body.message).toMatch(/expired/);

    const [header, payload, signature] = ticketA.split('.');
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
    const retargeted = Buffer.from(JSON.stringify({ ...claims, run_id: runB })).toString('base64url');
    await rejoin(runB, `${header}.${retargeted}.${signature}`).expect(401);
    const flipped = signature.slice(0, -2) + (signature.at(-2) === 'A' ? 'B' : 'A') + signature.at(-1);
    await rejoin(runA, `${header}.${payload}.${flipped}`).expect(401);
    await rejoin(runA, 'not-a-ticket').expect(401);
    // A ticket signed with another secret.
    const foreign = new JwtService({ secret: 'some-other-secret-of-16-chars' }).sign(
      { sub: alice, run_id: runA, aud: STREAM_TICKET_AUDIENCE },
      { algorithm: 'HS256', expiresIn: 60 },
    );
    await rejoin(runA, foreign).expect(401);
    // The genuine ticket still works.
    await rejoin(runA, ticketA).expect(200);
  });

  it('are never bearer tokens, and bearer tokens are never accepted in a query string', async () => {
    const user = uniqueUser('ticket-bearer');
    const runId = await finishedRun(user);
    const ticket = await ticketFor(user, runId);
    const bearer = t.auth(user).Authorization.slice('Bearer '.length);

    const asBearer = await request(server()).get('/api/sessions').set('Authorization', `Bearer ${ticket}`).expect(401);
    expect(asBearer.body.message).toMatch(/not a bearer token/);
    await request(server()).get(`/api/chat/runs/${runId}/stream`).set('Authorization', `Bearer ${ticket}`).expect(401);
    await request(server()).post(`/api/chat/runs/${runId}/ticket`).set('Authorization', `Bearer ${ticket}`).expect(401);

    const bearerAsTicket = await rejoin(runId, bearer).expect(401);
    expect(bearerAsTicket.body.message).toMatch(/Invalid stream ticket/);
    for (const name of ['access_token', 'token']) {
      await request(server())
        .get(`/api/chat/runs/${runId}/stream`)
        .query({ [name]: bearer })
        .expect(401);
      await request(server())
        .get('/api/sessions')
        .query({ [name]: bearer })
        .expect(401);
    }
    // Only the stream route takes a ticket.
    const elsewhere = await request(server()).get('/api/sessions').query({ ticket }).expect(401);
    expect(elsewhere.body.message).toMatch(/does not accept a stream ticket/);
    await request(server()).get(`/api/chat/runs/${runId}/stream`).query({ ticket }).set(t.auth(user)).expect(400);
    await request(server())
      .get(`/api/chat/runs/${runId}/stream`)
      .query({ ticket: [ticket, ticket] })
      .expect(401);
  });

  it('stop working once the API key that asked for them is revoked or deleted, and never outlive the token that asked', async () => {
    const user = uniqueUser('ticket-key');
    const runId = await finishedRun(user);
    const createKey = async () => (await request(server()).post('/api/keys').set(t.auth(user)).send({ name: 'ticket probe' }).expect(201)).body as { id: string; key: string };
    const keyTicket = async (key: string) =>
      (await request(server()).post(`/api/chat/runs/${runId}/ticket`).set('Authorization', `Bearer ${key}`).expect(200)).body.ticket as string;

    const revoked = await createKey();
    const ticket = await keyTicket(revoked.key);
    await rejoin(runId, ticket).expect(200);
    await request(server()).delete(`/api/keys/${revoked.id}`).set(t.auth(user)).expect(200);
    const afterRevoke = await rejoin(runId, ticket).expect(401);
    expect(afterRevoke.body.message).toMatch(/API key that issued it was revoked/);

    const deleted = await createKey();
    const orphan = await keyTicket(deleted.key);
    await rejoin(runId, orphan).expect(200);
    await t.dataSource.query('DELETE FROM api_keys WHERE id = $1', [deleted.id]);
    await rejoin(runId, orphan).expect(401);

    // A token that expires in 5 s gets a ticket that expires with it, not 60 s later.
    const tokenExp = Math.floor(Date.now() / 1000) + 5;
    const shortToken = `Bearer ${jwt.sign({ sub: user, exp: tokenExp }, { algorithm: 'HS256' })}`;
    const issued = await request(server()).post(`/api/chat/runs/${runId}/ticket`).set('Authorization', shortToken).expect(200);
    expect(issued.body.expires_in).toBeLessThanOrEqual(5);
    expect((jwt.decode(issued.body.ticket) as { exp: number }).exp).toBeLessThanOrEqual(tokenExp);
  });

  it('never appear in the request log', async () => {
    const user = uniqueUser('ticket-log');
    const runId = await finishedRun(user);
    const ticket = await ticketFor(user, runId);
    lines.length = 0;
    await rejoin(runId, ticket).set('x-request-id', 'ticket-ok').expect(200);
    await request(server()).get(`/api/chat/runs/${randomUUID()}/stream?tick%65t=${ticket}`).set('x-request-id', 'ticket-bad').expect(401);
    await request(server()).get(`/api/sessions?access_token=${ticket}`).set('x-request-id', 'token-in-query').expect(401);
    const completed = (id: string) => lines.find((l) => l.msg === 'request completed' && l.request_id === id) as { req: { url: string } } | undefined;
    expect(completed('ticket-ok')?.req.url).toBe(`/api/chat/runs/${runId}/stream?ticket=[redacted]`);
    expect(completed('ticket-bad')?.req.url).toMatch(/\?ticket=\[redacted\]$/);
    expect(completed('token-in-query')?.req.url).toBe('/api/sessions?access_token=[redacted]');
    const signature = ticket.split('.')[2];
    expect(lines.length).toBeGreaterThanOrEqual(3);
    expect(lines.filter((l) => JSON.stringify(l).includes(signature))).toEqual([]);
  });
});
