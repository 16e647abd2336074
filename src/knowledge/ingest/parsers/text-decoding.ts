import { UnreadableContentError } from '../extraction-budget.js';

/** Bytes read for an HTML page's `<meta charset>`, as browsers do (the WHATWG prescan reads 1024). */
const PRESCAN_BYTES = 1024;
const META_CHARSET = /<meta[^>]+charset\s*=\s*["']?\s*([\w.:-]+)/i;

/** The encoding a byte order mark names, if the text starts with one. */
function bomEncoding(data: Uint8Array): string | null {
  if (data[0] === 0xef && data[1] === 0xbb && data[2] === 0xbf) return 'utf-8';
  if (data[0] === 0xff && data[1] === 0xfe) return 'utf-16le';
  if (data[0] === 0xfe && data[1] === 0xff) return 'utf-16be';
  return null;
}

function decode(data: Uint8Array, encoding: string): string {
  try {
    // The decoder drops the byte order mark of its own encoding.
    return new TextDecoder(encoding, { fatal: true }).decode(data);
  } catch {
    throw new UnreadableContentError(`its text is not valid ${encoding.toUpperCase()}`);
  }
}

/**
 * A CSV file's text: UTF-8 (a byte order mark is dropped), or UTF-16 with
 * its byte order mark, as spreadsheet programs save them; other bytes are
 * refused (UnreadableContentError) rather than guessed.
 */
export function decodeCsv(data: Uint8Array): string {
  return decode(data, bomEncoding(data) ?? 'utf-8');
}

/**
 * An HTML page's text, in the encoding its byte order mark or its
 * `<meta charset>` names (GBK, Big5, Shift_JIS, windows-1252… as
 * TextDecoder knows them), UTF-8 otherwise. Bytes that are not valid in
 * that encoding are refused (UnreadableContentError).
 */
export function decodeHtml(data: Uint8Array): string {
  const bom = bomEncoding(data);
  if (bom) return decode(data, bom);
  const declared = META_CHARSET.exec(Buffer.from(data.subarray(0, PRESCAN_BYTES)).toString('latin1'))?.[1];
  return decode(data, declared && knownEncoding(declared) ? declared.toLowerCase() : 'utf-8');
}

function knownEncoding(label: string): boolean {
  try {
    const encoding = new TextDecoder(label).encoding;
    // A page declaring UTF-16 without a byte order mark is read as its bytes are: ASCII-compatible (what browsers do).
    return !encoding.startsWith('utf-16');
  } catch {
    return false;
  }
}
