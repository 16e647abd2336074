import pg from 'pg';

/**
 * `count` leaves of one document written by plain SQL (generate_series, in
 * statements of `batch` rows), far faster than the ingest path: for tests and
 * benches that need a large knowledge base, not its text. Each leaf has a
 * 256-dimension float32 embedding in the knowledge base's embedding space
 * (one of a few sparse unit vectors) and an empty search vector, so the
 * full-text leg never finds them. Bumps the index version, as an ingest does.
 */
export async function seedLeaves(databaseUrl: string, count: number, batch = 100_000): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const [{ space_id: spaceId }] = (await client.query('SELECT space_id FROM knowledge_index_state WHERE id = 1')).rows;
    const vectors = Array.from({ length: 16 }, (_, v) => {
      const floats = new Float32Array(256);
      for (let k = 0; k < 4; k += 1) floats[(v * 16 + k * 61) % 256] = 0.5;
      return Buffer.from(floats.buffer);
    });
    const {
      rows: [{ id: documentId }],
    } = await client.query(
      `INSERT INTO knowledge_documents (id, filename, content_type, size_bytes, content_sha256, page_count, chunk_count, created_by)
       VALUES (gen_random_uuid(), $1::varchar, 'text/plain', 1, encode(sha256(convert_to($1::varchar, 'UTF8')), 'hex'), NULL, $2, 'seed') RETURNING id`,
      [`seeded-${count}-${Date.now()}.txt`, count],
    );
    for (let from = 0; from < count; from += batch) {
      await client.query(
        `INSERT INTO knowledge_chunks (document_id, level, is_leaf, ordinal, text, search_vector, embedding, space_id)
         SELECT $1, 1, true, n, 'seeded leaf ' || n, ''::tsvector, ($2::bytea[])[1 + n % 16], $3
           FROM generate_series($4::int, $5::int) AS n`,
        [documentId, vectors, spaceId, from, Math.min(from + batch, count) - 1],
      );
    }
    await client.query('UPDATE knowledge_index_state SET version = version + 1 WHERE id = 1');
  } finally {
    await client.end();
  }
}
