import { readFileSync } from 'node:fs';
import { parseRunEvent, type RunEvent } from '../../chat/run-event.js';
import { CompletionChunks, hitlContent } from './completion-stream.js';

/** A run's events as recorded from the service's Redis stream during the e2e suite (one JSON event a line). */
function recordedRun(name: string): RunEvent[] {
  const text = readFileSync(new URL(`../__fixtures__/run-events/${name}.jsonl`, import.meta.url), 'utf8');
  return text.trim().split('\n').map(parseRunEvent);
}

const identity = { id: 'chatcmpl-test', created: 1_700_000_000, model: 'agentic-rag' };
const usage = { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19, estimated: true };

/** What a streamed completion of the run writes, as the controller drives the adapter; its `data:` payloads in order. */
function completionOf(events: RunEvent[], includeUsage = true): string[] {
  const chunks = new CompletionChunks(identity, includeUsage);
  let wire = chunks.role();
  for (const event of events) {
    wire += event.event === 'done' ? chunks.finish('stop', { rag_trace: chunks.trace, pending_hitl: chunks.pending, session_id: event.data.session_id }, usage) : chunks.map(event);
  }
  const frames = wire.split('\n\n');
  expect(frames.pop()).toBe('');
  return frames.map((frame) => {
    expect(frame.startsWith('data: ')).toBe(true);
    return frame.slice('data: '.length);
  });
}

const parsed = (frames: string[]) => frames.filter((frame) => frame !== '[DONE]').map((frame) => JSON.parse(frame));
const contentOf = (frames: string[]) =>
  parsed(frames)
    .map((chunk) => chunk.choices?.[0]?.delta?.content ?? '')
    .join('');

describe('the OpenAI chat.completion.chunk adapter on recorded runs', () => {
  it.each(['plain-answer', 'tool-call', 'trace-with-steps'])('%s: the role, the answer as content deltas, the final chunk with the trace, usage, [DONE]', (name) => {
    const events = recordedRun(name);
    const done = events.at(-1)!;
    if (done.event !== 'done') throw new Error(`${name} does not end with done`);
    const frames = completionOf(events);
    expect(frames.at(-1)).toBe('[DONE]');
    const chunks = parsed(frames);
    expect(chunks[0]).toEqual({
      ...identity,
      object: 'chat.completion.chunk',
      system_fingerprint: null,
      usage: null,
      choices: [{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }],
    });
    expect(contentOf(frames)).toBe(done.data.response);
    expect(new Set(chunks.map((chunk) => chunk.id))).toEqual(new Set([identity.id]));
    const [final, usageChunk] = chunks.slice(-2);
    expect(final.choices[0]).toEqual({ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' });
    const trace = events.find((event) => event.event === 'trace');
    expect(final.rag_trace).toEqual(trace ? trace.data : null);
    expect(final.session_id).toBe(done.data.session_id);
    expect(usageChunk).toMatchObject({ choices: [], usage });
  });

  it('plain-answer: an answer without a tool call carries no trace and no pause on its final chunk', () => {
    const events = recordedRun('plain-answer');
    expect(events.some((event) => event.event === 'tool' || event.event === 'trace')).toBe(false);
    const [final] = parsed(completionOf(events)).slice(-2);
    expect(final.rag_trace).toBeNull();
    expect(final.pending_hitl).toBeNull();
  });

  it('hitl-pause: the question and its options are the content, the pause rides on the final chunk', () => {
    const events = recordedRun('hitl-pause');
    const hitl = events.find((event) => event.event === 'hitl');
    if (hitl?.event !== 'hitl') throw new Error('no hitl event');
    const frames = completionOf(events, false);
    expect(contentOf(frames)).toBe(hitlContent(hitl.data));
    const final = parsed(frames).at(-1);
    expect(final.pending_hitl).toEqual(hitl.data);
    expect(final.choices[0].finish_reason).toBe('stop');
    expect(final).not.toHaveProperty('usage');
    expect(frames.at(-1)).toBe('[DONE]');
  });

  it.each([
    ['error-model-timeout', 'server_error'],
    ['cancel-mid-answer', 'invalid_request_error'],
  ])('%s: ends with an {error} event (%s) carrying the code and message_saved, and no [DONE]', (name, type) => {
    const events = recordedRun(name);
    const error = events.at(-1)!;
    if (error.event !== 'error') throw new Error(`${name} does not end with error`);
    const frames = completionOf(events);
    expect(frames).not.toContain('[DONE]');
    expect(JSON.parse(frames.at(-1)!)).toEqual({
      error: { message: error.data.message, type, param: null, code: error.data.code, message_saved: error.data.message_saved },
    });
  });
});
