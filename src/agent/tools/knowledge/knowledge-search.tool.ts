import { Inject, Injectable } from '@nestjs/common';
import { tool } from '@langchain/core/tools';
import { z } from 'zod';
import type { ChatRequestContext } from '../../../chat/chat-request-context.js';
import type { AppConfig } from '../../../config/app-config.js';
import { APP_CONFIG } from '../../../config/config.module.js';
import { KnowledgeFlow } from '../../../knowledge/knowledge-flow.service.js';
import { AgentTool, AgentToolFactory } from '../agent-tool.js';

export const KNOWLEDGE_TOOL_NAME = 'knowledge_search';
export const KNOWLEDGE_BUDGET_SPENT =
  'The knowledge base was already searched in this turn (one search per turn). Answer from the passages already retrieved.';

/** The tool's answer to the model: the passages, as JSON. */
export interface KnowledgeToolOutput {
  query: string;
  chunks: Array<{ source: string; page: number | null; text: string; score: number }>;
}

@AgentTool()
@Injectable()
export class KnowledgeSearchTool implements AgentToolFactory {
  readonly name = KNOWLEDGE_TOOL_NAME;

  constructor(
    private readonly flow: KnowledgeFlow,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  create(context: ChatRequestContext) {
    return tool(
      async ({ query }: { query: string }, config?: { writer?: unknown }) => {
        if (!context.acquireKnowledgeToolSlot()) return KNOWLEDGE_BUDGET_SPENT;
        context.useStreamWriter(config?.writer);
        const topK = this.config.knowledge.topK;
        const started = performance.now();
        const result = await this.flow.run(query, topK, (stage, label, details) => context.emitRagStep(stage, label, details));
        const totalMs = Math.round(performance.now() - started);
        context.storeRagTrace({
          ...result.trace,
          tool_used: true,
          tool_name: KNOWLEDGE_TOOL_NAME,
          query,
          top_k: topK,
          timings: { ...((result.trace.timings as object) ?? {}), total: totalMs },
        });
        const output: KnowledgeToolOutput = {
          query,
          chunks: result.hits.map(({ source, page, text, score }) => ({ source, page, text, score })),
        };
        return JSON.stringify(output);
      },
      {
        name: KNOWLEDGE_TOOL_NAME,
        description:
          'Search the knowledge base (product manuals, policies) for passages that answer the question. ' +
          'Call at most once per turn, with the full question as the query.',
        schema: z.object({ query: z.string().min(1).max(2000).describe('The question to search for') }),
      },
    );
  }
}
