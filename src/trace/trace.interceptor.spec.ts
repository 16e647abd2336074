import { of, lastValueFrom } from 'rxjs';
import { normalizeTracesIn, TraceNormalizationInterceptor } from './trace.interceptor.js';
import type { CallHandler, ExecutionContext } from '@nestjs/common';

describe('TraceNormalizationInterceptor', () => {
  it('normalizes rag_trace and pending_hitl wherever they appear in a body', async () => {
    const body = {
      session_id: 's',
      messages: [
        { type: 'ai', content: 'a', rag_trace: { tool_used: true, leaked: 'x' } },
        { type: 'human', content: 'q', rag_trace: 'not a trace' },
      ],
      pending_hitl: { task_id: 't', original_question: 'q', hitl_type: 'guess' },
    };
    const next: CallHandler = { handle: () => of(body) };
    const out = await lastValueFrom(new TraceNormalizationInterceptor().intercept({} as ExecutionContext, next));
    expect(out).toEqual({
      session_id: 's',
      messages: [
        { type: 'ai', content: 'a', rag_trace: { tool_used: true, protocol_version: 1 } },
        { type: 'human', content: 'q', rag_trace: null },
      ],
      pending_hitl: { task_id: 't', original_question: 'q' },
    });
  });

  it('leaves bodies without traces as they are', () => {
    expect(normalizeTracesIn({ a: [1, { b: 'c' }] })).toEqual({ a: [1, { b: 'c' }] });
    expect(normalizeTracesIn('text')).toBe('text');
  });
});
