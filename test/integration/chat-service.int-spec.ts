import { AgentFactory } from '../../src/agent/agent.factory.js';
import { TurnContext, TurnMode } from '../../src/agent/turn-context.js';
import { TurnFailedError } from '../../src/chat/chat.errors.js';
import { ChatModule } from '../../src/chat/chat.module.js';
import { ChatService, PreparedTurn } from '../../src/chat/chat.service.js';
import { RunEventsService } from '../../src/chat/run-events.service.js';
import type { RunEvent, RunEventArgs, SseEventType } from '../../src/chat/sse.js';
import { DocumentsService } from '../../src/knowledge/ingest/documents.service.js';
import { createTestModule, TestModule } from '../support/test-module.js';
import { DEFAULT_SCOPE } from '../support/collections.js';

const COFFEE_MANUAL =
  '# Office coffee machine\n\n## Descaling\nDescale the office coffee machine every month: fill the water tank with descaling ' +
  'liquid, press the descale button and wait until the machine beeps three times.\n';
const QUESTION = 'How do I descale the office coffee machine?';
const USER = 'alice';

/** The ChatModule on its own, with the coffee manual in its knowledge base. */
async function chatModule(override?: Parameters<typeof createTestModule>[0]['override']): Promise<TestModule> {
  const t = await createTestModule({ imports: [ChatModule], env: { RAG_DENSE_BACKEND: 'memory' }, override });
  await t.module.get(DocumentsService).ingest('office-coffee-machine.md', Buffer.from(COFFEE_MANUAL), 'integration-test');
  return t;
}

const turnContext = (turn: PreparedTurn, mode: TurnMode) => new TurnContext({ userId: turn.userId, sessionId: turn.sessionId, runId: turn.runId, mode }, { scope: DEFAULT_SCOPE });

async function storedMessages(t: TestModule, sessionId: string): Promise<Array<{ type: string; content: string }>> {
  return t.dataSource.query('SELECT type, content FROM chat_messages WHERE session_id = $1 ORDER BY seq', [sessionId]);
}

async function runStatus(t: TestModule, runId: string): Promise<string | undefined> {
  const [row] = await t.dataSource.query('SELECT status FROM chat_runs WHERE id = $1', [runId]);
  return row?.status;
}

async function checkpointCount(t: TestModule, threadId: string): Promise<number> {
  const [{ n }] = await t.dataSource.query('SELECT count(*)::int AS n FROM checkpoints WHERE thread_id = $1', [threadId]);
  return n;
}

describe('ChatService on its own (ChatModule, real PostgreSQL and Redis, local model)', () => {
  let t: TestModule;
  let chat: ChatService;
  let events: RunEventsService;

  beforeAll(async () => {
    t = await chatModule();
    chat = t.module.get(ChatService);
    events = t.module.get(RunEventsService);
  });
  afterAll(() => t?.close());

  /** Every event of a run started here, up to its terminal one. */
  async function eventsOf(runId: string): Promise<RunEvent[]> {
    const received: RunEvent[] = [];
    for await (const event of await events.follow(runId, 0, { status: async () => 'running' })) received.push(event);
    return received;
  }

  it('runs a sync turn: commits the human and AI messages with the trace, and frees the run', async () => {
    const turn = await chat.prepare(USER, QUESTION);
    expect(await runStatus(t, turn.runId)).toBe('running');

    const result = await chat.runSync(turn, turnContext(turn, 'sync'));

    expect(result).toMatchObject({ session_id: turn.sessionId, run_id: turn.runId, pending_hitl: null });
    expect(result.response).toContain('press the descale button');
    expect(result.response).toContain('[office-coffee-machine.md]');
    expect(result.rag_trace).toMatchObject({ tool_used: true, tool_name: 'knowledge_search', query: QUESTION, final_empty: false });
    expect(await storedMessages(t, turn.sessionId)).toEqual([
      { type: 'human', content: QUESTION },
      { type: 'ai', content: result.response },
    ]);
    expect(await runStatus(t, turn.runId)).toBe('done');
    expect(await checkpointCount(t, turn.runId)).toBe(0);

    // The session's run slot is free: the next turn may start at once.
    const next = await chat.prepare(USER, 'Thanks!', turn.sessionId);
    const thanks = await chat.runSync(next, turnContext(next, 'sync'));
    expect(thanks.rag_trace).toBeNull();
    expect(await storedMessages(t, turn.sessionId)).toHaveLength(4);
  });

  it('runs a streamed turn: metadata first, retrieval steps, the tool, tokens, the trace, then done', async () => {
    const turn = await chat.prepare(USER, QUESTION);
    chat.startStreaming(turn, turnContext(turn, 'stream'));
    const received = await eventsOf(turn.runId);

    const names = received.map((event) => event.event);
    expect(received.map((event) => event.id)).toEqual(received.map((_, i) => i + 1));
    expect(received[0]).toMatchObject({ event: 'metadata', data: { run_id: turn.runId, session_id: turn.sessionId } });
    expect(names.slice(-2)).toEqual(['trace', 'done']);
    const stages = received.filter((event) => event.event === 'step').map((event) => (event.data as { stage: string }).stage);
    expect(stages).toEqual(expect.arrayContaining(['recall', 'retrieved']));
    const tools = received.filter((event) => event.event === 'tool').map((event) => event.data as { name: string; phase: string });
    expect(tools).toEqual([expect.objectContaining({ name: 'knowledge_search', phase: 'start' }), expect.objectContaining({ name: 'knowledge_search', phase: 'end' })]);
    // Steps come from inside the tool, tokens after it.
    expect(names.indexOf('step')).toBeGreaterThan(names.indexOf('tool'));
    expect(names.indexOf('token')).toBeGreaterThan(names.lastIndexOf('tool'));

    const done = received.at(-1)!.data as { response: string; session_id: string };
    const tokens = received.filter((event) => event.event === 'token').map((event) => (event.data as { text: string }).text);
    expect(tokens.join('')).toBe(done.response);
    expect(done).toMatchObject({ session_id: turn.sessionId, response: expect.stringContaining('[office-coffee-machine.md]') });
    expect((received.at(-2)!.data as { query: string }).query).toBe(QUESTION);

    await chat.drain();
    expect(await storedMessages(t, turn.sessionId)).toEqual([
      { type: 'human', content: QUESTION },
      { type: 'ai', content: done.response },
    ]);
    expect(await runStatus(t, turn.runId)).toBe('done');
  });
});

/** Run events whose `done` cannot be published (say Redis failed in a way the service does not absorb); records every attempt. */
class DoneFailsRunEvents extends RunEventsService {
  readonly attempted: Array<{ runId: string; event: SseEventType }> = [];

  override publish(runId: string, ...event: RunEventArgs): RunEvent {
    this.attempted.push({ runId, event: event[0] });
    if (event[0] === 'done') throw new Error('publishing done failed');
    return super.publish(runId, ...event);
  }
}

describe('ChatService: a failure after the commit', () => {
  let t: TestModule;

  beforeAll(async () => {
    t = await chatModule((builder) => builder.overrideProvider(RunEventsService).useClass(DoneFailsRunEvents));
  });
  afterAll(() => t?.close());

  it('reports the committed turn as a success and stores nothing twice', async () => {
    const chat = t.module.get(ChatService);
    const events = t.module.get(RunEventsService) as DoneFailsRunEvents;
    expect(events).toBeInstanceOf(DoneFailsRunEvents);

    const turn = await chat.prepare(USER, QUESTION);
    chat.startStreaming(turn, turnContext(turn, 'stream'));
    await chat.drain();

    const attempted = events.attempted.filter((attempt) => attempt.runId === turn.runId).map((attempt) => attempt.event);
    expect(attempted[0]).toBe('metadata');
    // The turn ended as committed: `done` was its last word, no `error` telling the client it failed.
    expect(attempted.slice(-2)).toEqual(['trace', 'done']);
    expect(attempted).not.toContain('error');
    const stored = await storedMessages(t, turn.sessionId);
    expect(stored.map((message) => message.type)).toEqual(['human', 'ai']);
    expect(stored[1].content).toContain('[office-coffee-machine.md]');
    expect(await runStatus(t, turn.runId)).toBe('done');
    // The cleanup after the commit still ran: the finished run leaves no checkpoint.
    expect(await checkpointCount(t, turn.runId)).toBe(0);

    // The session is usable: the next turn starts and commits after it.
    const next = await chat.prepare(USER, 'Thanks!', turn.sessionId);
    await chat.runSync(next, turnContext(next, 'sync'));
    expect(await storedMessages(t, turn.sessionId)).toHaveLength(4);
  });
});

describe('ChatService: an internal failure', () => {
  const SECRET = 'boom: secret driver text';
  let t: TestModule;

  beforeAll(async () => {
    // A graph that fails with a plain error, the way a driver or library bug surfaces: no code, internal text.
    const failingGraph = { stream: () => Promise.reject(new Error(SECRET)) };
    t = await chatModule((builder) => builder.overrideProvider(AgentFactory).useValue({ graph: failingGraph }));
  });
  afterAll(() => t?.close());

  it('fails the sync turn with internal_error, tells nothing of the internal text, and keeps the human message', async () => {
    const chat = t.module.get(ChatService);
    const turn = await chat.prepare(USER, QUESTION);

    const failure: unknown = await chat.runSync(turn, turnContext(turn, 'sync')).then(
      () => undefined,
      (error: unknown) => error,
    );

    expect(failure).toBeInstanceOf(TurnFailedError);
    const error = failure as TurnFailedError;
    expect(error.code).toBe('internal_error');
    expect(error.httpStatus).toBe(500);
    expect(error.messageSaved).toBe(true);
    expect(error.message).not.toMatch(/boom|secret|driver/i);
    expect(error.message).toMatch(/saved/);
    expect(await storedMessages(t, turn.sessionId)).toEqual([{ type: 'human', content: QUESTION }]);
    expect(await runStatus(t, turn.runId)).toBe('error');
    const [{ error: recorded }] = await t.dataSource.query('SELECT error FROM chat_runs WHERE id = $1', [turn.runId]);
    expect(recorded).not.toContain(SECRET);
  });

  it('ends the streamed turn with an internal_error event that carries no internal text', async () => {
    const chat = t.module.get(ChatService);
    const events = t.module.get(RunEventsService);
    const turn = await chat.prepare(USER, QUESTION);
    chat.startStreaming(turn, turnContext(turn, 'stream'));
    await chat.drain();

    const received: RunEvent[] = [];
    for await (const event of await events.follow(turn.runId, 0, { status: async () => 'error' })) received.push(event);
    expect(received.map((event) => event.event)).toEqual(['metadata', 'error']);
    expect(received[1].data).toMatchObject({ code: 'internal_error', message_saved: true });
    expect(JSON.stringify(received[1].data)).not.toMatch(/boom|secret|driver/i);
    expect(await storedMessages(t, turn.sessionId)).toEqual([{ type: 'human', content: QUESTION }]);
  });
});
