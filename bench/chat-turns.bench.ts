/**
 * (a) Median latency of a sync chat turn (local provider, POST /api/chat) around
 *     turn 10 and turn 200 of one session, and their ratio (goal: at most 1.2).
 *     Baseline in the same process: a plain LangGraph graph with
 *     MessagesAnnotation + PostgresSaver (whole history in the checkpointed
 *     state, one thread per session), same local model and tools.
 * (b) Time from request to the first SSE event and to `done` on POST /api/chat/stream.
 *
 *   npm run bench:chat          (TURNS=205, STREAMS=40)
 */
import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { HumanMessage, SystemMessage } from '@langchain/core/messages';
import { END, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import { ToolNode } from '@langchain/langgraph/prebuilt';
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import { JwtService } from '@nestjs/jwt';
import { NestFactory } from '@nestjs/core';
import { NestExpressApplication } from '@nestjs/platform-express';
import pino from 'pino';
import { routeAfterModel } from '../src/agent/agent.factory.js';
import { LocalChatModel } from '../src/models/local-chat-model.js';
import { ToolRegistry } from '../src/agent/tools/tool-registry.service.js';
import { AppModule } from '../src/app.module.js';
import { TurnContext } from '../src/agent/turn-context.js';
import { CheckpointerProvider } from '../src/agent/checkpointer.provider.js';
import { setupApp } from '../src/setup-app.js';
import { benchConfig, fmt, median, percentile, runBench } from './support.js';
import { RetrievalScope } from '../src/knowledge/collections/retrieval-scope.js';
import { DEFAULT_COLLECTION_ID } from '../src/knowledge/public-api.js';

const TURNS = Number(process.env.TURNS ?? 205);
const STREAMS = Number(process.env.STREAMS ?? 40);
const QUESTIONS = ['How do I reset the Aurora X1 router?', '退货政策是什么？', 'How long is the Aurora X2 warranty?', '积分的有效期是多久？', 'What is the hotel limit in Tokyo?'];

/** Median of the turns within ±5 of `at` (1-based). */
function around(times: number[], at: number): number {
  return median(times.slice(Math.max(0, at - 6), Math.min(times.length, at + 5)));
}

function report(label: string, times: number[]): void {
  const early = around(times, 10);
  const late = around(times, 200);
  console.log(`${label.padEnd(46)} turn 10: ${fmt(early).padStart(10)}   turn 200: ${fmt(late).padStart(10)}   ratio: ${(late / early).toFixed(2)}`);
}

runBench('bench_chat', async (databaseUrl, onClose) => {
  const config = benchConfig(databaseUrl, { CHAT_RECENT_MESSAGES: '12' });
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(config), { bodyParser: false, logger: ['warn', 'error'] });
  onClose(() => app.close());
  setupApp(app, config, pino({ level: 'warn' }));
  await app.listen(0, '127.0.0.1');
  const base = (await app.getUrl()).replace('[::1]', '127.0.0.1');
  const token = new JwtService({ secret: config.auth.jwtSecret }).sign({ sub: 'bench-user' }, { expiresIn: '1h' });
  const headers = { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' };
  {
    console.log(`${TURNS} knowledge-base turns in one session, local provider, PostgreSQL + Redis`);

    // Warm-up (JIT, pools, caches) in a session of its own, so turn 10 measures turns, not start-up.
    let warm: string | undefined;
    for (let i = 0; i < 20; i += 1) {
      const res = await fetch(`${base}/api/chat`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ message: QUESTIONS[i % QUESTIONS.length], ...(warm ? { session_id: warm } : {}) }),
      });
      warm = ((await res.json()) as { session_id: string }).session_id;
    }

    // (a) this service
    let session: string | undefined;
    const ours: number[] = [];
    for (let i = 0; i < TURNS; i += 1) {
      const started = performance.now();
      const res = await fetch(`${base}/api/chat`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ message: QUESTIONS[i % QUESTIONS.length], ...(session ? { session_id: session } : {}) }),
      });
      const body = (await res.json()) as { session_id: string };
      ours.push(performance.now() - started);
      if (res.status !== 200) throw new Error(`turn ${i + 1}: HTTP ${res.status} ${JSON.stringify(body)}`);
      session = body.session_id;
    }
    report('this service: POST /api/chat (HTTP, commit)', ours);

    // (a) baseline: the whole conversation in LangGraph state, checkpointed by PostgresSaver.
    const saver = new PostgresSaver(app.get(CheckpointerProvider).pool);
    const tools = app.get(ToolRegistry);
    // A context per turn, as the service makes one per request: the tools' budgets are per turn.
    const turnContext = () => ({
      turn: new TurnContext({ userId: 'bench', sessionId: randomUUID(), runId: randomUUID(), mode: 'sync' }, { scope: RetrievalScope.of([DEFAULT_COLLECTION_ID]) }),
    });
    const boundTools = tools.tools;
    const model = new LocalChatModel().bindTools(boundTools);
    const graph = new StateGraph(MessagesAnnotation)
      .addNode('agent', async (state) => ({ messages: [await model.invoke([new SystemMessage('You are helpful.'), ...state.messages])] }))
      .addNode('tools', new ToolNode(boundTools))
      .addEdge(START, 'agent')
      .addConditionalEdges('agent', routeAfterModel, ['tools', END])
      .addEdge('tools', 'agent')
      .compile({ checkpointer: saver });
    const warmThread = randomUUID();
    for (let i = 0; i < 20; i += 1) {
      await graph.invoke({ messages: [new HumanMessage(QUESTIONS[i % QUESTIONS.length])] }, { configurable: { thread_id: warmThread }, context: turnContext() });
    }
    const thread = randomUUID();
    const baseline: number[] = [];
    for (let i = 0; i < TURNS; i += 1) {
      const context = turnContext();
      const started = performance.now();
      await graph.invoke({ messages: [new HumanMessage(QUESTIONS[i % QUESTIONS.length])] }, { configurable: { thread_id: thread }, context });
      baseline.push(performance.now() - started);
    }
    report('baseline: MessagesAnnotation + PostgresSaver', baseline);
    const [stored] = (
      await app.get(CheckpointerProvider).pool.query(
        `SELECT
         (SELECT coalesce(sum(octet_length(blob)), 0) FROM checkpoint_blobs WHERE thread_id = $1)::bigint AS baseline_bytes,
         (SELECT count(*) FROM checkpoints WHERE thread_id NOT IN ($1, $2))::int AS our_checkpoints`,
        [thread, warmThread],
      )
    ).rows as Array<{ baseline_bytes: string; our_checkpoints: number }>;
    console.log(
      `checkpoint storage after ${TURNS} turns: baseline ${(Number(stored.baseline_bytes) / 1e6).toFixed(2)} MB of blobs; this service ${stored.our_checkpoints} checkpoints`,
    );

    // (b) streaming latency
    const firstEvent: number[] = [];
    const done: number[] = [];
    for (let i = 0; i < STREAMS; i += 1) {
      const started = performance.now();
      const res = await fetch(`${base}/api/chat/stream`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ message: QUESTIONS[i % QUESTIONS.length] }),
      });
      const reader = res.body!.getReader();
      const decoder = new TextDecoder();
      let text = '';
      let sawFirst = false;
      for (;;) {
        const { value, done: finished } = await reader.read();
        if (finished) break;
        text += decoder.decode(value, { stream: true });
        if (!sawFirst && text.includes('event: ')) {
          firstEvent.push(performance.now() - started);
          sawFirst = true;
        }
        if (text.includes('event: done')) {
          done.push(performance.now() - started);
          await reader.cancel();
          break;
        }
      }
    }
    console.log(
      `POST /api/chat/stream over ${STREAMS} new sessions: first event p50 ${fmt(median(firstEvent))} (p95 ${fmt(percentile(firstEvent, 95))}), ` +
        `done p50 ${fmt(median(done))} (p95 ${fmt(percentile(done, 95))})`,
    );
  }
});
