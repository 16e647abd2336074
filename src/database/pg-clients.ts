import { Logger } from '@nestjs/common';
import pg from 'pg';

const logger = new Logger('PostgreSQL');

/**
 * A pg client that always has an `error` listener. pg-pool listens only to
 * idle clients: a client checked out between two queries (TypeORM's query
 * runners, the LangGraph checkpointer's `pool.connect()`) that loses its
 * server (a restart, `pg_ctl stop`: 57P01) emits `error` with nobody
 * listening, and Node ends the process. Here the error is logged; the query
 * in flight, if any, still fails and the pool discards the client.
 */
export class ListenedClient extends pg.Client {
  constructor(config?: string | pg.ClientConfig) {
    super(config);
    this.on('error', (error: Error) => logger.warn(`connection lost: ${error.message}`));
  }

  /**
   * A query that got no reply within `query_timeout` leaves its connection
   * waiting for that reply: every later query on it (the ROLLBACK of the
   * failed transaction, the next user of the pooled client) would queue
   * behind it and fail only after a limit of its own. The connection is cut
   * instead, so they fail at once and the pool discards the client.
   */
  override query(...args: unknown[]): never {
    const last = args.length - 1;
    const callback = args[last];
    if (typeof callback === 'function') {
      args[last] = (error: unknown, result: unknown) => {
        this.dropIfUnanswered(error);
        (callback as (error: unknown, result: unknown) => void)(error, result);
      };
    }
    const result = (super.query as (...queryArgs: unknown[]) => unknown)(...args);
    if (result instanceof Promise) {
      return result.catch((error: unknown) => {
        this.dropIfUnanswered(error);
        throw error;
      }) as never;
    }
    return result as never;
  }

  private dropIfUnanswered(error: unknown): void {
    if (!(error instanceof Error) || error.message !== QUERY_READ_TIMEOUT) return;
    (this as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
  }
}

/** pg's error when a query gets no reply within `query_timeout`. */
const QUERY_READ_TIMEOUT = 'Query read timeout';

export interface DatabaseTimeouts {
  /** Server-side limit of one statement (`statement_timeout`). */
  statementTimeoutMs: number;
  /** Server-side limit of one wait for a lock (`lock_timeout`). */
  lockTimeoutMs: number;
  /**
   * The connections go through a transaction pooler (PgBouncer), which
   * refuses session settings at connect: the server-side limits are then
   * the role's defaults in the database (see sessionDefaultsFor), not
   * startup parameters.
   */
  pooled?: boolean;
}

/** The server-side limits, as PostgreSQL settings. */
export function sessionDefaultsFor(timeouts: DatabaseTimeouts): Record<'statement_timeout' | 'lock_timeout' | 'idle_in_transaction_session_timeout', number> {
  return {
    statement_timeout: timeouts.statementTimeoutMs,
    lock_timeout: timeouts.lockTimeoutMs,
    idle_in_transaction_session_timeout: timeouts.statementTimeoutMs * 2,
  };
}

/**
 * Pool options that bound every query: the server cancels a statement or a
 * lock wait past its limit, and the client gives up on a server that does not
 * answer at all (a stalled or paused server cannot cancel anything) shortly
 * after the statement limit.
 */
export function boundedPoolOptions(timeouts: DatabaseTimeouts): Partial<pg.PoolConfig> {
  return {
    Client: ListenedClient,
    ...(timeouts.pooled ? {} : sessionDefaultsFor(timeouts)),
    query_timeout: timeouts.statementTimeoutMs + 2000,
  };
}

/** Startup options of a maintenance connection: no time limits, whatever the role's defaults say. */
export const UNLIMITED_SESSION_OPTIONS = '-c statement_timeout=0 -c lock_timeout=0 -c idle_in_transaction_session_timeout=0';
