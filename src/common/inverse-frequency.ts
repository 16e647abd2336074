/**
 * BM25's inverse document frequency of a term that `holding` of `total`
 * texts hold: high for a term few of them hold, near zero for one all of
 * them hold, positive whenever `holding` ≤ `total`.
 */
export function inverseDocumentFrequency(total: number, holding: number): number {
  return Math.log(1 + (total - holding + 0.5) / (holding + 0.5));
}
