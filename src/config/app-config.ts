import { plainToInstance, Type } from 'class-transformer';
import {
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  Matches,
  Max,
  Min,
  MinLength,
  validateSync,
  ValidationError,
} from 'class-validator';

export const NODE_ENVS = ['development', 'production', 'test'] as const;
export type NodeEnv = (typeof NODE_ENVS)[number];

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Loudly logged and refused in production; only for local development. */
export const DEVELOPMENT_JWT_SECRET = 'dev-only-insecure-secret-change-me';

/**
 * Every setting of the service, read from environment variables once at
 * start-up. Property names are the variable names, so a validation message
 * names the variable to fix.
 */
export class EnvironmentVariables {
  @IsOptional() @IsIn(NODE_ENVS)
  NODE_ENV: NodeEnv = 'development';

  @IsOptional() @Type(() => Number) @IsInt() @Min(0) @Max(65535)
  PORT = 3000;

  @IsOptional() @IsString()
  HOST = '0.0.0.0';

  @IsOptional() @Matches(/^postgres(ql)?:\/\/.+/, {
    message: 'DATABASE_URL must be a postgres:// connection URL',
  })
  DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/rag_chat';

  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(200)
  DATABASE_POOL_SIZE = 10;

  @IsOptional() @Type(() => Number) @IsInt() @Min(100) @Max(600000)
  DATABASE_STATEMENT_TIMEOUT_MS = 15000;

  @IsOptional() @Type(() => Number) @IsInt() @Min(100) @Max(600000)
  DATABASE_LOCK_TIMEOUT_MS = 5000;

  @IsOptional() @IsIn(['true', 'false'])
  DATABASE_CREATE_IF_MISSING: 'true' | 'false' = 'true';

  @IsOptional() @IsIn(['true', 'false'])
  MIGRATIONS_RUN: 'true' | 'false' = 'true';

  @IsOptional() @Matches(/^rediss?:\/\/.+/, {
    message: 'REDIS_URL must be a redis:// or rediss:// URL',
  })
  REDIS_URL = 'redis://127.0.0.1:6379';

  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(86400 * 30)
  CACHE_TTL_SECONDS = 300;

  @IsOptional() @Type(() => Number) @IsInt() @Min(10) @Max(10000)
  CACHE_COMMAND_TIMEOUT_MS = 200;

  @IsOptional() @IsString() @MinLength(16, {
    message: 'JWT_SECRET must be at least 16 characters long',
  })
  JWT_SECRET?: string;

  @IsOptional() @Type(() => Number) @IsInt() @Min(60) @Max(86400 * 30)
  JWT_MAX_LIFETIME_SECONDS = 86400;

  @IsOptional() @Matches(/^\d+(b|kb|mb)$/i, {
    message: 'BODY_LIMIT must look like 100kb or 1mb',
  })
  BODY_LIMIT = '1mb';

  @IsOptional() @Type(() => Number) @IsInt() @Min(1000) @Max(600000)
  HTTP_REQUEST_TIMEOUT_MS = 30000;

  /** Unset: 10 s, or HTTP_REQUEST_TIMEOUT_MS when that is shorter. */
  @IsOptional() @Type(() => Number) @IsInt() @Min(1000) @Max(600000)
  HTTP_HEADERS_TIMEOUT_MS?: number;

  @IsOptional() @IsIn(LOG_LEVELS)
  LOG_LEVEL: LogLevel = 'info';

  @IsOptional() @Type(() => Number) @IsInt() @Min(0) @Max(600000)
  SHUTDOWN_TIMEOUT_MS = 10000;

  @IsOptional() @IsIn(['local', 'openai'])
  LLM_PROVIDER: 'local' | 'openai' = 'local';

  @IsOptional() @Matches(/^https?:\/\/.+/, { message: 'LLM_BASE_URL must be an http(s) URL' })
  LLM_BASE_URL?: string;

  @IsOptional() @IsString()
  LLM_API_KEY?: string;

  @IsOptional() @IsString()
  LLM_MODEL = 'gpt-4o-mini';

  @IsOptional() @IsString()
  LLM_FAST_MODEL?: string;

  @IsOptional() @Type(() => Number) @IsInt() @Min(100) @Max(600000)
  LLM_TIMEOUT_MS = 60000;

  @IsOptional() @Type(() => Number) @IsInt() @Min(0) @Max(10)
  LLM_MAX_RETRIES = 2;

  @IsOptional() @Matches(/^https?:\/\/.+/, { message: 'WEATHER_BASE_URL must be an http(s) URL' })
  WEATHER_BASE_URL = 'https://api.open-meteo.com';

  @IsOptional() @Matches(/^https?:\/\/.+/, { message: 'WEATHER_GEOCODING_URL must be an http(s) URL' })
  WEATHER_GEOCODING_URL = 'https://geocoding-api.open-meteo.com';

  @IsOptional() @Type(() => Number) @IsInt() @Min(100) @Max(60000)
  WEATHER_TIMEOUT_MS = 5000;

  @IsOptional() @IsString()
  KNOWLEDGE_CORPUS_DIR = 'corpus';

  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(20)
  KNOWLEDGE_TOP_K = 4;

  @IsOptional() @Matches(/^\d{2,5}(,\d{2,5}){0,3}$/, { message: 'KNOWLEDGE_CHUNK_SIZES must be 1-4 comma-separated sizes in characters, largest first, e.g. 1200,400' })
  KNOWLEDGE_CHUNK_SIZES = '1200,400';

  @IsOptional() @Type(() => Number) @IsInt() @Min(0) @Max(1000)
  KNOWLEDGE_CHUNK_OVERLAP = 80;

  @IsOptional() @Type(() => Number) @IsInt() @Min(1024) @Max(100 * 1024 * 1024)
  KNOWLEDGE_MAX_UPLOAD_BYTES = 10 * 1024 * 1024;

  @IsOptional() @IsIn(['true', 'false'])
  KNOWLEDGE_SEED_ON_START: 'true' | 'false' = 'true';

  /** Read as text: an invalid value falls back to the multiplier and is reported in the trace. */
  @IsOptional() @IsString()
  RAG_RECALL_K?: string;

  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(50)
  RAG_RECALL_MULTIPLIER = 4;

  @IsOptional() @IsIn(['true', 'false'])
  RAG_AUTO_MERGE: 'true' | 'false' = 'true';

  @IsOptional() @Type(() => Number) @Min(0.01) @Max(1)
  RAG_AUTO_MERGE_THRESHOLD = 0.5;

  @IsOptional() @IsIn(['local', 'http', 'none'])
  RERANK_PROVIDER: 'local' | 'http' | 'none' = 'local';

  @IsOptional() @Matches(/^https?:\/\/.+/, { message: 'RERANK_URL must be an http(s) URL of a /rerank endpoint' })
  RERANK_URL?: string;

  @IsOptional() @IsString()
  RERANK_MODEL = 'jina-reranker-v2-base-multilingual';

  @IsOptional() @IsString()
  RERANK_API_KEY?: string;

  @IsOptional() @Type(() => Number) @IsInt() @Min(50) @Max(60000)
  RERANK_TIMEOUT_MS = 3000;

  @IsOptional() @Type(() => Number) @Min(0) @Max(1)
  RAG_MIN_RELEVANCE = 0.1;

  @IsOptional() @IsIn(['local', 'openai'])
  EMBEDDING_PROVIDER: 'local' | 'openai' = 'local';

  @IsOptional() @IsString()
  EMBEDDING_MODEL = 'text-embedding-3-small';

  @IsOptional() @Type(() => Number) @IsInt() @Min(16) @Max(4096)
  EMBEDDING_DIMENSIONS = 256;

  @IsOptional() @IsIn(['auto', 'pgvector', 'memory'])
  RAG_DENSE_BACKEND: 'auto' | 'pgvector' | 'memory' = 'auto';

  @IsOptional() @Type(() => Number) @IsInt() @Min(10) @Max(1000)
  RAG_HNSW_EF_SEARCH = 100;

  @IsOptional() @Type(() => Number) @IsInt() @Min(2) @Max(200)
  CHAT_RECENT_MESSAGES = 12;

  @IsOptional() @Type(() => Number) @IsInt() @Min(0) @Max(100000)
  RATE_LIMIT_CHAT_PER_MINUTE = 30;

  @IsOptional() @Type(() => Number) @IsInt() @Min(0) @Max(100000)
  RATE_LIMIT_SEARCH_PER_MINUTE = 60;

  @IsOptional() @Type(() => Number) @IsInt() @Min(0) @Max(100000)
  RATE_LIMIT_UPLOAD_PER_MINUTE = 10;

  @IsOptional() @Type(() => Number) @IsInt() @Min(1000) @Max(600000)
  SSE_HEARTBEAT_MS = 15000;

  @IsOptional() @Type(() => Number) @IsInt() @Min(60) @Max(86400 * 7)
  RUN_EVENTS_TTL_SECONDS = 3600;

  @IsOptional() @Type(() => Number) @IsInt() @Min(50) @Max(600000)
  RUN_HEARTBEAT_MS = 5000;

  @IsOptional() @Type(() => Number) @IsInt() @Min(100) @Max(3600000)
  RUN_STALE_AFTER_MS = 15000;
}

export interface AppConfig {
  nodeEnv: NodeEnv;
  port: number;
  host: string;
  database: {
    url: string;
    poolSize: number;
    createIfMissing: boolean;
    migrationsRun: boolean;
    statementTimeoutMs: number;
    lockTimeoutMs: number;
  };
  redis: { url: string; ttlSeconds: number; commandTimeoutMs: number };
  auth: { jwtSecret: string; usingDevelopmentSecret: boolean; maxTokenLifetimeSeconds: number };
  http: { bodyLimit: string; requestTimeoutMs: number; headersTimeoutMs: number };
  logLevel: LogLevel;
  shutdownTimeoutMs: number;
  llm: {
    provider: 'local' | 'openai';
    baseUrl?: string;
    apiKey?: string;
    model: string;
    fastModel: string;
    timeoutMs: number;
    maxRetries: number;
  };
  weather: { baseUrl: string; geocodingUrl: string; timeoutMs: number };
  knowledge: {
    corpusDir: string;
    topK: number;
    chunkSizes: number[];
    chunkOverlap: number;
    maxUploadBytes: number;
    seedOnStart: boolean;
    recallKRaw?: string;
    recallMultiplier: number;
    autoMerge: boolean;
    autoMergeThreshold: number;
    minRelevance: number;
  };
  rerank: { provider: 'local' | 'http' | 'none'; url?: string; model: string; apiKey?: string; timeoutMs: number };
  embeddings: { provider: 'local' | 'openai'; model: string; dimensions: number };
  dense: { backend: 'auto' | 'pgvector' | 'memory'; hnswEfSearch: number };
  /** Requests per user and minute; 0 turns the limit off. */
  rateLimit: { chatPerMinute: number; searchPerMinute: number; uploadPerMinute: number };
  chat: {
    recentMessages: number;
    sseHeartbeatMs: number;
    runEventsTtlSeconds: number;
    runHeartbeatMs: number;
    runStaleAfterMs: number;
  };
}

export class ConfigValidationError extends Error {}

function describe(errors: ValidationError[]): string {
  return errors
    .map((e) => `${e.property}: ${Object.values(e.constraints ?? {}).join('; ')}`)
    .join('\n');
}

/** Validates the environment; throws a ConfigValidationError naming each bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): AppConfig {
  const known = Object.keys(new EnvironmentVariables());
  const picked: Record<string, unknown> = {};
  // An empty variable counts as unset, as in most shells' `VAR= command`.
  for (const key of known) if (env[key] !== undefined && env[key]!.trim() !== '') picked[key] = env[key];
  const vars = plainToInstance(EnvironmentVariables, picked, { exposeDefaultValues: true });
  const errors = validateSync(vars, { skipMissingProperties: false });
  if (errors.length > 0) {
    throw new ConfigValidationError(`Invalid environment configuration:\n${describe(errors)}`);
  }
  if (vars.LLM_PROVIDER === 'openai' && !vars.LLM_BASE_URL && !vars.LLM_API_KEY) {
    throw new ConfigValidationError(
      'Invalid environment configuration:\nLLM_API_KEY: required when LLM_PROVIDER=openai (or set LLM_BASE_URL for a keyless local endpoint)',
    );
  }
  if (vars.RERANK_PROVIDER === 'http' && !vars.RERANK_URL) {
    throw new ConfigValidationError('Invalid environment configuration:\nRERANK_URL: required when RERANK_PROVIDER=http');
  }
  const sizes = vars.KNOWLEDGE_CHUNK_SIZES.split(',').map(Number);
  if (sizes.some((size, i) => i > 0 && size >= sizes[i - 1]) || vars.KNOWLEDGE_CHUNK_OVERLAP >= sizes[sizes.length - 1]) {
    throw new ConfigValidationError(
      'Invalid environment configuration:\nKNOWLEDGE_CHUNK_SIZES: sizes must decrease from parent to leaf and exceed KNOWLEDGE_CHUNK_OVERLAP',
    );
  }
  if (vars.RUN_STALE_AFTER_MS < 2 * vars.RUN_HEARTBEAT_MS) {
    throw new ConfigValidationError(
      'Invalid environment configuration:\nRUN_STALE_AFTER_MS: must be at least twice RUN_HEARTBEAT_MS, or a live run could be taken over',
    );
  }
  if (vars.HTTP_HEADERS_TIMEOUT_MS !== undefined && vars.HTTP_HEADERS_TIMEOUT_MS > vars.HTTP_REQUEST_TIMEOUT_MS) {
    throw new ConfigValidationError(
      'Invalid environment configuration:\nHTTP_HEADERS_TIMEOUT_MS: must not exceed HTTP_REQUEST_TIMEOUT_MS (the headers are part of the request)',
    );
  }
  if (!vars.JWT_SECRET && vars.NODE_ENV === 'production') {
    throw new ConfigValidationError(
      'Invalid environment configuration:\nJWT_SECRET: required when NODE_ENV=production',
    );
  }
  return {
    nodeEnv: vars.NODE_ENV,
    port: vars.PORT,
    host: vars.HOST,
    database: {
      url: vars.DATABASE_URL,
      poolSize: vars.DATABASE_POOL_SIZE,
      createIfMissing: vars.DATABASE_CREATE_IF_MISSING === 'true',
      migrationsRun: vars.MIGRATIONS_RUN === 'true',
      statementTimeoutMs: vars.DATABASE_STATEMENT_TIMEOUT_MS,
      lockTimeoutMs: vars.DATABASE_LOCK_TIMEOUT_MS,
    },
    redis: {
      url: vars.REDIS_URL,
      ttlSeconds: vars.CACHE_TTL_SECONDS,
      commandTimeoutMs: vars.CACHE_COMMAND_TIMEOUT_MS,
    },
    auth: {
      jwtSecret: vars.JWT_SECRET ?? DEVELOPMENT_JWT_SECRET,
      usingDevelopmentSecret: !vars.JWT_SECRET,
      maxTokenLifetimeSeconds: vars.JWT_MAX_LIFETIME_SECONDS,
    },
    http: {
      bodyLimit: vars.BODY_LIMIT,
      requestTimeoutMs: vars.HTTP_REQUEST_TIMEOUT_MS,
      headersTimeoutMs: vars.HTTP_HEADERS_TIMEOUT_MS ?? Math.min(10000, vars.HTTP_REQUEST_TIMEOUT_MS),
    },
    logLevel: vars.LOG_LEVEL,
    shutdownTimeoutMs: vars.SHUTDOWN_TIMEOUT_MS,
    llm: {
      provider: vars.LLM_PROVIDER,
      baseUrl: vars.LLM_BASE_URL,
      apiKey: vars.LLM_API_KEY,
      model: vars.LLM_MODEL,
      fastModel: vars.LLM_FAST_MODEL ?? vars.LLM_MODEL,
      timeoutMs: vars.LLM_TIMEOUT_MS,
      maxRetries: vars.LLM_MAX_RETRIES,
    },
    weather: {
      baseUrl: vars.WEATHER_BASE_URL.replace(/\/+$/, ''),
      geocodingUrl: vars.WEATHER_GEOCODING_URL.replace(/\/+$/, ''),
      timeoutMs: vars.WEATHER_TIMEOUT_MS,
    },
    knowledge: {
      corpusDir: vars.KNOWLEDGE_CORPUS_DIR,
      topK: vars.KNOWLEDGE_TOP_K,
      chunkSizes: vars.KNOWLEDGE_CHUNK_SIZES.split(',').map(Number),
      chunkOverlap: vars.KNOWLEDGE_CHUNK_OVERLAP,
      maxUploadBytes: vars.KNOWLEDGE_MAX_UPLOAD_BYTES,
      seedOnStart: vars.KNOWLEDGE_SEED_ON_START === 'true',
      recallKRaw: vars.RAG_RECALL_K,
      recallMultiplier: vars.RAG_RECALL_MULTIPLIER,
      autoMerge: vars.RAG_AUTO_MERGE === 'true',
      autoMergeThreshold: vars.RAG_AUTO_MERGE_THRESHOLD,
      minRelevance: vars.RAG_MIN_RELEVANCE,
    },
    rerank: {
      provider: vars.RERANK_PROVIDER,
      url: vars.RERANK_URL,
      model: vars.RERANK_MODEL,
      apiKey: vars.RERANK_API_KEY,
      timeoutMs: vars.RERANK_TIMEOUT_MS,
    },
    embeddings: { provider: vars.EMBEDDING_PROVIDER, model: vars.EMBEDDING_MODEL, dimensions: vars.EMBEDDING_DIMENSIONS },
    dense: { backend: vars.RAG_DENSE_BACKEND, hnswEfSearch: vars.RAG_HNSW_EF_SEARCH },
    rateLimit: {
      chatPerMinute: vars.RATE_LIMIT_CHAT_PER_MINUTE,
      searchPerMinute: vars.RATE_LIMIT_SEARCH_PER_MINUTE,
      uploadPerMinute: vars.RATE_LIMIT_UPLOAD_PER_MINUTE,
    },
    chat: {
      recentMessages: vars.CHAT_RECENT_MESSAGES,
      sseHeartbeatMs: vars.SSE_HEARTBEAT_MS,
      runEventsTtlSeconds: vars.RUN_EVENTS_TTL_SECONDS,
      runHeartbeatMs: vars.RUN_HEARTBEAT_MS,
      runStaleAfterMs: vars.RUN_STALE_AFTER_MS,
    },
  };
}
