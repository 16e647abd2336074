import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Where a chunk came from besides its page: `location` holds a spreadsheet
 * row's sheet and row number, or the heading path of a passage of a document
 * with headings (`{sheet?, row?, heading_path?}`). Nullable and
 * without a default, so existing rows (null: nothing more than the page)
 * are not rewritten.
 */
export class ChunkLocations1764979200110 implements MigrationInterface {
  name = 'ChunkLocations1764979200110';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "knowledge_chunks" ADD COLUMN "location" jsonb`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "knowledge_chunks" DROP COLUMN "location"`);
  }
}
