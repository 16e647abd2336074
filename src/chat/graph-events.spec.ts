import { AIMessage, AIMessageChunk, HumanMessage, ToolMessage } from '@langchain/core/messages';
import type { RagTrace } from '../trace/trace.protocol.js';
import { GraphEventTranslator, GraphStreamChunk, textContent } from './graph-events.js';
import type { RunEventArgs } from './run-event.js';

const TRACE = { tool_used: true, tool_name: 'knowledge_search', query: 'How do I descale?' } as unknown as RagTrace;

function translate(chunks: GraphStreamChunk[]): { events: RunEventArgs[]; translator: GraphEventTranslator } {
  const events: RunEventArgs[] = [];
  const translator = new GraphEventTranslator((...event) => events.push(event));
  for (const chunk of chunks) translator.handle(chunk);
  return { events, translator };
}

const token = (text: string, node = 'agent'): GraphStreamChunk => ['messages', [new AIMessageChunk({ content: text }), { langgraph_node: node }]];
const toolCall = (): GraphStreamChunk => [
  'updates',
  { agent: { messages: [new AIMessage({ content: '', tool_calls: [{ id: 'call-1', name: 'knowledge_search', args: { query: 'How do I descale?' } }] })] } },
];
const toolResult = (content: string, status?: 'error'): GraphStreamChunk => [
  'updates',
  { tools: { messages: [new ToolMessage({ content, tool_call_id: 'call-1', name: 'knowledge_search', status })], ragTrace: TRACE } },
];
const step = (stage: string): GraphStreamChunk => ['custom', { type: 'step', stage, label: `the ${stage} stage`, elapsed_ms: 3, total_ms: 7 }];

describe('GraphEventTranslator', () => {
  it('translates a streamed turn with a tool call: tool start, steps, tool end, tokens; keeps the trace and the answer', () => {
    const { events, translator } = translate([
      toolCall(),
      step('recall'),
      step('retrieved'),
      toolResult('Descale every month. [manual.md]'),
      token('Descale '),
      token('monthly.'),
      ['updates', { agent: { messages: [new AIMessage({ content: 'Descale monthly.' })] } }],
    ]);

    expect(events).toEqual([
      ['tool', { name: 'knowledge_search', phase: 'start', summary: { args: { query: 'How do I descale?' } } }],
      ['step', { stage: 'recall', label: 'the recall stage', elapsed_ms: 3, total_ms: 7 }],
      ['step', { stage: 'retrieved', label: 'the retrieved stage', elapsed_ms: 3, total_ms: 7 }],
      ['tool', { name: 'knowledge_search', phase: 'end', summary: { output: 'Descale every month. [manual.md]', truncated: false } }],
      ['token', { text: 'Descale ' }],
      ['token', { text: 'monthly.' }],
    ]);
    expect(translator.answerSoFar).toBe('Descale monthly.');
    expect(translator.answer).toBe('Descale monthly.');
    expect(translator.trace).toBe(TRACE);
    expect(translator.interrupt).toBeUndefined();
  });

  it('answers a sync turn (node updates only) with the agent’s last message', () => {
    const { events, translator } = translate([toolCall(), toolResult('found'), ['updates', { agent: { messages: [new AIMessage({ content: 'The answer.' })] } }]]);
    expect(events.map(([event]) => event)).toEqual(['tool', 'tool']);
    expect(translator.answerSoFar).toBe('');
    expect(translator.answer).toBe('The answer.');
  });

  it('keeps what the model streamed as the answer when no final message came (a cancelled turn)', () => {
    const { translator } = translate([token('Half an '), token('answer')]);
    expect(translator.answerSoFar).toBe('Half an answer');
    expect(translator.answer).toBe('Half an answer');
    expect(translator.trace).toBeNull();
  });

  it('streams only the agent node’s model tokens, and no empty ones', () => {
    const { events } = translate([
      token('judged', 'tools'),
      token(''),
      ['messages', [new HumanMessage('not the model'), { langgraph_node: 'agent' }]],
      ['messages', [new AIMessageChunk({ content: [{ type: 'text', text: 'parts' }] }), { langgraph_node: 'agent' }]],
    ]);
    expect(events).toEqual([['token', { text: 'parts' }]]);
  });

  it('tells a failed tool call as failed, without its text', () => {
    const { events } = translate([toolResult('Error: connection refused at 10.0.0.3', 'error')]);
    expect(events).toEqual([['tool', { name: 'knowledge_search', phase: 'end', summary: { failed: true } }]]);
  });

  it('ignores custom chunks that are not steps, and unknown modes', () => {
    const { events } = translate([
      ['custom', { type: 'progress', stage: 'x' }],
      ['values', { messages: [] }],
    ]);
    expect(events).toEqual([]);
  });

  it('keeps the question of a paused run and the trace the tools wrote last', () => {
    const question = { original_question: 'Which machine?', clarification_prompt: 'Which coffee machine do you mean?' };
    const { translator } = translate([toolCall(), toolResult('ambiguous'), ['updates', { tools: { ragTrace: null } }], ['updates', { __interrupt__: [{ value: question }] }]]);
    expect(translator.interrupt).toEqual(question);
    expect(translator.trace).toBeNull();
  });

  it('an interrupt without a value pauses with an empty one', () => {
    expect(translate([['updates', { __interrupt__: [{}] }]]).translator.interrupt).toEqual({});
  });
});

describe('textContent', () => {
  it('joins the text parts of a message', () => {
    expect(
      textContent(
        new AIMessage({
          content: [
            { type: 'text', text: 'a' },
            { type: 'image_url', image_url: 'x' },
            { type: 'text', text: 'b' },
          ],
        }),
      ),
    ).toBe('ab');
    expect(textContent(new AIMessage('plain'))).toBe('plain');
  });
  it('keeps the state after the last completed step (stream mode values) as the final values; a pause chunk is not a state', () => {
    const afterTools = { messages: [new HumanMessage('Which warranty?')], ragTrace: TRACE, hitl: null };
    const { translator } = translate([
      ['values', { messages: [new HumanMessage('Which warranty?')], ragTrace: null, hitl: null }],
      ['values', afterTools],
      ['values', { __interrupt__: [{ value: { hitl_type: 'choose' } }] }],
    ]);
    expect(translator.finalValues).toBe(afterTools);
    expect(translate([toolCall()]).translator.finalValues).toBeUndefined();
  });
});
