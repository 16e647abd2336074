import { composeFromPassages } from './local-compose.js';
import { passageSentences } from './local-passage-text.js';

// Chunk texts as the chunker stores them (buildChunkTree with the default 1200,400 sizes over the files in corpus/): the
// Markdown's line breaks became spaces, or nothing after Chinese, so headings run on inside the chunk.
const X2_MANUAL =
  '# Aurora X2 Mesh System — User Manual ## What is in the box The Aurora X2 mesh system contains three mesh nodes, three power adapters and one Ethernet cable. Any node can act as the main router. ## Setup Connect one node to your modem and power it on. Place the other nodes no more than two rooms away from the first one. The app shows a signal rating for each node; aim for "Good" or "Excellent". ## Factory reset To reset an Aurora X2 node, press the reset pinhole for 5 seconds with a paper clip until the light turns red. Resetting the main node resets the whole mesh network. ## Warranty The Aurora X2 mesh system has a three-year limited warranty. Nodes bought separately as add-ons carry a one-year warranty.';
const X1_MANUAL_LEAF =
  'rora app and follow the setup wizard to name your network and choose a password. ## Factory reset To reset the Aurora X1 to factory settings, press and hold the reset button on the back for 10 seconds until the status light blinks amber. The router restarts and all settings, including the Wi-Fi password, are erased. ## Wi-Fi bands The Aurora X1 broadcasts on 2.4 GHz and 5 GHz.';
const TRAVEL_POLICY =
  '# Travel and Expense Policy ## Booking travel Employees book flights and hotels through the company travel portal at least 14 days before departure when possible. ## Hotels The nightly hotel limit is 180 USD in most cities and 250 USD in high-cost cities such as New York, London and Tokyo. ## Meals Meals during travel are reimbursed up to 60 USD per day. ## Submitting expenses Submit expense reports within 30 days of returning, with receipts for every item above 25 USD.';
const RETURNS_POLICY =
  '# 退货与保修政策## 退货自签收之日起 30 天内，未使用且包装完好的商品可以申请无理由退货。 定制商品、已激活的软件许可和礼品卡不支持无理由退货。 退货运费由买家承担； 如果商品存在质量问题，运费由我们承担。 ## 退款退货商品入库检验合格后，退款会在 5 个工作日内原路退回。 使用优惠券的订单，退款金额按实际支付金额计算，优惠券不予退还。';
// What the chunker makes of a guide with a numbered list, emphasis, inline code, a quote, a bullet list, a code block
// and a table (each on its own line in the file).
const RESET_GUIDE =
  '# Reset guide ## Steps 1. Unplug the router 2. Hold **reset** for `10` seconds 3. Plug it back in > Note: all settings are __erased__. - Keep the *app* open - Wait for the [green light](https://example.com/lights) ```bash aurora-cli reset --all ``` | Plan | Price | |------|------:| | Basic | 10 USD | | Pro | 20 USD |';
const PLAN_GUIDE = '# 套餐说明## 价格| 套餐 | 价格 | | --- | --- | | 基础版 | 10 元 | | 专业版 | 20 元 | ## 说明- 价格含税- 按月计费> 注意：**不退款**。 1. 打开应用2. 进入设置';

const MARKUP = /(^|\s)#{1,6}\s|\*\*|__|`|\||(^|\s)>\s|(^|\s)[-*+]\s|(^|\s)\d\.\s/;

describe('the local model answers in sentences without Markdown markup', () => {
  it('leaves out headings, at the start of a chunk and inside it', () => {
    expect(passageSentences(X2_MANUAL)).toEqual([
      'The Aurora X2 mesh system contains three mesh nodes, three power adapters and one Ethernet cable.',
      'Any node can act as the main router.',
      'Connect one node to your modem and power it on.',
      'Place the other nodes no more than two rooms away from the first one.',
      // A semicolon joins two clauses of one sentence.
      'The app shows a signal rating for each node; aim for "Good" or "Excellent".',
      'To reset an Aurora X2 node, press the reset pinhole for 5 seconds with a paper clip until the light turns red.',
      'Resetting the main node resets the whole mesh network.',
      'The Aurora X2 mesh system has a three-year limited warranty.',
      'Nodes bought separately as add-ons carry a one-year warranty.',
    ]);
    // Title Case headings, headings of one word and a heading whose text starts with the heading's own words.
    expect(passageSentences(TRAVEL_POLICY)).toEqual([
      'Employees book flights and hotels through the company travel portal at least 14 days before departure when possible.',
      'The nightly hotel limit is 180 USD in most cities and 250 USD in high-cost cities such as New York, London and Tokyo.',
      'Meals during travel are reimbursed up to 60 USD per day.',
      'Submit expense reports within 30 days of returning, with receipts for every item above 25 USD.',
    ]);
  });

  it('leaves out Chinese headings; one that runs into its text keeps the text', () => {
    expect(passageSentences(RETURNS_POLICY)).toEqual([
      '退货自签收之日起 30 天内，未使用且包装完好的商品可以申请无理由退货。',
      '定制商品、已激活的软件许可和礼品卡不支持无理由退货。',
      '退货运费由买家承担； 如果商品存在质量问题，运费由我们承担。',
      '退款退货商品入库检验合格后，退款会在 5 个工作日内原路退回。',
      '使用优惠券的订单，退款金额按实际支付金额计算，优惠券不予退还。',
    ]);
  });

  it('takes list items, quotes, code and table rows out of their markup', () => {
    expect(passageSentences(RESET_GUIDE)).toEqual([
      'Unplug the router',
      'Hold reset for 10 seconds',
      'Plug it back in',
      'Note: all settings are erased.',
      'Keep the app open',
      'Wait for the green light',
      'aurora-cli reset --all',
      'Plan: Basic, Price: 10 USD.',
      'Plan: Pro, Price: 20 USD.',
    ]);
    expect(passageSentences(PLAN_GUIDE)).toEqual(['套餐：基础版，价格：10 元。', '套餐：专业版，价格：20 元。', '价格含税', '按月计费', '注意：不退款。', '打开应用', '进入设置']);
  });

  it('leaves out a first line that is a bare title, and Markdown headings on lines of their own', () => {
    expect(passageSentences('Returns policy\nReturns are accepted within 30 days. Shipping is free.')).toEqual(['Returns are accepted within 30 days.', 'Shipping is free.']);
    expect(passageSentences('Returns are accepted within 30 days.\nShipping is free.')).toHaveLength(2);
    expect(passageSentences('# Returns\n\n## Time limit\nReturns are accepted within **30 days**.\n\n## 运费\n退货运费由买家承担。')).toEqual([
      'Returns are accepted within 30 days.',
      '退货运费由买家承担。',
    ]);
  });

  it('keeps what only looks like markup in prose', () => {
    expect(passageSentences('Press 3 buttons at once. Use C# or F# for scripts. Prices range from 5 - 10 USD. Names like snake_case_names stay.')).toEqual([
      'Press 3 buttons at once.',
      'Use C# or F# for scripts.',
      'Prices range from 5 - 10 USD.',
      'Names like snake_case_names stay.',
    ]);
  });

  it('composes an English answer from the sentences, cited, with the Sources line', () => {
    // The reset and warranty sentences name the Aurora X2 too, but not what is in the box.
    expect(composeFromPassages('What is in the box of the Aurora X2?', [{ source: 'aurora-x2-mesh-manual.md', text: X2_MANUAL }])).toBe(
      'According to the knowledge base: The Aurora X2 mesh system contains three mesh nodes, three power adapters and one Ethernet cable. [aurora-x2-mesh-manual.md]\n\nSources: aurora-x2-mesh-manual.md',
    );
    expect(composeFromPassages('What warranty do the Aurora X2 and its add-on nodes have?', [{ source: 'aurora-x2-mesh-manual.md', text: X2_MANUAL }])).toBe(
      'According to the knowledge base: Nodes bought separately as add-ons carry a one-year warranty. [aurora-x2-mesh-manual.md] ' +
        'The Aurora X2 mesh system has a three-year limited warranty. [aurora-x2-mesh-manual.md]\n\nSources: aurora-x2-mesh-manual.md',
    );
  });

  it('composes a Chinese answer the same way, with the 来源 line', () => {
    expect(composeFromPassages('退货政策是什么？', [{ source: '退货与保修政策.md', text: RETURNS_POLICY }])).toBe(
      '根据知识库：退货自签收之日起 30 天内，未使用且包装完好的商品可以申请无理由退货。 [退货与保修政策.md]' +
        '定制商品、已激活的软件许可和礼品卡不支持无理由退货。 [退货与保修政策.md]' +
        '退货运费由买家承担； 如果商品存在质量问题，运费由我们承担。 [退货与保修政策.md]\n\n来源：退货与保修政策.md',
    );
  });

  it('keeps a space between a citation and an English sentence that follows it in a Chinese answer', () => {
    const passages = [
      { source: '保修.md', text: '路由器保修两年，从购买之日起计算。' },
      { source: 'x1.md', text: 'The X1 router has a two-year warranty. The warranty starts on the date of purchase.' },
    ];
    expect(composeFromPassages('路由器保修从什么时候开始算？X1 保修多久？', passages)).toBe(
      '根据知识库：路由器保修两年，从购买之日起计算。 [保修.md] The X1 router has a two-year warranty. [x1.md]\n\n来源：保修.md、x1.md',
    );
    // A Chinese sentence that opens with a number runs on as any Chinese sentence does.
    const returns = [{ source: 'r.md', text: '退货期为七天。 15 天内可以申请换货。' }];
    expect(composeFromPassages('退货期是几天？换货期呢？', returns)).toMatch(/^根据知识库：退货期为七天。 \[r\.md\]15 天内可以申请换货。 \[r\.md\]/);
  });

  it('never answers with a heading, even one that matches the question best', () => {
    expect(composeFromPassages('Factory reset', [{ source: 'aurora-x1-router-manual.md', page: 2, text: X1_MANUAL_LEAF }])).toBe(
      'According to the knowledge base: To reset the Aurora X1 to factory settings, press and hold the reset button on the back for 10 seconds until the status light blinks amber. [aurora-x1-router-manual.md p.2]\n\nSources: aurora-x1-router-manual.md',
    );
    expect(composeFromPassages('Aurora X1 router manual', [{ source: 'aurora-x1-router-manual.md', text: '# Aurora X1 Router — User Manual ## Setup' }])).toBe(
      'I could not find anything about this in the knowledge base.',
    );
  });

  it('leaves no markup in answers from Markdown-rich passages, in either language', () => {
    const english = composeFromPassages('How do I reset the router and what does the Pro plan cost?', [{ source: 'reset-guide.md', page: 4, text: RESET_GUIDE }]);
    const chinese = composeFromPassages('专业版价格是多少，怎么设置？', [{ source: '套餐说明.md', text: PLAN_GUIDE }]);
    for (const answer of [english, chinese]) {
      const body = answer.split('\n\n')[0].replace(/\[[^\]]+\]/g, '');
      expect(body).not.toMatch(MARKUP);
    }
    expect(english).toMatch(/\[reset-guide\.md p\.4\]\n\nSources: reset-guide\.md$/);
    expect(chinese).toMatch(/\[套餐说明\.md\]\n\n来源：套餐说明\.md$/);
    expect(chinese).toContain('套餐：专业版，价格：20 元。');
  });
});
