import { Writable } from 'node:stream';
import request from 'supertest';
import { RunRegistry } from '../src/chat/run-registry.service.js';
import { readSse } from './support/sse-client.js';
import { createTestApp, TestApp, uniqueUser } from './support/test-app.js';

/** a stream ticket must never reach a log line, also when its check fails on the database. */
describe('ticket in the error log', () => {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  let t: TestApp;
  let base: string;

  beforeAll(async () => {
    t = await createTestApp({ LOG_LEVEL: 'info' }, sink);
    base = await t.listen();
  }, 60_000);
  afterAll(async () => {
    await t?.close();
  });

  it('does not log the ticket when the ownership lookup hits a statement timeout', async () => {
    const user = uniqueUser('leak');
    const turn = await readSse(`${base}/api/chat/stream`, {
      method: 'POST',
      headers: { ...t.auth(user), 'Content-Type': 'application/json' },
      body: JSON.stringify({ message: 'hello' }),
    });
    const runId = turn.events[0].data.run_id as string;
    const { ticket } = (await request(t.app.getHttpServer()).post(`/api/chat/runs/${runId}/ticket`).set(t.auth(user)).expect(200)).body;

    // The database stalls on the guard's lookup: PostgreSQL's statement_timeout error (57014).
    const runs = t.app.get(RunRegistry, { strict: false });
    const original = runs.find.bind(runs);
    runs.find = async () => {
      throw Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' });
    };
    try {
      const res = await request(t.app.getHttpServer()).get(`/api/chat/runs/${runId}/stream`).query({ ticket });
      expect(res.status).toBe(503);
      expect(JSON.stringify(res.body)).not.toContain(ticket);
    } finally {
      runs.find = original;
    }
    const leaking = lines.filter((line) => line.includes(ticket));
    expect(leaking).toEqual([]);
  });
});
