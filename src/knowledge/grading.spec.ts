import { gradeEvidence } from './grading.js';
import { rewriteQuery } from './rewrite.js';

const hit = (source: string, text: string, score: number, rerank_score?: number) => ({
  chunk_id: `${source}#1`,
  source,
  page: null,
  text,
  score,
  rerank_score,
});

describe('local evidence grading', () => {
  it('answers when the evidence covers the question', () => {
    const grade = gradeEvidence('How do I factory reset the router?', [
      hit('router-manual.md', 'To factory reset the router, hold the reset button for 10 seconds.', 0.03, 0.8),
    ]);
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
    expect(grade.grade_reason).toMatch(/splits between/);
  });

  it('does not ask when the question names one of them', () => {
    const grade = gradeEvidence('How long is the Aurora X2 warranty?', [
      hit('aurora-x2-mesh-manual.md', 'The Aurora X2 mesh system has a three-year warranty.', 0.032, 0.7),
      hit('aurora-x1-router-manual.md', 'The Aurora X1 comes with a two-year warranty.', 0.031, 0.68),
    ]);
    expect(grade.grade_route).toBe('answer');
  });

  it('calls weak evidence weak, and no evidence unanswerable', () => {
    expect(gradeEvidence('parental controls bedtime schedule', [hit('manual.md', 'Firmware updates install at night.', 0.01, 0.05)])).toMatchObject({
      evidence_relevance: 'weak',
      evidence_answerability: 'none',
    });
    expect(gradeEvidence('anything', [])).toMatchObject({ evidence_answerability: 'none', grade_reason: 'Nothing was retrieved.' });
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
});

describe('local complexity judge', () => {
  it('keeps one question whole and splits several, in English and Chinese, at most four', async () => {
    const { judgeComplexity } = await import('./complexity.js');
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
