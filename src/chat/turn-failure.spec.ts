import { GraphRecursionError } from '@langchain/langgraph';
import { CodedError, ErrorCode } from '../common/coded-error.js';
import { CommitOutcomeUnknownError } from '../database/commit-outcome.js';
import { SessionNotFoundError } from '../session/session.errors.js';
import { RunNotRunningError, TurnFailedError } from './chat.errors.js';
import { afterKeepFailed, classifyFailure, decideFailure, FailureDecision, failureMessage, statelessFailure, toldAfterCancel, toldAfterFailure } from './turn-failure.js';

class Coded extends CodedError {
  constructor(
    readonly code: ErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/** What pg throws when the server did not reply (isUnanswered), and what it throws when it refused a statement in time. */
const noReply = () => new Error('Query read timeout');
const statementTimeout = () => Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' });
const modelError = () => new Coded('model_error', 'The model failed.');
const shuttingDown = () => new Coded('shutting_down', 'This instance shut down before the turn could finish.');

describe('classifyFailure', () => {
  it.each([
    ['a deleted session', new SessionNotFoundError('s'), 'session_deleted'],
    ['a run cancelled in the database', new RunNotRunningError('r', 'cancelled'), 'cancelled'],
    ['a run whose row is gone', new RunNotRunningError('r', null), 'session_deleted'],
    ['a run given up', new RunNotRunningError('r', 'abandoned'), 'run_lost'],
    ['a run that ended otherwise', new RunNotRunningError('r', 'error'), 'run_lost'],
    ['a turn failure', new TurnFailedError('model_timeout', 'The model did not answer in time.', false), 'model_timeout'],
    ['a coded error', new Coded('model_timeout', 'The model did not answer in time.'), 'model_timeout'],
    ['the database not answering', noReply(), 'storage_unavailable'],
    ['a statement timeout', statementTimeout(), 'storage_unavailable'],
    ['the step limit', new GraphRecursionError('Recursion limit of 12 reached'), 'model_error'],
    ['anything else', new Error('boom: driver text'), 'internal_error'],
    ['a thrown non-error', 'boom', 'internal_error'],
  ])('%s → %s', (_, error, code) => {
    const classified = classifyFailure(error);
    expect(classified.code).toBe(code);
    expect(classified.reason).not.toMatch(/boom|driver|Query read|canceling statement|Recursion limit/);
  });

  it('keeps the words of a coded error', () => {
    expect(classifyFailure(modelError())).toEqual({ code: 'model_error', reason: 'The model failed.' });
  });
});

describe("what a failed turn tells of the user's message", () => {
  it.each([
    ['model_error', true, 'Your message was saved; retry to get an answer.'],
    ['model_error', false, 'Your message was NOT saved; please send it again.'],
    ['storage_unavailable', null, expect.stringMatching(/^Whether your message was saved is not known yet .*reload the session/)],
    ['cancelled', true, 'Your message was saved, marked cancelled.'],
    ['cancelled', false, 'Nothing was saved.'],
    ['session_deleted', false, 'Nothing was saved.'],
    ['run_lost', false, 'Nothing was saved.'],
  ] as const)('%s, saved %s', (code, saved, told) => {
    expect(toldAfterFailure(code, saved)).toEqual(told);
  });

  it('after the reason, ending it as a sentence', () => {
    expect(failureMessage('The model failed', 'Nothing was saved.')).toBe('The model failed. Nothing was saved.');
    expect(failureMessage('The model failed!', 'Nothing was saved.')).toBe('The model failed! Nothing was saved.');
    expect(failureMessage('模型失败。', 'Nothing was saved.')).toBe('模型失败。 Nothing was saved.');
  });

  it.each([
    [true, true, 'Your message and the answer so far were saved, marked cancelled.'],
    [true, false, 'Your message was saved, marked cancelled.'],
    [false, true, 'Nothing was saved.'],
    [null, false, 'Whether your message was saved is not known yet: reload the session.'],
  ] as const)('a cancelled turn, saved %s, with an answer so far %s', (saved, keptAnswer, told) => {
    expect(toldAfterCancel(saved, keptAnswer)).toBe(told);
  });
});

describe('statelessFailure', () => {
  const aborted = (reason?: unknown) => {
    const controller = new AbortController();
    controller.abort(reason);
    return controller.signal;
  };

  it('a turn the client left is cancelled', () => {
    const failure = statelessFailure(new Error('AbortError'), aborted());
    expect(failure).toMatchObject({ code: 'cancelled', message: 'The turn was cancelled. Nothing was saved.', messageSaved: false });
  });

  it('a turn aborted with a coded reason fails with it', () => {
    const failure = statelessFailure(new Error('AbortError'), aborted(shuttingDown()));
    expect(failure).toMatchObject({ code: 'shutting_down', message: 'This instance shut down before the turn could finish. Nothing was saved.', messageSaved: false });
  });

  it('a failure of its own is classified, its internal text not told', () => {
    const failure = statelessFailure(new Error('boom'), new AbortController().signal);
    expect(failure).toMatchObject({ code: 'internal_error', message: 'The turn failed on an internal error. Nothing was saved.', messageSaved: false });
  });
});

describe('decideFailure', () => {
  it.each(['done', 'interrupted'])('a turn whose sent commit is found %s landed', (status) => {
    expect(decideFailure(new RunNotRunningError('r', status), new RunNotRunningError('r', status), true)).toEqual({ kind: 'landed' });
  });

  it('a run ended before the turn sent its commit did not land: it was lost', () => {
    expect(decideFailure(new RunNotRunningError('r', 'done'), new Error('aborted'), false)).toMatchObject({ kind: 'told', code: 'run_lost', saved: false, endLater: null });
  });

  it('a run the cancel ended itself kept the message', () => {
    expect(decideFailure(new Error('aborted'), new RunNotRunningError('r', 'cancelled'), true)).toMatchObject({ kind: 'told', code: 'cancelled', saved: true, endLater: null });
  });

  it.each([
    ['session deleted', new SessionNotFoundError('s'), 'session_deleted'],
    ['run given up', new RunNotRunningError('r', 'abandoned'), 'run_lost'],
  ])('%s: nothing is kept', (_, cause, code) => {
    expect(decideFailure(cause, new Error('aborted'), false)).toMatchObject({ kind: 'told', code, saved: false, endLater: null });
  });

  it('the database not answering before anything was sent: nothing kept, the end recorded later', () => {
    expect(decideFailure(noReply(), noReply(), false)).toEqual({
      kind: 'told',
      code: 'storage_unavailable',
      reason: 'The database did not answer in time.',
      saved: false,
      endLater: { status: 'error', error: 'The database did not answer in time.' },
    });
  });

  it('a COMMIT without an answer keeps the message with a bounded read-back', () => {
    const commitUnknown = new CommitOutcomeUnknownError(noReply());
    expect(decideFailure(commitUnknown, commitUnknown, true)).toEqual({
      kind: 'keep',
      code: 'storage_unavailable',
      reason: 'The database did not answer in time.',
      end: { status: 'error', error: 'The database did not answer in time.' },
      readBack: true,
    });
  });

  it('a model failure keeps the message, the run ended as error', () => {
    expect(decideFailure(modelError(), modelError(), false)).toEqual({
      kind: 'keep',
      code: 'model_error',
      reason: 'The model failed.',
      end: { status: 'error', error: 'The model failed.' },
      readBack: false,
    });
  });

  it('a database that answered with an error keeps the message', () => {
    expect(decideFailure(statementTimeout(), statementTimeout(), false)).toMatchObject({ kind: 'keep', code: 'storage_unavailable', readBack: false });
  });

  it('a turn the shutdown cut off ends as interrupted', () => {
    expect(decideFailure(shuttingDown(), new Error('aborted'), false)).toMatchObject({ kind: 'keep', code: 'shutting_down', end: { status: 'interrupted' } });
  });
});

describe('afterKeepFailed', () => {
  const keep = (readBack: boolean): Extract<FailureDecision, { kind: 'keep' }> => ({
    kind: 'keep',
    code: 'model_error',
    reason: 'The model failed.',
    end: { status: 'error', error: 'The model failed.' },
    readBack,
  });

  it.each(['done', 'interrupted'])('the read-back finds the run %s: the turn landed', (status) => {
    expect(afterKeepFailed(keep(true), new RunNotRunningError('r', status), true)).toEqual({ kind: 'landed' });
  });

  it('a run found done when the turn had sent no commit was lost', () => {
    expect(afterKeepFailed(keep(false), new RunNotRunningError('r', 'done'), false)).toMatchObject({ kind: 'told', code: 'run_lost', saved: false, endLater: null });
  });

  it('a run cancelled meanwhile kept the message', () => {
    expect(afterKeepFailed(keep(false), new RunNotRunningError('r', 'cancelled'), false)).toMatchObject({ kind: 'told', code: 'cancelled', saved: true, endLater: null });
  });

  it('a session deleted meanwhile keeps nothing', () => {
    expect(afterKeepFailed(keep(false), new SessionNotFoundError('s'), false)).toMatchObject({ kind: 'told', code: 'session_deleted', saved: false, endLater: null });
  });

  it('a keeping that failed surely: not saved, the end recorded later', () => {
    expect(afterKeepFailed(keep(false), statementTimeout(), false)).toEqual({
      kind: 'told',
      code: 'model_error',
      reason: 'The model failed.',
      saved: false,
      endLater: { status: 'error', error: 'The model failed.' },
    });
  });

  it("the keeping's own COMMIT without an answer: not known", () => {
    expect(afterKeepFailed(keep(false), new CommitOutcomeUnknownError(noReply()), false)).toMatchObject({ kind: 'told', saved: null, endLater: { status: 'error' } });
  });

  it("after the turn's COMMIT without an answer, a read-back cut short: not known", () => {
    expect(afterKeepFailed(keep(true), new Error('the read-back of the turn did not finish in time'), true)).toMatchObject({
      kind: 'told',
      saved: null,
      endLater: { status: 'error' },
    });
  });
});
