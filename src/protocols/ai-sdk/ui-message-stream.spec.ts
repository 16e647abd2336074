import { readFileSync } from 'node:fs';
import { createUIMessageStream, JsonToSseTransformStream, readUIMessageStream } from 'ai';
import { parseRunEvent, type RunEvent } from '../../chat/run-event.js';
import { type RagUIMessage, type RagUIMessageChunk, UI_MESSAGE_STREAM_DONE, UiMessageMapper } from './ui-message-mapping.js';

/** A run's events as recorded from the service's Redis stream during the e2e suite (one JSON event a line). */
function recordedRun(name: string): RunEvent[] {
  const text = readFileSync(new URL(`../__fixtures__/run-events/${name}.jsonl`, import.meta.url), 'utf8');
  return text.trim().split('\n').map(parseRunEvent);
}

const RECORDED = ['plain-answer', 'tool-call', 'trace-with-steps', 'hitl-pause', 'error-model-timeout', 'cancel-mid-answer'];

/** What the adapter writes for a whole run: its frames, then `[DONE]`. */
function wire(events: RunEvent[]): string {
  const mapper = new UiMessageMapper();
  return events.map((event) => mapper.frames(event)).join('') + UI_MESSAGE_STREAM_DONE;
}

function chunksOf(events: RunEvent[]): RagUIMessageChunk[] {
  const mapper = new UiMessageMapper();
  return events.flatMap((event) => mapper.map(event));
}

/** The same chunks framed by the AI SDK itself (what pipeUIMessageStreamToResponse wrote before), less its transport comments. */
async function framedBySdk(chunks: RagUIMessageChunk[]): Promise<string> {
  const stream = createUIMessageStream<RagUIMessage>({ execute: ({ writer }) => chunks.forEach((chunk) => writer.write(chunk)) });
  let text = '';
  for await (const piece of stream.pipeThrough(new JsonToSseTransformStream())) text += piece;
  return text;
}

async function messageOf(chunks: RagUIMessageChunk[]): Promise<RagUIMessage | undefined> {
  const stream = new ReadableStream<RagUIMessageChunk>({
    start(controller) {
      chunks.forEach((chunk) => controller.enqueue(chunk));
      controller.close();
    },
  });
  let last: RagUIMessage | undefined;
  for await (const message of readUIMessageStream<RagUIMessage>({ stream, terminateOnError: false })) last = message;
  return last;
}

const textOf = (message: RagUIMessage | undefined) => (message?.parts ?? []).flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('');

describe('the AI SDK UI message stream adapter on recorded runs', () => {
  it.each(RECORDED)('%s: frames each chunk as the AI SDK does, ending with [DONE]', async (name) => {
    const events = recordedRun(name);
    expect(wire(events)).toBe(await framedBySdk(chunksOf(events)));
    expect(wire(events)).toMatch(/^data: \{"type":"start",.*\n\ndata: \{"type":"finish",[^\n]*\n\ndata: \[DONE\]\n\n$/s);
  });

  it.each(['plain-answer', 'tool-call', 'trace-with-steps'])('%s: the message the SDK assembles says the answer, with one tool part per call', async (name) => {
    const events = recordedRun(name);
    const done = events.at(-1)!;
    if (done.event !== 'done') throw new Error(`${name} does not end with done`);
    const message = await messageOf(chunksOf(events));
    expect(textOf(message)).toBe(done.data.response);
    const calls = events.filter((event) => event.event === 'tool' && event.data.phase === 'start').length;
    expect(message?.parts.filter((part) => part.type === 'data-tool')).toHaveLength(calls);
    expect(message?.parts.filter((part) => part.type === 'data-step')).toHaveLength(events.filter((event) => event.event === 'step').length);
    expect(message?.metadata).toEqual(events[0].data);
    const trace = events.find((event) => event.event === 'trace');
    expect(message?.parts.find((part) => part.type === 'data-trace')?.data).toEqual(trace?.data);
  });

  it('plain-answer: an answer without a tool call is one text part and no tool, step or trace parts', async () => {
    const events = recordedRun('plain-answer');
    expect(events.map((event) => event.event).filter((type) => type !== 'token')).toEqual(['metadata', 'done']);
    const chunks = chunksOf(events);
    expect(chunks.filter((chunk) => chunk.type === 'text-start')).toHaveLength(1);
    const message = await messageOf(chunks);
    expect(message?.parts.map((part) => part.type)).toEqual(['text']);
  });

  it('hitl-pause: the question put to the user is the text, and its state a data-hitl part', async () => {
    const events = recordedRun('hitl-pause');
    const hitl = events.find((event) => event.event === 'hitl');
    if (hitl?.event !== 'hitl') throw new Error('no hitl event');
    const message = await messageOf(chunksOf(events));
    expect(textOf(message)).toBe(hitl.data.clarification_prompt);
    expect(message?.parts.find((part) => part.type === 'data-hitl')?.data).toEqual(hitl.data);
  });

  it.each(['error-model-timeout', 'cancel-mid-answer'])('%s: ends with an error chunk "<code>: <message>" and finish(error) saying whether the message was saved', (name) => {
    const events = recordedRun(name);
    const error = events.at(-1)!;
    if (error.event !== 'error') throw new Error(`${name} does not end with error`);
    const chunks = chunksOf(events);
    expect(chunks.slice(-2)).toEqual([
      { type: 'error', errorText: `${error.data.code}: ${error.data.message}` },
      { type: 'finish', finishReason: 'error', messageMetadata: { ...events[0].data, message_saved: error.data.message_saved } },
    ]);
    // Every text part opened is closed before the error.
    const opened = chunks.filter((chunk) => chunk.type === 'text-start').length;
    expect(chunks.filter((chunk) => chunk.type === 'text-end')).toHaveLength(opened);
  });
});
