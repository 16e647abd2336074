import { once } from 'node:events';
import zlib from 'node:zlib';

/** Builds a small valid PDF with one text line per page (Helvetica, ASCII), for upload tests. */
export function makePdf(pages: string[]): Buffer {
  const objects: string[] = [];
  const pageIds = pages.map((_, i) => 4 + i * 2);
  objects[1] = '<< /Type /Catalog /Pages 2 0 R >>';
  objects[2] = `<< /Type /Pages /Kids [${pageIds.map((id) => `${id} 0 R`).join(' ')}] /Count ${pages.length} >>`;
  objects[3] = '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>';
  pages.forEach((text, i) => {
    const pageId = 4 + i * 2;
    const escaped = text.replace(/[\\()]/g, (c) => `\\${c}`);
    const stream = `BT /F1 12 Tf 72 720 Td (${escaped}) Tj ET`;
    objects[pageId] = `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents ${pageId + 1} 0 R >>`;
    objects[pageId + 1] = `<< /Length ${stream.length} >>\nstream\n${stream}\nendstream`;
  });
  return assemblePdf(objects);
}

/** Writes PDF objects (numbered from 1; index 0 unused) with their cross-reference table and trailer. */
export function assemblePdf(objects: string[]): Buffer {
  let body = '%PDF-1.4\n';
  const offsets: number[] = [];
  for (let id = 1; id < objects.length; id += 1) {
    offsets[id] = Buffer.byteLength(body, 'latin1');
    body += `${id} 0 obj\n${objects[id]}\nendobj\n`;
  }
  const xref = Buffer.byteLength(body, 'latin1');
  body += `xref\n0 ${objects.length}\n0000000000 65535 f \n`;
  for (let id = 1; id < objects.length; id += 1) body += `${String(offsets[id]).padStart(10, '0')} 00000 n \n`;
  body += `trailer\n<< /Size ${objects.length} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(body, 'latin1');
}

/** Text drawn again and again at the same place on the page, so a text extractor keeps every one. */
export const REPEATED_TEXT = { repeat: 'BT /F1 12 Tf 72 720 Td (All work and no play makes Jack a dull boy) Tj ET\n' };

/**
 * A one-page PDF whose FlateDecode content stream inflates to about
 * `inflatedBytes`: `content.repeat` over and over, between `before` and
 * `after`. About 3.5 KB of upload per MB of REPEATED_TEXT.
 */
export async function makeFlateBombPdf(inflatedBytes: number, content: { before?: string; repeat: string; after?: string } = REPEATED_TEXT): Promise<Buffer> {
  const block = Buffer.from(content.repeat.repeat(Math.ceil((1024 * 1024) / content.repeat.length)), 'latin1');
  const deflate = zlib.createDeflate({ level: 9 });
  const compressed: Buffer[] = [];
  deflate.on('data', (chunk: Buffer) => compressed.push(chunk));
  const ended = once(deflate, 'end');
  deflate.write(content.before ?? '');
  for (let written = 0; written < inflatedBytes; written += block.length) {
    if (!deflate.write(block)) await once(deflate, 'drain');
  }
  deflate.end(content.after ?? '');
  await ended;
  const stream = Buffer.concat(compressed).toString('latin1');
  return assemblePdf([
    '',
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [4 0 R] /Count 1 >>',
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents 5 0 R >>',
    `<< /Length ${stream.length} /Filter /FlateDecode >>\nstream\n${stream}\nendstream`,
  ]);
}

/** A one-page PDF whose catalog holds arrays nested `depth` deep. */
export function makeNestedPdf(depth: number): Buffer {
  const text = 'BT /F1 12 Tf 72 720 Td (nested) Tj ET';
  return assemblePdf([
    '',
    `<< /Type /Catalog /Pages 2 0 R /Nested ${'['.repeat(depth)}${']'.repeat(depth)} >>`,
    '<< /Type /Pages /Kids [4 0 R] /Count 1 >>',
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents 5 0 R >>',
    `<< /Length ${text.length} >>\nstream\n${text}\nendstream`,
  ]);
}
