import { randomUUID } from 'node:crypto';
import { AIMessage, BaseMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import { Command } from '@langchain/langgraph';
import { AgentFactory, AgentGraph } from '../../src/agent/agent.factory.js';
import { AgentModule } from '../../src/agent/agent.module.js';
import { KNOWLEDGE_BUDGET_SPENT, KNOWLEDGE_TOOL_NAME } from '../../src/agent/tools/knowledge/knowledge-search.tool.js';
import type { KnowledgeToolOutput } from '../../src/agent/tools/knowledge/knowledge-tool.constants.js';
import { TurnContext } from '../../src/agent/turn-context.js';
import { DocumentsService } from '../../src/knowledge/ingest/documents.service.js';
import { createTestModule, TestModule } from '../support/test-module.js';
import { DEFAULT_SCOPE } from '../support/collections.js';

// Two manuals that differ only by a model name the question does not give, and one on another subject.
const DOCUMENTS: Record<string, string> = {
  'x1-router-manual.md':
    '# X1 Router manual\n\n## Factory reset\nTo reset the X1 router to its factory settings, press and hold the reset button ' +
    'on the back for 10 seconds until the status light blinks amber. The router then restarts with its factory settings.\n',
  'x2-router-manual.md':
    '# X2 Router manual\n\n## Factory reset\nTo reset the X2 router to its factory settings, push a paper clip into the reset ' +
    'pinhole for 5 seconds until the status light turns red. The router then restarts with its factory settings.\n',
  'office-coffee-machine.md':
    '# Office coffee machine\n\n## Descaling\nDescale the office coffee machine every month: fill the water tank with descaling ' +
    'liquid, press the descale button and wait until the machine beeps three times.\n',
};

const AMBIGUOUS = 'How do I reset the router to factory settings?';

type Update = Record<string, { messages?: BaseMessage[] } | undefined> & { __interrupt__?: Array<{ value?: Record<string, unknown> }> };

describe('Knowledge tool on its own (AgentModule, real PostgreSQL, local model)', () => {
  let t: TestModule;
  let graph: AgentGraph;

  beforeAll(async () => {
    t = await createTestModule({ imports: [AgentModule], env: { RAG_DENSE_BACKEND: 'memory' } });
    const documents = t.module.get(DocumentsService);
    for (const [name, text] of Object.entries(DOCUMENTS)) await documents.ingest(name, Buffer.from(text), 'integration-test');
    graph = t.module.get(AgentFactory).graph;
  });
  afterAll(() => t?.close());

  const turnContext = () => new TurnContext({ userId: 'alice', sessionId: randomUUID(), runId: randomUUID(), mode: 'sync' }, { scope: DEFAULT_SCOPE });

  /** One graph run of `turn` on `threadId`: its node updates, in order. */
  async function run(input: { messages: BaseMessage[] } | Command | null, turn: TurnContext, threadId: string): Promise<Update[]> {
    const updates: Update[] = [];
    const stream = await graph.stream(input as { messages: BaseMessage[] }, { configurable: { thread_id: threadId }, context: { turn }, streamMode: 'updates' });
    for await (const update of stream as AsyncIterable<Update>) updates.push(update);
    return updates;
  }

  const toolMessages = (updates: Update[]) => updates.flatMap((update) => update.tools?.messages ?? []).filter((m) => m instanceof ToolMessage);
  const finalAnswer = (updates: Update[]) => {
    const messages = updates.flatMap((update) => update.agent?.messages ?? []);
    const last = messages.at(-1);
    return last instanceof AIMessage && !last.tool_calls?.length ? String(last.content) : undefined;
  };

  /** The trace and a paused search's resume data: graph state channels, read from the checkpointer. */
  async function stateOf(threadId: string) {
    const { values } = await graph.getState({ configurable: { thread_id: threadId } });
    return { trace: values.ragTrace, resumeState: values.hitl?.resumeState ?? null, hitl: values.hitl };
  }

  /** Asks the ambiguous question on a new thread and returns the pause. */
  async function pause() {
    const threadId = randomUUID();
    const turn = turnContext();
    const updates = await run({ messages: [new HumanMessage(AMBIGUOUS)] }, turn, threadId);
    const interrupt = updates.find((update) => update.__interrupt__?.length)?.__interrupt__![0].value;
    turn.close();
    return { threadId, updates, interrupt, ...(await stateOf(threadId)) };
  }

  it('pauses a question whose evidence splits between two similar documents, with both as options', async () => {
    const { threadId, updates, interrupt, trace, resumeState } = await pause();

    expect(interrupt).toMatchObject({
      original_question: AMBIGUOUS,
      hitl_type: 'choose',
      retrieval_status: 'needs_choice',
      options: expect.arrayContaining(['X1 Router manual', 'X2 Router manual']),
      clarification_prompt: expect.any(String),
    });
    expect(finalAnswer(updates)).toBeUndefined(); // the turn stopped at the question, without an answer
    expect(toolMessages(updates)).toHaveLength(0);

    // The paused run waits in the PostgreSQL checkpointer, at the node that asks the user.
    const state = await graph.getState({ configurable: { thread_id: threadId } });
    expect(state.next).toEqual(['clarify']);
    const waiting = state.tasks.flatMap((task) => task.interrupts ?? []);
    expect(waiting).toHaveLength(1);
    expect(waiting[0].value).toEqual(interrupt);

    expect(trace).toMatchObject({ tool_used: true, grade_route: 'clarify', evidence_status: 'needs_choice', evidence_ambiguity: 'needs_choice' });
    expect(resumeState).toMatchObject({ original_question: AMBIGUOUS, hitl_route: 'choose', retrieval_status: 'needs_choice' });
  });

  it.each([
    { by: 'number', answer: (sources: string[]) => String(sources.indexOf('x2-router-manual.md') + 1), chosen: 'x2-router-manual.md' },
    { by: 'title', answer: () => 'x1 router MANUAL', chosen: 'x1-router-manual.md' },
    { by: 'file name', answer: () => 'x2-router-manual.md', chosen: 'x2-router-manual.md' },
  ])('resumes with an option picked by its $by, searched as its title and file words', async ({ answer, chosen }) => {
    const paused = await pause();
    const question = paused.interrupt as { options: string[]; option_sources: string[] };
    expect(question.option_sources.slice().sort()).toEqual(['x1-router-manual.md', 'x2-router-manual.md']);
    expect(question.options).toEqual(question.option_sources.map((source) => (source === 'x1-router-manual.md' ? 'X1 Router manual' : 'X2 Router manual')));
    const choice = answer(question.option_sources);
    const updates = await run(new Command({ resume: choice }), turnContext(), paused.threadId);
    const parsed = JSON.parse(String(toolMessages(updates)[0].content)) as KnowledgeToolOutput;
    const title = chosen === 'x1-router-manual.md' ? 'X1 Router manual' : 'X2 Router manual';
    expect(parsed.query).toBe(`${AMBIGUOUS} ${title} ${chosen.replace('.md', '').replace(/-/g, ' ')}`);
    expect(parsed.chunks[0].source).toBe(chosen);
    expect((await stateOf(paused.threadId)).trace).toMatchObject({ user_supplement: choice });
  });

  it.each([
    { choice: 'X1', chosen: 'x1-router-manual.md', other: 'x2-router-manual.md', fact: '10 seconds' },
    { choice: 'X2', chosen: 'x2-router-manual.md', other: 'x1-router-manual.md', fact: 'paper clip' },
  ])('resumes with the choice $choice and answers from $chosen', async ({ choice, chosen, other, fact }) => {
    const paused = await pause();
    expect(paused.interrupt).toBeDefined();
    expect(paused.hitl).toMatchObject({ question: paused.interrupt, supplements: [], waiting: true });

    // The user's answer comes in a later turn (another run, a context of its own), resuming the paused thread from its state.
    const resumed = turnContext();
    const updates = await run(new Command({ resume: choice }), resumed, paused.threadId);

    expect(updates.some((update) => update.__interrupt__?.length)).toBe(false);
    const [output] = toolMessages(updates);
    const parsed = JSON.parse(String(output.content)) as KnowledgeToolOutput;
    // The choice picks its option (a word only that option's title holds), searched as its title and file words.
    expect(parsed.query).toBe(`${AMBIGUOUS} ${choice} Router manual ${chosen.replace(/-/g, ' ').replace(/\.md$/, '')}`);
    expect(parsed.chunks[0].source).toBe(chosen);
    // The manual the choice set aside is not answered from.
    expect(parsed.chunks.map((chunk) => chunk.source)).not.toContain(other);
    const answer = finalAnswer(updates)!;
    // The offline model cites the passages it quotes, best first: the chosen manual leads.
    expect(answer).toContain(fact);
    expect(answer.match(/\[([^\]]+\.md)\]/)?.[1]).toBe(chosen);
    expect(answer.indexOf(fact)).toBeLessThan(answer.indexOf(`[${other}]`) === -1 ? Infinity : answer.indexOf(`[${other}]`));

    const { trace, hitl } = await stateOf(paused.threadId);
    expect(hitl).toMatchObject({ supplements: [choice], waiting: false });
    expect(trace).toMatchObject({
      tool_used: true,
      hitl_resumed: true,
      retrieval_stage: 'hitl',
      user_supplement: choice,
      query: AMBIGUOUS,
      pre_resume_snapshot: { grade_route: 'clarify', evidence_status: 'needs_choice', query: AMBIGUOUS },
    });
    expect(trace!.hitl_chunks![0].source).toBe(chosen);
    expect((await graph.getState({ configurable: { thread_id: paused.threadId } })).next).toEqual([]);
  });

  it('searches once per turn: a second call in the same turn is told the budget is spent, the next turn searches again', async () => {
    const question = 'How do I descale the office coffee machine?';
    const threadId = randomUUID();
    // A model asking for two searches at once: the agent's turn, as the agent node would have left it.
    await graph.updateState(
      { configurable: { thread_id: threadId } },
      {
        messages: [
          new HumanMessage(question),
          new AIMessage({
            content: '',
            tool_calls: [
              { id: 'call_first', name: KNOWLEDGE_TOOL_NAME, args: { query: question }, type: 'tool_call' },
              { id: 'call_second', name: KNOWLEDGE_TOOL_NAME, args: { query: 'coffee machine descaling' }, type: 'tool_call' },
            ],
          }),
        ],
      },
      'agent',
    );
    const turn = turnContext();
    const updates = await run(null, turn, threadId);

    const outputs = toolMessages(updates).map((message) => String(message.content));
    expect(outputs).toHaveLength(2);
    expect(outputs.filter((output) => output === KNOWLEDGE_BUDGET_SPENT)).toHaveLength(1);
    const searched = JSON.parse(outputs.find((output) => output !== KNOWLEDGE_BUDGET_SPENT)!) as KnowledgeToolOutput;
    expect(searched.chunks[0].source).toBe('office-coffee-machine.md');
    expect((await stateOf(threadId)).trace).toMatchObject({ tool_used: true, tool_name: KNOWLEDGE_TOOL_NAME });

    // The budget belongs to the turn: the next one searches again.
    const next = turnContext();
    const nextUpdates = await run({ messages: [new HumanMessage(question)] }, next, randomUUID());
    const [nextOutput] = toolMessages(nextUpdates).map((message) => String(message.content));
    expect(nextOutput).not.toBe(KNOWLEDGE_BUDGET_SPENT);
    expect(finalAnswer(nextUpdates)).toContain('[office-coffee-machine.md]');
  });
});
