import type { AppConfig } from '../../../config/app-config.js';
import { RetrievalScope } from '../../collections/retrieval-scope.js';
import type { HybridRecall, RecallCandidate, RecallResult } from '../hybrid-recall.service.js';
import { RagPipeline } from '../rag-pipeline.service.js';
import { RerankProvider } from '../rerank.js';
import { RetrievalStage, runStages, StageResult, StageState, TraceFragment } from './retrieval-stage.js';
import { Metrics } from '../../../observability/metrics.js';

const COLLECTION = '6f1c1d8e-0000-4000-8000-00000000abcd';
const scope = RetrievalScope.of([COLLECTION]);

const candidate = (id: string, score: number, rrfRank: number, text = `passage ${id}`): RecallCandidate => ({
  chunk_id: id,
  collection_id: COLLECTION,
  source: `${id}.md`,
  page: null,
  text,
  score,
  rrf_rank: rrfRank,
  parent_id: null,
  level: 2,
});

/** A stage that records what it saw and answers with what it was given. */
class ScriptedStage implements RetrievalStage<RecallCandidate> {
  seen: Array<{ candidates: string[]; trace: TraceFragment; scope: RetrievalScope }> = [];
  constructor(
    readonly name: string,
    private readonly answer: (state: StageState<RecallCandidate>) => StageResult<RecallCandidate>,
    private readonly timed = false,
  ) {}
  async run(state: StageState<RecallCandidate>, context: Parameters<RetrievalStage<RecallCandidate>['run']>[1]) {
    this.seen.push({ candidates: state.candidates.map((c) => c.chunk_id), trace: { ...state.trace }, scope: state.scope });
    context.step(this.name, `label of ${this.name}`, { n: state.candidates.length });
    return this.timed ? context.time(this.name, async () => this.answer(state)) : this.answer(state);
  }
}

describe('the retrieval stage loop', () => {
  it('runs the stages in order, each on what the one before left, and merges their trace fragments', async () => {
    const first = new ScriptedStage(
      'first',
      () => ({ candidates: [candidate('a', 1, 1), candidate('b', 0.5, 2)], trace: { recalled_count: 2, top_k: 9 }, pipelinePart: 'one' }),
      true,
    );
    const second = new ScriptedStage('second', ({ candidates }) => ({ candidates: candidates.slice(1), trace: { top_k: 3, final_empty: false } }));
    const third = new ScriptedStage('third', ({ candidates }) => ({ candidates, trace: { after_threshold_count: candidates.length }, pipelinePart: 'three' }));
    const steps: string[] = [];
    const outcome = await runStages([first, second, third], 'q', 3, scope, (stage, label) => steps.push(`${stage}: ${label}`));

    expect(steps).toEqual(['first: label of first', 'second: label of second', 'third: label of third']);
    // Every stage reads the search's scope.
    expect(first.seen).toEqual([{ candidates: [], trace: {}, scope }]);
    expect(second.seen).toEqual([{ candidates: ['a', 'b'], trace: { recalled_count: 2, top_k: 9 }, scope }]);
    expect(third.seen[0]).toEqual({ candidates: ['b'], trace: { recalled_count: 2, top_k: 3, final_empty: false }, scope });
    expect(outcome.candidates.map((c) => c.chunk_id)).toEqual(['b']);
    expect(outcome.trace).toEqual({ recalled_count: 2, top_k: 3, final_empty: false, after_threshold_count: 1, timings: { first: expect.any(Number) } });
    // Only what a stage timed is in the timings; stages without a part leave the pipeline id alone.
    expect(outcome.pipelineId).toBe('one+three');
  });

  it('types each fragment by the trace protocol: an undeclared field does not compile', () => {
    const fragment: TraceFragment = {
      rerank_applied: true,
      // @ts-expect-error `rerank_aplied` is not a trace field (the normalizer would drop it silently).
      rerank_aplied: true,
    };
    // @ts-expect-error a declared field keeps its declared type
    const wrongType: TraceFragment = { top_k: '4' };
    expect([fragment, wrongType]).toHaveLength(2);

    class MisspeltStage implements RetrievalStage<RecallCandidate> {
      readonly name = 'misspelt';
      async run({ candidates }: StageState<RecallCandidate>): Promise<StageResult<RecallCandidate>> {
        return {
          candidates,
          trace: {
            // @ts-expect-error a stage's fragment is checked too: `final_emtpy` is not a trace field
            final_emtpy: candidates.length === 0,
          },
        };
      }
    }
    expect(new MisspeltStage().name).toBe('misspelt');
  });
});

describe('RagPipeline: recall, auto-merge, rerank, threshold as a list of stages', () => {
  const knowledge = {
    recallKRaw: undefined,
    recallMultiplier: 4,
    chunkSizes: [1200, 400],
    autoMerge: true,
    autoMergeThreshold: 0.5,
    minRelevance: 0.3,
  } as unknown as AppConfig['knowledge'];
  const recalled: RecallResult = {
    candidates: [candidate('a', 0.03, 1, 'reset the router'), candidate('b', 0.02, 2, 'kettle'), candidate('c', 0.01, 3, 'reset button')],
    retriever: 'hybrid-rrf-v1:fake:memory',
    fullTextTerms: 2,
    fullTextTermsDropped: 0,
    fullTextTranslatedTerms: 0,
  };
  const recallScopes: RetrievalScope[] = [];
  const recall = {
    recall: async (_query: string, _k: number, searched: RetrievalScope) => {
      recallScopes.push(searched);
      return recalled;
    },
  } as unknown as HybridRecall;

  class FakeRerank extends RerankProvider {
    readonly model = 'fake-rerank';
    readonly endpoint = null;
    constructor(
      readonly timeoutMs: number,
      private readonly scores: () => Promise<number[]>,
    ) {
      super();
    }
    score() {
      return this.scores();
    }
  }
  const pipeline = (reranker: RerankProvider | null) =>
    new RagPipeline(recall, reranker, null as never /* no parents to look up: the leaves have none */, { knowledge } as AppConfig, null as never, new Metrics());

  it("writes every stage's trace fields and steps, with the timings of the stages that worked", async () => {
    const steps: Array<[string, string]> = [];
    recallScopes.length = 0;
    const result = await pipeline(new FakeRerank(1000, async () => [0.9, 0.1, 0.5])).search('reset', 2, { scope, onStep: (stage, label) => steps.push([stage, label]) });
    expect(recallScopes).toEqual([scope]);
    expect(result.hits.map((h) => h.collection_id)).toEqual([COLLECTION, COLLECTION]);
    expect(steps).toEqual([
      ['recall', 'Hybrid recall: full-text and dense rankings, fused'],
      ['auto_merge', 'Merging sibling chunks into their parents'],
      ['rerank', 'Reranking 3 candidates'],
      ['retrieved', 'Kept 2 passage(s)'],
    ]);
    expect(result.hits.map((h) => [h.chunk_id, h.rerank_score])).toEqual([
      ['a', 0.9],
      ['c', 0.5],
    ]);
    expect(result).toMatchObject({ recalled: 3, mode: 'hybrid', pipelineId: 'hybrid-rrf-v1:fake:memory+merge+fake-rerank' });
    expect(result.hits[0]).not.toHaveProperty('parent_id');
    const { timings, initial_chunks, final_chunks, ...fields } = result.trace!;
    expect(fields).toEqual({
      recall_k: 8,
      recall_k_source: 'multiplier',
      recall_k_config_error: null,
      recall_multiplier: 4,
      recalled_count: 3,
      initial_chunk_level: 2,
      full_text_terms: 2,
      full_text_terms_dropped: 0,
      full_text_translated_terms: 0,
      full_text_error: null,
      dense_skipped: null,
      auto_merge_enabled: true,
      auto_merge_applied: false,
      auto_merge_threshold: 0.5,
      auto_merge_replaced_count: 0,
      auto_merge_level: null,
      candidates_after_merge: 3,
      rerank_enabled: true,
      rerank_applied: true,
      rerank_model: 'fake-rerank',
      rerank_endpoint: null,
      rerank_timeout_ms: 1000,
      rerank_error: null,
      rerank_input_count: 3,
      rerank_output_count: 3,
      top_k: 2,
      min_relevance: 0.3,
      after_threshold_count: 2,
      final_empty: false,
    });
    expect(initial_chunks!.map((c) => c.chunk_id)).toEqual(['a', 'c', 'b']);
    expect(final_chunks).toEqual(result.hits);
    expect(Object.keys(timings!)).toEqual(['recall', 'auto_merge', 'rerank']);
  });

  it('keeps the fused order without a minimum relevance when the rerank fails, and says why', async () => {
    const result = await pipeline(new FakeRerank(1000, async () => Promise.reject(new Error('rerank endpoint answered HTTP 503')))).search('reset', 5, { scope });
    expect(result.hits.map((h) => h.chunk_id)).toEqual(['a', 'b', 'c']);
    expect(result.trace).toMatchObject({
      rerank_applied: false,
      rerank_error: 'rerank endpoint answered HTTP 503',
      rerank_input_count: 3,
      rerank_output_count: 0,
      min_relevance: null,
      after_threshold_count: 3,
    });
  });

  it('names the missing reranker in the pipeline id and times only recall and merge', async () => {
    const result = await pipeline(null).search('reset', 1, { scope });
    expect(result.pipelineId).toBe('hybrid-rrf-v1:fake:memory+merge+no-rerank');
    expect(result.trace).toMatchObject({ rerank_enabled: false, rerank_model: null, rerank_input_count: 0, final_empty: false });
    expect(Object.keys(result.trace!.timings!)).toEqual(['recall', 'auto_merge']);
  });
});
