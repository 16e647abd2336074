import { once } from 'node:events';
import zlib from 'node:zlib';
import { Document, HeadingLevel, Packer, Paragraph } from 'docx';
import { unzipSync } from 'fflate';
import writeExcelFile, { Sheet } from 'write-excel-file/node';

/**
 * Office files for tests: real ones built by libraries (docx, write-excel-file), and hostile ones assembled here
 * from a real file's parts (zip bombs, lying sizes, encryption flags), the way an attacker would.
 */

const HEADINGS = { 1: HeadingLevel.HEADING_1, 2: HeadingLevel.HEADING_2, 3: HeadingLevel.HEADING_3 } as const;

/** A .docx of paragraphs, some of them headings (Word's Heading 1–3 styles), built with the `docx` package. */
export async function makeDocx(paragraphs: Array<string | { heading: 1 | 2 | 3; text: string }>): Promise<Buffer> {
  const children = paragraphs.map((p) => (typeof p === 'string' ? new Paragraph({ text: p }) : new Paragraph({ text: p.text, heading: HEADINGS[p.heading] })));
  return Packer.toBuffer(new Document({ sections: [{ children }] }));
}

export type SheetCell = string | number | boolean | Date | null;

/** An .xlsx of sheets (rows of cells; null leaves a cell empty), built with `write-excel-file`. */
export async function makeXlsx(sheets: Array<{ name: string; rows: SheetCell[][] }>): Promise<Buffer> {
  const cell = (value: SheetCell) => (value === null ? null : value instanceof Date ? { value, format: 'yyyy-mm-dd' } : { value });
  const workbook: Sheet<Buffer>[] = sheets.map(({ name, rows }) => ({ sheet: name, data: rows.map((row) => row.map(cell)) }));
  return Buffer.from(await writeExcelFile(workbook).toBuffer());
}

/** One entry of a zip assembled by `assembleZip`: its bytes stored as they are, or already deflated. */
export type ZipEntry = { name: string; data: Uint8Array; flags?: number } | { name: string; deflated: Buffer; size: number; crc: number; declaredSize?: number; flags?: number };

/** `unit` repeated to `bytes` bytes, deflated as a stream (never held inflated): the body of a zip bomb. */
export async function deflatedRepeat(bytes: number, unit = '<w:p><w:r><w:t>Aurora</w:t></w:r></w:p>'): Promise<{ deflated: Buffer; size: number; crc: number }> {
  const block = Buffer.alloc(1024 * 1024, unit);
  const deflate = zlib.createDeflateRaw({ level: 9 });
  const out: Buffer[] = [];
  deflate.on('data', (chunk: Buffer) => out.push(chunk));
  let crc = 0;
  for (let written = 0; written < bytes; written += block.length) {
    const piece = block.subarray(0, Math.min(block.length, bytes - written));
    crc = zlib.crc32(piece, crc);
    if (!deflate.write(piece)) await once(deflate, 'drain');
  }
  deflate.end();
  await once(deflate, 'end');
  return { deflated: Buffer.concat(out), size: bytes, crc };
}

/** The parts of a real Office file, to assemble hostile variants of it from. */
export function partsOf(file: Uint8Array): ZipEntry[] {
  return Object.entries(unzipSync(file)).map(([name, data]) => ({ name, data }));
}

/**
 * A zip archive of `entries`, local headers, central directory and end record written here: so a test can make one
 * lie (`declaredSize`) or set flags (bit 0: encrypted) no zip library would write.
 */
export function assembleZip(entries: ZipEntry[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    const name = Buffer.from(entry.name, 'utf8');
    const stored = 'data' in entry;
    const body = stored ? Buffer.from(entry.data) : entry.deflated;
    const size = stored ? entry.data.length : (entry.declaredSize ?? entry.size);
    const crc = stored ? zlib.crc32(entry.data) : entry.crc;
    const flags = (entry.flags ?? 0) | 0x0800;
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(flags, 6);
    local.writeUInt16LE(stored ? 0 : 8, 8);
    local.writeUInt32LE(crc >>> 0, 14);
    local.writeUInt32LE(body.length, 18);
    local.writeUInt32LE(size, 22);
    local.writeUInt16LE(name.length, 26);
    locals.push(local, name, body);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(flags, 8);
    central.writeUInt16LE(stored ? 0 : 8, 10);
    central.writeUInt32LE(crc >>> 0, 16);
    central.writeUInt32LE(body.length, 20);
    central.writeUInt32LE(size, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(offset, 42);
    centrals.push(central, name);
    offset += local.length + name.length + body.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

/** `file` (a .docx or .xlsx) with its part `name` replaced by a zip bomb inflating to `bytes` (declaring `declaredSize`). */
export async function zipBomb(file: Uint8Array, name: string, bytes: number, declaredSize = bytes): Promise<Buffer> {
  const bomb = await deflatedRepeat(bytes);
  return assembleZip([...partsOf(file).filter((part) => part.name !== name), { name, ...bomb, declaredSize }]);
}
