import { JwtService } from '@nestjs/jwt';
import request from 'supertest';
import { adminBearer } from './support/admin.js';
import { OwnPostgres } from './support/own-postgres.js';
import { ServiceProcess, startService, waitUntil } from './support/service-process.js';
import { uniqueUser } from './support/test-app.js';
import { TEST_JWT_SECRET } from './support/test-env.js';

type ServedBy = 'replica' | 'primary_replica_behind' | 'primary_replica_unusable' | 'primary_replica_failed';
type Read = 'session_list' | 'transcript' | 'knowledge_search' | 'collection_list';

/**
 * A streaming replica made with pg_basebackup of a PostgreSQL of the test's
 * own, as DATABASE_READ_URL of two instances of the built service: `patient`
 * lets the replica lag 10 minutes, `strict` 300 ms; both rank the dense leg
 * with pgvector. Who served each read is
 * told by `db_reads_total{read, served_by}` at /metrics.
 */
describe('A read replica (DATABASE_READ_URL): reads served by it, read-your-writes while it is held behind, the primary when it lags or is down', () => {
  const primary = new OwnPostgres();
  let replica: OwnPostgres;
  let patient: ServiceProcess;
  let strict: ServiceProcess;
  const admin = adminBearer();
  const tokens = new JwtService({ secret: TEST_JWT_SECRET });
  const userAuth = (user: string) => ({ Authorization: `Bearer ${tokens.sign({ sub: user }, { algorithm: 'HS256', expiresIn: '1h' })}` });

  beforeAll(async () => {
    await primary.start();
    await primary.createDatabase('replicated');
    replica = OwnPostgres.replicaOf(primary);
    await replica.start();
    const env = (maxLagMs: number) => ({
      DATABASE_URL: primary.url('replicated'),
      DATABASE_READ_URL: replica.url('replicated'),
      DATABASE_READ_MAX_LAG_MS: String(maxLagMs),
      WEB_CLIENT_ENABLED: 'false',
      // The dense leg in the database too (HNSW), so that all of a search's reads can be the replica's.
      RAG_DENSE_BACKEND: 'pgvector',
    });
    patient = await startService(env(600_000), { startupTimeoutMs: 120_000 });
    strict = await startService(env(300), { startupTimeoutMs: 120_000 });
    await replica.caughtUp();
    for (const service of [patient, strict]) await service.waitForLog(/read replica serves reads/, 30_000);
  }, 240_000);

  afterAll(async () => {
    await Promise.all([patient?.stop(), strict?.stop()]);
    await replica?.destroy();
    await primary.destroy();
  });

  const http = (service: ServiceProcess) => request(service.baseUrl);

  /** `db_reads_total` of `service` by read and who served it. */
  async function reads(service: ServiceProcess): Promise<Record<string, number>> {
    const text = (await http(service).get('/metrics').expect(200)).text;
    const counts: Record<string, number> = {};
    for (const match of text.matchAll(/^db_reads_total\{read="([a-z_]+)",served_by="([a-z_]+)"\} (\d+)$/gm)) counts[`${match[1]}/${match[2]}`] = Number(match[3]);
    return counts;
  }

  /** What `work` added to `db_reads_total` of `service`, by read and who served it. */
  async function servedDuring(service: ServiceProcess, work: () => Promise<unknown>): Promise<Partial<Record<`${Read}/${ServedBy}`, number>>> {
    const before = await reads(service);
    await work();
    const after = await reads(service);
    return Object.fromEntries(Object.entries(after).flatMap(([key, count]) => (count > (before[key] ?? 0) ? [[key, count - (before[key] ?? 0)]] : [])));
  }

  async function turn(service: ServiceProcess, user: string, message: string, sessionId?: string): Promise<string> {
    const res = await http(service)
      .post('/api/chat')
      .set(userAuth(user))
      .send({ message, ...(sessionId ? { session_id: sessionId } : {}) })
      .expect(200);
    return res.body.session_id as string;
  }

  const listTitles = async (service: ServiceProcess, user: string, q?: string) =>
    (
      (
        await http(service)
          .get('/api/sessions')
          .query(q ? { q } : {})
          .set(userAuth(user))
          .expect(200)
      ).body.sessions as Array<{ title: string }>
    ).map((s) => s.title);
  const transcriptTypes = async (service: ServiceProcess, user: string, sessionId: string) =>
    ((await http(service).get(`/api/sessions/${sessionId}/messages`).set(userAuth(user)).expect(200)).body.messages as Array<{ type: string }>).map((m) => m.type);

  it('serves the session list, the transcript, knowledge search and the collection list from the replica once it has caught up', async () => {
    const user = uniqueUser('replicated');
    const sessionId = await turn(patient, user, 'Quokka lantern question one');
    const collection = await http(patient).post('/api/knowledge/collections').set(admin).send({ name: 'Replicated shelf' }).expect(201);
    await replica.caughtUp();

    const served = await servedDuring(patient, async () => {
      expect(await listTitles(patient, user)).toEqual(['Quokka lantern question one']);
      expect(await listTitles(patient, user, 'Quokka')).toEqual(['Quokka lantern question one']);
      expect(await transcriptTypes(patient, user, sessionId)).toEqual(['human', 'ai']);
      const collections = (await http(patient).get('/api/knowledge/collections').set(admin).expect(200)).body.collections as Array<{ id: string }>;
      expect(collections.map((c) => c.id)).toContain(collection.body.id);
      const search = await http(patient).post('/api/knowledge/search').set(admin).send({ query: 'How do I reset the Aurora X1 router?', top_k: 3 }).expect(200);
      expect(search.body.chunks.length).toBeGreaterThan(0);
    });
    expect(served).toEqual({
      'session_list/replica': 2,
      'transcript/replica': 1,
      'collection_list/replica': 1,
      // The full-text ranking, pgvector's, and the rows of the fused leaves.
      'knowledge_search/replica': 3,
    });
  });

  describe('with the replica held behind (its WAL replay paused)', () => {
    beforeAll(() => replica.pauseReplay());
    afterAll(async () => {
      await replica.resumeReplay();
      await replica.caughtUp();
    });

    it("never hides a user's own writes: what the replica lacks is read from the primary", async () => {
      const user = uniqueUser('own-writes');
      const sessionId = await turn(patient, user, 'First question about the Quokka lantern');
      const served = await servedDuring(patient, async () => {
        expect(await listTitles(patient, user)).toEqual(['First question about the Quokka lantern']);
        expect(await transcriptTypes(patient, user, sessionId)).toEqual(['human', 'ai']);
        await turn(patient, user, 'And a second one', sessionId);
        const page = await http(patient).get(`/api/sessions/${sessionId}/messages`).query({ limit: 1 }).set(userAuth(user)).expect(200);
        expect(page.body.messages.map((m: { type: string }) => m.type)).toEqual(['ai']);
        expect(await transcriptTypes(patient, user, sessionId)).toEqual(['human', 'ai', 'human', 'ai']);

        const created = await http(patient).post('/api/knowledge/collections').set(admin).send({ name: 'Made while the replica waits' }).expect(201);
        const collections = (await http(patient).get('/api/knowledge/collections').set(admin).expect(200)).body.collections as Array<{ id: string }>;
        expect(collections.map((c) => c.id)).toContain(created.body.id);

        const upload = await http(patient)
          .post('/api/knowledge/documents?wait=true')
          .set(admin)
          .attach('file', Buffer.from('# Wombat-9 kettle\n\nThe Wombat-9 kettle boils a litre in 97 seconds.\n'), 'wombat-9.md');
        expect(upload.status).toBe(201);
        const search = await http(patient).post('/api/knowledge/search').set(admin).send({ query: 'How fast does the Wombat-9 kettle boil?', top_k: 3 }).expect(200);
        expect((search.body.chunks as Array<{ text: string }>).map((chunk) => chunk.text).join('\n')).toContain('97 seconds');
      });
      expect(served).toMatchObject({
        'session_list/primary_replica_behind': 1,
        // The whole transcript, the page after the second turn, the whole transcript again.
        'transcript/primary_replica_behind': 3,
        'collection_list/primary_replica_behind': 1,
        'knowledge_search/primary_replica_behind': 3,
      });
      // (A knowledge search of the second turn, before the upload, may still be the replica's: it held that version.)
      expect(Object.keys(served).filter((key) => key.endsWith('/replica') && !key.startsWith('knowledge_search/'))).toEqual([]);
    });

    /** Runs `setUp` with the replica replaying, waits until it has replayed it, and holds it behind again. */
    async function replicatedBeforeThePause<T>(setUp: () => Promise<T>): Promise<T> {
      await replica.resumeReplay();
      const made = await setUp();
      await replica.caughtUp();
      await replica.pauseReplay();
      return made;
    }

    it('shows a rename and a delete of sessions the replica holds at once, on either instance, cursor pages included', async () => {
      const user = uniqueUser('renamer');
      const [first, second] = await replicatedBeforeThePause(async () => [
        await turn(patient, user, 'Numbat first'),
        await turn(patient, user, 'Numbat second'),
        await turn(patient, user, 'Numbat third'),
      ]);
      expect(await listTitles(patient, user)).toEqual(['Numbat third', 'Numbat second', 'Numbat first']);
      // Written on the other instance, read on this one: the versions checked are the primary's, not an instance's.
      await http(strict).patch(`/api/sessions/${first}`).set(userAuth(user)).send({ title: 'Numbat renamed' }).expect(200);
      await http(strict).delete(`/api/sessions/${second}`).set(userAuth(user)).expect(200);
      const served = await servedDuring(patient, async () => {
        expect(await listTitles(patient, user)).toEqual(['Numbat third', 'Numbat renamed']);
        expect(await listTitles(patient, user, 'renamed')).toEqual(['Numbat renamed']);
        const page = await http(patient).get('/api/sessions').query({ limit: 1 }).set(userAuth(user)).expect(200);
        expect(page.body.sessions.map((s: { title: string }) => s.title)).toEqual(['Numbat third']);
        const next = await http(patient).get('/api/sessions').query({ limit: 1, cursor: page.body.next_cursor }).set(userAuth(user)).expect(200);
        expect({ titles: next.body.sessions.map((s: { title: string }) => s.title), next: next.body.next_cursor }).toEqual({ titles: ['Numbat renamed'], next: null });
        await http(patient).get(`/api/sessions/${second}/messages`).set(userAuth(user)).expect(404);
      });
      expect(Object.keys(served).filter((key) => key.endsWith('/replica'))).toEqual([]);
      expect(served['session_list/primary_replica_behind']).toBeGreaterThanOrEqual(1);
    });

    it('shows a revoked and a granted collection, a deleted collection and a deleted document at once: lists and searches never use what the replica still holds', async () => {
      const reader = uniqueUser('reader');
      const readerPrincipal = `user:${reader}`;
      const shelf = async (name: string, principals: string[] = []) => {
        const created = await http(patient).post('/api/knowledge/collections').set(admin).send({ name }).expect(201);
        const id = created.body.id as string;
        if (principals.length > 0) {
          const entries = [{ principal: `user:${created.body.owner as string}`, role: 'owner' }, ...principals.map((principal) => ({ principal, role: 'viewer' }))];
          await http(patient).put(`/api/knowledge/collections/${id}/access`).set(admin).send({ entries }).expect(200);
        }
        return id;
      };
      const upload = (collection: string, name: string, text: string) =>
        http(patient).post(`/api/knowledge/collections/${collection}/documents?wait=true`).set(admin).attach('file', Buffer.from(text), name).expect(201);
      const { revoked, granted, doomed, kept, keptDocument } = await replicatedBeforeThePause(async () => {
        const revoked = await shelf('Shelf to revoke', [readerPrincipal]);
        await upload(revoked, 'okapi.md', '# Okapi-4 lamp\n\nThe Okapi-4 lamp runs for 31 hours on one charge.\n');
        const granted = await shelf('Shelf to grant');
        const doomed = await shelf('Shelf to delete');
        const kept = await shelf('Shelf that stays', [readerPrincipal]);
        const keptDocument = (await upload(kept, 'tapir.md', '# Tapir-2 fan\n\nThe Tapir-2 fan turns at 1450 revolutions a minute.\n')).body.document.id as string;
        return { revoked, granted, doomed, kept, keptDocument };
      });
      const readable = async () =>
        ((await http(patient).get('/api/knowledge/collections').set(userAuth(reader)).expect(200)).body.collections as Array<{ id: string }>).map((c) => c.id);
      expect(await readable()).toEqual(expect.arrayContaining([revoked, kept]));

      const owner = `user:${(await http(patient).get(`/api/knowledge/collections/${revoked}`).set(admin).expect(200)).body.owner as string}`;
      await http(strict)
        .put(`/api/knowledge/collections/${revoked}/access`)
        .set(admin)
        .send({ entries: [{ principal: owner, role: 'owner' }] })
        .expect(200);
      await http(strict)
        .put(`/api/knowledge/collections/${granted}/access`)
        .set(admin)
        .send({
          entries: [
            { principal: owner, role: 'owner' },
            { principal: readerPrincipal, role: 'viewer' },
          ],
        })
        .expect(200);
      await http(strict).delete(`/api/knowledge/collections/${doomed}`).set(admin).expect(200);
      await http(strict).delete(`/api/knowledge/collections/${kept}/documents/${keptDocument}`).set(admin).expect(200);

      const served = await servedDuring(patient, async () => {
        const ids = await readable();
        expect(ids).toContain(granted);
        expect(ids).not.toContain(revoked);
        expect(ids).toContain(kept);
        const adminIds = ((await http(patient).get('/api/knowledge/collections').set(admin).expect(200)).body.collections as Array<{ id: string }>).map((c) => c.id);
        expect(adminIds).not.toContain(doomed);
        await http(patient)
          .post('/api/knowledge/search')
          .set(userAuth(reader))
          .send({ query: 'How long does the Okapi-4 lamp run?', collection_ids: [revoked] })
          .expect(404);
        const search = async (query: string) =>
          ((await http(patient).post('/api/knowledge/search').set(userAuth(reader)).send({ query, top_k: 5 }).expect(200)).body.chunks as Array<{ text: string }>)
            .map((c) => c.text)
            .join('\n');
        expect(await search('How long does the Okapi-4 lamp run on one charge?')).not.toContain('31 hours');
        expect(await search('How fast does the Tapir-2 fan turn?')).not.toContain('1450');
      });
      expect(Object.keys(served).filter((key) => key.endsWith('/replica'))).toEqual([]);
    });

    it("shows a LangGraph thread's new turn at once in its state and history, read on the other instance", async () => {
      const user = uniqueUser('threads');
      const post = (service: ServiceProcess, path: string, body: unknown) =>
        http(service)
          .post(`/langgraph${path}`)
          .set(userAuth(user))
          .send(body as object);
      const ask = (service: ServiceProcess, threadId: string, text: string) =>
        post(service, `/threads/${threadId}/runs/wait`, { assistant_id: 'agent', input: { messages: [{ type: 'human', content: text }] } }).expect(200);
      const threadId = await replicatedBeforeThePause(async () => {
        const thread = (await post(patient, '/threads', {}).expect(200)).body.thread_id as string;
        await ask(patient, thread, 'First question of the thread');
        return thread;
      });
      const types = async () =>
        ((await http(patient).get(`/langgraph/threads/${threadId}/state`).set(userAuth(user)).expect(200)).body.values.messages as Array<{ type: string }>).map((m) => m.type);
      expect(await types()).toEqual(['human', 'ai']);
      await ask(strict, threadId, 'Second question of the thread');
      const served = await servedDuring(patient, async () => {
        expect(await types()).toEqual(['human', 'ai', 'human', 'ai']);
        const history = (await post(patient, `/threads/${threadId}/history`, { limit: 1 }).expect(200)).body as Array<{ values: { messages: unknown[] } }>;
        expect(history[0].values.messages).toHaveLength(4);
      });
      expect(Object.keys(served).filter((key) => key.endsWith('/replica'))).toEqual([]);
    });

    it("still serves from the replica what it holds up to date (another user's list), within DATABASE_READ_MAX_LAG_MS", async () => {
      const quiet = uniqueUser('quiet');
      const busy = uniqueUser('busy');
      await replica.resumeReplay();
      await turn(patient, quiet, 'A quiet question');
      await replica.caughtUp();
      await replica.pauseReplay();
      await turn(patient, busy, 'A busy question');
      const served = await servedDuring(patient, async () => {
        expect(await listTitles(patient, quiet, 'quiet')).toEqual(['A quiet question']);
        expect(await listTitles(patient, busy, 'busy')).toEqual(['A busy question']);
      });
      expect(served).toEqual({ 'session_list/replica': 1, 'session_list/primary_replica_behind': 1 });
    });

    it('reads from the primary once the replica lags past DATABASE_READ_MAX_LAG_MS', async () => {
      const user = uniqueUser('lagging');
      await turn(strict, user, 'A question while the replica lags');
      // WAL the replica received and has not applied: its lag grows until the strict instance stops using it.
      await waitUntil(
        async () => (await servedDuring(strict, () => listTitles(strict, user, 'lags')))['session_list/primary_replica_unusable'] === 1,
        'the lagging replica to be left',
        60_000,
        50,
      );
      const served = await servedDuring(strict, async () => {
        expect(await listTitles(strict, user, 'lags')).toEqual(['A question while the replica lags']);
        expect((await http(strict).get('/api/knowledge/collections').set(admin).expect(200)).body.collections.length).toBeGreaterThan(0);
      });
      expect(served).toEqual({ 'session_list/primary_replica_unusable': 1, 'collection_list/primary_replica_unusable': 1 });
    });
  });

  it("leaves the replica when its WAL stream stalls while its receiver lives: its lag is measured against the primary's WAL, not against what it received", async () => {
    const user = uniqueUser('stalled');
    await turn(strict, user, 'A question before the stream stalls');
    await replica.caughtUp();
    const servedFirst = async () => (await servedDuring(strict, () => listTitles(strict, user, 'stalls')))['session_list/replica'] === 1;
    await waitUntil(servedFirst, 'the strict instance to read from the replica', 60_000, 50);
    const fromLine = strict.lines().length;
    const senders = await primary.holdWalSenders();
    try {
      await turn(strict, user, 'A question while the stream stalls');
      // The replica has replayed all it has received, and its receiver runs: only the primary's position shows the lag.
      await waitUntil(
        async () => (await servedDuring(strict, () => listTitles(strict, user, 'stalls')))['session_list/primary_replica_unusable'] === 1,
        'the stalled replica to be left',
        60_000,
        50,
      );
      await strict.waitForLog(/read replica left: it lags (more than )?\d+ ms/, 10_000, fromLine);
      expect(await listTitles(strict, user, 'stalls')).toEqual(['A question while the stream stalls', 'A question before the stream stalls']);
    } finally {
      primary.releaseWalSenders(senders);
    }
    await replica.caughtUp();
    await waitUntil(servedFirst, 'the replica to serve again once its stream flows', 60_000, 50);
  });

  it('never reads from a DATABASE_READ_URL that is no standby (the primary itself, say), and says why', async () => {
    const misdirected = await startService(
      { DATABASE_URL: primary.url('replicated'), DATABASE_READ_URL: primary.url('replicated'), WEB_CLIENT_ENABLED: 'false', RAG_DENSE_BACKEND: 'pgvector' },
      { startupTimeoutMs: 120_000 },
    );
    try {
      await misdirected.waitForLog(/read replica not used: it is not a standby/, 30_000);
      const user = uniqueUser('misdirected');
      await turn(misdirected, user, 'Asked of a misdirected instance');
      const served = await servedDuring(misdirected, async () => {
        expect(await listTitles(misdirected, user, 'misdirected')).toEqual(['Asked of a misdirected instance']);
      });
      expect(served).toEqual({ 'session_list/primary_replica_unusable': 1 });
    } finally {
      await misdirected.stop();
    }
  });

  it('never reads from a replica that follows another primary (a failover to a copy, the replica still on the old primary), and says why', async () => {
    const promoted = OwnPostgres.replicaOf(primary);
    let failedOver: ServiceProcess | undefined;
    try {
      await promoted.start();
      await promoted.caughtUp();
      await promoted.promote();
      // The same database (deployment id, migrations) as the replica's, on another line of its history.
      failedOver = await startService(
        { DATABASE_URL: promoted.url('replicated'), DATABASE_READ_URL: replica.url('replicated'), WEB_CLIENT_ENABLED: 'false', RAG_DENSE_BACKEND: 'pgvector' },
        { startupTimeoutMs: 120_000 },
      );
      await failedOver.waitForLog(/read replica not used: it follows another primary/, 30_000);
      const user = uniqueUser('failed-over');
      await turn(failedOver, user, 'Asked after the failover');
      const served = await servedDuring(failedOver!, async () => {
        expect(await listTitles(failedOver!, user, 'failover')).toEqual(['Asked after the failover']);
      });
      expect(served).toEqual({ 'session_list/primary_replica_unusable': 1 });
    } finally {
      await failedOver?.stop();
      await promoted.destroy();
    }
  });

  it('falls back to the primary while the replica is stopped, and uses it again once it is back', async () => {
    const user = uniqueUser('replica-down');
    const sessionId = await turn(patient, user, 'Asked before the replica stops');
    await replica.caughtUp();
    await replica.stop('fast');
    try {
      await turn(patient, user, 'Asked while it is down', sessionId);
      // The first read may still try the replica (and fail over); every read answers, from the primary.
      const served = await servedDuring(patient, async () => {
        for (let i = 0; i < 3; i += 1) {
          expect(await listTitles(patient, user, 'Asked')).toEqual(['Asked before the replica stops']);
          expect(await transcriptTypes(patient, user, sessionId)).toEqual(['human', 'ai', 'human', 'ai']);
        }
      });
      expect(Object.keys(served).filter((key) => !key.includes('/primary_'))).toEqual([]);
      expect((served['session_list/primary_replica_unusable'] ?? 0) + (served['session_list/primary_replica_failed'] ?? 0)).toBe(3);
      // The transcript is read once (the turn made the cached copy out of date), then served from the cache.
      expect((served['transcript/primary_replica_unusable'] ?? 0) + (served['transcript/primary_replica_failed'] ?? 0)).toBe(1);
    } finally {
      await replica.start();
    }
    await replica.caughtUp();
    await waitUntil(async () => (await servedDuring(patient, () => listTitles(patient, user, 'Asked')))['session_list/replica'] === 1, 'the replica to serve again', 60_000, 50);
    for (const service of [patient, strict]) {
      expect(service.messages(50)).toEqual([]);
    }
  });
});
