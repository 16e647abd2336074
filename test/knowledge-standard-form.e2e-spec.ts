import request from 'supertest';
import { ensureDatabase } from '../src/database/ensure-database.js';
import { adminAuth } from './support/admin.js';
import { createTestApp, TestApp, uniqueUser } from './support/test-app.js';
import { dropDatabase, freshDatabaseUrl } from './support/test-module.js';

/**
 * Questions are read in a standard form (simplified characters, half-width letters: src/common/standard-form.ts),
 * while documents are indexed as written: a document in traditional characters is still found by a question in
 * traditional characters, through search and a chat turn.
 */
describe('Knowledge base: a document in traditional characters', () => {
  let t: TestApp;
  const database = freshDatabaseUrl();
  const server = () => t.app.getHttpServer();
  // No word of it is written the same in simplified characters (鐵觀音 is 铁观音, 開封後 is 开封后).
  const notes = ['# 鐵觀音儲藏須知', '## 儲藏', '鐵觀音應儲藏於陰涼乾燥處。', '## 開封', '開封後請於兩週內飲用完畢。'].join('\n');

  beforeAll(async () => {
    await ensureDatabase(database);
    t = await createTestApp({ DATABASE_URL: database });
    await request(server()).post('/api/knowledge/documents?wait=true').set(adminAuth(t)).attach('file', Buffer.from(notes), '鐵觀音儲藏須知.md').expect(201);
  }, 120_000);
  afterAll(async () => {
    await t?.close();
    await dropDatabase(database);
  });

  it('is found by a question in traditional characters, and answers it as written', async () => {
    const question = '鐵觀音開封後多久要喝完？';
    const found = await request(server()).post('/api/knowledge/search').set(t.auth(uniqueUser())).send({ query: question, top_k: 3 }).expect(200);
    expect(found.body.chunks[0]).toMatchObject({ source: '鐵觀音儲藏須知.md' });
    expect(found.body.chunks[0].text).toContain('開封後請於兩週內飲用完畢');
    expect(found.body.rag_trace.query).toBe(question);

    const chat = await request(server()).post('/api/chat').set(t.auth(uniqueUser())).send({ message: question }).expect(200);
    expect(chat.body.response).toMatch(/^根据知识库：開封後請於兩週內飲用完畢。 \[鐵觀音儲藏須知\.md\]/);
  });
});
