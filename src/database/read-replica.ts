import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, QueryResult, QueryRunner } from 'typeorm';
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
 * with its value. On the replica it is told the version it must hold
 * (`atLeast`): a read that finds an older one in its first statement may stop
 * there (see `isBehind`), as its value is not used.
 */
export type VersionedRead = <T>(read: (db: DataSource, atLeast?: string) => Promise<{ version: string | null; value: T }>) => Promise<T>;

/** Whether a version read on the replica is older than the one it must hold (null: none, as '0'); never without `atLeast` (the primary). */
export function isBehind(version: string | null, atLeast: string | undefined): boolean {
  return atLeast !== undefined && !holdsAtLeast([version], [atLeast]);
}

/** Which database a server holds (its deployment id) and its newest migration: the replica must hold the primary's. */
const IDENTITY_COLUMNS = `(SELECT deployment_id::text FROM knowledge_index_state WHERE id = 1) AS deployment,
  (SELECT name FROM typeorm_migrations ORDER BY id DESC LIMIT 1) AS migration`;

/**
 * The replica as its probe sees it: whether it is a standby, whether its WAL
 * receiver runs (a standby cut off from the primary replays what it has and
 * then seems idle), the timeline it receives (null: the role may not see it,
 * which takes pg_read_all_stats), the WAL position it has replayed up to, and
 * which database it is a copy of, at which migration.
 */
const REPLICA_PROBE_SQL = `SELECT pg_is_in_recovery() AS standby,
  EXISTS (SELECT 1 FROM pg_stat_wal_receiver) AS receiving,
  (SELECT received_tli FROM pg_stat_wal_receiver) AS timeline,
  pg_last_wal_replay_lsn()::text AS replayed,
  ${IDENTITY_COLUMNS}`;

/** The primary's WAL position (what it has flushed: all a replica can have been sent) and its timeline. */
const PRIMARY_POSITION_SQL = `SELECT pg_current_wal_flush_lsn()::text AS position,
  ('x' || substr(pg_walfile_name(pg_current_wal_flush_lsn()), 1, 8))::bit(32)::int AS timeline`;

interface Identity {
  deployment: string | null;
  migration: string | null;
}

/** What the probe read from the replica. */
export interface ReplicaState extends Identity {
  standby: boolean;
  receiving: boolean;
  timeline: number | null;
  replayed: string | null;
}

/** What the probe read from the primary: its identity and timeline, and its WAL position just after the replica's was read. */
export interface PrimaryState extends Identity {
  timeline: number;
  positionAfter: string;
}

/** A WAL position (pg_lsn text, `16/B374D848`) as a number of bytes. */
export function walPosition(lsn: string): bigint {
  const [high, low] = lsn.split('/');
  return (BigInt(`0x${high}`) << 32n) + BigInt(`0x${low}`);
}

/** Why the replica may not serve reads for this primary (undefined: it may, however far behind it is). */
export function unfitness(replica: ReplicaState, primary: PrimaryState): string | undefined {
  if (!replica.standby) return 'it is not a standby (pg_is_in_recovery() is false)';
  if (replica.deployment !== primary.deployment) return 'it is a copy of another database (its deployment id differs)';
  if (!replica.receiving) return 'it receives no WAL from the primary (no WAL receiver runs)';
  // A replica still following an old primary after a failover: the same database, on another line of its history.
  if (replica.timeline !== null && Number(replica.timeline) !== Number(primary.timeline))
    return `it follows another primary (it receives timeline ${replica.timeline}, the primary writes timeline ${primary.timeline})`;
  if (replica.replayed !== null && walPosition(replica.replayed) > walPosition(primary.positionAfter))
    return `it follows another primary (it has replayed WAL up to ${replica.replayed}, past all the primary has written, ${primary.positionAfter})`;
  if (replica.migration !== primary.migration) return `it has not replayed the newest migration (${primary.migration})`;
  return undefined;
}

/**
 * The primary's WAL position at the moments the probes asked for it: a
 * replica that has replayed up to the position of a moment holds every
 * transaction committed before it, so its lag is at most the age of the
 * newest such moment. Kept for DATABASE_READ_MAX_LAG_MS (plus the one
 * moment before): a replica older than all of them lags past the bound.
 */
export class PrimaryWalHistory {
  private readonly moments: Array<{ at: number; position: bigint }> = [];

  constructor(private readonly keepMs: number) {}

  /** The primary was at `position` (or past it) at `at`. */
  record(at: number, position: bigint): void {
    this.moments.push({ at, position });
    while (this.moments.length > 1 && this.moments[1].at <= at - this.keepMs) this.moments.shift();
  }

  /** How far behind the primary a replica that has replayed up to `replayed` is, at most, in milliseconds at `now` (Infinity: past every moment kept). */
  lagMs(replayed: bigint, now: number): number {
    for (let i = this.moments.length - 1; i >= 0; i -= 1) {
      if (this.moments[i].position <= replayed) return Math.max(0, now - this.moments[i].at);
    }
    return Number.POSITIVE_INFINITY;
  }
}

/**
 * Whether a failed read is the replica's to answer for, so that the primary
 * answers it instead: anything but a statement the primary would refuse as
 * well (a data exception, SQLSTATE class 22). A replica that is unreachable,
 * restarting, in conflict with its replay (40001), holding a lock the primary
 * has released (55P03 while its replay waits), too slow for the statement
 * timeout (57014: a replica busier or colder than the primary; see
 * `leavesReplica`), or missing a table a migration made, is one.
 */
export function replicaFault(error: unknown): boolean {
  const code = pgErrorCode(error);
  if (code !== undefined) return !code.startsWith('22');
  return isDatabaseUnavailable(error);
}

/**
 * Whether a read the replica failed also ends its use until a probe answers
 * again: not a statement timeout (57014), which says how long that read took,
 * not that the replica is unwell (a read with a limit of its own, as the
 * full-text ranking's, answers its timeout itself).
 */
export function leavesReplica(error: unknown): boolean {
  return pgErrorCode(error) !== '57014';
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
 *   most every second): the WAL position it has replayed, against the
 *   primary's positions at this and earlier probes (its lag is at most the
 *   age of the newest one it has reached). The replica serves a read only
 *   when the last probe succeeded and the lag it found, plus the probe's age,
 *   is within DATABASE_READ_MAX_LAG_MS; else the primary does.
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
  /** Whether the log last said the replica serves reads. */
  private saidUsable = false;
  /** Why the last probe found the replica unfit (logged once per reason). */
  private lastUnfit?: string;
  /** Whether a probe is in flight. */
  private probing = false;
  /** When the probe in flight asked the replica (it has not answered yet); undefined: it is not asking it. */
  private askingReplicaSince?: number;
  private closed = false;
  private readonly maxLagMs: number;
  private readonly probeEveryMs: number;
  private readonly walHistory: PrimaryWalHistory;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @InjectDataSource() private readonly primary: DataSource,
    private readonly metrics: Metrics,
  ) {
    this.maxLagMs = config.database.readMaxLagMs;
    this.probeEveryMs = Math.max(25, Math.min(1000, Math.floor(this.maxLagMs / 4)));
    this.walHistory = new PrimaryWalHistory(this.maxLagMs);
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
  usable(now = performance.now()): boolean {
    const probe = this.probe;
    // A replica that has not answered the probe for two intervals has stalled (its last answer is no longer news).
    if (this.askingReplicaSince !== undefined && now - this.askingReplicaSince > 2 * this.probeEveryMs) return false;
    return this.replica?.isInitialized === true && probe?.lagMs !== undefined && probe.lagMs + (now - probe.at) <= this.maxLagMs;
  }

  /**
   * Runs `read` on the replica when it may serve it and holds at least the
   * versions `seen` (read from the primary, when the replica may serve: each
   * the version of what the read covers, which every write to it moves);
   * else, or when the replica fails, on the primary. `read` answers the
   * versions of what it read (in the order of `seen`; null: none, as '0'),
   * and is given `seen` on the replica.
   */
  async read<T>(
    kind: ReplicaRead,
    seen: readonly string[] | (() => Promise<readonly string[] | null>),
    read: (db: DataSource, seen?: readonly string[]) => Promise<VersionedResult<T>>,
  ): Promise<T> {
    if (!this.configured) return (await read(this.primary)).value;
    const replica = this.replica;
    if (replica && this.usable()) {
      // Read from the primary only when the replica may serve: while it may not, this costs the primary nothing more.
      const versions = typeof seen === 'function' ? await seen() : seen;
      // Null: the primary has nothing of it (a session that is not the user's): the primary answers that.
      if (versions === null) return (await read(this.primary)).value;
      try {
        const result = await read(replica, versions);
        if (holdsAtLeast(result.versions, versions)) {
          this.metrics.databaseRead(kind, 'replica');
          return result.value;
        }
        this.metrics.databaseRead(kind, 'primary_replica_behind');
      } catch (error) {
        if (!replicaFault(error)) throw error;
        if (leavesReplica(error)) {
          this.logger.warn(`read replica failed a read (${(error as Error).message}); the primary serves reads until it answers again`);
          this.probe = { at: performance.now(), unfit: `it failed a read (${(error as Error).message})` };
        }
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
      this.read(kind, versions, async (db, seen) => {
        const { version, value } = await read(db, seen?.[0]);
        return { versions: [version], value };
      });
  }

  private async probeOnce(): Promise<void> {
    if (this.probing || this.closed) return;
    this.probing = true;
    // Times on the monotonic clock: a wall clock set back would date the primary's positions in the future, and a
    // stalled replica that holds them would read as current.
    try {
      const replica = await this.connected();
      const primary = this.primary.createQueryRunner();
      try {
        // A connection first: waiting for the primary's pool is not the replica's lag.
        await primary.connect();
        // In this order: a position of the primary read before the replica's is one the replica may have reached; one
        // read after it is one the replica cannot have passed.
        const askedAt = performance.now();
        const [position] = await rowsOf<{ position: string }>(primary, 'SELECT pg_current_wal_flush_lsn()::text AS position');
        this.walHistory.record(askedAt, walPosition(position.position));
        this.askingReplicaSince = performance.now();
        const [row] = await sqlRows<ReplicaState>(replica, REPLICA_PROBE_SQL);
        this.askingReplicaSince = undefined;
        const [after] = await rowsOf<Omit<PrimaryState, 'positionAfter'> & { position: string }>(primary, `${PRIMARY_POSITION_SQL}, ${IDENTITY_COLUMNS}`);
        const unfit = unfitness(row, { ...after, positionAfter: after.position });
        const now = performance.now();
        this.probe = unfit ? { at: now, unfit } : { at: now, lagMs: this.walHistory.lagMs(walPosition(row.replayed!), now) };
        this.metrics.replicaLag(unfit ? Number.POSITIVE_INFINITY : this.probe.lagMs!);
      } finally {
        await primary.release();
      }
    } catch (error) {
      this.probe = { at: performance.now(), unfit: `unreachable (${(error as Error).message})` };
    } finally {
      this.probing = false;
      this.askingReplicaSince = undefined;
    }
    // Against what was last said, not the state at the probe's start: a lag that grows between probes ends the
    // replica's use there, and is said here.
    const usable = this.usable();
    if (usable !== this.saidUsable) {
      if (usable) this.logger.log(`read replica serves reads (lag ${Math.round(this.probe.lagMs!)} ms)`);
      else this.logger.warn(`read replica left: ${this.probe.unfit ?? this.lagText(this.probe.lagMs!)}; the primary serves reads`);
      this.saidUsable = usable;
    } else if (!usable && this.probe.unfit && this.probe.unfit !== this.lastUnfit) this.logger.warn(`read replica not used: ${this.probe.unfit}; the primary serves reads`);
    this.lastUnfit = this.probe.unfit;
  }

  private lagText(lagMs: number): string {
    return Number.isFinite(lagMs) ? `it lags ${Math.round(lagMs)} ms, past DATABASE_READ_MAX_LAG_MS` : `it lags more than ${this.maxLagMs} ms (DATABASE_READ_MAX_LAG_MS)`;
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

/** The rows of a raw statement on a connection of its own. */
async function rowsOf<T>(runner: QueryRunner, sql: string): Promise<T[]> {
  return ((await runner.query(sql, [], true)) as QueryResult<T>).records;
}

/** Whether each version is at least the one seen (versions are bigints as text, from one sequence or counter; null: '0'). */
export function holdsAtLeast(versions: readonly (string | null)[], seen: readonly string[]): boolean {
  return seen.every((version, i) => BigInt(versions[i] ?? '0') >= BigInt(version));
}
