import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import type { DataSource } from 'typeorm';
import type { AppConfig } from '../../config/app-config.js';
import { RetrievalScope } from '../collections/retrieval-scope.js';
import { RetrievalResult, RetrievalService, SearchOptions } from '../retrieval/retrieval.service.js';
import { DocumentTitles } from './document-titles.service.js';
import { EvidenceJudge } from './evidence-judge.service.js';
import { RewriteJudge } from './judges/rewrite-judge.service.js';
import { KnowledgeFlow } from './knowledge-flow.service.js';
import { Metrics } from '../../observability/metrics.js';
import { SubQuestionFanOut } from './sub-question-fanout.service.js';

const local = { llm: { provider: 'local', timeoutMs: 1000, judgeTimeoutMs: 1000 } } as AppConfig;
const COLLECTION = '6f1c1d8e-0000-4000-8000-00000000abcd';

/** A retrieval that records each search's query and scope, and answers one weak passage (so the flow rewrites). */
class RecordingRetrieval extends RetrievalService {
  readonly searches: Array<{ query: string; scope: RetrievalScope }> = [];
  async search(query: string, _topK: number, options: SearchOptions): Promise<RetrievalResult> {
    this.searches.push({ query, scope: options.scope });
    const hit = { chunk_id: String(this.searches.length), collection_id: COLLECTION, source: 'kettle.md', page: null, text: 'The kettle is blue.', score: 0.01 };
    return { hits: [hit], recalled: 1, mode: 'hybrid', pipelineId: 'test', trace: {} };
  }
}

/** A retrieval that finds nothing for the question and one passage for its rewrite. */
class FoundOnRewrite extends RetrievalService {
  private calls = 0;
  async search(): Promise<RetrievalResult> {
    this.calls += 1;
    const hit = { chunk_id: '1', collection_id: COLLECTION, source: 'policy.md', page: null, text: 'Refunds reach your account within 5 working days.', score: 0.01 };
    return { hits: this.calls === 1 ? [] : [hit], recalled: this.calls === 1 ? 0 : 1, mode: 'hybrid', pipelineId: 'test', trace: {} };
  }
}

/** The flow with the local judges; no question here splits between documents, so no title is looked up. */
const localFlow = (retrieval: RetrievalService) =>
  new KnowledgeFlow(
    retrieval,
    new EvidenceJudge(null as unknown as BaseChatModel, local),
    new RewriteJudge(null as unknown as BaseChatModel, local),
    new DocumentTitles(null as unknown as DataSource),
    new Metrics(),
  );

describe('KnowledgeFlow keeps what the rewrite found', () => {
  it('when the question itself found nothing', async () => {
    const flow = localFlow(new FoundOnRewrite());
    const result = await flow.run('How long until my refund arrives?', 3, RetrievalScope.of([COLLECTION]));
    expect(result.trace.retrieval_stage).toBe('rewrite');
    expect(result.hits.map((hit) => hit.text)).toEqual(['Refunds reach your account within 5 working days.']);
  });
});

describe('KnowledgeFlow and SubQuestionFanOut: every search of a question reads its scope', () => {
  // No question here splits between documents, so no title is looked up.
  const titles = new DocumentTitles(null as unknown as DataSource);
  const judges = () => [new EvidenceJudge(null as unknown as BaseChatModel, local), new RewriteJudge(null as unknown as BaseChatModel, local)] as const;

  it('searches the first time, after the rewrite and in the other language in the same scope', async () => {
    const retrieval = new RecordingRetrieval();
    const scope = RetrievalScope.of([COLLECTION]);
    const result = await new KnowledgeFlow(retrieval, ...judges(), titles, new Metrics()).run('How do I descale the Zephyr router firmware?', 3, scope);
    expect(result.trace.rewrite_mode).not.toBeNull();
    expect(retrieval.searches).toHaveLength(3);
    for (const search of retrieval.searches) expect(search.scope).toBe(scope);
  });

  it('searches every sub-question (and its rewrite) in the question’s scope', async () => {
    const retrieval = new RecordingRetrieval();
    const scope = RetrievalScope.of([COLLECTION]);
    const [grader, rewriter] = judges();
    const flow = new KnowledgeFlow(retrieval, grader, rewriter, titles, new Metrics());
    await new SubQuestionFanOut(flow, grader).run('two things', ['How do I reset the router?', 'What does the warranty cover?'], 3, scope, () => undefined);
    expect(new Set(retrieval.searches.map((search) => search.query)).size).toBeGreaterThanOrEqual(2);
    for (const search of retrieval.searches) expect(search.scope).toBe(scope);
  });
});

/** English policies: a search finds a passage only when it has English words; every rerank is against the question asked. */
class EnglishOnly extends RetrievalService {
  readonly searches: Array<{ query: string; question?: string }> = [];
  async search(query: string, _topK: number, options: SearchOptions): Promise<RetrievalResult> {
    this.searches.push({ query, question: options.question });
    const hit = { chunk_id: '1', collection_id: COLLECTION, source: 'travel.md', page: null, text: 'The nightly hotel limit is 180 USD in most cities.', score: 0.01 };
    const found = /\bhotel\b/.test(query);
    return { hits: found ? [hit] : [], recalled: found ? 1 : 0, mode: 'hybrid', pipelineId: 'test', trace: {} };
  }
}

/**
 * A bilingual knowledge base: the question and its rewrite, in Chinese, find an unrelated Chinese passage
 * (so the rewrite stays in Chinese); only a search in English finds the travel policy.
 */
class UnrelatedInTheQuestionsLanguage extends RetrievalService {
  readonly searches: string[] = [];
  async search(query: string): Promise<RetrievalResult> {
    this.searches.push(query);
    const english = /\bhotel\b/.test(query);
    const hit = english
      ? { chunk_id: '2', collection_id: COLLECTION, source: 'travel.md', page: null, text: 'The nightly hotel limit is 250 USD in London.', score: 0.01 }
      : { chunk_id: '1', collection_id: COLLECTION, source: '积分.md', page: null, text: '积分自获得之日起 12 个月内有效。', score: 0.01 };
    return { hits: [hit], recalled: 1, mode: 'hybrid', pipelineId: 'test', trace: {} };
  }
}

describe('KnowledgeFlow searches in the other language', () => {
  it('alongside the rewrite, and keeps what it found when that evidence grades better', async () => {
    const retrieval = new UnrelatedInTheQuestionsLanguage();
    const flow = localFlow(retrieval);
    const result = await flow.run('伦敦的酒店每晚限额多少？', 3, RetrievalScope.of([COLLECTION]));
    expect(retrieval.searches).toHaveLength(3);
    expect(retrieval.searches[1]).toMatch(/^关于/);
    expect(result.hits.map((hit) => hit.source)).toEqual(['travel.md']);
    expect(result.trace).toMatchObject({ retrieval_stage: 'rewrite', rewrite_mode: 'hyde', rewritten_query: expect.stringMatching(/^About .*london.*hotel/i) });
  });

  it('asks with the question translated by the glossary, and answers from it when the question and its rewrite find nothing', async () => {
    const retrieval = new EnglishOnly();
    const flow = localFlow(retrieval);
    const question = '出差酒店住宿每晚限额多少？';
    const result = await flow.run(question, 3, RetrievalScope.of([COLLECTION]));
    expect(retrieval.searches).toHaveLength(3);
    expect(retrieval.searches[1].query).toMatch(/^关于/);
    expect(retrieval.searches[2]).toEqual({ query: expect.stringMatching(/^About .*hotel/), question });
    expect(result.trace).toMatchObject({ retrieval_stage: 'rewrite', rewrite_mode: 'hyde', rewritten_query: retrieval.searches[2].query, rewrite_judge: 'local' });
    expect(result.hits.map((hit) => hit.source)).toEqual(['travel.md']);
  });

  it('searches the full text in both languages only with a query in the question’s own language', async () => {
    class RecordingTranslate extends UnrelatedInTheQuestionsLanguage {
      readonly translates: Array<boolean | undefined> = [];
      override async search(query: string, _topK?: number, options?: SearchOptions): Promise<RetrievalResult> {
        this.translates.push(options?.translate);
        return super.search(query);
      }
    }
    // The question, its rewrite (in Chinese), the question in English: the last is not translated back.
    const sameLanguage = new RecordingTranslate();
    await localFlow(sameLanguage).run('伦敦的酒店每晚限额多少？', 3, RetrievalScope.of([COLLECTION]));
    expect(sameLanguage.translates).toEqual([undefined, true, false]);
    // A rewrite that asks in the documents' language (every weak passage is English) is not translated back either.
    class EnglishPassages extends RecordingRetrieval {
      readonly translates: Array<boolean | undefined> = [];
      override async search(query: string, topK: number, options: SearchOptions): Promise<RetrievalResult> {
        this.translates.push(options.translate);
        return super.search(query, topK, options);
      }
    }
    const otherLanguage = new EnglishPassages();
    await localFlow(otherLanguage).run('酒店住宿每晚限额多少？', 3, RetrievalScope.of([COLLECTION]));
    expect(otherLanguage.translates).toEqual([undefined, false]);
  });

  it('does not search a third time when the rewrite already asks in the other language', async () => {
    const retrieval = new RecordingRetrieval();
    await localFlow(retrieval).run('酒店住宿每晚限额多少？', 3, RetrievalScope.of([COLLECTION]));
    expect(retrieval.searches).toHaveLength(2);
  });
});

describe('KnowledgeFlow when the search in the other language fails', () => {
  it('answers from the rewrite’s evidence, as when that search did not run', async () => {
    class FailsInEnglish extends UnrelatedInTheQuestionsLanguage {
      override async search(query: string): Promise<RetrievalResult> {
        if (/^About /.test(query)) {
          this.searches.push(query);
          throw new Error('connection terminated unexpectedly');
        }
        return super.search(query);
      }
    }
    const retrieval = new FailsInEnglish();
    const flow = localFlow(retrieval);
    const result = await flow.run('伦敦的酒店每晚限额多少？', 3, RetrievalScope.of([COLLECTION]));
    expect(retrieval.searches).toHaveLength(3);
    expect(result.hits.map((hit) => hit.source)).toEqual(['积分.md']);
    expect(result.trace.rewritten_query).toMatch(/^关于/);
  });
});
