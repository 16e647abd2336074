import type { RecallCandidate } from '../hybrid-recall.service.js';
import type { RetrievalHit } from '../retrieval.service.js';

/** A candidate as clients see it: without what only auto-merge needs. */
export function toHit({ parent_id: _parent, level: _level, ...hit }: RecallCandidate): RetrievalHit {
  return hit;
}
