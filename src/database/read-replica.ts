import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { isDatabaseUnavailable } from '../common/database-unavailable.js';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { Metrics, WatchedPool } from '../observability/metrics.js';
import { boundedPoolOptions } from './pg-clients.js';
import { pgErrorCode, sqlRows } from './sql.js';

/** The reads a replica may serve (the `read` label of `db_reads_total`). */
export type ReplicaRead = 'session_list' | 'transcript' | 'knowledge_search' | 'collection_list';

/** What a read on the replica found: its result, and the versions of what it read, as the replica holds them. */
export interface VersionedResult<T> {
  versions: readonly (string | null)[];
  value: T;
}

/**
 * 40001 on a hot standby: a statement cancelled for a conflict with the WAL
 * being replayed (a row it needed was vacuumed on the primary). Nothing is
 * wrong with the read: the primary serves it.
 */
const RECOVERY_CONFLICT = '40001';

/**
 * How far behind the primary the replica is, in milliseconds, at most:
 * 0 when it has replayed all the WAL it has received (the primary may
 * simply be idle; after a restart it receives from the start of a segment
 * it replayed already), else the age of the last transaction it replayed
 * (which overstates a lag that began after a quiet spell). Infinite while it
 * receives nothing (its WAL receiver not connected: it may be far behind).
 */
const LAG_SQL = `SELECT pg_is_in_recovery() AS standby,
  CASE WHEN NOT pg_is_in_recovery() THEN 0
       WHEN pg_last_wal_receive_lsn() IS NULL THEN 'Infinity'
       WHEN pg_last_wal_receive_lsn() <= pg_last_wal_replay_lsn() THEN 0
       ELSE COALESCE(EXTRACT(EPOCH FROM clock_timestamp() - pg_last_xact_replay_timestamp()) * 1000, 'Infinity')
  END::float8 AS lag_ms`;

/**
 * Whether a failed read is the replica's fault (unreachable, restarting, a
 * recovery conflict), which the primary answers instead; not a statement
 * cancelled at its own time or lock limit, which would fail there too.
 */
function replicaFault(error: unknown): boolean {
  const code = pgErrorCode(error);
  if (code === RECOVERY_CONFLICT) return true;
  return isDatabaseUnavailable(error) && code !== '57014' && code !== '55P03';
}

/** The newest probe: when it ended, and the lag it found (undefined: it failed). */
interface Probe {
  at: number;
  lagMs?: number;
}

/**
 * A streaming replica for the reads that may lag (DATABASE_READ_URL): the
 * session list, the transcript, knowledge search and the collection list.
 *
 * - A probe reads the replica's lag every DATABASE_READ_MAX_LAG_MS / 4 (at
 *   most every second). The replica serves a read only when the last probe
 *   succeeded and the lag it found, plus the probe's age, is within
 *   DATABASE_READ_MAX_LAG_MS; else the primary does.
 * - Read-your-writes: every read on the replica returns the versions of what
 *   it read as the replica holds them (the versions the cache checks). When
 *   one is older than the version the caller read from the primary (which
 *   every write of the user has moved), the replica is behind that write,
 *   and the read runs again on the primary.
 * - A replica that fails a read (down, restarting, a recovery conflict) is
 *   left alone until a probe succeeds again; that read runs on the primary.
 *
 * Without DATABASE_READ_URL every read runs on the primary.
 */
@Injectable()
export class ReadReplica implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(ReadReplica.name);
  private replica?: DataSource;
  private connecting?: Promise<void>;
  private probe?: Probe;
  private timer?: NodeJS.Timeout;
  private probing = false;
  private closed = false;
  private readonly maxLagMs: number;
  private readonly probeEveryMs: number;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @InjectDataSource() private readonly primary: DataSource,
    private readonly metrics: Metrics,
  ) {
    this.maxLagMs = config.database.readMaxLagMs;
    this.probeEveryMs = Math.max(25, Math.min(1000, Math.floor(this.maxLagMs / 4)));
  }

  /** Whether DATABASE_READ_URL is set. */
  get configured(): boolean {
    return this.config.database.readUrl !== null;
  }

  onApplicationBootstrap(): void {
    if (!this.configured) return;
    void this.probeOnce();
    this.timer = setInterval(() => void this.probeOnce(), this.probeEveryMs);
    this.timer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    await this.connecting?.catch(() => undefined);
    if (this.replica?.isInitialized) {
      this.metrics.unwatchPool('replica');
      await this.replica.destroy().catch(() => undefined);
    }
  }

  /** Whether the replica may serve a read now: its last probe succeeded, and its lag then plus the time since is within the bound. */
  usable(now = Date.now()): boolean {
    const probe = this.probe;
    return this.replica?.isInitialized === true && probe?.lagMs !== undefined && probe.lagMs + (now - probe.at) <= this.maxLagMs;
  }

  /**
   * Runs `read` on the replica when it may serve it and holds at least the
   * versions `seen` (read from the primary: each the version of what the read
   * covers, which every write to it moves); else, or when the replica fails,
   * on the primary. `read` answers the versions of what it read (in the order
   * of `seen`; null: none, as '0').
   */
  async read<T>(kind: ReplicaRead, seen: readonly string[], read: (db: DataSource) => Promise<VersionedResult<T>>): Promise<T> {
    if (!this.configured) return (await read(this.primary)).value;
    const replica = this.replica;
    if (replica && this.usable()) {
      try {
        const result = await read(replica);
        if (holdsAtLeast(result.versions, seen)) {
          this.metrics.databaseRead(kind, 'replica');
          return result.value;
        }
        this.metrics.databaseRead(kind, 'primary_replica_behind');
      } catch (error) {
        if (!replicaFault(error)) throw error;
        this.logger.warn(`read replica failed a read (${(error as Error).message}); the primary serves reads until it answers again`);
        this.probe = { at: Date.now() };
        this.metrics.databaseRead(kind, 'primary_replica_failed');
      }
    } else {
      this.metrics.databaseRead(kind, 'primary_replica_unusable');
    }
    return (await read(this.primary)).value;
  }

  private async probeOnce(): Promise<void> {
    if (this.probing || this.closed) return;
    this.probing = true;
    try {
      const replica = await this.connected();
      const [row] = await sqlRows<{ standby: boolean; lag_ms: number }>(replica, LAG_SQL);
      const lagMs = Number(row.lag_ms);
      const wasUsable = this.usable();
      this.probe = { at: Date.now(), lagMs: Number.isFinite(lagMs) ? Math.max(0, lagMs) : Number.POSITIVE_INFINITY };
      this.metrics.replicaLag(this.probe.lagMs!);
      if (!row.standby) this.logger.warn('DATABASE_READ_URL is not a standby (pg_is_in_recovery() is false): it serves reads all the same');
      if (!wasUsable && this.usable()) this.logger.log(`read replica serves reads (lag ${Math.round(this.probe.lagMs!)} ms)`);
      else if (wasUsable && !this.usable()) this.logger.warn(`read replica lags ${Math.round(this.probe.lagMs!)} ms, past DATABASE_READ_MAX_LAG_MS: the primary serves reads`);
    } catch (error) {
      if (this.probe?.lagMs !== undefined || this.probe === undefined) {
        this.logger.warn(`read replica unreachable (${(error as Error).message}): the primary serves reads until it answers`);
      }
      this.probe = { at: Date.now() };
    } finally {
      this.probing = false;
    }
  }

  /** The replica's data source, connected at the first probe that reaches it (a replica down at start-up stops nothing). */
  private async connected(): Promise<DataSource> {
    if (this.replica?.isInitialized) return this.replica;
    this.connecting ??= (async () => {
      const replica = new DataSource({
        type: 'postgres',
        url: this.config.database.readUrl!,
        entities: [],
        synchronize: false,
        migrationsRun: false,
        installExtensions: false,
        extra: {
          max: this.config.database.poolSize,
          connectionTimeoutMillis: 2000,
          application_name: 'agentic-rag-chat-reads',
          ...boundedPoolOptions({ statementTimeoutMs: this.config.database.statementTimeoutMs, lockTimeoutMs: this.config.database.lockTimeoutMs }),
        },
      });
      await replica.initialize();
      if (this.closed) {
        await replica.destroy();
        return;
      }
      this.replica = replica;
      const pool = (replica.driver as unknown as { master?: WatchedPool }).master;
      if (pool) this.metrics.watchPool('replica', pool);
    })().finally(() => (this.connecting = undefined));
    await this.connecting;
    if (!this.replica) throw new Error('shutting down');
    return this.replica;
  }
}

/** Whether each version is at least the one seen (versions are bigints as text, from one sequence or counter; null: '0'). */
export function holdsAtLeast(versions: readonly (string | null)[], seen: readonly string[]): boolean {
  return seen.every((version, i) => BigInt(versions[i] ?? '0') >= BigInt(version));
}
