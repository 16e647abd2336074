import request from 'supertest';
import { createTestApp, TestApp, uniqueUser } from './support/test-app.js';

/** hostile inputs to the session routes; nothing may answer 500. */
describe('hostile session inputs', () => {
  let t: TestApp;
  let b: TestApp;
  beforeAll(async () => {
    [t, b] = await Promise.all([createTestApp({ RATE_LIMIT_CHAT_PER_MINUTE: '0', RATE_LIMIT_SEARCH_PER_MINUTE: '0' }), createTestApp({ RATE_LIMIT_CHAT_PER_MINUTE: '0' })]);
  }, 60_000);
  afterAll(async () => {
    await Promise.all([t?.close(), b?.close()]);
  });
  const server = () => t.app.getHttpServer();

  it('never answers 500', async () => {
    const user = uniqueUser('hostile');
    const turn = await request(server()).post('/api/chat').set(t.auth(user)).send({ message: 'hello there' }).expect(200);
    const sid = turn.body.session_id as string;
    const other = await request(server()).post('/api/chat').set(t.auth(user)).send({ message: 'second session' }).expect(200);
    const msgs = (await request(server()).get(`/api/sessions/${sid}/messages`).set(t.auth(user)).expect(200)).body.messages;
    const mid = msgs[0].id as string;
    const otherMid = (await request(server()).get(`/api/sessions/${other.body.session_id}/messages`).set(t.auth(user)).expect(200)).body.messages[0].id;

    const results: Array<[string, number]> = [];
    const probe = async (label: string, req: request.Test) => {
      const res = await req;
      results.push([label, res.status]);
      return res;
    };
    const rawQs = [
      'q=%25',
      'q=_',
      'q=%5C',
      'q=%00',
      'q=%ED%A0%80',
      'q=%FF',
      'q=a&q=b',
      'q[]=a',
      'q[a]=b',
      `q=${'x'.repeat(201)}`,
      `q=${encodeURIComponent('😀'.repeat(200))}`,
      'limit=-1',
      'limit=1e3',
      'limit=abc',
      'cursor=%00',
      'cursor=zzzz',
      'q=%25&cursor=abc',
    ];
    for (const qs of rawQs) await probe(`list ?${qs}`, request(server()).get(`/api/sessions?${qs}`).set(t.auth(user)));
    const pageQs = [
      'before=0',
      'before=-1',
      'before=1e3',
      'before=999999999',
      'before=9999999999',
      'limit=0',
      'limit=201',
      'limit=1&limit=2',
      'before=2&limit=1',
      'before=&limit=',
      'before[]=1',
    ];
    for (const qs of pageQs) await probe(`page ?${qs}`, request(server()).get(`/api/sessions/${sid}/messages?${qs}`).set(t.auth(user)));
    const titles: unknown[] = ['', '   ', '\u200b', 'x'.repeat(201), '😀'.repeat(200), '😀'.repeat(201), 'a\u0000b', '\ud800', 42, null, ['a'], { a: 1 }, '\u202eevil'];
    for (const title of titles) await probe(`rename ${JSON.stringify(title)?.slice(0, 30)}`, request(server()).patch(`/api/sessions/${sid}`).set(t.auth(user)).send({ title }));
    await probe('rename extra field', request(server()).patch(`/api/sessions/${sid}`).set(t.auth(user)).send({ title: 'ok', message_count: 0 }));
    await probe('rename text/plain', request(server()).patch(`/api/sessions/${sid}`).set(t.auth(user)).set('Content-Type', 'text/plain').send('title'));
    const bodies: unknown[] = [
      {},
      { rating: 'UP' },
      { rating: 'up', comment: null },
      { rating: 'up', comment: '' },
      { rating: 'up', comment: '\u0000' },
      { rating: 'up', comment: 'x'.repeat(2001) },
      { rating: ['up'] },
    ];
    for (const body of bodies)
      await probe(
        `feedback ${JSON.stringify(body).slice(0, 40)}`,
        request(server())
          .put(`/api/sessions/${sid}/messages/${mid}/feedback`)
          .set(t.auth(user))
          .send(body as object),
      );
    await probe('feedback other session msg', request(server()).put(`/api/sessions/${sid}/messages/${otherMid}/feedback`).set(t.auth(user)).send({ rating: 'up' }));
    await probe(
      'feedback other user',
      request(server())
        .put(`/api/sessions/${sid}/messages/${mid}/feedback`)
        .set(t.auth(uniqueUser('x')))
        .send({ rating: 'up' }),
    );
    await probe(
      'feedback uppercase id',
      request(server()).put(`/api/sessions/${sid.toUpperCase()}/messages/${mid.toUpperCase()}/feedback`).set(t.auth(user)).send({ rating: 'down' }),
    );
    await probe('feedback bad id', request(server()).put(`/api/sessions/${sid}/messages/123/feedback`).set(t.auth(user)).send({ rating: 'up' }));
    await probe('delete feedback', request(server()).delete(`/api/sessions/${sid}/messages/${mid}/feedback`).set(t.auth(user)));
    console.log(JSON.stringify(results.map(([l, s]) => [l.slice(0, 40), s])));
    expect(results.filter(([, status]) => status >= 500)).toEqual([]);
  });

  it('searches case-insensitively beyond ASCII and sees renames/feedback on another instance', async () => {
    const user = uniqueUser('search');
    const turn = await request(server()).post('/api/chat').set(t.auth(user)).send({ message: 'hello' }).expect(200);
    const sid = turn.body.session_id as string;
    // Warm B's caches.
    await request(b.app.getHttpServer()).get('/api/sessions').set(b.auth(user)).expect(200);
    const msgs = (await request(b.app.getHttpServer()).get(`/api/sessions/${sid}/messages`).set(b.auth(user)).expect(200)).body.messages;
    await request(server()).patch(`/api/sessions/${sid}`).set(t.auth(user)).send({ title: 'Éclair ÄÖ Привет 100%_\\' }).expect(200);
    await request(server()).put(`/api/sessions/${sid}/messages/${msgs[1].id}/feedback`).set(t.auth(user)).send({ rating: 'down', comment: 'no' }).expect(200);
    const listB = (await request(b.app.getHttpServer()).get('/api/sessions').set(b.auth(user)).expect(200)).body.sessions;
    const msgsB = (await request(b.app.getHttpServer()).get(`/api/sessions/${sid}/messages?limit=1`).set(b.auth(user)).expect(200)).body.messages;
    const found: Record<string, number> = {};
    for (const q of ['éclair', 'äö', 'привет', '100%_\\', '%', 'Ä']) {
      found[q] = (await request(server()).get('/api/sessions').query({ q }).set(t.auth(user)).expect(200)).body.sessions.length;
    }
    expect({ title: listB[0].title, feedback: msgsB[0].feedback?.rating, found }).toEqual({
      title: 'Éclair ÄÖ Привет 100%_\\',
      feedback: 'down',
      found: { éclair: 1, äö: 1, привет: 1, '100%_\\': 1, '%': 1, Ä: 1 },
    });
  });
});
