import type { RagTrace } from '../trace/trace.protocol.js';
import type { RunEventArgs } from './run-event.js';
import { answeredAttempt, GraphOutcome, HITL_RESUME_KEY, HITL_ROUNDS_KEY, PENDING_HITL_KEY, pausedAttempt, promptOf, TurnStart } from './turn-outcome.js';

const TRACE = { tool_used: true, tool_name: 'knowledge_search', query: 'Which machine?' } as unknown as RagTrace;
const turn = { runId: 'run-2', sessionId: 'session-1', userId: 'alice', message: 'the one on floor 3' };
const QUESTION = { original_question: 'How do I descale the machine?', clarification_prompt: 'Which machine do you mean?', options: ['floor 2', 'floor 3'] };

function recorder(): { events: RunEventArgs[]; emit: (...event: RunEventArgs) => void } {
  const events: RunEventArgs[] = [];
  return { events, emit: (...event) => events.push(event) };
}

const start = (over: Partial<TurnStart> = {}): TurnStart => ({ turn, threadId: 'run-2', resumed: false, rounds: 1, hadPending: false, ...over });
const outcome = (over: Partial<GraphOutcome> = {}): GraphOutcome => ({ answer: 'Press descale.', trace: TRACE, resumeState: null, ...over });

describe('answeredAttempt', () => {
  it('commits the human and AI messages, ends the run done, tells trace then done, and frees the thread', () => {
    const { events, emit } = recorder();
    const attempt = answeredAttempt(start(), outcome(), emit);
    expect(attempt.result).toEqual({ response: 'Press descale.', rag_trace: TRACE, session_id: 'session-1', pending_hitl: null, run_id: 'run-2' });
    expect(attempt.messages).toEqual([
      { type: 'human', content: turn.message, run_id: 'run-2' },
      { type: 'ai', content: 'Press descale.', rag_trace: TRACE, run_id: 'run-2' },
    ]);
    expect(attempt.end).toEqual({ status: 'done' });
    expect(attempt.options).toEqual({});
    expect(attempt.finishedThread).toBe('run-2');
    expect(events).toEqual([]);
    attempt.tell();
    expect(events).toEqual([
      ['trace', TRACE],
      ['done', { response: 'Press descale.', session_id: 'session-1' }],
    ]);
  });

  it('clears a paused task the session recorded, and frees the paused thread it answered', () => {
    const attempt = answeredAttempt(start({ threadId: 'run-1', resumed: true, hadPending: true }), outcome({ trace: null }), recorder().emit);
    expect(attempt.options).toEqual({ metadata: { [PENDING_HITL_KEY]: null, [HITL_RESUME_KEY]: null, [HITL_ROUNDS_KEY]: null } });
    expect(attempt.finishedThread).toBe('run-1');
    const { events, emit } = recorder();
    answeredAttempt(start(), outcome({ trace: null }), emit).tell();
    expect(events.map(([event]) => event)).toEqual(['done']);
  });
});

describe('pausedAttempt', () => {
  it('answers with the question, records the task in the session and keeps its thread', () => {
    const { events, emit } = recorder();
    const resumeState = { query: 'descale' } as unknown as GraphOutcome['resumeState'];
    const attempt = pausedAttempt(start(), { ...outcome({ resumeState }), interrupt: QUESTION }, emit);
    const pending = attempt.result.pending_hitl!;
    expect(pending).toMatchObject({ ...QUESTION, task_id: 'run-2', user_supplement: null });
    expect(attempt.result.response).toBe('Which machine do you mean?');
    expect(attempt.messages[1]).toEqual({ type: 'ai', content: 'Which machine do you mean?', rag_trace: TRACE, run_id: 'run-2' });
    expect(attempt.end).toEqual({ status: 'interrupted' });
    expect(attempt.options).toEqual({ metadata: { [PENDING_HITL_KEY]: pending, [HITL_RESUME_KEY]: resumeState, [HITL_ROUNDS_KEY]: 1 } });
    expect(attempt.finishedThread).toBeNull();
    attempt.tell();
    expect(events).toEqual([
      ['hitl', pending],
      ['trace', TRACE],
      ['done', { response: 'Which machine do you mean?', session_id: 'session-1' }],
    ]);
  });

  it('a resumed task asks again: the message is its supplement, the round counts up, the task keeps its thread', () => {
    const attempt = pausedAttempt(start({ threadId: 'run-1', resumed: true, rounds: 2 }), { ...outcome(), interrupt: QUESTION }, recorder().emit);
    expect(attempt.result.pending_hitl).toMatchObject({ task_id: 'run-1', user_supplement: turn.message });
    expect(attempt.options.metadata).toMatchObject({ [HITL_ROUNDS_KEY]: 3 });
  });

  it('refuses a pause without a valid question', () => {
    expect(() => pausedAttempt(start(), { ...outcome(), interrupt: { clarification_prompt: 'no original question' } }, recorder().emit)).toThrow(/invalid HITL payload/);
  });
});

describe('promptOf', () => {
  it('is the clarification prompt, else the original question, else empty', () => {
    expect(promptOf({ task_id: 't', original_question: 'Q?', clarification_prompt: 'P?' })).toBe('P?');
    expect(promptOf({ task_id: 't', original_question: 'Q?' })).toBe('Q?');
    expect(promptOf(null)).toBe('');
  });
});
