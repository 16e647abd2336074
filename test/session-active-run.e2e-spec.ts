import { jest } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { ChatService } from '../src/chat/chat.service.js';
import { RunRegistry } from '../src/chat/run-registry.service.js';
import { createTestApp, TestApp, uniqueUser } from './support/test-app.js';

/**
 * A session's run in flight (`active_run`) is kept on the session by the
 * run's start and end, which move the list version: the warm list is served
 * from the cache while nothing changes, and shows a run that started or
 * ended, or was given up, at the next read on any instance.
 */
describe('active_run through the cached session list', () => {
  let t: TestApp;
  let other: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
    other = await createTestApp();
  });
  afterAll(async () => {
    await other?.close();
    await t?.close();
  });

  async function list(app: TestApp, user: string): Promise<Array<{ session_id: string; title: string; active_run: { run_id: string } | null }>> {
    return (await request(app.app.getHttpServer()).get('/api/sessions').set(app.auth(user)).expect(200)).body.sessions;
  }

  /** Changes the stored title behind the cache's back: a list that still shows the old one was served from the cache. */
  async function retitleInSql(sessionId: string, title: string): Promise<void> {
    await t.dataSource.query('UPDATE chat_sessions SET title = $2 WHERE id = $1', [sessionId, title]);
  }

  it('shows a started run at once, then serves the list from the cache, and clears it when the run ends', async () => {
    const user = uniqueUser('active-cached');
    const session = randomUUID();
    await t.storage.appendTurn(user, session, [{ type: 'human', content: 'before' }]);
    expect((await list(other, user))[0].active_run).toBeNull();

    const turn = await t.app.get(ChatService).prepare(user, 'a question', session);
    for (const app of [t, other]) expect((await list(app, user))[0].active_run).toEqual({ run_id: turn.runId, started_at: expect.any(String) });

    await retitleInSql(session, 'changed behind the cache');
    const warm = await list(other, user);
    expect(warm[0]).toMatchObject({ title: 'before', active_run: { run_id: turn.runId } });

    await t.app.get(RunRegistry).finish(turn.runId, 'error', 'ended by the test');
    for (const app of [other, t]) expect((await list(app, user))[0]).toMatchObject({ title: 'changed behind the cache', active_run: null });
  });

  it('clears a run given up for its stale heartbeat from the list, on every instance', async () => {
    const user = uniqueUser('active-stale');
    const session = randomUUID();
    const turn = await t.app.get(ChatService).prepare(user, 'left behind', session);
    expect((await list(other, user))[0].active_run?.run_id).toBe(turn.runId);

    await t.dataSource.query(`UPDATE chat_runs SET heartbeat_at = now() - INTERVAL '1 hour' WHERE id = $1`, [turn.runId]);
    expect(await t.app.get(RunRegistry).releaseAllStale()).toContain(turn.runId);
    for (const app of [other, t]) expect((await list(app, user))[0].active_run).toBeNull();
    const [{ active_run_id }] = await t.dataSource.query('SELECT active_run_id FROM chat_sessions WHERE id = $1', [session]);
    expect(active_run_id).toBeNull();
  });

  it('clears a run a follower finds stale, and one the next turn of its session takes over', async () => {
    const user = uniqueUser('active-followed');
    const session = randomUUID();
    const first = await t.app.get(ChatService).prepare(user, 'first', session);
    await t.dataSource.query(`UPDATE chat_runs SET heartbeat_at = now() - INTERVAL '1 hour' WHERE id = $1`, [first.runId]);
    expect(await other.app.get(RunRegistry).status(first.runId)).toBe('abandoned');
    expect((await list(t, user))[0].active_run).toBeNull();

    const second = await other.app.get(ChatService).prepare(user, 'second', session);
    await t.dataSource.query(`UPDATE chat_runs SET heartbeat_at = now() - INTERVAL '1 hour' WHERE id = $1`, [second.runId]);
    expect((await list(t, user))[0].active_run?.run_id).toBe(second.runId);
    const third = await t.app.get(ChatService).prepare(user, 'third', session);
    expect((await list(other, user))[0].active_run?.run_id).toBe(third.runId);
    await t.app.get(RunRegistry).finish(third.runId, 'error', 'ended by the test');
    expect((await list(other, user))[0].active_run).toBeNull();
  });

  it("takes a session whose stale run another instance's reaper gives up between the turn's claim and its own release", async () => {
    const user = uniqueUser('active-reaped');
    const session = randomUUID();
    const stale = await t.app.get(ChatService).prepare(user, 'left behind', session);
    await t.dataSource.query(`UPDATE chat_runs SET heartbeat_at = now() - INTERVAL '1 hour' WHERE id = $1`, [stale.runId]);
    // The turn on `other` finds the slot taken; before it gives the run up itself, the reaper on `t` does.
    const registry = other.app.get(RunRegistry);
    const releaseStale = registry.releaseStale.bind(registry);
    const spy = jest.spyOn(registry, 'releaseStale').mockImplementationOnce(async (sessionId) => {
      expect(await t.app.get(RunRegistry).releaseAllStale()).toContain(stale.runId);
      return releaseStale(sessionId);
    });
    try {
      const next = await other.app.get(ChatService).prepare(user, 'after the reaper', session);
      expect(spy).toHaveBeenCalledTimes(1);
      expect((await list(t, user))[0].active_run?.run_id).toBe(next.runId);
      await other.app.get(RunRegistry).finish(next.runId, 'error', 'ended by the test');
    } finally {
      spy.mockRestore();
    }
  });
});
