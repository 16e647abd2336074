import request from 'supertest';
import { ensureDatabase } from '../src/database/ensure-database.js';
import { adminAuth } from './support/admin.js';
import { MAX_SHEET_NAME } from '../src/knowledge/ingest/parsers/xlsx-table.js';
import { assembleZip, makeDocx, makeXlsx, partsOf, zipBomb } from './support/make-office.js';
import { createTestApp, TestApp, uniqueUser } from './support/test-app.js';
import { dropDatabase, freshDatabaseUrl } from './support/test-module.js';

/** KNOWLEDGE_MAX_EXTRACTED_BYTES of this app: small, so that zip bombs are cheap to build. */
const MAX_EXTRACTED_BYTES = 1024 * 1024;

interface Chunk {
  source: string;
  page: number | null;
  location?: { sheet?: string; row?: number; heading_path?: string[] } | null;
  text: string;
}

/**
 * Issue 23, item 5: .docx, .html, .csv and .xlsx files, built here by libraries (docx, write-excel-file) or as
 * plain strings, uploaded as an administrator, answer questions about facts only they hold, through search and a
 * chat turn; a spreadsheet row is found as its own chunk, with its sheet and row. Hostile files (zip bombs,
 * encrypted, damaged, macro-enabled) are refused or fail their job with a clear code, never a 500 or a stuck job.
 */
describe('Knowledge base: Word, HTML, CSV and Excel documents', () => {
  let t: TestApp;
  const database = freshDatabaseUrl();
  const server = () => t.app.getHttpServer();
  const upload = (name: string, data: Buffer) => request(server()).post('/api/knowledge/documents?wait=true').set(adminAuth(t)).attach('file', data, name);
  const search = async (query: string): Promise<Chunk[]> =>
    (await request(server()).post('/api/knowledge/search').set(t.auth(uniqueUser())).send({ query, top_k: 3 }).expect(200)).body.chunks;
  const storedDocuments = async (name: string) => (await t.dataSource.query('SELECT count(*)::int AS n FROM knowledge_documents WHERE filename = $1', [name]))[0].n as number;

  beforeAll(async () => {
    await ensureDatabase(database);
    t = await createTestApp({ DATABASE_URL: database, KNOWLEDGE_MAX_EXTRACTED_BYTES: String(MAX_EXTRACTED_BYTES) });
  }, 120_000);
  afterAll(async () => {
    await t?.close();
    await dropDatabase(database);
  });

  it('answers from a .docx, keeping the heading path of the passage', async () => {
    const docx = await makeDocx([
      { heading: 1, text: 'Vortexa blender care' },
      `Clean the Vortexa jar with warm water after each use. ${'Dry every part before you store it. '.repeat(12)}`,
      { heading: 2, text: 'Blade maintenance' },
      'Replace the Vortexa blade assembly after 900 hours of blending.',
    ]);
    const res = await upload('vortexa-care.docx', docx).expect(201);
    expect(res.body.document).toMatchObject({ filename: 'vortexa-care.docx', content_type: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document' });
    const [top] = await search('When should the Vortexa blade assembly be replaced?');
    expect(top).toEqual(
      expect.objectContaining({
        source: 'vortexa-care.docx',
        page: null,
        location: { heading_path: ['Vortexa blender care', 'Blade maintenance'] },
        text: '## Blade maintenance\nReplace the Vortexa blade assembly after 900 hours of blending.',
      }),
    );
  });

  it('answers from an .html page: its main text, headings and links, never its scripts or styles', async () => {
    const html = `<!doctype html><html><head><title>Nimbus</title><style>.x{color:red}</style></head><body>
      <nav><a href="/">Shop home</a></nav>
      <main><h1>Nimbus tent</h1><p>The Nimbus tent withstands winds of up to 95 km/h. Read <a href="/pegs">the Nimbus peg guide</a>.</p>
      <script>window.nimbusSecret = 'Nimbus launch code 4417';</script></main></body></html>`;
    const res = await upload('nimbus-tent.html', Buffer.from(html)).expect(201);
    expect(res.body.document).toMatchObject({ content_type: 'text/html' });
    const [top] = await search('What wind speed does the Nimbus tent withstand?');
    expect(top).toMatchObject({ source: 'nimbus-tent.html', location: { heading_path: ['Nimbus tent'] } });
    expect(top.text).toMatch(/95 km\/h/);
    expect(top.text).toMatch(/Nimbus peg guide/);
    const texts = await t.dataSource.query(`SELECT c.text FROM knowledge_chunks c JOIN knowledge_documents d ON d.id = c.document_id WHERE d.filename = 'nimbus-tent.html'`);
    expect(texts.map((row: { text: string }) => row.text).join('\n')).not.toMatch(/launch code|nimbusSecret|color:red|Shop home/);
  });

  it('answers from a .csv file: each row its own chunk, carrying its header names and row number', async () => {
    const csv = 'Model,Price,Warranty\nQuillon Z5,249 EUR,2 years\nQuillon Z7,349 EUR,3 years\nQuillon Z9,449 EUR,3 years\n';
    const res = await upload('quillon-prices.csv', Buffer.from(csv)).expect(201);
    expect(res.body.document).toMatchObject({ content_type: 'text/csv', leaf_count: 3, chunk_count: 3 });
    const [top] = await search('What is the price of the Quillon Z7?');
    expect(top).toEqual(expect.objectContaining({ source: 'quillon-prices.csv', location: { row: 3 }, text: 'Model: Quillon Z7; Price: 349 EUR; Warranty: 3 years' }));
  });

  it('answers from an .xlsx workbook with the row chunk, its sheet and row, through search and a chat turn', async () => {
    const products = ['Arden', 'Brisa', 'Calder', 'Dunmore', 'Elsworth', 'Fenwick', 'Garrow', 'Halden', 'Iverson', 'Jarrow', 'Kestrel', 'Lindell'];
    const rows = products.map((name, i) => [`${name} K${i}`, `${100 + i * 10} EUR`, i % 2 === 0 ? 'in stock' : 'backorder']);
    rows.splice(7, 0, ['Solenne K4', '1299 EUR', 'in stock']);
    const xlsx = await makeXlsx([
      { name: 'Notes', rows: [['Prices valid until the end of the year.']] },
      { name: 'Price list', rows: [['Product', 'Price', 'Availability'], ...rows] },
    ]);
    const res = await upload('price-list.xlsx', xlsx).expect(201);
    expect(res.body.document).toMatchObject({ content_type: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', leaf_count: 14 });
    const [top] = await search('What is the price of the Solenne K4?');
    expect(top).toEqual(
      expect.objectContaining({
        source: 'price-list.xlsx',
        page: null,
        location: { sheet: 'Price list', row: 9 },
        text: 'Product: Solenne K4; Price: 1299 EUR; Availability: in stock',
      }),
    );
    const chat = await request(server()).post('/api/chat').set(t.auth(uniqueUser())).send({ message: 'What is the price of the Solenne K4?' }).expect(200);
    expect(chat.body.response).toMatch(/1299 EUR/);
    expect(chat.body.response).toContain('[price-list.xlsx]');
    expect(chat.body.rag_trace.final_chunks).toEqual(expect.arrayContaining([expect.objectContaining({ source: 'price-list.xlsx', location: { sheet: 'Price list', row: 9 } })]));
  });

  it('refuses macro-enabled Office files by their extension, and encrypted ones at once', async () => {
    const docx = await makeDocx(['A macro would run here.']);
    for (const name of ['macros.docm', 'macros.xlsm', 'macros.pptm']) {
      const res = await upload(name, docx).expect(415);
      expect(res.body).toMatchObject({ code: 'unsupported_document', message: `${name} is a macro-enabled Office file: those are refused; save it as ${name.slice(-5, -1)}x` });
    }
    // What Office writes for a password-protected .docx: an OLE compound file holding the encrypted package.
    const encrypted = Buffer.concat([Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]), Buffer.alloc(4096)]);
    const res = await upload('locked.xlsx', encrypted).expect(422);
    expect(res.body).toMatchObject({ code: 'unreadable_document', message: expect.stringMatching(/^locked\.xlsx is encrypted \(password-protected\)/) });
    expect(await storedDocuments('locked.xlsx')).toBe(0);
  });

  it('fails the job of a damaged or zip-encrypted Office file as unreadable, at its first attempt', async () => {
    const parts = partsOf(await makeDocx(['The secret recipe.']));
    const encrypted = assembleZip(parts.map((part) => (part.name === 'word/document.xml' ? { ...part, flags: 1 } : part)));
    const locked = await upload('zip-locked.docx', encrypted).expect(422);
    expect(locked.body).toMatchObject({ code: 'unreadable_document', message: 'zip-locked.docx could not be read as a Word document: it is encrypted' });
    const damaged = await upload('damaged.xlsx', Buffer.concat([Buffer.from('PK\u0003\u0004'), Buffer.alloc(2048, 7)])).expect(422);
    expect(damaged.body).toMatchObject({
      code: 'unreadable_document',
      message: 'damaged.xlsx could not be read as an Excel workbook: it is not a readable zip archive (damaged or truncated)',
    });
    const jobs = await t.dataSource.query(
      `SELECT filename, status, attempts, error_code FROM knowledge_ingest_jobs WHERE filename IN ('zip-locked.docx', 'damaged.xlsx') ORDER BY filename`,
    );
    expect(jobs).toEqual([
      { filename: 'damaged.xlsx', status: 'failed', attempts: 1, error_code: 'unreadable_document' },
      { filename: 'zip-locked.docx', status: 'failed', attempts: 1, error_code: 'unreadable_document' },
    ]);
  });

  it("stores a workbook's sheet name shortened, not repeated whole in every row's location", async () => {
    // Excel keeps sheet names to 31 characters; a crafted workbook names its sheet with 20 000, once, for 200 rows.
    const xlsx = await makeXlsx([{ name: 'S', rows: [['Product', 'Price'], ...Array.from({ length: 200 }, (_, i) => [`Tollund T${i}`, `${i} EUR`])] }]);
    const longName = `Tollund ${'n'.repeat(20_000)}`;
    const parts = partsOf(xlsx).map((part) =>
      part.name === 'xl/workbook.xml' && 'data' in part ? { ...part, data: Buffer.from(Buffer.from(part.data).toString('utf8').replace('name="S"', `name="${longName}"`)) } : part,
    );
    await upload('long-sheet-name.xlsx', assembleZip(parts)).expect(201);
    const [stored] = await t.dataSource.query(
      `SELECT count(*)::int AS rows, max(length(c.location->>'sheet'))::int AS longest, bool_and(starts_with(c.location->>'sheet', 'Tollund n')) AS named
         FROM knowledge_chunks c JOIN knowledge_documents d ON d.id = c.document_id WHERE d.filename = 'long-sheet-name.xlsx'`,
    );
    expect(stored).toEqual({ rows: 200, longest: MAX_SHEET_NAME, named: true });
  });

  it('fails the job of a .docx or .xlsx whose parts inflate past KNOWLEDGE_MAX_EXTRACTED_BYTES with document_too_large', async () => {
    const honest = await zipBomb(await makeDocx(['x']), 'word/document.xml', 512 * 1024 * 1024);
    const lying = await zipBomb(await makeXlsx([{ name: 'S', rows: [['a']] }]), 'xl/worksheets/sheet1.xml', 512 * 1024 * 1024, 4096);
    // Files of about 1.5 MB each that inflate to 512 MB.
    for (const bomb of [honest, lying]) expect(bomb.length).toBeLessThan(2 * 1024 * 1024);
    for (const [name, bomb] of [
      ['bomb.docx', honest],
      ['bomb.xlsx', lying],
    ] as const) {
      const res = await upload(name, bomb).expect(413);
      expect(res.body).toMatchObject({ code: 'document_too_large', message: `${name} is too large: its parts inflate to more than ${MAX_EXTRACTED_BYTES} bytes` });
      expect(await storedDocuments(name)).toBe(0);
    }
  });
});
