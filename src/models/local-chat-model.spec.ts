import { AIMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import { LocalChatModel, streamPieces } from './local-chat-model.js';
import { composeFromPassages } from './local-compose.js';
import { detectSmallTalk } from './local-intent.js';
import { LOCAL_ROUTING_KEY, LocalToolRouting } from './local-tool-routing.js';

/** A routing hint as a tool plug-in declares it. */
const knowledgeRouting: LocalToolRouting = {
  priority: 0,
  capability: { en: 'search the manuals', zh: '查手册' },
  route: (message) => ({ call: { query: message } }),
  compose: (question, output) => {
    const parsed = JSON.parse(output) as { query: string; chunks: never[] };
    return composeFromPassages(parsed.query || question, parsed.chunks);
  },
};
const echoRouting: LocalToolRouting = {
  priority: 5,
  capability: { en: 'echo words', zh: '复述' },
  route: (message) => (/^echo\b/i.test(message) ? (message.trim().length > 4 ? { call: { words: message.slice(5) } } : { ask: 'What should I echo?' }) : null),
  compose: (_question, output) => `Echo: ${output}`,
};
const tool = (name: string, routing?: LocalToolRouting) => ({ name, description: 'd', schema: {}, metadata: routing ? { [LOCAL_ROUTING_KEY]: routing } : {} }) as never;

describe('local model rules', () => {
  it.each([
    ['你好', 'greeting'],
    ['Hello!', 'greeting'],
    ['谢谢', 'thanks'],
    ['保修期多久？', null],
    ['北京今天天气怎么样？', null],
  ])('%s → %j', (message, kind) => {
    expect(detectSmallTalk(message)).toEqual(kind);
  });

  it('calls only tools that are bound, by their routing hints, highest priority first', async () => {
    const bare = new LocalChatModel();
    const reply = await bare.invoke([new HumanMessage('How do I reset the router?')]);
    expect(reply.tool_calls ?? []).toEqual([]);
    const withoutHint = bare.bindTools([tool('knowledge_search')]);
    expect((await withoutHint.invoke([new HumanMessage('How do I reset the router?')])).tool_calls ?? []).toEqual([]);
    const bound = bare.bindTools([tool('knowledge_search', knowledgeRouting), tool('echo', echoRouting)]);
    const call = await bound.invoke([new HumanMessage('How do I reset the router?')]);
    expect(call.tool_calls?.[0]).toMatchObject({ name: 'knowledge_search', args: { query: 'How do I reset the router?' } });
    const echo = await bound.invoke([new HumanMessage('echo hello there')]);
    expect(echo.tool_calls?.[0]).toMatchObject({ name: 'echo', args: { words: 'hello there' } });
    const ask = await bound.invoke([new HumanMessage('echo')]);
    expect(ask.content).toBe('What should I echo?');
    const greeting = await bound.invoke([new HumanMessage('Hello!')]);
    expect(greeting.content).toBe('Hello! I can search the manuals or echo words for you.');
    expect((await bound.invoke([new HumanMessage('你好')])).content).toBe('你好！我可以查手册，也可以复述。');
  });

  it('answers from a tool result with that tool’s hint, and never shows a failed tool’s error text', async () => {
    const model = new LocalChatModel().bindTools([tool('knowledge_search', knowledgeRouting), tool('echo', echoRouting)]);
    const echoed = await model.invoke([
      new HumanMessage('echo hi'),
      new AIMessage({ content: '', tool_calls: [{ id: 'c1', name: 'echo', args: { words: 'hi' } }] }),
      new ToolMessage({ content: 'hi', tool_call_id: 'c1', name: 'echo' }),
    ]);
    expect(echoed.content).toBe('Echo: hi');
    const failed = await model.invoke([
      new HumanMessage('echo hi'),
      new AIMessage({ content: '', tool_calls: [{ id: 'c1', name: 'echo', args: { words: 'hi' } }] }),
      new ToolMessage({ content: 'Error: connect ECONNREFUSED 10.0.0.1:5432', tool_call_id: 'c1', name: 'echo', status: 'error' }),
    ]);
    expect(failed.content).toBe('The echo tool failed.');
  });

  it('answers from a tool in the language of the question', async () => {
    const converter: LocalToolRouting = {
      priority: 5,
      capability: { en: 'convert units', zh: '换算单位' },
      route: (message) => (/convert|换算/.test(message) ? { call: { value: 10 } } : null),
      compose: (_question, output) => ({ en: `That is ${output}.`, zh: `换算结果：${output}。` }),
    };
    const englishOnly: LocalToolRouting = { ...converter, compose: (_question, output) => `That is ${output}.` };
    const turn = (question: string) => [
      new HumanMessage(question),
      new AIMessage({ content: '', tool_calls: [{ id: 'c1', name: 'convert', args: { value: 10 } }] }),
      new ToolMessage({ content: '32.81 ft', tool_call_id: 'c1', name: 'convert' }),
    ];
    const bilingual = new LocalChatModel().bindTools([tool('convert', converter)]);
    expect((await bilingual.invoke(turn('请把 10 m 换算成英尺'))).content).toBe('换算结果：32.81 ft。');
    expect((await bilingual.invoke(turn('Please convert 10 m to feet'))).content).toBe('That is 32.81 ft.');
    // A tool that answers in English only: the model says in Chinese what the text is.
    const english = new LocalChatModel().bindTools([tool('convert', englishOnly)]);
    expect((await english.invoke(turn('请把 10 m 换算成英尺'))).content).toBe('工具 convert 的结果：That is 32.81 ft.');
    expect((await english.invoke(turn('Please convert 10 m to feet'))).content).toBe('That is 32.81 ft.');
  });

  it('composes a cited answer from the tool result that follows the question', async () => {
    const model = new LocalChatModel().bindTools([tool('knowledge_search', knowledgeRouting)]);
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
  });
});
