/** How many candidates recall keeps: RAG_RECALL_K when valid, else RAG_RECALL_MULTIPLIER × top_k. */
export function resolveRecallK(
  raw: string | undefined,
  multiplier: number,
  topK: number,
): { recall_k: number; recall_k_source: 'env' | 'multiplier'; recall_k_config_error: string | null; recall_multiplier: number } {
  const fallback = { recall_k: Math.max(topK, multiplier * topK), recall_k_source: 'multiplier' as const, recall_multiplier: multiplier };
  if (raw === undefined || raw.trim() === '') return { ...fallback, recall_k_config_error: null };
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1 || value > 1000) {
    return { ...fallback, recall_k_config_error: `RAG_RECALL_K=${JSON.stringify(raw)} is not an integer between 1 and 1000` };
  }
  return { recall_k: Math.max(value, topK), recall_k_source: 'env', recall_k_config_error: null, recall_multiplier: multiplier };
}
