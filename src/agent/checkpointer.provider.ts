import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import pg from 'pg';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { boundedPoolOptions } from '../database/pg-clients.js';

/**
 * LangGraph checkpoints in PostgreSQL (tables made by a TypeORM migration).
 * They hold only unfinished runs: a finished run's thread is deleted, so
 * nothing here grows with the conversation.
 */
@Injectable()
export class CheckpointerProvider implements OnApplicationShutdown {
  readonly pool: pg.Pool;
  readonly saver: PostgresSaver;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.pool = new pg.Pool({
      connectionString: config.database.url,
      max: Math.max(2, Math.ceil(config.database.poolSize / 2)),
      connectionTimeoutMillis: 5000,
      ...boundedPoolOptions({ statementTimeoutMs: config.database.statementTimeoutMs, lockTimeoutMs: config.database.lockTimeoutMs }),
    });
    this.pool.on('error', () => undefined); // idle-client errors surface on the next query
    this.saver = new PostgresSaver(this.pool);
  }

  /** Removes every checkpoint of a finished run. */
  async forget(threadId: string): Promise<void> {
    await this.saver.deleteThread(threadId);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.pool.end();
  }
}
