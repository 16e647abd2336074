import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Where the server offers the pgvector extension, installs it and gives the
 * chunks an `embedding_vector` column, which the dense leg then searches in
 * SQL. Where it does not (or this role may not install it), the schema stays
 * as it is and the dense leg uses its in-memory index.
 *
 * The column has no fixed size because the embedding size is configuration;
 * the HNSW index for the configured size is a partial expression index that
 * the service creates at start (see pgvector-store.ts).
 */
export class PgvectorEmbeddings1764806400000 implements MigrationInterface {
  name = 'PgvectorEmbeddings1764806400000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const [available] = await queryRunner.query(`SELECT 1 FROM pg_available_extensions WHERE name = 'vector'`);
    if (!available) return;
    await queryRunner.query('SAVEPOINT pgvector_extension');
    try {
      await queryRunner.query('CREATE EXTENSION IF NOT EXISTS vector');
    } catch {
      // Typically: not allowed to install extensions. The in-memory dense leg needs none.
      await queryRunner.query('ROLLBACK TO SAVEPOINT pgvector_extension');
      return;
    }
    await queryRunner.query('RELEASE SAVEPOINT pgvector_extension');
    await queryRunner.query(`ALTER TABLE "knowledge_chunks" ADD COLUMN IF NOT EXISTS "embedding_vector" vector`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    // The extension may serve others in this database; only our column goes.
    await queryRunner.query(`ALTER TABLE "knowledge_chunks" DROP COLUMN IF EXISTS "embedding_vector"`);
  }
}
