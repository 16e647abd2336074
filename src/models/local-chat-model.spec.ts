import { AIMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import { LocalChatModel, streamPieces } from './local-chat-model.js';
import { composeFromPassages, composeWeather } from './local-compose.js';
import { detectIntent } from './local-intent.js';

describe('local model rules', () => {
  it.each([
    ['你好', { kind: 'greeting' }],
    ['Hello!', { kind: 'greeting' }],
    ['谢谢', { kind: 'thanks' }],
    ['北京今天天气怎么样？', { kind: 'weather', location: '北京' }],
    ['请问广州明天会不会下雨', { kind: 'weather', location: '广州' }],
    ['What is the weather in New York today?', { kind: 'weather', location: 'New York' }],
    ['Berlin weather', { kind: 'weather', location: 'Berlin' }],
    ["what's the weather like?", { kind: 'weather', location: null }],
    ['保修期多久？', { kind: 'question' }],
  ])('%s → %j', (message, intent) => {
    expect(detectIntent(message)).toEqual(intent);
  });

  it('calls only tools that are bound', async () => {
    const bare = new LocalChatModel();
    const reply = await bare.invoke([new HumanMessage('How do I reset the router?')]);
    expect(reply.tool_calls ?? []).toEqual([]);
    const bound = bare.bindTools([{ name: 'knowledge_search', description: 'd', schema: {} } as never]);
    const call = await bound.invoke([new HumanMessage('How do I reset the router?')]);
    expect(call.tool_calls?.[0]).toMatchObject({ name: 'knowledge_search', args: { query: 'How do I reset the router?' } });
  });

  it('composes a cited answer from the tool result that follows the question', async () => {
    const model = new LocalChatModel({ toolNames: ['knowledge_search'] });
    const output = JSON.stringify({
      query: 'q',
      chunks: [{ source: 'policy.md', page: 3, text: 'Policy\nReturns are accepted within 30 days. Shipping is free.', score: 1 }],
    });
    const reply = await model.invoke([
      new HumanMessage('How many days do I have for returns?'),
      new AIMessage({ content: '', tool_calls: [{ id: 'c1', name: 'knowledge_search', args: { query: 'q' } }] }),
      new ToolMessage({ content: output, tool_call_id: 'c1', name: 'knowledge_search' }),
    ]);
    expect(reply.content).toBe('According to the knowledge base: Returns are accepted within 30 days. [policy.md p.3]\n\nSources: policy.md');
  });

  it('is deterministic and streams the same text it generates', async () => {
    const model = new LocalChatModel();
    const whole = await model.invoke([new HumanMessage('你好')]);
    let streamed = '';
    for await (const chunk of await model.stream([new HumanMessage('你好')])) streamed += chunk.content as string;
    expect(streamed).toBe(whole.content);
    expect(streamPieces('退货 policy is 30 days')).toEqual(['退货', ' ', 'policy ', 'is ', '30 ', 'days']);
  });

  it('says so when nothing was found, in the language of the question', () => {
    expect(composeFromPassages('保修多久？', [])).toBe('知识库中没有找到与这个问题相关的内容。');
    expect(composeWeather('weather in Oslo', 'Weather unavailable: the weather service is unreachable.')).toBe(
      'I could not get the weather: the weather service is unreachable.',
    );
  });
});
