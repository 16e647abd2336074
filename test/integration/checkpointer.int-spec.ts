import { randomUUID } from 'node:crypto';
import { emptyCheckpoint } from '@langchain/langgraph';
import { CheckpointerProvider } from '../../src/agent/checkpointer.provider.js';
import { AgentModule } from '../../src/agent/agent.module.js';
import { createTestModule, TestModule } from '../support/test-module.js';

/** The PostgreSQL checkpointer when a run is forgotten while one of its steps, abandoned by an abort, still writes. */
describe('CheckpointerProvider (real PostgreSQL)', () => {
  let t: TestModule;
  let checkpointer: CheckpointerProvider;

  beforeAll(async () => {
    t = await createTestModule({ imports: [AgentModule], env: { RAG_DENSE_BACKEND: 'memory' } });
    checkpointer = t.module.get(CheckpointerProvider);
  });
  afterAll(() => t?.close());

  const rows = async (threadId: string) => {
    const [{ checkpoints }] = await t.dataSource.query('SELECT count(*)::int AS checkpoints FROM checkpoints WHERE thread_id = $1', [threadId]);
    const [{ writes }] = await t.dataSource.query('SELECT count(*)::int AS writes FROM checkpoint_writes WHERE thread_id = $1', [threadId]);
    return { checkpoints, writes };
  };

  async function startedThread(): Promise<{ threadId: string; config: { configurable: Record<string, string> } }> {
    const threadId = randomUUID();
    const config = await checkpointer.saver.put(
      { configurable: { thread_id: threadId, checkpoint_ns: '' } },
      { ...emptyCheckpoint(), id: randomUUID() },
      { source: 'loop', step: 0, parents: {} },
      {},
    );
    return { threadId, config: config as { configurable: Record<string, string> } };
  }

  it('writes nothing for a thread after it was forgotten (a step that finished after the abort)', async () => {
    const { threadId, config } = await startedThread();
    expect(await rows(threadId)).toEqual({ checkpoints: 1, writes: 0 });
    await checkpointer.forget(threadId);
    await checkpointer.saver.putWrites(config, [['messages', 'late']], 'task-1');
    await checkpointer.saver.put(config, { ...emptyCheckpoint(), id: randomUUID() }, { source: 'loop', step: 1, parents: {} }, {});
    expect(await rows(threadId)).toEqual({ checkpoints: 0, writes: 0 });
  });

  it('deletes a write that was already on its way when the thread was forgotten', async () => {
    const { threadId, config } = await startedThread();
    const late = checkpointer.saver.putWrites(config, [['messages', 'in flight']], 'task-1');
    await checkpointer.forget(threadId);
    await late;
    expect(await rows(threadId)).toEqual({ checkpoints: 0, writes: 0 });
  });

  it('keeps writing for other threads', async () => {
    const { threadId, config } = await startedThread();
    await checkpointer.forget(randomUUID());
    await checkpointer.saver.putWrites(config, [['messages', 'kept']], 'task-1');
    expect(await rows(threadId)).toEqual({ checkpoints: 1, writes: 1 });
    await checkpointer.forget(threadId);
  });
});
