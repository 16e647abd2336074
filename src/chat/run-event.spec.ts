import { getSchemaPath } from '@nestjs/swagger';
import { isTerminal, parseRunEvent, TERMINAL_EVENTS } from './run-event.js';
import { SSE_EVENT_MODELS, STREAM_EVENT_SCHEMA } from './sse-events.dto.js';
import { SSE_EVENT_TYPES } from './sse.js';

describe('the RunEvent union and the OpenAPI event schemas', () => {
  it('name the same events, in the same order', () => {
    expect(Object.keys(SSE_EVENT_MODELS)).toEqual([...SSE_EVENT_TYPES]);
  });

  it('give each event the schema of the model its data is typed by', () => {
    const documented = STREAM_EVENT_SCHEMA.oneOf.map((variant) => [variant.properties.event.enum[0], variant.properties.data.$ref]);
    expect(documented).toEqual(Object.entries(SSE_EVENT_MODELS).map(([event, model]) => [event, getSchemaPath(model)]));
  });

  it('end a stream on done and error only', () => {
    expect([...TERMINAL_EVENTS].sort()).toEqual(['done', 'error']);
    expect(isTerminal(parseRunEvent('{"id":3,"event":"done","data":{"response":"a","session_id":"s"}}'))).toBe(true);
    expect(isTerminal(parseRunEvent('{"id":2,"event":"token","data":{"text":"a"}}'))).toBe(false);
  });
});
