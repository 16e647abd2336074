import request from 'supertest';
import { RetrievalScope } from '../../src/knowledge/collections/retrieval-scope.js';
import { CollectionAccess, DEFAULT_COLLECTION_ID } from '../../src/knowledge/public-api.js';
import type { TestApp } from './test-app.js';

export type Headers = { Authorization: string };

/** A bearer header for `userId` in `groups` (the default JWT_GROUPS_CLAIM, `groups`). */
export function groupAuth(app: Pick<TestApp, 'auth'>, userId: string, groups: string[], claims: Record<string, unknown> = {}): Headers {
  return app.auth(userId, { groups, ...claims });
}

export interface CollectionBody {
  id: string;
  name: string;
  description: string;
  owner: string | null;
  role: 'viewer' | 'editor' | 'owner';
  document_count: number;
  created_at: string;
  updated_at: string;
}

/** Creates a collection as `as` (201 expected); returns it. */
export async function createCollection(app: TestApp, as: Headers, name: string, description?: string): Promise<CollectionBody> {
  const res = await request(app.app.getHttpServer())
    .post('/api/knowledge/collections')
    .set(as)
    .send({ name, ...(description === undefined ? {} : { description }) });
  if (res.status !== 201) throw new Error(`creating collection ${name}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as CollectionBody;
}

/** Replaces the access list of `collectionId` as `as` (200 expected). */
export async function setAccess(app: TestApp, as: Headers, collectionId: string, entries: Array<{ principal: string; role: string }>): Promise<void> {
  const res = await request(app.app.getHttpServer()).put(`/api/knowledge/collections/${collectionId}/access`).set(as).send({ entries });
  if (res.status !== 200) throw new Error(`setting the access of ${collectionId}: ${res.status} ${JSON.stringify(res.body)}`);
}

/** Uploads `text` as `filename` into the collection and waits for its job (201 expected); returns the document id. */
export async function uploadTo(app: TestApp, as: Headers, collectionId: string, filename: string, text: string): Promise<string> {
  const res = await request(app.app.getHttpServer())
    .post(`/api/knowledge/collections/${collectionId}/documents?wait=true`)
    .set(as)
    .attach('file', Buffer.from(text, 'utf8'), filename);
  if (res.status !== 201) throw new Error(`uploading ${filename}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.document.id as string;
}

/** Every collection: what tests of the index itself rank (the dense and full-text legs over all leaves). */
export const EVERY_COLLECTION = RetrievalScope.unrestricted();

/** The default collection alone: where the documents a test ingests without naming a collection land. */
export const DEFAULT_SCOPE = RetrievalScope.of([DEFAULT_COLLECTION_ID]);

/** The scope of a search by a user with no access entries or groups of its own (as a fresh `uniqueUser()` searches): what everyone reads. */
export function everyonesScope(app: Pick<TestApp, 'app'>): Promise<RetrievalScope> {
  return app.app.get(CollectionAccess).retrievalScope({ userId: 'anyone-without-entries', isAdmin: false, groups: [] });
}
