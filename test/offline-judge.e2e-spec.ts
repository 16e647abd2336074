import { KnowledgeFlow } from '../src/knowledge/answering/knowledge-flow.service.js';
import { createTestApp, TestApp } from './support/test-app.js';
import { DEFAULT_SCOPE } from './support/collections.js';

/** The offline judge on ordinary questions about the sample corpus: it pauses only where two documents genuinely compete. */
const QUESTIONS = [
  '退货政策是什么？',
  '退货运费谁承担？',
  '多少天内可以退货？',
  '退款多久到账？',
  '积分怎么获得？',
  '积分有效期多久？',
  '积分可以兑换现金吗？',
  '100积分能抵扣多少钱？',
  '金卡会员有什么权益？',
  '生日当月有双倍积分吗？',
  '保修期多久？',
  '配件保修多久？',
  '换货政策是什么？',
  'What is the hotel limit in Tokyo?',
  'How much can I spend on meals per day?',
  'When must I submit expense reports?',
  'Can I fly business class?',
  'Is alcohol reimbursable?',
  'How do I book travel?',
  'What is the travel expense policy?',
  'How do I reset the Aurora X1 router?',
  'How do I update the firmware?',
  'How do I set up parental controls?',
  'What Wi-Fi bands does the router support?',
  'What is in the box of the mesh system?',
  'How long is the Aurora X2 warranty?',
  'How long is the warranty?',
  'How do I reset the router?',
  'How do I set it up?',
  'What does the manual say about setup?',
  'Does the warranty cover water damage?',
  'What is the return policy?',
  'How do I return a product?',
  'Aurora 保修多久？',
  'Aurora X1 保修多久？',
  '路由器保修多久？',
  '路由器怎么恢复出厂设置？',
];

describe('the offline judge on the sample corpus', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('answers ordinary questions and asks to choose only between the two Aurora manuals, when the question does not name one', async () => {
    const flow = t.app.get(KnowledgeFlow);
    const paused: Array<{ question: string; options: string[] }> = [];
    for (const question of QUESTIONS) {
      const { grade } = await flow.run(question, 4, DEFAULT_SCOPE);
      if (grade.grade_route === 'clarify') paused.push({ question, options: [...grade.options].sort() });
    }
    const aurora = ['Aurora X1 Router — User Manual', 'Aurora X2 Mesh System — User Manual'];
    expect(paused).toEqual([
      { question: 'How long is the warranty?', options: aurora },
      { question: 'How do I reset the router?', options: aurora },
      { question: 'What does the manual say about setup?', options: aurora },
    ]);
  });
});
