import { splitSentences } from '../../common/text.js';
import { ChunkNode, SentencePacker, sentenceWindows, Yielder, yieldToEventLoop } from './chunker.js';
import type { TableSection } from './extraction-budget.js';

/** Rows turned into chunks between two yields to the event loop. */
const ROWS_PER_STEP = 500;

/**
 * The chunks of tables (spreadsheets' sheets, CSV files): every data row is
 * a leaf of its own, at the leaf level and without a parent, located by its
 * sheet and row. Rows are not packed into parents as text is: a parent would
 * hold unrelated rows, and auto-merge would answer a question about one row
 * with a block of them. A row longer than a leaf is cut into leaves that all
 * point at it, a window of its text at a time (a row of a million columns
 * is megabytes). Yields to the event loop every ROWS_PER_STEP rows, and
 * between the windows of a long row.
 */
export async function buildTableTree(tables: TableSection[], sizes: number[], { pause = yieldToEventLoop }: { pause?: Yielder } = {}): Promise<ChunkNode[]> {
  const level = sizes.length;
  const size = sizes[level - 1];
  const leaves: ChunkNode[] = [];
  for (const { sheet, rows } of tables) {
    for (let start = 0; start < rows.length; start += ROWS_PER_STEP) {
      for (const row of rows.slice(start, start + ROWS_PER_STEP)) {
        const location = { ...(sheet === null ? {} : { sheet }), row: row.row };
        if (row.text.length <= size) {
          leaves.push({ level, page: null, location, text: row.text, children: [] });
          continue;
        }
        const packer = new SentencePacker(size, 0, (text) => leaves.push({ level, page: null, location, text, children: [] }));
        for (const part of sentenceWindows(row.text)) {
          for (const sentence of splitSentences(part)) packer.push(sentence);
          await pause();
        }
        packer.finish();
      }
      await pause();
    }
  }
  return leaves;
}
