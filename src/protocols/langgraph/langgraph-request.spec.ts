import { parseRunRequest, resumeText } from './langgraph-request.js';

describe('LangGraph run requests', () => {
  it.each([
    ['text', 'Aurora X2', 'Aurora X2'],
    ['{answer}', { answer: 'X2' }, 'X2'],
    ['approve (the suggested answer)', { decisions: [{ type: 'approve' }] }, 'first option'],
    ['edit', { decisions: [{ type: 'edit', edited_action: { name: 'clarify', args: { answer: 'X1' } } }] }, 'X1'],
    ['reject with a message', { decisions: [{ type: 'reject', message: 'neither, the X3' }] }, 'neither, the X3'],
    ['a map of interrupt id to answer', { 'task-1': 'X2' }, 'X2'],
    ['the older HumanResponse list', [{ type: 'response', args: 'X2' }], 'X2'],
  ])('reads command.resume as %s', (_name, resume, answer) => {
    expect(resumeText(resume, 'first option')).toBe(answer);
  });

  it.each([
    ['approve without options', { decisions: [{ type: 'approve' }] }, null],
    ['an edit without args.answer', { decisions: [{ type: 'edit', edited_action: { args: {} } }] }, 'x'],
    ['a decision of another kind', { decisions: [{ type: 'ignore' }] }, 'x'],
    ['null', null, 'x'],
  ])('refuses command.resume as %s', (_name, resume, suggested) => {
    expect(() => resumeText(resume, suggested)).toThrow();
  });

  it('takes the last human message of the input, with text blocks joined, and the modes, strategy and options', async () => {
    const request = await parseRunRequest(
      {
        assistant_id: 'agent',
        input: {
          messages: [
            { type: 'tool', content: 'Successfully handled tool call.', tool_call_id: 'x' },
            {
              type: 'human',
              content: [
                { type: 'text', text: 'How long' },
                { type: 'image', data: 'AAAA' },
                { type: 'text', text: 'is the warranty?' },
              ],
            },
          ],
        },
        stream_mode: 'messages-tuple',
        multitask_strategy: 'enqueue',
        config: { configurable: { temperature: 0.2, collection_ids: ['default'] } },
        context: { max_tokens: 100 },
        durability: 'async',
        strict_resume: true,
      },
      async () => null,
    );
    expect(request).toMatchObject({
      message: 'How long\nis the warranty?',
      resume: false,
      modes: new Set(['messages-tuple']),
      strategy: 'enqueue',
      onDisconnect: 'continue',
      collectionIds: ['default'],
      sampling: { temperature: 0.2, maxTokens: 100 },
    });
  });

  it('answers a resume with the suggested answer the thread gives, and refuses an unknown assistant', async () => {
    expect((await parseRunRequest({ command: { resume: { decisions: [{ type: 'approve' }] } } }, async () => 'Aurora X2')).message).toBe('Aurora X2');
    await expect(parseRunRequest({ assistant_id: 'other', input: { messages: [] } }, async () => null)).rejects.toMatchObject({ code: 'assistant_not_found' });
  });
});
