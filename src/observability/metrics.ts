import { Global, Injectable, Module } from '@nestjs/common';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { errorType } from './spans.js';

/**
 * The service's Prometheus metrics (prom-client), one registry per app (a
 * test process runs several apps; each counts its own). Names follow the
 * OpenTelemetry semantic conventions where one exists (HTTP, GenAI, database
 * pools), in Prometheus' spelling. Labels carry only values the service
 * chooses (route templates, model names from the configuration, stage names,
 * error codes): never a user id, a session id or any text a client sent.
 */

/** OpenTelemetry's bucket boundaries for `gen_ai.client.token.usage`. */
const TOKEN_BUCKETS = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864];
/** OpenTelemetry's bucket boundaries for `gen_ai.client.operation.duration`. */
const GENAI_DURATION_BUCKETS = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92];
/** OpenTelemetry's bucket boundaries for `gen_ai.server.time_to_first_token`. */
const FIRST_TOKEN_BUCKETS = [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10];
const HTTP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 30, 60];
const TURN_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 40, 80, 160, 320];
const STAGE_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** Process metrics (CPU, memory, event loop, GC) are the process's, not an app's: one registry for all. */
let processRegistry: Registry | undefined;

/**
 * prom-client's gauges `nodejs_active_{handles,requests,resources}_total` are
 * gauges named like counters, which `promtool check metrics` refuses; the
 * same counts without `_total` stay.
 */
const MISNAMED_DEFAULTS = ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'];

function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
    for (const name of MISNAMED_DEFAULTS) processRegistry.removeSingleMetric(name);
  }
  return processRegistry;
}

/** What Metrics reads of a pg pool (pg.Pool), at each scrape. */
export interface WatchedPool {
  readonly totalCount: number;
  readonly idleCount: number;
  readonly waitingCount: number;
  readonly options: { max?: number };
}

/** A model call's identity in metrics: the operation (`chat`, `embeddings`), the provider (LLM_PROVIDER) and the model asked for. */
export interface GenAiCall {
  operation: 'chat' | 'embeddings';
  provider: string;
  model: string;
}

export interface TokenUsage {
  input: number;
  output: number;
}

/** How a turn ended, as `chat_turn_duration_seconds` counts it. */
export type TurnOutcome = 'success' | 'paused' | 'cancelled' | 'failed';

/** The turn's end, told once: `outcome`, and for a failure its code. */
export interface TurnMeter {
  /** Call with every event the turn emits: the first `token` is its time to first token. */
  sawEvent(type: string): void;
  end(outcome: TurnOutcome, errorCode?: string): void;
}

/** How long a scrape waits for a gauge that reads something (the ingest queue's depth, from PostgreSQL). */
const GAUGE_READ_LIMIT_MS = 2000;

/** `read`'s values, or none when it fails or does not answer within `limitMs`. */
async function readWithin<V>(read: () => Promise<V[]>, limitMs: number): Promise<V[]> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<V[]>((resolve) => {
    timer = setTimeout(() => resolve([]), limitMs);
    timer.unref();
  });
  try {
    // Promise.resolve().then: a read that throws at once is a failed read too, not a failed scrape.
    return await Promise.race([
      Promise.resolve()
        .then(read)
        .catch(() => []),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

const HTTP_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'CONNECT', 'OPTIONS', 'TRACE', 'PATCH']);

@Injectable()
export class Metrics {
  readonly registry = new Registry();

  readonly httpDuration = new Histogram({
    name: 'http_server_request_duration_seconds',
    help: 'HTTP requests by method, route template and status: from the request to the end of its response (a stream: until it closes)',
    labelNames: ['http_request_method', 'http_route', 'http_response_status_code'] as const,
    buckets: HTTP_BUCKETS,
    registers: [this.registry],
  });

  private readonly genAiTokens = new Histogram({
    name: 'gen_ai_client_token_usage',
    help: 'Tokens of each model call, by type (input, output): as the model reported them, else estimated (the o200k_base tokenizer)',
    labelNames: ['gen_ai_operation_name', 'gen_ai_provider_name', 'gen_ai_request_model', 'gen_ai_token_type'] as const,
    buckets: TOKEN_BUCKETS,
    registers: [this.registry],
  });

  private readonly genAiDuration = new Histogram({
    name: 'gen_ai_client_operation_duration_seconds',
    help: 'Model calls (chat, embeddings) by provider, model and error type (empty: it answered)',
    labelNames: ['gen_ai_operation_name', 'gen_ai_provider_name', 'gen_ai_request_model', 'error_type'] as const,
    buckets: GENAI_DURATION_BUCKETS,
    registers: [this.registry],
  });

  private readonly firstToken = new Histogram({
    name: 'chat_turn_time_to_first_token_seconds',
    help: "From a streamed turn's start to the first token of its answer (a whole turn streams no tokens)",
    buckets: FIRST_TOKEN_BUCKETS,
    registers: [this.registry],
  });

  private readonly turnDuration = new Histogram({
    name: 'chat_turn_duration_seconds',
    help: 'Chat turns by outcome (success, paused, cancelled, failed) and, for a failure, its error code',
    labelNames: ['outcome', 'error_type'] as const,
    buckets: TURN_BUCKETS,
    registers: [this.registry],
  });

  private readonly runsInFlight = new Gauge({
    name: 'chat_runs_in_flight',
    help: 'Chat turns running on this instance',
    registers: [this.registry],
  });

  private readonly stageDuration = new Histogram({
    name: 'rag_retrieval_stage_duration_seconds',
    help: 'Retrieval stages (recall legs, merge, rerank, grading, rewrite, ...) by stage',
    labelNames: ['stage'] as const,
    buckets: STAGE_BUCKETS,
    registers: [this.registry],
  });

  private readonly ingestOutcomes = new Counter({
    name: 'knowledge_ingest_jobs_finished_total',
    help: 'Ingest job attempts that ended on this instance, by outcome: completed, failed (for good), retried (failed, tried again), cancelled',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  private readonly rateLimitRefusals = new Counter({
    name: 'rate_limit_refusals_total',
    help: 'Requests refused for a spent budget (429), by budget and by whose budget it was (user, api_key)',
    labelNames: ['bucket', 'spent_by'] as const,
    registers: [this.registry],
  });

  private readonly cacheLookups = new Counter({
    name: 'cache_lookups_total',
    help: 'Reads of cached session data, by cache (session_list, transcript) and result (hit, miss: absent, out of date or the cache unavailable)',
    labelNames: ['cache', 'result'] as const,
    registers: [this.registry],
  });

  private readonly databaseReads = new Counter({
    name: 'db_reads_total',
    help: 'Reads a read replica may serve (session_list, transcript, knowledge_search, collection_list), with DATABASE_READ_URL set, by who served them: replica; primary_replica_behind (the replica lacked a version the caller had seen); primary_replica_unusable (down, or lagging past DATABASE_READ_MAX_LAG_MS); primary_replica_failed (it failed the read)',
    labelNames: ['read', 'served_by'] as const,
    registers: [this.registry],
  });

  /** Made at the first probe of a read replica: without one, the metric is not exposed. */
  private replicaLagGauge?: Gauge;

  private readonly pools = new Map<string, WatchedPool>();

  constructor() {
    const pools = this.pools;
    new Gauge({
      name: 'db_client_connections_usage',
      help: 'PostgreSQL connections of each pool of this instance, by state (idle, used)',
      labelNames: ['pool_name', 'state'] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const [name, pool] of pools) {
          this.set({ pool_name: name, state: 'idle' }, pool.idleCount);
          this.set({ pool_name: name, state: 'used' }, pool.totalCount - pool.idleCount);
        }
      },
    });
    new Gauge({
      name: 'db_client_connections_max',
      help: 'The most connections each pool opens',
      labelNames: ['pool_name'] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const [name, pool] of pools) if (pool.options.max !== undefined) this.set({ pool_name: name }, pool.options.max);
      },
    });
    new Gauge({
      name: 'db_client_connections_pending_requests',
      help: 'Queries waiting for a connection of each pool',
      labelNames: ['pool_name'] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const [name, pool] of pools) this.set({ pool_name: name }, pool.waitingCount);
      },
    });
  }

  /** The text a scrape answers: this app's metrics, then the process's. */
  async exposition(): Promise<string> {
    const [own, process] = await Promise.all([this.registry.metrics(), processMetrics().metrics()]);
    return `${own}\n${process}`;
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /**
   * A gauge read at each scrape: `read` answers the values by label. A read
   * that fails, or takes longer than GAUGE_READ_LIMIT_MS (a stalled
   * database), leaves the gauge empty rather than holding the scrape.
   */
  gauge<L extends string>(name: string, help: string, labelNames: readonly L[], read: () => Promise<Array<[Partial<Record<L, string>>, number]>>): void {
    new Gauge({
      name,
      help,
      labelNames,
      registers: [this.registry],
      async collect() {
        this.reset();
        for (const [labels, value] of await readWithin(read, GAUGE_READ_LIMIT_MS)) this.set(labels, value);
      },
    });
  }

  /** Reports `pool`'s connections as `pool_name` at every scrape. */
  watchPool(name: string, pool: WatchedPool): void {
    this.pools.set(name, pool);
  }

  unwatchPool(name: string): void {
    this.pools.delete(name);
  }

  httpRequest(method: string, route: string, status: number, seconds: number): void {
    this.httpDuration.observe({ http_request_method: HTTP_METHODS.has(method) ? method : '_OTHER', http_route: route, http_response_status_code: String(status) }, seconds);
  }

  /**
   * Runs a model call, timed: its duration by outcome, and its tokens (those
   * `tokens` gives for the result; it may need to count them, so they are
   * recorded off the caller's path).
   */
  async modelCall<T>(call: GenAiCall, work: () => Promise<T>, tokens?: (result: T) => Promise<TokenUsage | undefined> | TokenUsage | undefined): Promise<T> {
    const started = performance.now();
    const labels = { gen_ai_operation_name: call.operation, gen_ai_provider_name: call.provider, gen_ai_request_model: call.model };
    let result: T;
    try {
      result = await work();
    } catch (error) {
      this.genAiDuration.observe({ ...labels, error_type: errorType(error) }, (performance.now() - started) / 1000);
      throw error;
    }
    this.genAiDuration.observe({ ...labels, error_type: '' }, (performance.now() - started) / 1000);
    if (tokens) {
      void Promise.resolve()
        .then(() => tokens(result))
        .then((usage) => {
          if (!usage) return;
          this.genAiTokens.observe({ ...labels, gen_ai_token_type: 'input' }, usage.input);
          this.genAiTokens.observe({ ...labels, gen_ai_token_type: 'output' }, usage.output);
        })
        .catch(() => undefined);
    }
    return result;
  }

  /** Runs a retrieval stage, timed by its name. */
  async stage<T>(name: string, work: () => Promise<T>): Promise<T> {
    const end = this.stageDuration.startTimer({ stage: name });
    try {
      return await work();
    } finally {
      end();
    }
  }

  /** A turn started: it counts as in flight until `end`. */
  startTurn(): TurnMeter {
    const started = performance.now();
    this.runsInFlight.inc();
    let firstToken = false;
    let ended = false;
    return {
      sawEvent: (type) => {
        if (firstToken || type !== 'token') return;
        firstToken = true;
        this.firstToken.observe((performance.now() - started) / 1000);
      },
      end: (outcome, errorCode) => {
        if (ended) return;
        ended = true;
        this.runsInFlight.dec();
        this.turnDuration.observe({ outcome, error_type: outcome === 'failed' ? (errorCode ?? 'unknown') : '' }, (performance.now() - started) / 1000);
      },
    };
  }

  ingestFinished(outcome: 'completed' | 'failed' | 'retried' | 'cancelled', count = 1): void {
    this.ingestOutcomes.inc({ outcome }, count);
  }

  rateLimitRefused(bucket: string, spentBy: string): void {
    this.rateLimitRefusals.inc({ bucket, spent_by: spentBy });
  }

  databaseRead(read: string, servedBy: 'replica' | 'primary_replica_behind' | 'primary_replica_unusable' | 'primary_replica_failed'): void {
    this.databaseReads.inc({ read, served_by: servedBy });
  }

  replicaLag(milliseconds: number): void {
    this.replicaLagGauge ??= new Gauge({
      name: 'db_replica_lag_seconds',
      help: 'How far the read replica was behind the primary at its last probe, at most: the age of the newest WAL position of the primary it had replayed',
      registers: [this.registry],
    });
    this.replicaLagGauge.set(Number.isFinite(milliseconds) ? milliseconds / 1000 : Number.MAX_VALUE);
  }

  cacheLookup(cache: 'session_list' | 'transcript', hit: boolean): void {
    this.cacheLookups.inc({ cache, result: hit ? 'hit' : 'miss' });
  }
}

/** The app's Metrics, for every module (imported once, by the app). */
@Global()
@Module({ providers: [Metrics], exports: [Metrics] })
export class MetricsModule {}
