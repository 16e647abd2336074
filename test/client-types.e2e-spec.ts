import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { createAgenticRagClient, parseSse, type StreamEvent } from '../clients/typescript/src/index.js';
import { CLIENT_ERROR_CODES_FILE, CLIENT_OPENAPI_FILE, CLIENT_SCHEMA_FILE, errorCodesModuleText, generateClientTypes, openApiDocumentText } from '../scripts/client-types.js';
import { buildOfflineOpenApiDocument } from '../scripts/openapi-document.js';
import { createTestApp, TestApp, uniqueUser } from './support/test-app.js';

const REGENERATE = 'The committed client is out of date with the API: run `npm run client:generate` and commit the result.';

/** A body that arrives in the given pieces. */
function bodyOf(chunks: Uint8Array[]): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      controller.close();
    },
  });
}

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const item of items) all.push(item);
  return all;
}

const WIRE =
  ': stream open\n\n' +
  'id: 1\nevent: metadata\ndata: {"run_id":"r","session_id":"s"}\n\n' +
  ': heartbeat\n\n' +
  'id: 2\r\nevent: token\r\ndata: {"text":"半"}\r\n\r\n' +
  'id: 3\revent: token\rdata: {"text":\rdata: "价"}\r\r' +
  'event: done\ndata: {"response":"半价","session_id":"s"}\n\n';

describe('The TypeScript client (clients/typescript)', () => {
  it('has types generated from the current OpenAPI document', async () => {
    const document = await buildOfflineOpenApiDocument();
    expect({ file: CLIENT_OPENAPI_FILE, upToDate: (await readFile(CLIENT_OPENAPI_FILE, 'utf8')) === openApiDocumentText(document), fix: REGENERATE }).toEqual({
      file: CLIENT_OPENAPI_FILE,
      upToDate: true,
      fix: REGENERATE,
    });
    const codesUpToDate = (await readFile(CLIENT_ERROR_CODES_FILE, 'utf8')) === errorCodesModuleText(document);
    expect({ file: CLIENT_ERROR_CODES_FILE, upToDate: codesUpToDate, fix: REGENERATE }).toEqual({ file: CLIENT_ERROR_CODES_FILE, upToDate: true, fix: REGENERATE });
    const work = await mkdtemp(join(tmpdir(), 'client-types-'));
    try {
      const generated = join(work, 'schema.d.ts');
      await generateClientTypes(document, generated);
      const upToDate = (await readFile(generated, 'utf8')) === (await readFile(CLIENT_SCHEMA_FILE, 'utf8'));
      expect({ file: CLIENT_SCHEMA_FILE, upToDate, fix: REGENERATE }).toEqual({ file: CLIENT_SCHEMA_FILE, upToDate: true, fix: REGENERATE });
    } finally {
      await rm(work, { recursive: true, force: true });
    }
  });

  describe('its SSE reader', () => {
    const expected = [
      { id: '1', event: 'metadata', data: '{"run_id":"r","session_id":"s"}' },
      { id: '2', event: 'token', data: '{"text":"半"}' },
      { id: '3', event: 'token', data: '{"text":\n"价"}' },
      // No id field: SSE keeps the last one.
      { id: '3', event: 'done', data: '{"response":"半价","session_id":"s"}' },
    ];

    it('parses LF, CR and CRLF lines, comments and multi-line data', async () => {
      expect(await collect(parseSse(bodyOf([new TextEncoder().encode(WIRE)])))).toEqual(expected);
    });

    it('gives the same events whatever the chunk boundaries, even inside a character or a CRLF', async () => {
      const bytes = new TextEncoder().encode(WIRE);
      for (let cut = 1; cut < bytes.length; cut += 1) {
        const events = await collect(parseSse(bodyOf([bytes.slice(0, cut), bytes.slice(cut)])));
        expect({ cut, events }).toEqual({ cut, events: expected });
      }
      expect(await collect(parseSse(bodyOf(Array.from(bytes, (byte) => Uint8Array.of(byte)))))).toEqual(expected);
    });
  });

  describe('against the app', () => {
    let t: TestApp;
    let base: string;
    beforeAll(async () => {
      // The offline document is development's (it has the development-only POST /api/dev/token): compare with the same.
      t = await createTestApp({ NODE_ENV: 'development', JWT_SECRET: '' });
      base = await t.listen();
    });
    afterAll(async () => {
      await t.close();
    });

    it('builds the same document offline as the app serves at /docs-json', async () => {
      const served = (await request(t.app.getHttpServer()).get('/docs-json').expect(200)).body;
      expect(await buildOfflineOpenApiDocument()).toEqual(served);
    });

    it('streams a turn with typed events, resumes it after a drop from the last id, and lists the session', async () => {
      const user = uniqueUser('client');
      const token = t.auth(user).Authorization.slice('Bearer '.length);
      const client = createAgenticRagClient({ baseUrl: base, token });

      const turn = client.chat.stream({ message: 'How do I reset the Aurora X1 router to factory settings?' });
      const before: StreamEvent[] = [];
      for await (const event of turn) {
        before.push(event);
        if (event.event === 'metadata') break; // the connection drops here
      }
      expect(turn.runId).toEqual(expect.any(String));
      expect(turn.lastEventId).toBe(1);
      expect(turn.ended).toBe(false);

      const rest = turn.resume();
      const after = await collect(rest);
      const ids = [...before, ...after].map((event) => event.id);
      expect(ids).toEqual(ids.map((_, index) => index + 1));
      const done = after.at(-1)!;
      expect(done.event).toBe('done');
      if (done.event !== 'done') return;
      expect(done.data.response).toMatch(/reset button/);
      expect(rest.ended).toBe(true);
      const tools = after.flatMap((event) => (event.event === 'tool' ? [event.data] : []));
      expect(tools[0]).toMatchObject({ name: 'knowledge_search', phase: 'start', summary: { args: expect.any(Object) } });
      expect(tools[1]).toMatchObject({ name: 'knowledge_search', phase: 'end', summary: { output: expect.any(String), truncated: expect.any(Boolean) } });

      // A finished run: cancel answers it as it ended.
      expect(await turn.cancel()).toMatchObject({ run_id: turn.runId, status: 'done' });

      const sessions = await client.api.GET('/api/sessions');
      expect(sessions.response.status).toBe(200);
      expect(sessions.data?.sessions.map((session) => session.session_id)).toEqual([done.data.session_id]);
    });

    it('throws the API error when a stream cannot open', async () => {
      const client = createAgenticRagClient({ baseUrl: base, token: 'not-a-token' });
      await expect(collect(client.chat.stream({ message: 'hi' }))).rejects.toMatchObject({ name: 'ApiError', status: 401 });
    });
  });
});
