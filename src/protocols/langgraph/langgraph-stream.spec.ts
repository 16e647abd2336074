import { runEvent } from '../../chat/run-event.js';
import { humanMessage } from './langgraph-messages.js';
import { LgStreamMapper, parseLgLastEventId, RunView } from './langgraph-stream.js';

const RUN = '11111111-1111-4111-8111-111111111111';
const view = (): RunView => ({
  runId: RUN,
  threadId: '22222222-2222-4222-8222-222222222222',
  userId: 'u',
  before: [],
  question: humanMessage(`run-${RUN}-input`, 'Q?'),
  finalMessages: async () => [humanMessage(`run-${RUN}-input`, 'Q?'), { ...humanMessage(`run-${RUN}`, 'Answer.'), type: 'ai' }],
});
const EVENTS = [
  runEvent(1, 'metadata', { run_id: RUN, session_id: 's' }),
  runEvent(2, 'token', { text: 'Ans' }),
  runEvent(3, 'token', { text: 'wer.' }),
  runEvent(4, 'done', { response: 'Answer.', session_id: 's' }),
];

/** The SSE blocks a mapper writes for the events, as {id, event}. */
async function written(mapper: LgStreamMapper): Promise<Array<{ id: string; event: string }>> {
  let text = '';
  for (const event of EVENTS) text += await mapper.sse(event);
  return text
    .split('\n\n')
    .filter(Boolean)
    .map((block) => ({ event: /^event: (.*)$/m.exec(block)![1], id: /^id: (.*)$/m.exec(block)![1] }));
}

describe('LangGraph run stream mapping', () => {
  it.each([
    [undefined, { afterEvent: 0, skip: 0 }],
    ['-1', { afterEvent: 0, skip: 0 }],
    ['3', { afterEvent: 3, skip: 0 }],
    ['3_0', { afterEvent: 2, skip: 1 }],
    ['12_4', { afterEvent: 11, skip: 5 }],
    ['abc', null],
    ['-2', null],
    ['1_99999', null],
    ['1e3', null],
  ])('reads Last-Event-ID %p', (header, cursor) => {
    expect(parseLgLastEventId(header)).toEqual(cursor);
  });

  it('gives every part an id `<event>_<part>` whatever the modes, and resumes exactly after the last part received', async () => {
    const all = await written(new LgStreamMapper(view(), new Set(['values', 'messages-tuple', 'updates', 'custom', 'events', 'debug'])));
    expect(all[0]).toEqual({ event: 'metadata', id: '1_0' });
    expect(all.at(-1)).toEqual({ event: 'end', id: expect.stringMatching(/^4_\d+$/) });
    expect(new Set(all.map((part) => part.id)).size).toBe(all.length);
    for (let at = 0; at < all.length; at += 1) {
      const rest = await written(new LgStreamMapper(view(), new Set(['values', 'messages-tuple', 'updates', 'custom', 'events', 'debug']), parseLgLastEventId(all[at].id)!));
      expect(rest).toEqual(all.slice(at + 1));
    }
    // Fewer modes: the same ids for the parts that remain.
    const some = await written(new LgStreamMapper(view(), new Set(['messages-tuple'])));
    expect(some.map((part) => part.event)).toEqual(['metadata', 'messages', 'messages', 'end']);
    for (const part of some) expect(all).toContainEqual(part);
  });

  it('streams the answer as deltas under the id its message has in the final values', async () => {
    const mapper = new LgStreamMapper(view(), new Set(['messages-tuple', 'values']));
    let text = '';
    for (const event of EVENTS) text += await mapper.sse(event);
    const data = text
      .split('\n\n')
      .filter(Boolean)
      .map((block) => ({ event: /^event: (.*)$/m.exec(block)![1], data: JSON.parse(/^data: (.*)$/m.exec(block)![1]) }));
    const chunks = data.filter((part) => part.event === 'messages').map((part) => part.data[0]);
    expect(chunks.map((chunk) => chunk.content).join('')).toBe('Answer.');
    const final = data.filter((part) => part.event === 'values').at(-1)!.data.messages;
    expect(new Set(chunks.map((chunk) => chunk.id))).toEqual(new Set([final.at(-1).id]));
  });
  it("passes the run's trace id on in the metadata event, when tracing gave it one", async () => {
    const metadataOf = async (data: Record<string, unknown>) => {
      const text = await new LgStreamMapper(view(), new Set(['values'])).sse(runEvent(1, 'metadata', data as { run_id: string; session_id: string }));
      return JSON.parse(/^event: metadata\ndata: (.*)$/m.exec(text)![1]) as Record<string, unknown>;
    };
    const traceId = '0af7651916cd43dd8448eb211c80319c';
    expect(await metadataOf({ run_id: RUN, session_id: 's', trace_id: traceId })).toEqual({ run_id: RUN, thread_id: view().threadId, attempt: 1, trace_id: traceId });
    expect(await metadataOf({ run_id: RUN, session_id: 's' })).toEqual({ run_id: RUN, thread_id: view().threadId, attempt: 1 });
  });
});
