import { buildTableTree } from './table-chunks.js';

describe('buildTableTree: a leaf per row, located by its sheet and row', () => {
  const rows = Array.from({ length: 6 }, (_, i) => ({ row: i + 2, text: `Product: P${i}; Price: ${i * 10} EUR` }));

  it('makes each row a leaf and packs consecutive rows into the levels above', async () => {
    const tree = await buildTableTree([{ sheet: 'Products', rows }], [70, 40]);
    expect(tree.map((node) => [node.location, node.text.split('\n').length])).toEqual([
      [{ sheet: 'Products', row: 2, last_row: 3 }, 2],
      [{ sheet: 'Products', row: 4, last_row: 5 }, 2],
      [{ sheet: 'Products', row: 6, last_row: 7 }, 2],
    ]);
    const leaves = tree.flatMap((node) => node.children);
    expect(leaves.map((leaf) => [leaf.level, leaf.location, leaf.text])).toEqual(rows.map((row) => [2, { sheet: 'Products', row: row.row }, row.text]));
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
    expect(tree.flatMap((node) => node.children)).toHaveLength(1200);
  });
});
