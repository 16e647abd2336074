import { CHUNK_WINDOW, packSentences } from './chunker.js';
import { buildTableTree } from './table-chunks.js';

describe('buildTableTree: a leaf per row, located by its sheet and row', () => {
  const rows = Array.from({ length: 6 }, (_, i) => ({ row: i + 2, text: `Product: P${i}; Price: ${i * 10} EUR` }));

  it('makes each row a leaf of its own, at the leaf level and without a parent', async () => {
    const tree = await buildTableTree([{ sheet: 'Products', rows }], [1200, 400]);
    expect(tree.map((leaf) => [leaf.level, leaf.location, leaf.text, leaf.children.length])).toEqual(rows.map((row) => [2, { sheet: 'Products', row: row.row }, row.text, 0]));
  });

  it('gives CSV rows (no sheet) their row only, and cuts a row longer than a leaf into leaves of that row', async () => {
    const long = { row: 9, text: `Notes: ${'word '.repeat(30)}` };
    const tree = await buildTableTree([{ sheet: null, rows: [long] }], [50]);
    expect(tree.length).toBeGreaterThan(1);
    expect(tree.every((leaf) => leaf.level === 1 && leaf.text.length <= 50 && JSON.stringify(leaf.location) === '{"row":9}')).toBe(true);
  });

  it('yields to the event loop between steps of rows', async () => {
    let pauses = 0;
    const many = Array.from({ length: 1200 }, (_, i) => ({ row: i + 2, text: `Row ${i}` }));
    const tree = await buildTableTree([{ sheet: 'S', rows: many }], [1000, 100], { pause: async () => void (pauses += 1) });
    expect(pauses).toBe(3);
    expect(tree).toHaveLength(1200);
  });

  it('packs a row of a hundred thousand columns a window at a time, yielding between windows, into the leaves it would make whole', async () => {
    const wide = { row: 2, text: Array.from({ length: 100_000 }, (_, i) => `Column ${i + 1}: v${i}`).join('; ') };
    let pauses = 0;
    const tree = await buildTableTree([{ sheet: null, rows: [wide] }], [400], { pause: async () => void (pauses += 1) });
    expect(pauses).toBeGreaterThanOrEqual(Math.floor(wide.text.length / CHUNK_WINDOW));
    expect(tree.map((leaf) => leaf.text)).toEqual(packSentences(wide.text, 400, 0));
  });
});
