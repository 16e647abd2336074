import { Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { AppConfig } from '../../config/app-config.js';
import { APP_CONFIG } from '../../config/config.module.js';
import { Metrics } from '../../observability/metrics.js';
import { HybridRecall, RecallCandidate } from './hybrid-recall.service.js';
import { RerankProvider } from './rerank.js';
import { RetrievalResult, RetrievalService, SearchOptions, StepReporter } from './retrieval.service.js';
import { AutoMergeStage } from './stages/auto-merge.stage.js';
import { RecallStage } from './stages/recall.stage.js';
import { RerankStage } from './stages/rerank.stage.js';
import { RetrievalStage, RetrievalStagePlugin, runStages } from './stages/retrieval-stage.js';
import { ThresholdStage } from './stages/threshold.stage.js';
import { toHit } from './stages/to-hit.js';

export { autoMerge } from './stages/auto-merge.stage.js';

export const RERANK_PROVIDER = Symbol('RERANK_PROVIDER');

const ignoreStep: StepReporter = () => undefined;

/**
 * The retrieval pipeline: its stages in order (hybrid recall, auto-merge,
 * rerank, minimum relevance and top_k), plus any @RetrievalStagePlugin()
 * provider of the application, each after the stage it names. Each stage
 * writes the trace fields it owns from what it did, and reports itself as a
 * step.
 */
@Injectable()
export class RagPipeline extends RetrievalService implements OnApplicationBootstrap {
  private readonly logger = new Logger(RagPipeline.name);
  private stages: readonly RetrievalStage<RecallCandidate>[];

  constructor(
    recall: HybridRecall,
    @Inject(RERANK_PROVIDER) reranker: RerankProvider | null,
    @InjectDataSource() dataSource: DataSource,
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly discovery: DiscoveryService,
    private readonly metrics: Metrics,
  ) {
    super();
    this.stages = [new RecallStage(recall, config.knowledge), new AutoMergeStage(dataSource, config.knowledge), new RerankStage(reranker), new ThresholdStage(config.knowledge)];
  }

  /**
   * Places the plug-in stages: each right after the stage it names, after the
   * plug-ins already placed there (so they run in module import order); a
   * plug-in may follow another plug-in, whatever the order they are found in.
   */
  onApplicationBootstrap(): void {
    const stages = [...this.stages];
    let pending = this.discovery
      .getProviders({ metadataKey: RetrievalStagePlugin.KEY })
      .filter((wrapper) => typeof (wrapper.instance as RetrievalStage<RecallCandidate> | undefined)?.run === 'function')
      .map((wrapper) => ({
        stage: wrapper.instance as RetrievalStage<RecallCandidate>,
        after: this.discovery.getMetadataByDecorator(RetrievalStagePlugin, wrapper)?.after ?? '',
      }));
    const lastPlacedAfter = new Map<string, string>();
    while (pending.length > 0) {
      const unplaced: typeof pending = [];
      for (const plugin of pending) {
        const anchor = lastPlacedAfter.get(plugin.after) ?? plugin.after;
        const index = stages.findIndex((stage) => stage.name === anchor);
        if (index < 0) {
          unplaced.push(plugin);
          continue;
        }
        stages.splice(index + 1, 0, plugin.stage);
        lastPlacedAfter.set(plugin.after, plugin.stage.name);
      }
      if (unplaced.length === pending.length) {
        const { stage, after } = unplaced[0];
        throw new Error(`retrieval stage ${stage.name} runs after "${after}", which is not a stage (${stages.map((s) => s.name).join(', ')})`);
      }
      pending = unplaced;
    }
    this.stages = stages;
    this.logger.log(`retrieval stages: ${stages.map((stage) => stage.name).join(' → ')}`);
  }

  async search(query: string, topK: number, options: SearchOptions): Promise<RetrievalResult> {
    const outcome = await runStages(this.stages, query, topK, options.scope, options.onStep ?? ignoreStep, {
      question: options.question,
      translate: options.translate,
      metrics: this.metrics,
    });
    return {
      hits: outcome.candidates.map(toHit),
      recalled: outcome.trace.recalled_count ?? 0,
      mode: 'hybrid',
      pipelineId: outcome.pipelineId,
      trace: outcome.trace,
    };
  }
}
