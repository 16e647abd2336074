/**
 * Commits 500 turns to one session and compares the median commit time of
 * the first and the last 50 turns (goal: ratio at most 1.2). Baseline in the
 * same process: a commit that rewrites the whole history each turn (as the first storage design's save() did).
 *
 *   npm run bench:append            (TURNS=500 by default)
 */
import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { NestFactory } from '@nestjs/core';
import { DataSource } from 'typeorm';
import { AppModule } from '../src/app.module.js';
import { transactionKnowingCommit } from '../src/database/commit-outcome.js';
import type { NewMessage } from '../src/session/message.repository.js';
import { SessionWrites } from '../src/session/session-writes.service.js';
import { benchConfig, fmt, median, runBench } from './support.js';

const TURNS = Number(process.env.TURNS ?? 500);
const WINDOW = 50;

const TRACE = {
  tool_used: true,
  query: '保修多久？ How long is the warranty?',
  final_chunks: [{ source: 'warranty.md', page: 1, text: '整机保修两年。The device has a two-year warranty.', score: 0.9 }],
};

function turnMessages(i: number): NewMessage[] {
  return [
    { type: 'human', content: `第 ${i} 个问题 / question ${i}` },
    { type: 'ai', content: `Answer ${i}: the device has a two-year warranty.`, rag_trace: TRACE },
  ];
}

async function timeTurns(label: string, commit: (i: number) => Promise<void>): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < TURNS; i += 1) {
    const start = performance.now();
    await commit(i);
    times.push(performance.now() - start);
  }
  const first = median(times.slice(0, WINDOW));
  const last = median(times.slice(-WINDOW));
  console.log(`${label.padEnd(34)} first ${WINDOW}: ${fmt(first).padStart(10)}   last ${WINDOW}: ${fmt(last).padStart(10)}   ratio last/first: ${(last / first).toFixed(2)}`);
  return times;
}

runBench('bench_append', async (databaseUrl, onClose) => {
  const app = await NestFactory.createApplicationContext(AppModule.forRoot(benchConfig(databaseUrl)), { logger: ['warn', 'error'] });
  onClose(() => app.close());
  {
    const dataSource = app.get(DataSource);
    const writes = app.get(SessionWrites);
    // One turn's commit as ChatService makes it (less the run's end): one transaction, then the stale cached copies dropped.
    const storage = {
      async appendTurn(userId: string, sessionId: string, messages: NewMessage[]): Promise<void> {
        await transactionKnowingCommit(dataSource, (manager) => writes.appendTurn(manager, userId, sessionId, messages));
        await writes.turnCommitted(userId, sessionId);
      },
      /** The baseline: the whole history written again. */
      async save(userId: string, sessionId: string, messages: NewMessage[]): Promise<void> {
        await transactionKnowingCommit(dataSource, async (manager) => {
          await manager.query('DELETE FROM chat_messages WHERE session_id = $1', [sessionId]);
          await manager.query('UPDATE chat_sessions SET message_count = 0 WHERE id = $1', [sessionId]);
          await writes.appendTurn(manager, userId, sessionId, messages);
        });
        await writes.turnCommitted(userId, sessionId);
      },
    };
    const user = 'bench-user';
    console.log(`${TURNS} turns (2 messages each, one with a RAG trace) committed to one session, PostgreSQL + Redis`);

    // Warm up JIT, pool and cache connections so the first window measures commits, not start-up.
    const warmup = randomUUID();
    for (let i = 0; i < 30; i += 1) await storage.appendTurn(user, warmup, turnMessages(i));

    const appendSession = randomUUID();
    await timeTurns('appendTurn (one transaction/turn)', (i) => storage.appendTurn(user, appendSession, turnMessages(i)).then(() => undefined));

    const saveSession = randomUUID();
    const history: NewMessage[] = [];
    await timeTurns('baseline: full rewrite per turn', async (i) => {
      history.push(...turnMessages(i));
      await storage.save(user, saveSession, history);
    });
  }
});
