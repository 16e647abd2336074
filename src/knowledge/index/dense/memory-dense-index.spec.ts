import { bestRows, columnScores, rowScores } from './memory-dense-index.js';

describe('columnScores', () => {
  it('equals the dot products of every row, for sparse and dense queries, with spare capacity', () => {
    const rows = 37;
    const capacity = 50;
    const dimensions = 12;
    let seed = 7;
    const random = () => (seed = (seed * 16807) % 2147483647) / 2147483647 - 0.5;
    const matrix = Array.from({ length: rows }, () => Array.from({ length: dimensions }, random));
    const columns = new Float32Array(capacity * dimensions);
    matrix.forEach((vector, r) => vector.forEach((v, d) => (columns[d * capacity + r] = v)));
    for (const query of [Float32Array.from({ length: dimensions }, random), Float32Array.from({ length: dimensions }, (_, d) => (d % 5 === 0 ? random() : 0))]) {
      const scores = columnScores(query, columns, rows, capacity);
      expect(scores).toHaveLength(rows);
      matrix.forEach((vector, r) =>
        expect(scores[r]).toBeCloseTo(
          vector.reduce((sum, v, d) => sum + v * query[d], 0),
          5,
        ),
      );
      const naive = matrix
        .map((vector, r) => ({ r, score: Math.fround(vector.reduce((sum, v, d) => sum + v * query[d], 0)) }))
        .filter((x) => x.score > 0)
        .sort((a, b) => b.score - a.score)
        .slice(0, 5)
        .map((x) => x.r);
      expect(bestRows(scores, 5)).toEqual(naive);
    }
  });

  it('scores a subset of the rows (rowScores) exactly as the whole scan scores them', () => {
    const rows = 40;
    const capacity = 64;
    const dimensions = 9;
    let seed = 11;
    const random = () => (seed = (seed * 16807) % 2147483647) / 2147483647 - 0.5;
    const columns = Float32Array.from({ length: capacity * dimensions }, random);
    const query = Float32Array.from({ length: dimensions }, (_, d) => (d % 3 === 1 ? 0 : random()));
    const all = columnScores(query, columns, rows, capacity);
    const subset = Uint32Array.from([0, 3, 4, 17, 39]);
    expect([...rowScores(query, columns, subset, capacity)]).toEqual([...subset].map((row) => all[row]));
  });
});
