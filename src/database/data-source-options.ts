import { DataSourceOptions } from 'typeorm';
import { AppConfig } from '../config/app-config.js';
import { ChatMessage } from '../session/chat-message.entity.js';
import { ChatSession } from '../session/chat-session.entity.js';
import { InitialSchema1764547200000 } from './migrations/1764547200000-InitialSchema.js';

export const ENTITIES = [ChatSession, ChatMessage];
export const MIGRATIONS = [InitialSchema1764547200000];

/** One definition for the app, the TypeORM CLI (ormconfig.ts) and the tests. `synchronize` is never on. */
export function buildDataSourceOptions(config: AppConfig): DataSourceOptions {
  return {
    type: 'postgres',
    url: config.database.url,
    entities: ENTITIES,
    migrations: MIGRATIONS,
    migrationsTableName: 'typeorm_migrations',
    migrationsRun: config.database.migrationsRun,
    synchronize: false,
    extra: {
      max: config.database.poolSize,
      connectionTimeoutMillis: 5000,
      application_name: 'agentic-rag-chat',
    },
  };
}
