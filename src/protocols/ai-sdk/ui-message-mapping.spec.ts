import { type RunEvent, type RunEventType, trustedRunEvent } from '../../chat/run-event.js';
import { UiMessageMapper } from './ui-message-mapping.js';

// Hand-written, partial data (a trace of one field): taken on trust, as the recorded sequences in __fixtures__ are.
const events = (...items: Array<{ event: RunEventType; data: unknown }>): RunEvent[] => items.map((item, index) => trustedRunEvent(index + 1, item.event, item.data));
const run = { run_id: '3f1c0a52-0000-4000-8000-000000000001', session_id: '3f1c0a52-0000-4000-8000-000000000002' };

describe('UiMessageMapper', () => {
  it('opens one text part per stretch of tokens and pairs each tool end with its start', () => {
    const mapper = new UiMessageMapper();
    const chunks = events(
      { event: 'metadata', data: run },
      { event: 'token', data: { text: 'Let me look. ' } },
      { event: 'tool', data: { name: 'knowledge_search', phase: 'start', summary: { args: { query: 'a' } } } },
      { event: 'tool', data: { name: 'knowledge_search', phase: 'start', summary: { args: { query: 'b' } } } },
      { event: 'tool', data: { name: 'knowledge_search', phase: 'end', summary: { output: 'A' } } },
      { event: 'tool', data: { name: 'knowledge_search', phase: 'end', summary: { output: 'B' } } },
      { event: 'token', data: { text: 'Found' } },
      { event: 'token', data: { text: ' it.' } },
      { event: 'done', data: { response: 'Found it.', session_id: run.session_id } },
    ).flatMap((event) => mapper.map(event));
    expect(chunks).toEqual([
      { type: 'start', messageId: run.run_id, messageMetadata: run },
      { type: 'text-start', id: 'text-1' },
      { type: 'text-delta', id: 'text-1', delta: 'Let me look. ' },
      { type: 'text-end', id: 'text-1' },
      { type: 'data-tool', id: 'tool-1', data: expect.objectContaining({ phase: 'start', summary: { args: { query: 'a' } } }) },
      { type: 'data-tool', id: 'tool-2', data: expect.objectContaining({ phase: 'start', summary: { args: { query: 'b' } } }) },
      { type: 'data-tool', id: 'tool-1', data: expect.objectContaining({ phase: 'end', summary: { output: 'A' } }) },
      { type: 'data-tool', id: 'tool-2', data: expect.objectContaining({ phase: 'end', summary: { output: 'B' } }) },
      { type: 'text-start', id: 'text-2' },
      { type: 'text-delta', id: 'text-2', delta: 'Found' },
      { type: 'text-delta', id: 'text-2', delta: ' it.' },
      { type: 'text-end', id: 'text-2' },
      { type: 'finish', finishReason: 'stop', messageMetadata: run },
    ]);
  });

  it('sends an answer that came without tokens whole, and a pause as data-hitl plus its question as text', () => {
    const whole = new UiMessageMapper();
    expect(events({ event: 'metadata', data: run }, { event: 'done', data: { response: 'Hello.', session_id: run.session_id } }).flatMap((e) => whole.map(e))).toEqual([
      expect.objectContaining({ type: 'start' }),
      { type: 'text-start', id: 'text-1' },
      { type: 'text-delta', id: 'text-1', delta: 'Hello.' },
      { type: 'text-end', id: 'text-1' },
      expect.objectContaining({ type: 'finish', finishReason: 'stop' }),
    ]);

    const paused = new UiMessageMapper();
    const pending = { task_id: run.run_id, clarification_prompt: 'X1 or X2?', options: ['x1', 'x2'], hitl_type: 'choose' };
    const chunks = events(
      { event: 'metadata', data: run },
      { event: 'hitl', data: pending },
      { event: 'trace', data: { tool_used: true } },
      { event: 'done', data: { response: 'X1 or X2?', session_id: run.session_id } },
    ).flatMap((e) => paused.map(e));
    expect(chunks.map((chunk) => chunk.type)).toEqual(['start', 'data-hitl', 'text-start', 'text-delta', 'text-end', 'data-trace', 'finish']);
    expect(chunks[1]).toEqual({ type: 'data-hitl', id: 'hitl', data: pending });
    expect(chunks[3]).toMatchObject({ delta: 'X1 or X2?' });
  });

  it('ends a failed run with an error chunk carrying the code, then finish with whether the message was saved', () => {
    const mapper = new UiMessageMapper();
    const chunks = events(
      { event: 'metadata', data: run },
      { event: 'token', data: { text: 'Partial' } },
      { event: 'error', data: { code: 'model_timeout', message: 'The model did not answer in time.', message_saved: true } },
    ).flatMap((e) => mapper.map(e));
    expect(chunks.slice(-3)).toEqual([
      { type: 'text-end', id: 'text-1' },
      { type: 'error', errorText: 'model_timeout: The model did not answer in time.' },
      { type: 'finish', finishReason: 'error', messageMetadata: { ...run, message_saved: true } },
    ]);
  });
  it("carries the run's trace id in the message metadata, when tracing gave it one", () => {
    const traced = { ...run, trace_id: '0af7651916cd43dd8448eb211c80319c' };
    expect(new UiMessageMapper().map(events({ event: 'metadata', data: traced })[0])).toEqual([{ type: 'start', messageId: run.run_id, messageMetadata: traced }]);
  });
});
