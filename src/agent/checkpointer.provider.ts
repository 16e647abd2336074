import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import type { RunnableConfig } from '@langchain/core/runnables';
import pg from 'pg';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { boundedPoolOptions } from '../database/pg-clients.js';
import { connectTimeoutMs, throughPooler } from '../database/data-source-options.js';
import { Metrics } from '../observability/metrics.js';
import { traceCheckpoint } from '../observability/spans.js';

/** How many forgotten threads are remembered, to drop their late writes (far more than turns end within a tool's timeout). */
const FORGOTTEN_THREADS_KEPT = 10_000;

type PutArgs = Parameters<PostgresSaver['put']>;
type PutWritesArgs = Parameters<PostgresSaver['putWrites']>;

/**
 * A PostgresSaver that writes nothing more for a thread once it was
 * forgotten: a step an abort (a cancel, a failure) did not stop in time
 * finishes later and would otherwise write its checkpoint after the
 * thread's deletion, leaving rows nobody reads. A write already on its way
 * when the thread is forgotten lands first, then the deletion.
 */
class ForgettingPostgresSaver extends PostgresSaver {
  private readonly forgotten = new Set<string>();
  private readonly inFlight = new Map<string, Set<Promise<unknown>>>();

  async forget(threadId: string): Promise<void> {
    this.forgotten.add(threadId);
    if (this.forgotten.size > FORGOTTEN_THREADS_KEPT) this.forgotten.delete(this.forgotten.values().next().value!);
    await Promise.allSettled([...(this.inFlight.get(threadId) ?? [])]);
    await this.deleteThread(threadId);
  }

  override async put(...args: PutArgs): Promise<RunnableConfig> {
    if (this.isForgotten(args[0])) return args[0];
    return this.tracked(
      args[0],
      traceCheckpoint('put', () => super.put(...args)),
    );
  }

  override async putWrites(...args: PutWritesArgs): Promise<void> {
    if (this.isForgotten(args[0])) return;
    return this.tracked(
      args[0],
      traceCheckpoint('put_writes', () => super.putWrites(...args)),
    );
  }

  override getTuple(config: RunnableConfig): ReturnType<PostgresSaver['getTuple']> {
    return traceCheckpoint('get', () => super.getTuple(config));
  }

  override deleteThread(threadId: string): Promise<void> {
    return traceCheckpoint('delete', () => super.deleteThread(threadId));
  }

  private async tracked<T>(config: RunnableConfig, write: Promise<T>): Promise<T> {
    const threadId = String(config.configurable?.thread_id);
    let writes = this.inFlight.get(threadId);
    if (!writes) this.inFlight.set(threadId, (writes = new Set()));
    writes.add(write);
    try {
      return await write;
    } finally {
      writes.delete(write);
      if (writes.size === 0) this.inFlight.delete(threadId);
    }
  }

  private isForgotten(config: RunnableConfig): boolean {
    return this.forgotten.has(String(config.configurable?.thread_id));
  }
}

/**
 * LangGraph checkpoints in PostgreSQL (tables made by a TypeORM migration).
 * They hold only unfinished runs: a finished run's thread is deleted, so
 * nothing here grows with the conversation.
 */
@Injectable()
export class CheckpointerProvider implements OnApplicationShutdown {
  readonly pool: pg.Pool;
  readonly saver: ForgettingPostgresSaver;

  constructor(@Inject(APP_CONFIG) config: AppConfig, metrics: Metrics) {
    this.pool = new pg.Pool({
      connectionString: config.database.url,
      max: Math.max(2, Math.ceil(config.database.poolSize / 2)),
      connectionTimeoutMillis: connectTimeoutMs(config),
      ...boundedPoolOptions({ statementTimeoutMs: config.database.statementTimeoutMs, lockTimeoutMs: config.database.lockTimeoutMs, pooled: throughPooler(config.database) }),
    });
    this.pool.on('error', () => undefined); // idle-client errors surface on the next query
    this.saver = new ForgettingPostgresSaver(this.pool);
    metrics.watchPool('checkpoints', this.pool);
  }

  /** Removes every checkpoint of a finished run, and any its abandoned steps would still write. */
  async forget(threadId: string): Promise<void> {
    await this.saver.forget(threadId);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.pool.end();
  }
}
