import { clarificationPrompt } from '../answering/clarification.js';
import { gradeEvidence } from './grading.js';
import { rewriteQuery, translatedRewrite } from '../answering/rewrite.js';

const hit = (source: string, text: string, score: number, rerank_score?: number) => ({
  chunk_id: `${source}#1`,
  collection_id: '00000000-0000-4000-8000-000000000001',
  source,
  page: null,
  text,
  score,
  rerank_score,
});

describe('local evidence grading', () => {
  it('answers when the evidence covers the question', () => {
    const grade = gradeEvidence('How do I factory reset the router?', [hit('router-manual.md', 'To factory reset the router, hold the reset button for 10 seconds.', 0.03, 0.8)]);
    expect(grade).toMatchObject({
      grade_route: 'answer',
      evidence_status: 'sufficient',
      evidence_relevance: 'strong',
      evidence_answerability: 'sufficient',
      evidence_ambiguity: null,
    });
    expect(grade.grade_confidence).toBeGreaterThan(0.5);
  });

  it('asks the user to choose when the evidence splits between documents the question does not tell apart', () => {
    const grade = gradeEvidence('How long is the Aurora warranty?', [
      hit('aurora-x1-router-manual.md', 'The Aurora X1 comes with a two-year warranty.', 0.032, 0.7),
      hit('aurora-x2-mesh-manual.md', 'The Aurora X2 mesh system has a three-year warranty.', 0.031, 0.68),
    ]);
    expect(grade).toMatchObject({ grade_route: 'clarify', evidence_status: 'needs_choice', evidence_ambiguity: 'needs_choice' });
    expect(grade.options).toEqual(['aurora x1 router manual', 'aurora x2 mesh manual']);
    expect(grade.option_sources).toEqual(['aurora-x1-router-manual.md', 'aurora-x2-mesh-manual.md']);
    expect(grade.grade_reason).toMatch(/splits between/);
  });

  it('does not ask when the question names one of them', () => {
    const grade = gradeEvidence('How long is the Aurora X2 warranty?', [
      hit('aurora-x2-mesh-manual.md', 'The Aurora X2 mesh system has a three-year warranty.', 0.032, 0.7),
      hit('aurora-x1-router-manual.md', 'The Aurora X1 comes with a two-year warranty.', 0.031, 0.68),
    ]);
    expect(grade.grade_route).toBe('answer');
  });

  it('compares question and evidence terms by stem, whatever their plural, tense or case', () => {
    const grade = gradeEvidence('Which Routers SHIPPED with Warranties?', [hit('shipping-notes.md', 'Every router ships with a warranty card.', 0.03, 0.7)]);
    expect(grade).toMatchObject({ evidence_answerability: 'sufficient', grade_reason: expect.stringMatching(/^3 of 3 question terms/) });
  });

  it('calls weak evidence weak, and no evidence unanswerable', () => {
    expect(gradeEvidence('parental controls bedtime schedule', [hit('manual.md', 'Firmware updates install at night.', 0.01, 0.05)])).toMatchObject({
      evidence_relevance: 'weak',
      evidence_answerability: 'none',
    });
    expect(gradeEvidence('anything', [])).toMatchObject({ evidence_answerability: 'none', grade_reason: 'Nothing was retrieved.' });
  });
});

/** Two documents told apart by a qualifier in their names, with their best passages (as the chunker stores them) and scores. */
interface Pair {
  name: string;
  documents: [{ source: string; text: string }, { source: string; text: string }];
  /** Questions that name neither document: the user must choose. */
  ambiguous: string[];
  /** Questions that name one of them: answered. */
  named: string[];
}

const pairs: Pair[] = [
  {
    name: 'consumer / business warranty',
    documents: [
      { source: 'consumer-warranty.md', text: '# Consumer Warranty ## Coverage Products bought by consumers carry a two-year warranty from the day of delivery.' },
      { source: 'business-warranty.md', text: '# Business Warranty ## Coverage Products bought by businesses carry a one-year warranty from the invoice date.' },
    ],
    ambiguous: ['How long is the warranty?', 'How long are the warranties?', 'HOW LONG IS THE WARRANTY', 'What do warranties cover?'],
    named: ['How long is the business warranty?', 'How long is the warranty for consumers?', 'Consumer warranties: how long?'],
  },
  {
    name: 'basic / pro plan',
    documents: [
      { source: 'basic-plan.md', text: '# Basic Plan ## Users The Basic plan includes up to 5 users and 10 GB of storage.' },
      { source: 'pro-plan.md', text: '# Pro Plan ## Users The Pro plan includes up to 50 users and 1 TB of storage, and more users can be added.' },
    ],
    ambiguous: ['How many users does the plan include?', 'How many users do plans include?'],
    named: ['How many users does the Pro plan include?', 'How many users are included in basic?'],
  },
  {
    name: '2023 / 2024 expense policy',
    documents: [
      { source: 'expense-policy-2023.md', text: '# Expense Policy 2023 ## Mileage Private cars are reimbursed at 0.30 USD per kilometre.' },
      { source: 'expense-policy-2024.md', text: '# Expense Policy 2024 ## Mileage Private cars are reimbursed at 0.35 USD per kilometre, up from the 2023 rate.' },
    ],
    ambiguous: ['What is the mileage rate in the expense policy?', 'How are private cars reimbursed?'],
    named: ['What was the 2023 mileage rate?', 'How are private cars reimbursed under the 2024 policy?'],
  },
  {
    name: 'EU / US shipping',
    documents: [
      { source: 'eu-shipping.md', text: '# EU Shipping ## Delivery times Orders within the EU ship in 3 to 5 business days.' },
      { source: 'us-shipping.md', text: '# US Shipping ## Delivery times Orders within the US ship in 2 to 4 business days.' },
    ],
    ambiguous: ['How long does shipping take?', 'When are orders shipped?'],
    named: ['How long does shipping to the US take?', 'When are EU orders shipped?'],
  },
  {
    name: 'Aurora X1 / X2 manuals, "router" only in the X1 title',
    documents: [
      {
        source: 'aurora-x1-router-manual.md',
        text: 'rora app and follow the setup wizard to name your network and choose a password. ## Factory reset To reset the Aurora X1 to factory settings, press and hold the reset button on the back for 10 seconds until the status light blinks amber. The router restarts and all settings, including the Wi-Fi password, are erased.',
      },
      {
        source: 'aurora-x2-mesh-manual.md',
        text: '# Aurora X2 Mesh System — User Manual ## What is in the box The Aurora X2 mesh system contains three mesh nodes, three power adapters and one Ethernet cable. Any node can act as the main router. ## Factory reset To reset an Aurora X2 node, press the reset pinhole for 5 seconds with a paper clip until the light turns red.',
      },
    ],
    ambiguous: ['How do I reset the router?', 'How do I reset routers?', 'Resetting the Aurora router'],
    named: ['How do I reset the X2?', 'How do I reset the Aurora X1 router?', 'How do I reset the mesh?'],
  },
  {
    name: '基础版 / 专业版服务条款',
    documents: [
      { source: '基础版服务条款.md', text: '# 基础版服务条款## 退款基础版用户可在购买后 7 天内申请全额退款。 退款原路退回。' },
      { source: '专业版服务条款.md', text: '# 专业版服务条款## 退款专业版用户可在购买后 30 天内申请退款，按剩余天数折算。 退款原路退回。' },
    ],
    ambiguous: ['服务条款里退款怎么规定？', '退款怎么规定？'],
    named: ['专业版服务条款里退款怎么规定？', '基础版的退款规则是什么？'],
  },
  {
    name: '2023年 / 2024年报销制度',
    documents: [
      { source: '2023年报销制度.md', text: '# 2023年报销制度## 住宿出差住宿标准为每晚 400 元，一线城市每晚 600 元。' },
      { source: '2024年报销制度.md', text: '# 2024年报销制度## 住宿出差住宿标准为每晚 450 元，一线城市每晚 700 元。' },
    ],
    ambiguous: ['报销制度里出差住宿标准是多少？', '住宿标准是多少？'],
    named: ['2024年的住宿标准是多少？', '2023年报销制度里住宿标准是多少？'],
  },
  {
    name: '中国大陆 / 香港退货政策',
    documents: [
      { source: '中国大陆退货政策.md', text: '# 中国大陆退货政策## 运费质量问题退货的运费由我们承担，其他情况由买家承担。' },
      { source: '香港退货政策.md', text: '# 香港退货政策## 运费所有退货的运费均由买家承担，顺丰到付不予签收。' },
    ],
    ambiguous: ['退货运费由谁承担？'],
    named: ['香港退货运费由谁承担？', '在大陆退货运费由谁承担？'],
  },
];

describe('local evidence grading: documents that differ by a qualifier the question does not name', () => {
  const hitsOf = ({ documents: [first, second] }: Pair, firstScore = 0.62, secondScore = 0.6) => [
    hit(first.source, first.text, 0.033, firstScore),
    hit(second.source, second.text, 0.032, secondScore),
  ];
  const titleOf = (source: string) => source.replace(/\.md$/, '').replace(/-/g, ' ');

  describe.each(pairs)('$name', (pair) => {
    it.each(pair.ambiguous)('asks to choose for %p', (question) => {
      const grade = gradeEvidence(question, hitsOf(pair));
      expect(grade).toMatchObject({ grade_route: 'clarify', evidence_status: 'needs_choice', evidence_ambiguity: 'needs_choice' });
      expect(grade.options).toEqual(pair.documents.map((document) => titleOf(document.source)));
    });

    it.each(pair.named)('answers %p, which names one of them', (question) => {
      expect(gradeEvidence(question, hitsOf(pair))).toMatchObject({ grade_route: 'answer', evidence_ambiguity: null, options: [] });
    });

    it('answers when one document clearly scores better', () => {
      expect(gradeEvidence(pair.ambiguous[0], hitsOf(pair, 0.7, 0.4)).grade_route).toBe('answer');
    });

    it('answers from a single document', () => {
      const [only] = pair.documents;
      expect(gradeEvidence(pair.ambiguous[0], [hit(only.source, only.text, 0.03, 0.7)]).grade_route).toBe('answer');
    });
  });

  it('asks with the fused scores alone (no reranker), and lists every document that competes', () => {
    const grade = gradeEvidence('How many users does the plan include?', [
      hit('basic-plan.md', 'The Basic plan includes 5 users.', 0.0328),
      hit('pro-plan.md', 'The Pro plan includes 50 users.', 0.0323),
      hit('enterprise-plan.md', 'The Enterprise plan includes unlimited users.', 0.0318),
    ]);
    expect(grade.options).toEqual(['basic plan', 'pro plan', 'enterprise plan']);
    expect(grade.grade_reason).toBe('The evidence splits between basic plan, pro plan and enterprise plan, which the question does not tell apart.');
    expect(clarificationPrompt('How many users does the plan include?', grade)).toBe(
      'The documents cover more than one thing this could mean: basic plan, pro plan or enterprise plan. Which one do you mean?',
    );
  });

  it("answers when only one document's passages match what the question asks", () => {
    const grade = gradeEvidence('Does the warranty cover water damage?', [
      hit('consumer-warranty.md', 'The consumer warranty does not cover water damage or drops.', 0.033, 0.62),
      hit('business-warranty.md', 'The business warranty lasts one year.', 0.032, 0.6),
    ]);
    expect(grade.grade_route).toBe('answer');
  });

  it('answers when the documents scoring alike share no subject', () => {
    const grade = gradeEvidence('How long do I have?', [
      hit('return-policy.md', 'You have 30 days to return an item.', 0.033, 0.62),
      hit('expense-reports.md', 'You have 30 days to submit expense reports.', 0.032, 0.6),
    ]);
    expect(grade.grade_route).toBe('answer');
  });

  it('takes a title word of one document as naming it when the other passages never use it', () => {
    // "router" is in one title only, and the other manual's passage never uses it: the question names the X1.
    const grade = gradeEvidence('How do I reset the router?', [
      hit('aurora-x1-router-manual.md', 'To reset the Aurora X1, hold the reset button. The router restarts.', 0.033, 0.62),
      hit('aurora-x2-mesh-manual.md', 'To reset an Aurora X2 node, press the reset pinhole.', 0.032, 0.6),
    ]);
    expect(grade.grade_route).toBe('answer');
  });
});

describe('local query rewrite', () => {
  it('steps back from a long, specific question', () => {
    const rewrite = rewriteQuery('Can I return the Aurora X1 router after 45 days if the box was opened?');
    expect(rewrite.rewrite_mode).toBe('step_back');
    expect(rewrite.step_back_question).toBe(rewrite.rewritten_query);
    expect(rewrite.rewritten_query).not.toMatch(/45/);
    expect(rewrite.hypothetical_doc).toBeNull();
  });

  it('writes a hypothetical passage for a short question, in its language', () => {
    const rewrite = rewriteQuery('积分有效期');
    expect(rewrite.rewrite_mode).toBe('hyde');
    expect(rewrite.hypothetical_doc).toMatch(/^关于/);
    expect(rewrite.step_back_question).toBeNull();
  });

  it('reads as the question’s own words, without the character bigrams that straddle them', () => {
    // Was "关于会员积分多久过期员积分多久过：以下说明介绍了会员、积分、多久、过期、员积、分多、久过的相关规定、步骤和期限。"
    expect(rewriteQuery('会员积分多久过期？').rewritten_query).toBe('关于会员积分过期：会员积分过期的规定、步骤和期限。');
    expect(rewriteQuery('退款多久能到账？').rewritten_query).toBe('关于退款到账：退款到账的规定、步骤和期限。');
    expect(rewriteQuery('退货的时间限制是多少天？').rewritten_query).toBe('关于退货时间限制：退货时间限制的规定、步骤和期限。');
    expect(rewriteQuery('X2 warranty length?').rewritten_query).toBe('About X2 warranty length: this section explains the X2 warranty length rules, steps and time limits.');
    expect(rewriteQuery('请问会员积分的有效期和过期以后的处理是怎么规定的？').rewritten_query).toBe('关于会员、积分、有效期、过期、处理、规定的一般规定是什么？');
    expect(rewriteQuery('Can I return the Aurora X1 router after 45 days if the box was opened?').rewritten_query).toBe(
      'What are the general rules about return Aurora router days box opened?',
    );
  });
});

describe('local query rewrite across languages (CC-CEDICT glossary)', () => {
  const english = [{ text: 'Meals during travel are reimbursed up to 60 USD per day.' }];
  const chinese = [{ text: '退货商品入库检验合格后，退款会在 5 个工作日内原路退回。' }];

  it('asks in the documents’ language when every weak passage is in the other one', () => {
    const rewrite = rewriteQuery('出差酒店住宿有什么标准？', english);
    expect(rewrite.rewrite_mode).toBe('hyde');
    expect(rewrite.rewritten_query).toMatch(/^About .*\bhotel\b.*\blodging\b.*: the rules\.$/);
    expect(rewriteQuery('How soon is my refund paid?', chinese).rewritten_query).toMatch(/^关于.*退款.*的规定。$/);
  });

  it('keeps names and model numbers as they are', () => {
    expect(translatedRewrite('Aurora X1 的保修期多长？')?.rewritten_query).toMatch(/^About Aurora X1 .*\bwarranty\b/);
  });

  it('stays in the question’s language when a weak passage is in it, or nothing came back', () => {
    expect(rewriteQuery('出差酒店住宿有什么标准？', chinese).rewritten_query).toMatch(/^关于/);
    expect(rewriteQuery('退款多久能到账？').rewritten_query).toBe('关于退款到账：退款到账的规定、步骤和期限。');
  });

  it('names the units a Chinese question asks in', () => {
    expect(translatedRewrite('机票要提前几天订？')?.rewritten_query).toMatch(/\bdays\b/);
    expect(translatedRewrite('X2 重置要按几秒？')?.rewritten_query).toMatch(/\bseconds\b/);
  });

  it('has no translation for a question the glossary knows no word of', () => {
    expect(translatedRewrite('Zorblax qwimble?')).toBeNull();
  });
});

describe('local evidence grading across languages', () => {
  it('counts a question’s words that the evidence holds in the other language', () => {
    const grade = gradeEvidence('酒店住宿每晚限额多少？', [hit('travel.md', 'The nightly hotel limit is 180 USD in most cities.', 0.02, 0.2)]);
    expect(grade.evidence_answerability).not.toBe('none');
    expect(grade.grade_reason).not.toMatch(/^0 of/);
  });

  it('finds a word that has translations of its own ("allowance": 津贴) only by them, not by a word of its stem ("allow": 许可)', () => {
    expect(gradeEvidence('Is there an allowance?', [hit('policy.md', '定制的软件许可不支持退货。', 0.02, 0.05)]).grade_reason).toMatch(/^0 of 1 /);
    expect(gradeEvidence('Is there an allowance?', [hit('policy.md', '出差期间每日有伙食津贴。', 0.02, 0.05)]).grade_reason).toMatch(/^1 of 1 /);
    expect(gradeEvidence('Is there an allowance?', [hit('policy.md', '经理准许后方可退货。', 0.02, 0.05)]).grade_reason).toMatch(/^0 of 1 /);
    // "allow" beside it is still held by 准许.
    expect(gradeEvidence('Does the manager allow an allowance?', [hit('policy.md', '经理准许退货。', 0.02, 0.05)]).grade_reason).toMatch(/^2 of 3 /);
    expect(gradeEvidence('Is the price reasonable?', [hit('policy.md', '价格很合理。', 0.02, 0.05)]).grade_reason).toMatch(/^2 of 2 /);
  });
});

describe('local complexity judge', () => {
  it('keeps one question whole and splits several, in English and Chinese, at most four', async () => {
    const { judgeComplexity } = await import('../answering/complexity.js');
    expect(judgeComplexity('How do I reset the Aurora X1 router?')).toMatchObject({ complexity: 'simple', sub_questions: [] });
    expect(judgeComplexity('What is the hotel limit in Tokyo and how long is the Aurora X2 warranty?').sub_questions).toEqual([
      'What is the hotel limit in Tokyo?',
      'how long is the Aurora X2 warranty?',
    ]);
    expect(judgeComplexity('积分的有效期是多久？以及退货运费由谁承担？').sub_questions).toEqual(['积分的有效期是多久？', '退货运费由谁承担？']);
    const five = judgeComplexity('Hotel limit in Tokyo? Meal allowance per day? Expense report deadline? Aurora X1 reset steps? Aurora X2 warranty length?');
    expect(five.sub_questions).toHaveLength(4);
    expect(five.complexity_reason).toMatch(/first 4/);
  });
});
