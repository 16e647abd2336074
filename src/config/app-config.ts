import { ConfigProblem, ENVIRONMENT, Environment, environmentSchema, LOG_FORMATS, LOG_LEVELS, NODE_ENVS } from './environment.js';
import { DEFAULT_DATABASE_URL, DEFAULT_REDIS_URL } from './variables/stores.js';

export { DENSE_BACKENDS, EMBEDDING_PROVIDERS, ENVIRONMENT, LLM_PROVIDERS, LOG_FORMATS, LOG_LEVELS, NODE_ENVS, RERANK_PROVIDERS } from './environment.js';
export type { ConfigProblem, Environment, EnvironmentVariable, McpServerConfig } from './environment.js';

export type NodeEnv = (typeof NODE_ENVS)[number];
export type LogLevel = (typeof LOG_LEVELS)[number];
export type LogFormat = (typeof LOG_FORMATS)[number];

/** Loudly logged and refused in production; only for local development. */
export const DEVELOPMENT_JWT_SECRET = 'dev-only-insecure-secret-change-me';

/** The JWT_JWKS_* settings when JWT_JWKS_URL is set; every variable is read either way. */
function identityProviderConfig(env: Environment) {
  const settings = {
    issuer: env.JWT_ISSUER,
    audience: env.JWT_AUDIENCE,
    roleClaim: env.JWT_ROLE_CLAIM,
    adminRole: env.JWT_ADMIN_ROLE,
    timeoutMs: env.JWT_JWKS_TIMEOUT_MS,
    cooldownMs: env.JWT_JWKS_COOLDOWN_MS,
  };
  const jwksUrl = env.JWT_JWKS_URL;
  return jwksUrl ? { jwksUrl, ...settings } : undefined;
}

/**
 * The service's settings, shaped for the code that reads them. Every value
 * comes from one variable of the schema (environment.ts), or from a few
 * where a default is derived; the resulting `AppConfig` type is this
 * function's result.
 */
export function configFromEnvironment(env: Environment) {
  return {
    nodeEnv: env.NODE_ENV,
    port: env.PORT,
    /** Serve web/dist at `/` (when it was built). */
    webClientEnabled: env.WEB_CLIENT_ENABLED,
    host: env.HOST,
    database: {
      /** A postgres:// URL, or pglite://<directory> until the embedded database is started (main.ts serves it and puts its URL here). */
      url: env.DATABASE_URL ?? DEFAULT_DATABASE_URL,
      /** DATABASE_URL was left unset: when nothing answers at the default, the embedded database is used instead. */
      defaulted: env.DATABASE_URL === undefined,
      /** PostgreSQL itself, for migrations, session advisory locks and index builds; null: `url`. */
      directUrl: (env.DATABASE_DIRECT_URL ?? null) as string | null,
      /** A streaming replica for the reads that may lag; null: the primary serves every read. */
      readUrl: (env.DATABASE_READ_URL ?? null) as string | null,
      readMaxLagMs: env.DATABASE_READ_MAX_LAG_MS,
      /** Set at start-up when the service runs on the embedded database (main.ts). */
      embedded: false as boolean,
      poolSize: env.DATABASE_POOL_SIZE,
      /** Unset: on, except in production (a mistyped DATABASE_URL must not create a database on whatever server it reaches). */
      createIfMissing: env.DATABASE_CREATE_IF_MISSING ?? env.NODE_ENV !== 'production',
      migrationsRun: env.MIGRATIONS_RUN,
      statementTimeoutMs: env.DATABASE_STATEMENT_TIMEOUT_MS,
      lockTimeoutMs: env.DATABASE_LOCK_TIMEOUT_MS,
    },
    redis: {
      /** Null: no Redis (REDIS_URL=none, or unset with nothing answering at the default); every Redis path runs in-process. */
      url: (env.REDIS_URL === 'none' ? null : (env.REDIS_URL ?? (env.REDIS_SENTINELS || env.REDIS_CLUSTER_NODES ? 'redis://' : DEFAULT_REDIS_URL))) as string | null,
      /** REDIS_URL was left unset: when nothing answers at the default, the service runs without Redis. */
      defaulted: env.REDIS_URL === undefined && !env.REDIS_SENTINELS && !env.REDIS_CLUSTER_NODES,
      /** Redis Sentinel: the master is found through these nodes; `url` then gives only its user, password and database. */
      sentinel: sentinelConfig(env.REDIS_SENTINELS, env.REDIS_SENTINEL_MASTER, env.REDIS_SENTINEL_PASSWORD),
      /** Redis Cluster: the cluster is discovered from these nodes; `url` then gives only their user and password. */
      cluster: clusterConfig(env.REDIS_CLUSTER_NODES, env.REDIS_CLUSTER_RUN_SHARDS),
      ttlSeconds: env.CACHE_TTL_SECONDS,
      commandTimeoutMs: env.CACHE_COMMAND_TIMEOUT_MS,
    },
    auth: {
      jwtSecret: env.JWT_SECRET ?? DEVELOPMENT_JWT_SECRET,
      usingDevelopmentSecret: env.JWT_SECRET === undefined,
      maxTokenLifetimeSeconds: env.JWT_MAX_LIFETIME_SECONDS,
      /** RS256/ES256 tokens of an identity provider; undefined: only HS256 tokens are accepted. */
      identityProvider: identityProviderConfig(env),
    },
    /** The groups claim (a dot path), read from HS256 and identity-provider tokens alike; apart from `auth`, as `streamTickets` is. */
    groups: { claim: env.JWT_GROUPS_CLAIM },
    /** Stream tickets (EventSource rejoin); apart from `auth` so that object stays the bearer-token settings. */
    streamTickets: { ttlSeconds: env.STREAM_TICKET_TTL_SECONDS },
    http: {
      bodyLimit: env.BODY_LIMIT,
      requestTimeoutMs: env.HTTP_REQUEST_TIMEOUT_MS,
      headersTimeoutMs: env.HTTP_HEADERS_TIMEOUT_MS ?? Math.min(10000, env.HTTP_REQUEST_TIMEOUT_MS),
      /** Empty: CORS off. */
      corsOrigins: env.CORS_ORIGINS ?? [],
      /** Where clients reach the service (no trailing slash); undefined: the scheme and Host of each request. */
      publicBaseUrl: env.PUBLIC_BASE_URL,
    },
    logLevel: env.LOG_LEVEL,
    logFormat: env.LOG_FORMAT,
    shutdownTimeoutMs: env.SHUTDOWN_TIMEOUT_MS,
    /** How long turns in flight may still run after SIGTERM before they are ended (`shutting_down`). */
    shutdownDrainMs: env.SHUTDOWN_DRAIN_MS ?? Math.floor((env.SHUTDOWN_TIMEOUT_MS * 3) / 4),
    llm: {
      provider: env.LLM_PROVIDER,
      baseUrl: env.LLM_BASE_URL,
      apiKey: env.LLM_API_KEY,
      model: env.LLM_MODEL,
      fastModel: env.LLM_FAST_MODEL ?? env.LLM_MODEL,
      timeoutMs: env.LLM_TIMEOUT_MS,
      judgeTimeoutMs: env.LLM_JUDGE_TIMEOUT_MS,
      maxRetries: env.LLM_MAX_RETRIES,
    },
    weather: {
      baseUrl: env.WEATHER_BASE_URL.replace(/\/+$/, ''),
      geocodingUrl: env.WEATHER_GEOCODING_URL.replace(/\/+$/, ''),
      timeoutMs: env.WEATHER_TIMEOUT_MS,
    },
    mcp: {
      servers: env.MCP_SERVERS,
      maxResultChars: env.MCP_MAX_RESULT_CHARS,
    },
    knowledge: {
      corpusDir: env.KNOWLEDGE_CORPUS_DIR,
      collectionCreators: env.KNOWLEDGE_COLLECTION_CREATORS,
      topK: env.KNOWLEDGE_TOP_K,
      chunkSizes: env.KNOWLEDGE_CHUNK_SIZES,
      chunkOverlap: env.KNOWLEDGE_CHUNK_OVERLAP,
      maxUploadBytes: env.KNOWLEDGE_MAX_UPLOAD_BYTES,
      ingestConcurrency: env.KNOWLEDGE_INGEST_CONCURRENCY,
      ingestAttempts: env.KNOWLEDGE_INGEST_ATTEMPTS,
      ingestLockMs: env.KNOWLEDGE_INGEST_LOCK_MS,
      bulkLeaves: env.KNOWLEDGE_BULK_LEAVES,
      parseTimeoutMs: env.KNOWLEDGE_PARSE_TIMEOUT_MS,
      parseMemoryMb: env.KNOWLEDGE_PARSE_MEMORY_MB,
      maxExtractedBytes: env.KNOWLEDGE_MAX_EXTRACTED_BYTES,
      maxPages: env.KNOWLEDGE_MAX_PAGES,
      maxChunksPerDocument: env.KNOWLEDGE_MAX_CHUNKS_PER_DOCUMENT,
      seedOnStart: env.KNOWLEDGE_SEED_ON_START,
      recallKRaw: env.RAG_RECALL_K,
      recallMultiplier: env.RAG_RECALL_MULTIPLIER,
      autoMerge: env.RAG_AUTO_MERGE,
      autoMergeThreshold: env.RAG_AUTO_MERGE_THRESHOLD,
      minRelevance: env.RAG_MIN_RELEVANCE,
    },
    rerank: {
      provider: env.RERANK_PROVIDER,
      url: env.RERANK_URL,
      model: env.RERANK_MODEL,
      apiKey: env.RERANK_API_KEY,
      timeoutMs: env.RERANK_TIMEOUT_MS,
    },
    embeddings: {
      provider: env.EMBEDDING_PROVIDER,
      baseUrl: env.EMBEDDING_BASE_URL ?? env.LLM_BASE_URL,
      apiKey: env.EMBEDDING_API_KEY ?? env.LLM_API_KEY,
      model: env.EMBEDDING_MODEL,
      dimensions: env.EMBEDDING_DIMENSIONS,
    },
    dense: { backend: env.RAG_DENSE_BACKEND, hnswEfSearch: env.RAG_HNSW_EF_SEARCH, hnswBuildMemory: env.RAG_HNSW_BUILD_MEMORY },
    /** Requests per user and minute; 0 turns the limit off. */
    rateLimit: {
      chatPerMinute: env.RATE_LIMIT_CHAT_PER_MINUTE,
      searchPerMinute: env.RATE_LIMIT_SEARCH_PER_MINUTE,
      uploadPerMinute: env.RATE_LIMIT_UPLOAD_PER_MINUTE,
      runControlPerMinute: env.RATE_LIMIT_RUN_CONTROL_PER_MINUTE,
    },
    chat: {
      recentMessages: env.CHAT_RECENT_MESSAGES,
      sseHeartbeatMs: env.SSE_HEARTBEAT_MS,
      runEventsTtlSeconds: env.RUN_EVENTS_TTL_SECONDS,
      runHeartbeatMs: env.RUN_HEARTBEAT_MS,
      runStaleAfterMs: env.RUN_STALE_AFTER_MS,
      runCancelWaitMs: env.RUN_CANCEL_WAIT_MS,
      /** The agent's model id on /v1 (OpenAI-compatible). */
      openAiModelId: env.OPENAI_COMPAT_MODEL,
    },
    /** The OpenTelemetry SDK reads the OTEL_* variables itself (src/tracing.ts); the service only decides what spans hold. */
    tracing: {
      captureContent: env.OTEL_GENAI_CAPTURE_CONTENT,
      /** Where spans go, for the start-up summary (the SDK reads the variables itself). */
      endpoint: env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? env.OTEL_EXPORTER_OTLP_ENDPOINT,
      exporter: env.OTEL_TRACES_EXPORTER,
      protocol: env.OTEL_EXPORTER_OTLP_PROTOCOL ?? 'http/protobuf',
      /** Whether export headers are set (their values may be credentials: never shown). */
      withHeaders: env.OTEL_EXPORTER_OTLP_HEADERS !== undefined,
      serviceName: env.OTEL_SERVICE_NAME ?? 'agentic-rag-chat',
      sdkDisabled: env.OTEL_SDK_DISABLED?.toLowerCase() === 'true',
    },
    metrics: {
      /** Null: /metrics is open. */
      token: env.METRICS_TOKEN ?? null,
    },
  };
}

type Simplify<T> = { [K in keyof T]: T[K] } & {};

/** Properties that may be undefined become optional (`baseUrl?: string`), at every level of plain objects. */
type OptionalWhereUndefined<T> = T extends readonly unknown[]
  ? T
  : T extends object
    ? Simplify<
        { [K in keyof T as undefined extends T[K] ? never : K]: OptionalWhereUndefined<T[K]> } & {
          [K in keyof T as undefined extends T[K] ? K : never]?: OptionalWhereUndefined<Exclude<T[K], undefined>>;
        }
      >
    : T;

export type AppConfig = OptionalWhereUndefined<ReturnType<typeof configFromEnvironment>>;

/** A bad environment: the message has one line per problem, `VARIABLE: what is wrong`. */
export class ConfigValidationError extends Error {
  constructor(readonly problems: readonly ConfigProblem[]) {
    super(`Invalid environment configuration:\n${problems.map((p) => `${p.variable}: ${p.message}`).join('\n')}`);
    this.name = 'ConfigValidationError';
  }
}

/** Validates the environment; throws a ConfigValidationError naming every bad variable at once. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): AppConfig {
  const set: Record<string, string> = {};
  // An empty variable counts as unset, as in most shells' `VAR= command`.
  for (const name of Object.keys(ENVIRONMENT)) {
    const value = env[name];
    if (value !== undefined && value.trim() !== '') set[name] = value;
  }
  const result = environmentSchema.safeParse(set);
  if (!result.success) {
    throw new ConfigValidationError(result.error.issues.map((issue) => ({ variable: String(issue.path[0] ?? '(environment)'), message: issue.message })));
  }
  return configFromEnvironment(result.data);
}

/** Redis Sentinel (REDIS_SENTINELS, REDIS_SENTINEL_MASTER, REDIS_SENTINEL_PASSWORD); null without sentinels. */
function sentinelConfig(nodes: string[] | undefined, master: string | undefined, password: string | undefined) {
  return nodes ? { nodes: nodes.map(redisNode), master: master!, password: password ?? null } : null;
}

/** Redis Cluster (REDIS_CLUSTER_NODES, REDIS_CLUSTER_RUN_SHARDS); null without cluster nodes. */
function clusterConfig(nodes: string[] | undefined, runShards: number) {
  return nodes ? { nodes: nodes.map(redisNode), runShards } : null;
}

function redisNode(address: string): { host: string; port: number } {
  const at = address.lastIndexOf(':');
  return { host: address.slice(0, at), port: Number(address.slice(at + 1)) };
}
