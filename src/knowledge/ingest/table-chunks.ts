import { ChunkNode, packSentences, Yielder, yieldToEventLoop } from './chunker.js';
import type { ChunkLocation, TableRow, TableSection } from './extraction-budget.js';

/** Rows turned into nodes between two yields to the event loop. */
const ROWS_PER_STEP = 500;

function locationOf(sheet: string | null, first: number, last: number): ChunkLocation {
  return { ...(sheet === null ? {} : { sheet }), row: first, ...(last > first ? { last_row: last } : {}) };
}

/** Consecutive rows packed into groups of at most `size` characters (joined by line breaks); a longer row is a group of its own. */
function groupRows(rows: TableRow[], size: number): TableRow[][] {
  const groups: TableRow[][] = [];
  let current: TableRow[] = [];
  let length = 0;
  for (const row of rows) {
    if (current.length > 0 && length + 1 + row.text.length > size) {
      groups.push(current);
      current = [];
      length = 0;
    }
    length += (current.length > 0 ? 1 : 0) + row.text.length;
    current.push(row);
  }
  if (current.length > 0) groups.push(current);
  return groups;
}

function rowNodes(sheet: string | null, rows: TableRow[], level: number, sizes: number[]): ChunkNode[] {
  const size = sizes[level - 1];
  if (level === sizes.length) {
    // A leaf is one row; a row longer than a leaf is cut into leaves that all point at it.
    return rows.flatMap((row) =>
      (row.text.length <= size ? [row.text] : packSentences(row.text, size, 0)).map((text) => ({
        level,
        page: null,
        location: locationOf(sheet, row.row, row.row),
        text,
        children: [],
      })),
    );
  }
  return groupRows(rows, size).map((group) => ({
    level,
    page: null,
    location: locationOf(sheet, group[0].row, group[group.length - 1].row),
    text: group.map((row) => row.text).join('\n'),
    children: rowNodes(sheet, group, level + 1, sizes),
  }));
}

/**
 * The chunk tree of tables (spreadsheets' sheets, CSV files): every data row
 * is a leaf of its own, located by its sheet and row; each level above packs
 * consecutive rows of a sheet into chunks of at most its size, located by
 * their first and last row. Yields to the event loop every ROWS_PER_STEP rows.
 */
export async function buildTableTree(tables: TableSection[], sizes: number[], { pause = yieldToEventLoop }: { pause?: Yielder } = {}): Promise<ChunkNode[]> {
  const roots: ChunkNode[] = [];
  for (const { sheet, rows } of tables) {
    for (let start = 0; start < rows.length; start += ROWS_PER_STEP) {
      // A level-1 chunk never spans two steps.
      roots.push(...rowNodes(sheet, rows.slice(start, start + ROWS_PER_STEP), 1, sizes));
      await pause();
    }
  }
  return roots;
}
