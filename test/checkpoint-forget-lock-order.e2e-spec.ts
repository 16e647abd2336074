import { randomUUID } from 'node:crypto';
import { emptyCheckpoint } from '@langchain/langgraph';
import { CheckpointerProvider } from '../src/agent/checkpointer.provider.js';
import { ChatService } from '../src/chat/chat.service.js';
import { RunRegistry } from '../src/chat/run-registry.service.js';
import { waitUntil } from './support/service-process.js';
import { createTestApp, TestApp, uniqueUser } from './support/test-app.js';

/**
 * A run's checkpoints are deleted two ways that can meet: the checkpointer's
 * own delete of a finished turn's thread (blobs, checkpoints, writes), and the
 * trigger of a run given up as abandoned (the stale-run sweep, which holds the
 * session rows meanwhile). Both must take the tables in one order: when they
 * did not, the two waited for each other until PostgreSQL's deadlock check
 * (`deadlock_timeout`, 1 s) broke the circle, and every turn of those sessions
 * waited behind the sweep's session locks for as long, failing with 503 where
 * the lock limit is not longer.
 */
describe('forgetting a thread while its run is given up', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t?.close();
  });

  /** Backends of this test's database waiting for a lock, running a statement that contains `fragment`. */
  async function waitingOn(fragment: string): Promise<boolean> {
    const rows = await t.dataSource.query(
      `SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND state = 'active' AND position($1 in query) > 0`,
      [fragment],
    );
    return rows.length > 0;
  }

  async function rowsOf(threadId: string): Promise<number> {
    const [{ n }] = await t.dataSource.query(
      `SELECT (SELECT count(*) FROM checkpoints WHERE thread_id = $1) + (SELECT count(*) FROM checkpoint_blobs WHERE thread_id = $1)
            + (SELECT count(*) FROM checkpoint_writes WHERE thread_id = $1) AS n`,
      [threadId],
    );
    return Number(n);
  }

  it('the sweep and the checkpointer delete the same thread without a deadlock', async () => {
    const user = uniqueUser('forget-order');
    const { runId } = await t.app.get(ChatService).prepare(user, 'a turn whose instance went quiet', randomUUID());
    const checkpointer = t.app.get(CheckpointerProvider);
    const config = { configurable: { thread_id: runId, checkpoint_ns: '' } };
    const checkpoint = { ...emptyCheckpoint(), channel_values: { messages: ['hello'] }, channel_versions: { messages: 1 } };
    const saved = await checkpointer.saver.put(config, checkpoint, { source: 'input', step: -1, parents: {} }, { messages: 1 });
    await checkpointer.saver.putWrites(saved, [['messages', 'pending']], 'task-1');
    expect(await rowsOf(runId)).toBe(3);
    await t.dataSource.query(`UPDATE chat_runs SET heartbeat_at = now() - INTERVAL '1 hour' WHERE id = $1`, [runId]);

    // Hold the thread's checkpoint row, so the checkpointer's delete stops after its first table (the blobs)...
    const holder = t.dataSource.createQueryRunner();
    await holder.connect();
    try {
      await holder.startTransaction();
      await holder.query('SELECT 1 FROM checkpoints WHERE thread_id = $1 FOR UPDATE', [runId]);
      const forgotten = checkpointer.forget(runId).then(
        () => 'ok',
        (error: Error) => error.message,
      );
      await waitUntil(() => waitingOn('checkpoints'), 'the checkpointer waiting for the held checkpoint');
      // ...and give the run up meanwhile: its trigger deletes the same thread's rows.
      const sweep = t.app
        .get(RunRegistry)
        .releaseAllStale()
        .then(
          (ids) => ids,
          (error: Error) => error.message,
        );
      await waitUntil(() => waitingOn('abandoned'), 'the sweep waiting for the checkpointer');
      await holder.commitTransaction();

      expect(await forgotten).toBe('ok');
      expect(await sweep).toContain(runId);
    } finally {
      await holder.release();
    }
    expect(await rowsOf(runId)).toBe(0);
    const [{ status }] = await t.dataSource.query('SELECT status FROM chat_runs WHERE id = $1', [runId]);
    expect(status).toBe('abandoned');
  });
});
