import type { AppConfig } from '../../../config/app-config.js';
import { RagPipeline } from '../rag-pipeline.service.js';
import type { RecallCandidate } from '../hybrid-recall.service.js';
import type { RetrievalStage, StageResult, StageState } from './retrieval-stage.js';
import { Metrics } from '../../../observability/metrics.js';

/** Where @RetrievalStagePlugin stages land when several name the same `after`, or name each other. */
class Named implements RetrievalStage<RecallCandidate> {
  constructor(readonly name: string) {}
  async run(state: StageState<RecallCandidate>): Promise<StageResult<RecallCandidate>> {
    return { candidates: state.candidates, trace: {} };
  }
}

function pipelineWith(plugins: Array<{ stage: Named; after: string }>): RagPipeline {
  const discovery = {
    getProviders: () => plugins.map(({ stage }) => ({ instance: stage })),
    getMetadataByDecorator: (_: unknown, wrapper: { instance: Named }) => ({ after: plugins.find((p) => p.stage === wrapper.instance)!.after }),
  };
  const knowledge = { topK: 4, recallMultiplier: 4, autoMerge: false, autoMergeThreshold: 0.5, minRelevance: 0 };
  return new RagPipeline(null as never, null, null as never, { knowledge } as unknown as AppConfig, discovery as never, new Metrics());
}

const order = (pipeline: RagPipeline) => (pipeline as unknown as { stages: Array<{ name: string }> }).stages.map((s) => s.name);

describe('retrieval stage plug-in placement', () => {
  it('keeps the discovery (module import) order of two plug-ins that run after the same stage', () => {
    const pipeline = pipelineWith([
      { stage: new Named('first_plugin'), after: 'rerank' },
      { stage: new Named('second_plugin'), after: 'rerank' },
    ]);
    pipeline.onApplicationBootstrap();
    expect(order(pipeline)).toEqual(['recall', 'auto_merge', 'rerank', 'first_plugin', 'second_plugin', 'threshold']);
  });

  it('lets a plug-in run after another plug-in whatever order the modules are imported in', () => {
    const pipeline = pipelineWith([
      { stage: new Named('dedupe_after_boost'), after: 'boost' },
      { stage: new Named('boost'), after: 'rerank' },
    ]);
    pipeline.onApplicationBootstrap();
    expect(order(pipeline)).toEqual(['recall', 'auto_merge', 'rerank', 'boost', 'dedupe_after_boost', 'threshold']);
  });

  it('refuses a plug-in whose stage is nowhere, naming it', () => {
    const pipeline = pipelineWith([{ stage: new Named('lost'), after: 'rerunk' }]);
    expect(() => pipeline.onApplicationBootstrap()).toThrow(/retrieval stage lost runs after "rerunk", which is not a stage/);
  });
});
