import { zipSync } from 'fflate';
import yauzl, { Entry } from 'yauzl';
import { ExtractionLimitError, UnreadableContentError } from '../extraction-budget.js';

/** Most entries an Office file's archive may list: a .docx or .xlsx has tens, a big workbook a few hundred. */
export const MAX_ARCHIVE_ENTRIES = 10_000;

const STORED = 0;
const DEFLATED = 8;

/**
 * The parts of an Office Open XML file (.docx, .xlsx: a zip archive) that
 * `keep` selects, inflated under a bound: their declared uncompressed sizes
 * are added up before anything is inflated, and the bytes actually inflated
 * are counted as they come, so an archive that inflates past `maxBytes` in
 * all (a zip bomb, honest or lying about its sizes) is given up after at most
 * `maxBytes` (ExtractionLimitError). Parts left out (images, embedded files,
 * macros, themes) are never inflated. An archive that is damaged or
 * encrypted throws UnreadableContentError.
 */
export async function readArchiveParts(data: Uint8Array, keep: (name: string) => boolean, maxBytes: number): Promise<Map<string, Uint8Array>> {
  const zip = await yauzl
    .fromBufferPromise(Buffer.from(data.buffer, data.byteOffset, data.byteLength), { lazyEntries: true, validateEntrySizes: false, strictFileNames: false })
    .catch(() => {
      throw new UnreadableContentError('it is not a readable zip archive (damaged or truncated)');
    });
  if (zip.entryCount > MAX_ARCHIVE_ENTRIES) throw new ExtractionLimitError(`its archive lists ${zip.entryCount} files, more than the ${MAX_ARCHIVE_ENTRIES} allowed`);
  const wanted: Entry[] = [];
  const names = new Set<string>();
  let declared = 0;
  try {
    for await (const entry of zip.eachEntry()) {
      if (entry.fileName.endsWith('/') || !keep(entry.fileName)) continue;
      if (names.has(entry.fileName)) throw new UnreadableContentError('it is damaged: its archive lists a part twice');
      names.add(entry.fileName);
      if (entry.isEncrypted()) throw new UnreadableContentError('it is encrypted');
      if (entry.compressionMethod !== STORED && entry.compressionMethod !== DEFLATED) {
        throw new UnreadableContentError(`it uses a zip compression method (${entry.compressionMethod}) Office files do not use`);
      }
      declared += entry.uncompressedSize;
      if (declared > maxBytes) throw new ExtractionLimitError(`its parts inflate to more than ${maxBytes} bytes`);
      wanted.push(entry);
    }
  } catch (error) {
    if (error instanceof ExtractionLimitError || error instanceof UnreadableContentError) throw error;
    throw new UnreadableContentError('it is not a readable zip archive (damaged or truncated)');
  }
  const parts = new Map<string, Uint8Array>();
  const counter = { inflated: 0 };
  for (const entry of wanted) parts.set(entry.fileName, await inflateEntry(zip, entry, maxBytes, counter));
  return parts;
}

/** One entry, inflated while counting: past `maxBytes` in all it is too large; not its declared size, damaged. */
async function inflateEntry(zip: yauzl.ZipFile, entry: Entry, maxBytes: number, counter: { inflated: number }): Promise<Uint8Array> {
  const stream = await zip.openReadStreamPromise(entry).catch(() => {
    throw new UnreadableContentError('it is damaged: a part of its archive cannot be read');
  });
  const chunks: Buffer[] = [];
  let length = 0;
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      length += chunk.length;
      counter.inflated += chunk.length;
      // A part that inflates past its declared size is damaged, or a bomb lying about its size: it is read on (the
      // total stays bounded), so that one that expands past the limit is reported as too large either way.
      if (counter.inflated > maxBytes) throw new ExtractionLimitError(`its parts inflate to more than ${maxBytes} bytes`);
      chunks.push(chunk);
    }
  } catch (error) {
    stream.destroy();
    if (error instanceof ExtractionLimitError || error instanceof UnreadableContentError) throw error;
    throw new UnreadableContentError('it is damaged: a part of its archive cannot be inflated');
  }
  if (length !== entry.uncompressedSize) throw new UnreadableContentError('it is damaged: a part does not inflate to the size its archive says');
  return Buffer.concat(chunks, length);
}

/**
 * A new archive of `parts`, stored without compression: what the format's
 * parser is given, so that nothing it reads inflates beyond what
 * readArchiveParts counted.
 */
export function storedArchive(parts: Map<string, Uint8Array>): Uint8Array {
  const files: Record<string, Uint8Array> = Object.create(null);
  for (const [name, data] of parts) files[name] = data;
  return zipSync(files, { level: 0 });
}

/** A part's path split at '/', lower-cased: for the formats' choice of parts. */
export function pathSegments(name: string): string[] {
  return name.toLowerCase().split('/');
}
