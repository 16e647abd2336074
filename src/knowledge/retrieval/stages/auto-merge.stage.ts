import { DataSource } from 'typeorm';
import type { AppConfig } from '../../../config/app-config.js';
import type { RetrievalScope } from '../../collections/retrieval-scope.js';
import { ChunksRepository, ParentInfo } from '../../index/chunks.repository.js';
import { RecallCandidate } from '../hybrid-recall.service.js';
import { RetrievalStage, StageContext, StageResult, StageState } from './retrieval-stage.js';

export type { ParentInfo };

/**
 * Replaces recalled children by their parent when at least `threshold` of
 * the parent's children were recalled (and at least two). The parent takes
 * the place and scores of its best child.
 */
export function autoMerge(
  candidates: RecallCandidate[],
  parents: Map<string, ParentInfo>,
  threshold: number,
): { merged: RecallCandidate[]; replaced: number; level: number | null } {
  const byParent = new Map<string, RecallCandidate[]>();
  for (const candidate of candidates) {
    if (candidate.parent_id) byParent.set(candidate.parent_id, [...(byParent.get(candidate.parent_id) ?? []), candidate]);
  }
  const mergeable = new Set(
    [...byParent.entries()]
      .filter(([parentId, children]) => {
        const parent = parents.get(parentId);
        return parent && children.length >= 2 && children.length / parent.children >= threshold;
      })
      .map(([parentId]) => parentId),
  );
  if (mergeable.size === 0) return { merged: candidates, replaced: 0, level: null };
  const merged: RecallCandidate[] = [];
  const placed = new Set<string>();
  let replaced = 0;
  let level: number | null = null;
  for (const candidate of candidates) {
    const parentId = candidate.parent_id;
    if (!parentId || !mergeable.has(parentId)) {
      merged.push(candidate);
      continue;
    }
    replaced += 1;
    if (placed.has(parentId)) continue;
    placed.add(parentId);
    const parent = parents.get(parentId)!;
    level = parent.level;
    merged.push({
      ...candidate,
      chunk_id: parent.id,
      collection_id: parent.collection_id,
      text: parent.text,
      page: parent.page ?? candidate.page,
      location: parent.location ?? null,
      parent_id: null,
      level: parent.level,
    });
  }
  return { merged, replaced, level };
}

/** Child-chunk auto-merge (RAG_AUTO_MERGE, RAG_AUTO_MERGE_THRESHOLD): one query for the recalled leaves' parents. */
export class AutoMergeStage implements RetrievalStage<RecallCandidate> {
  readonly name = 'auto_merge';

  private readonly chunks: ChunksRepository;

  constructor(
    dataSource: DataSource,
    private readonly knowledge: AppConfig['knowledge'],
  ) {
    this.chunks = new ChunksRepository(dataSource);
  }

  async run({ candidates, scope }: StageState<RecallCandidate>, { step, time }: StageContext): Promise<StageResult<RecallCandidate>> {
    const { autoMerge: enabled, autoMergeThreshold: threshold } = this.knowledge;
    if (!enabled || candidates.length <= 1) {
      return {
        candidates,
        pipelinePart: 'merge',
        trace: {
          auto_merge_enabled: enabled,
          auto_merge_applied: false,
          auto_merge_threshold: threshold,
          auto_merge_replaced_count: 0,
          auto_merge_level: null,
          candidates_after_merge: candidates.length,
        },
      };
    }
    step('auto_merge', 'Merging sibling chunks into their parents', { candidates: candidates.length });
    const result = await time('auto_merge', async () => autoMerge(candidates, await this.parentsOf(candidates, scope), threshold));
    return {
      candidates: result.merged,
      pipelinePart: 'merge',
      trace: {
        auto_merge_enabled: enabled,
        auto_merge_applied: result.replaced > 0,
        auto_merge_threshold: threshold,
        auto_merge_replaced_count: result.replaced,
        auto_merge_level: result.level,
        candidates_after_merge: result.merged.length,
      },
    };
  }

  /** The candidates' parents, read under the search's scope (a parent is of its children's document, so of their collection). */
  private async parentsOf(candidates: RecallCandidate[], scope: RetrievalScope): Promise<Map<string, ParentInfo>> {
    const ids = [...new Set(candidates.map((c) => c.parent_id).filter((id): id is string => id !== null))];
    if (ids.length === 0) return new Map();
    const rows = await this.chunks.parents(ids, scope);
    return new Map(rows.map((row) => [row.id, row]));
  }
}
