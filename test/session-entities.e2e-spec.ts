import { DataSource } from 'typeorm';
import { loadConfig } from '../src/config/app-config.js';
import { buildDataSourceOptions } from '../src/database/data-source-options.js';
import { ensureDatabase } from '../src/database/ensure-database.js';
import { ChatMessage } from '../src/session/chat-message.entity.js';
import { ChatSession } from '../src/session/chat-session.entity.js';
import { TEST_JWT_SECRET, TEST_REDIS_URL } from './support/test-env.js';
import { dropDatabase, freshDatabaseUrl } from './support/test-module.js';

/**
 * The migrations are the schema's source of truth; the TypeORM entities of
 * sessions and messages (with their cascade) must describe the same tables.
 * On a database built from the migrations alone, TypeORM's schema builder
 * finds nothing to change for them.
 */
describe('session entities against the migrations', () => {
  let url: string;
  let dataSource: DataSource;

  beforeAll(async () => {
    url = freshDatabaseUrl();
    await ensureDatabase(url);
    const config = loadConfig({ NODE_ENV: 'test', DATABASE_URL: url, REDIS_URL: TEST_REDIS_URL, JWT_SECRET: TEST_JWT_SECRET });
    dataSource = new DataSource({ ...buildDataSourceOptions(config, 'maintenance'), entities: [ChatSession, ChatMessage], migrationsRun: false });
    await dataSource.initialize();
    await dataSource.runMigrations();
  });
  afterAll(async () => {
    await dataSource?.destroy();
    await dropDatabase(url);
  });

  const pendingChanges = async () => (await dataSource.driver.createSchemaBuilder().log()).upQueries.map((query) => query.query);

  it('match the schema the migrations build: the schema builder has nothing to change', async () => {
    expect(await pendingChanges()).toEqual([]);
  });

  it('keeps the cascade from a session to its messages in the entities', () => {
    const relation = dataSource.getMetadata(ChatMessage).findRelationWithPropertyPath('session');
    expect(relation?.onDelete).toBe('CASCADE');
  });

  it('notices a drift: a column the entities do not describe', async () => {
    await dataSource.query('ALTER TABLE chat_sessions ADD COLUMN drifted integer');
    try {
      expect((await pendingChanges()).join('\n')).toMatch(/DROP COLUMN "drifted"/);
    } finally {
      await dataSource.query('ALTER TABLE chat_sessions DROP COLUMN drifted');
    }
  });
});
