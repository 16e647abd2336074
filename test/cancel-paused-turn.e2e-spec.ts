import request from 'supertest';
import { createTestApp, TestApp, uniqueUser } from './support/test-app.js';
import { FakeOpenAIServer, gradeVerdict } from './support/fake-openai-server.js';
import { openSse } from './support/sse-client.js';

/** cancelling the turn that answers a paused (HITL) task. */
describe('cancel of a resumed HITL turn', () => {
  const llm = new FakeOpenAIServer();
  let t: TestApp;
  let base: string;

  beforeAll(async () => {
    await llm.start();
    t = await createTestApp(llm.appEnv({ LLM_TIMEOUT_MS: '5000', RATE_LIMIT_CHAT_PER_MINUTE: '0' }));
    base = await t.listen();
  }, 60_000);
  afterAll(async () => {
    await t.close();
    await llm.stop();
  });

  it('leaves pending_hitl and its checkpoint consistent', async () => {
    const user = uniqueUser('hitlcancel');
    llm.play(
      { toolCalls: [{ name: 'knowledge_search', args: { query: 'How long is the warranty?' } }] },
      gradeVerdict({
        grade_route: 'clarify',
        evidence_status: 'needs_choice',
        evidence_ambiguity: 'needs_choice',
        options: ['Aurora X1', 'Aurora X2'],
        grade_reason: 'Two products.',
      }),
    );
    const paused = await request(t.app.getHttpServer()).post('/api/chat').set(t.auth(user)).send({ message: 'How long is the warranty?' }).expect(200);
    const taskId = paused.body.pending_hitl.task_id as string;
    const sessionId = paused.body.session_id as string;

    llm.reset();
    llm.play(gradeVerdict(), { content: 'The Aurora X2 has a three-year warranty.', hangAfter: 2 });
    const stream = await openSse(`${base}/api/chat/stream`, {
      method: 'POST',
      headers: { ...t.auth(user), 'Content-Type': 'application/json' },
      body: JSON.stringify({ message: 'Aurora X2', session_id: sessionId }),
    });
    const metadata = await stream.waitFor((event) => event.event === 'metadata');
    await stream.waitFor((event) => event.event === 'token');
    const cancelled = await request(t.app.getHttpServer()).post(`/api/chat/runs/${metadata.data.run_id}/cancel`).set(t.auth(user)).expect(200);
    expect(cancelled.body.status).toBe('cancelled');
    await stream.ended;

    const listed = (await request(t.app.getHttpServer()).get('/api/sessions').set(t.auth(user)).expect(200)).body.sessions[0];
    const [{ count }] = await t.dataSource.query(`SELECT count(*)::int AS count FROM checkpoints WHERE thread_id = $1`, [taskId]);
    // Either the task stays answerable (pending_hitl shown AND its checkpoint kept) or it is gone from both.
    expect({ listed: listed.pending_hitl !== null, checkpoint: count > 0 }).toEqual({ listed: count > 0, checkpoint: listed.pending_hitl !== null });
  });
});
