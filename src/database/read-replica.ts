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
 * Runs a read of one version (the knowledge base's, say) where ReadReplica
 * decides: `read` answers that version as the database it ran on holds it,
 * with its value.
 */
export type VersionedRead = <T>(read: (db: DataSource) => Promise<{ version: string | null; value: T }>) => Promise<T>;

/** Which database a server holds (its deployment id) and its newest migration: the replica must hold the primary's. */
const IDENTITY_COLUMNS = `(SELECT deployment_id::text FROM knowledge_index_state WHERE id = 1) AS deployment,
  (SELECT name FROM typeorm_migrations ORDER BY id DESC LIMIT 1) AS migration`;

/**
 * The replica as its probe sees it: whether it is a standby, whether its WAL
 * receiver runs (a standby cut off from the primary replays what it has and
 * then seems idle), how far behind the primary it is in milliseconds, at
 * most (0 when it has replayed all the WAL it has received; else the age of
 * the last transaction it replayed, which overstates a lag that began after a
 * quiet spell), and which database it is a copy of, at which migration.
 */
const PROBE_SQL = `SELECT pg_is_in_recovery() AS standby,
  EXISTS (SELECT 1 FROM pg_stat_wal_receiver) AS receiving,
  CASE WHEN pg_last_wal_receive_lsn() IS NULL OR pg_last_wal_receive_lsn() <= pg_last_wal_replay_lsn() THEN 0
       ELSE COALESCE(EXTRACT(EPOCH FROM clock_timestamp() - pg_last_xact_replay_timestamp()) * 1000, 'Infinity')
  END::float8 AS lag_ms,
  ${IDENTITY_COLUMNS}`;

interface Identity {
  deployment: string | null;
  migration: string | null;
}

/**
 * Whether a failed read is the replica's to answer for, so that the primary
 * answers it instead: anything but a statement the primary would refuse as
 * well (a data exception, SQLSTATE class 22) or one cancelled at its own time
 * limit (57014). A replica that is unreachable, restarting, in conflict with
 * its replay (40001), holding a lock the primary has released (55P03 while
 * its replay waits), or missing a table a migration made, is one.
 */
export function replicaFault(error: unknown): boolean {
  const code = pgErrorCode(error);
  if (code !== undefined) return !code.startsWith('22') && code !== '57014';
  return isDatabaseUnavailable(error);
}

/** The newest probe: when it ended, and the lag it found (undefined: it failed, or found the replica unfit to serve, `unfit` says why). */
interface Probe {
  at: number;
  lagMs?: number;
  unfit?: string;
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
  /** Why the last probe found the replica unfit (logged once per reason). */
  private lastUnfit?: string;
  /** When the probe in flight started; undefined: none is. */
  private probingSince?: number;
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
    // A probe that has not answered for two intervals: the replica has stalled (the last answer is no longer news).
    if (this.probingSince !== undefined && now - this.probingSince > 2 * this.probeEveryMs) return false;
    return this.replica?.isInitialized === true && probe?.lagMs !== undefined && probe.lagMs + (now - probe.at) <= this.maxLagMs;
  }

  /**
   * Runs `read` on the replica when it may serve it and holds at least the
   * versions `seen` (read from the primary, when the replica may serve: each
   * the version of what the read covers, which every write to it moves);
   * else, or when the replica fails, on the primary. `read` answers the
   * versions of what it read (in the order of `seen`; null: none, as '0').
   */
  async read<T>(kind: ReplicaRead, seen: readonly string[] | (() => Promise<readonly string[] | null>), read: (db: DataSource) => Promise<VersionedResult<T>>): Promise<T> {
    if (!this.configured) return (await read(this.primary)).value;
    const replica = this.replica;
    if (replica && this.usable()) {
      // Read from the primary only when the replica may serve: while it may not, this costs the primary nothing more.
      const versions = typeof seen === 'function' ? await seen() : seen;
      // Null: the primary has nothing of it (a session that is not the user's): the primary answers that.
      if (versions === null) return (await read(this.primary)).value;
      try {
        const result = await read(replica);
        if (holdsAtLeast(result.versions, versions)) {
          this.metrics.databaseRead(kind, 'replica');
          return result.value;
        }
        this.metrics.databaseRead(kind, 'primary_replica_behind');
      } catch (error) {
        if (!replicaFault(error)) throw error;
        this.logger.warn(`read replica failed a read (${(error as Error).message}); the primary serves reads until it answers again`);
        this.probe = { at: Date.now(), unfit: `it failed a read (${(error as Error).message})` };
        this.metrics.databaseRead(kind, 'primary_replica_failed');
      }
    } else {
      this.metrics.databaseRead(kind, 'primary_replica_unusable');
    }
    return (await read(this.primary)).value;
  }

  /**
   * The reads of `kind` of one request that all need the one version `seen`
   * returns from the primary: it is asked once, and only when the replica may serve.
   */
  reader(kind: ReplicaRead, seen: () => Promise<string>): VersionedRead {
    let version: Promise<string> | undefined;
    const versions = async () => [await (version ??= seen())];
    return (read) =>
      this.read(kind, versions, async (db) => {
        const { version, value } = await read(db);
        return { versions: [version], value };
      });
  }

  private async probeOnce(): Promise<void> {
    if (this.probingSince !== undefined || this.closed) return;
    this.probingSince = Date.now();
    const wasUsable = this.usable();
    try {
      const replica = await this.connected();
      const [[row], [primary]] = await Promise.all([
        sqlRows<{ standby: boolean; receiving: boolean; lag_ms: number } & Identity>(replica, PROBE_SQL),
        sqlRows<Identity>(this.primary, `SELECT ${IDENTITY_COLUMNS}`),
      ]);
      const unfit = !row.standby
        ? 'it is not a standby (pg_is_in_recovery() is false)'
        : row.deployment !== primary.deployment
          ? 'it is a copy of another database (its deployment id differs)'
          : !row.receiving
            ? 'it receives no WAL from the primary (no WAL receiver runs)'
            : row.migration !== primary.migration
              ? `it has not replayed the newest migration (${primary.migration})`
              : undefined;
      const lagMs = Number(row.lag_ms);
      this.probe = unfit ? { at: Date.now(), unfit } : { at: Date.now(), lagMs: Number.isFinite(lagMs) ? Math.max(0, lagMs) : Number.POSITIVE_INFINITY };
      this.metrics.replicaLag(unfit ? Number.POSITIVE_INFINITY : this.probe.lagMs!);
    } catch (error) {
      this.probe = { at: Date.now(), unfit: `unreachable (${(error as Error).message})` };
    } finally {
      this.probingSince = undefined;
    }
    const usable = this.usable();
    if (!wasUsable && usable) this.logger.log(`read replica serves reads (lag ${Math.round(this.probe.lagMs!)} ms)`);
    else if (wasUsable && !usable)
      this.logger.warn(`read replica left: ${this.probe.unfit ?? `it lags ${Math.round(this.probe.lagMs!)} ms, past DATABASE_READ_MAX_LAG_MS`}; the primary serves reads`);
    else if (!usable && this.probe.unfit && this.probe.unfit !== this.lastUnfit) this.logger.warn(`read replica not used: ${this.probe.unfit}; the primary serves reads`);
    this.lastUnfit = this.probe.unfit;
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
