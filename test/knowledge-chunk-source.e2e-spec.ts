import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { createCollection, Headers, setAccess, uploadTo } from './support/collections.js';
import { createTestApp, TestApp, uniqueUser } from './support/test-app.js';

/**
 * Issue 23, item 6: a citation opens its source. GET /api/knowledge/chunks/:chunk_id gives the chunk's text, document,
 * collection, page or location and the chunks around it, under its collection's access rule.
 */
describe('GET /api/knowledge/chunks/:chunk_id', () => {
  let t: TestApp;
  const aliceId = uniqueUser('chunk-alice');
  const bobId = uniqueUser('chunk-bob');
  let alice: Headers;
  let bob: Headers;
  let collection: string;
  const tag = randomUUID().slice(0, 8);
  const FILENAME = `harbour-${tag}.md`;
  // Sections long enough to be leaves of their own, so the cited one has neighbours on both sides.
  const SECTIONS = ['Arrival', 'Moorings', 'Fees', 'Departure', 'Storms'].map(
    (name, i) => `## ${name}\n\n${`The harbour rule ${i + 1} of ${tag} concerns ${name.toLowerCase()} and is written down here in full. `.repeat(12)}`,
  );

  beforeAll(async () => {
    t = await createTestApp({ RATE_LIMIT_SEARCH_PER_MINUTE: '0' });
    alice = t.auth(aliceId);
    bob = t.auth(bobId);
    collection = (await createCollection(t, alice, 'Harbour rules')).id;
    await uploadTo(t, alice, collection, FILENAME, `# Harbour ${tag}\n\n${SECTIONS.join('\n\n')}\n`);
  }, 60_000);
  afterAll(async () => {
    await t?.close();
  });

  async function citedChunk(as: Headers, query: string): Promise<{ chunk_id: string; text: string; source: string }> {
    const res = await request(t.app.getHttpServer())
      .post('/api/knowledge/search')
      .set(as)
      .send({ query, collection_ids: [collection] })
      .expect(200);
    const chunk = res.body.chunks.find((c: { source: string }) => c.source === FILENAME);
    expect(chunk).toBeDefined();
    return chunk;
  }

  it('gives the cited chunk with its document, collection, location and the chunks around it, in document order', async () => {
    const cited = await citedChunk(alice, `harbour rule 3 ${tag} fees`);
    const res = await request(t.app.getHttpServer()).get(`/api/knowledge/chunks/${cited.chunk_id}`).set(alice).expect(200);
    expect(res.body).toMatchObject({
      chunk_id: cited.chunk_id,
      collection_id: collection,
      document: { id: expect.any(String), filename: FILENAME },
      page: null,
    });
    expect(res.body.text).toContain(tag);
    expect(res.body.location?.heading_path?.length).toBeGreaterThan(0);
    expect(res.body.before.length + res.body.after.length).toBeGreaterThan(0);
    const ids = [...res.body.before, res.body, ...res.body.after].map((c: { chunk_id: string }) => Number(c.chunk_id));
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    for (const neighbour of [...res.body.before, ...res.body.after]) {
      expect(Object.keys(neighbour).sort()).toEqual(['chunk_id', 'location', 'page', 'text']);
      expect(neighbour.text).toContain(tag);
    }
  });

  it('answers 404 to a user who cannot read the collection, exactly as for a missing chunk, until it is shared', async () => {
    const cited = await citedChunk(alice, `harbour rule 1 ${tag} arrival`);
    const hidden = await request(t.app.getHttpServer()).get(`/api/knowledge/chunks/${cited.chunk_id}`).set(bob).expect(404);
    const missing = await request(t.app.getHttpServer()).get('/api/knowledge/chunks/999999999999').set(bob).expect(404);
    expect(hidden.body.code).toBe('chunk_not_found');
    expect(missing.body.code).toBe('chunk_not_found');

    await setAccess(t, alice, collection, [
      { principal: `user:${aliceId}`, role: 'owner' },
      { principal: `user:${bobId}`, role: 'viewer' },
    ]);
    await request(t.app.getHttpServer()).get(`/api/knowledge/chunks/${cited.chunk_id}`).set(bob).expect(200);
    await setAccess(t, alice, collection, [{ principal: `user:${aliceId}`, role: 'owner' }]);
    await request(t.app.getHttpServer()).get(`/api/knowledge/chunks/${cited.chunk_id}`).set(bob).expect(404);
  });

  it('answers a forged id with a 4xx and a code, never a 500', async () => {
    for (const id of ['abc', '0', '-1', '1.5', '99999999999999999999', "1' OR '1'='1", '%00', encodeURIComponent('\u202e12'), '1'.repeat(41)]) {
      const res = await request(t.app.getHttpServer()).get(`/api/knowledge/chunks/${id}`).set(alice);
      expect([400, 404]).toContain(res.status);
      expect(res.body.code).toEqual(expect.any(String));
    }
  });
});
