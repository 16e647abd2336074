import { z } from 'zod';

/**
 * Every environment variable of the service, declared once: its type, range,
 * default and description. `loadConfig` (app-config.ts) parses the
 * environment with this table and maps the result onto `AppConfig`, whose
 * type is derived from that mapping. The README's Configuration table is
 * checked against it (readme-config.spec.ts); where the README states a
 * derived default in words, the entry carries it as `readmeDefault` metadata.
 */

export const NODE_ENVS = ['development', 'production', 'test'] as const;
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/**
 * The names each `*_PROVIDER` variable accepts. Each provider registry
 * (src/models/chat-model-registry.ts, src/knowledge/embedding-registry.ts,
 * src/knowledge/rerank-registry.ts) is checked against its list when it is
 * built, so a name here without a provider class, or a class without a name
 * here, stops the service at start-up.
 */
export const LLM_PROVIDERS = ['local', 'openai'] as const;
export const EMBEDDING_PROVIDERS = ['local', 'openai'] as const;
export const RERANK_PROVIDERS = ['local', 'http', 'none'] as const;

export const DENSE_BACKENDS = ['auto', 'pgvector', 'memory'] as const;

function integer(min: number, max: number) {
  const message = `must be an integer from ${min} to ${max}`;
  return z.coerce.number({ error: message }).refine((n) => Number.isInteger(n) && n >= min && n <= max, message);
}

function decimal(min: number, max: number) {
  const message = `must be a number from ${min} to ${max}`;
  return z.coerce.number({ error: message }).refine((n) => n >= min && n <= max, message);
}

function oneOf<const T extends readonly [string, ...string[]]>(values: T) {
  return z.enum(values, { error: (issue) => `must be one of ${values.join(', ')} (got ${JSON.stringify(issue.input)})` });
}

/** Exactly `true` or `false`, as before; no `yes`, `1` or `TRUE`. */
function flag() {
  return z.stringbool({ truthy: ['true'], falsy: ['false'], case: 'sensitive', error: 'must be true or false' });
}

function httpUrl(what = 'an http(s) URL') {
  return z.string().regex(/^https?:\/\/.+/, `must be ${what}`);
}

const server = {
  NODE_ENV: oneOf(NODE_ENVS).default('development').describe('development, production or test; production requires JWT_SECRET'),
  PORT: integer(0, 65535).default(3000).describe('HTTP port'),
  HOST: z.string().default('0.0.0.0').describe('address to listen on'),
  LOG_LEVEL: oneOf(LOG_LEVELS).default('info').describe('log level (pino), or silent'),
  SHUTDOWN_TIMEOUT_MS: integer(0, 600000).default(10000).describe('how long SIGTERM waits for in-flight requests and turns'),
  SHUTDOWN_DRAIN_MS: integer(0, 600000)
    .optional()
    .describe('how long turns in flight may still run after SIGTERM; later they end with shutting_down, their message kept; unset: 3/4 of SHUTDOWN_TIMEOUT_MS')
    .meta({ readmeDefault: '7500' }),
  WEB_CLIENT_ENABLED: flag().default(true).describe('serve the reference web client (web/dist) at /'),
};

const http = {
  HTTP_REQUEST_TIMEOUT_MS: integer(1000, 600000).default(30000).describe('longest time a client may take to send its whole request'),
  HTTP_HEADERS_TIMEOUT_MS: integer(1000, 600000)
    .optional()
    .describe('longest time to send the request headers; unset: 10 s, or HTTP_REQUEST_TIMEOUT_MS when that is shorter')
    .meta({ readmeDefault: '10000' }),
  BODY_LIMIT: z
    .string()
    .regex(/^\d+(b|kb|mb)$/i, 'must look like 100kb or 1mb')
    .default('1mb')
    .describe('largest request body'),
  CORS_ORIGINS: z
    .string()
    .transform((list) =>
      list
        .split(',')
        .map((origin) => origin.trim())
        .filter(Boolean),
    )
    .pipe(z.array(z.string().regex(/^(\*|https?:\/\/[^/?#\s]+)$/, 'must be a comma-separated list of origins (scheme://host[:port], no path) or *')))
    // As browsers send them: lower-case host, no default port (https://A.example:443 → https://a.example).
    .transform((origins) => origins.map((origin) => (origin === '*' ? origin : new URL(origin).origin)))
    .optional()
    .describe('origins browsers may call the API from (comma-separated, or *); unset: CORS off'),
};

const database = {
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\/.+/, 'must be a postgres:// connection URL')
    .default('postgres://postgres@127.0.0.1:5432/rag_chat')
    .describe('PostgreSQL connection URL'),
  DATABASE_POOL_SIZE: integer(1, 200).default(10).describe('connections in the pool'),
  DATABASE_STATEMENT_TIMEOUT_MS: integer(100, 600000).default(15000).describe('longest statement (statement_timeout)'),
  DATABASE_LOCK_TIMEOUT_MS: integer(100, 600000).default(5000).describe('longest wait for a lock (lock_timeout)'),
  DATABASE_CREATE_IF_MISSING: flag().default(true).describe('create the database named in DATABASE_URL at start-up when absent'),
  MIGRATIONS_RUN: flag().default(true).describe('apply pending migrations at start-up'),
};

const cache = {
  REDIS_URL: z
    .string()
    .regex(/^rediss?:\/\/.+/, 'must be a redis:// or rediss:// URL')
    .default('redis://127.0.0.1:6379')
    .describe('Redis URL'),
  CACHE_TTL_SECONDS: integer(1, 86400 * 30)
    .default(300)
    .describe('lifetime of cached transcripts and session lists'),
  CACHE_COMMAND_TIMEOUT_MS: integer(10, 10000).default(200).describe('longest wait for one cache call before falling back to PostgreSQL'),
};

const auth = {
  JWT_SECRET: z
    .string()
    .min(16, 'must be at least 16 characters long')
    .optional()
    .describe('HS256 secret; unset: the development secret, refused in production')
    .meta({ readmeDefault: 'development secret' }),
  JWT_MAX_LIFETIME_SECONDS: integer(60, 86400 * 30)
    .default(86400)
    .describe('longest token lifetime accepted'),
  STREAM_TICKET_TTL_SECONDS: integer(5, 3600).default(60).describe('lifetime of a stream ticket (EventSource rejoin)'),
  JWT_JWKS_URL: httpUrl().optional().describe("an identity provider's JWKS endpoint; set: RS256 and ES256 tokens signed by its keys are accepted too"),
  JWT_ISSUER: z.string().optional().describe('the `iss` identity-provider tokens must carry; required with JWT_JWKS_URL'),
  JWT_AUDIENCE: z
    .string()
    .transform((list) =>
      list
        .split(',')
        .map((audience) => audience.trim())
        .filter(Boolean),
    )
    .pipe(z.array(z.string()).min(1, 'must name at least one audience (comma-separated)'))
    .optional()
    .describe('accepted `aud` values of identity-provider tokens (comma-separated; one must match); required with JWT_JWKS_URL'),
  JWT_ROLE_CLAIM: z.string().min(1).default('role').describe('claim of identity-provider tokens holding the role(s): a dot path (realm_access.roles)'),
  JWT_ADMIN_ROLE: z.string().min(1).default('admin').describe('role (in JWT_ROLE_CLAIM) that makes an identity-provider token admin'),
  JWT_JWKS_TIMEOUT_MS: integer(100, 60000).default(5000).describe('longest wait for the JWKS endpoint'),
  JWT_JWKS_COOLDOWN_MS: integer(0, 3600000).default(30000).describe('least time between two JWKS fetches caused by an unknown kid'),
};

const rateLimit = {
  RATE_LIMIT_CHAT_PER_MINUTE: integer(0, 100000).default(30).describe('chat turns per user and minute; 0 turns the limit off'),
  RATE_LIMIT_SEARCH_PER_MINUTE: integer(0, 100000).default(60).describe('knowledge searches per user and minute; 0 turns the limit off'),
  RATE_LIMIT_UPLOAD_PER_MINUTE: integer(0, 100000).default(10).describe('document uploads per user and minute; 0 turns the limit off'),
  RATE_LIMIT_RUN_CONTROL_PER_MINUTE: integer(0, 100000).default(60).describe('run cancels and stream tickets per user and minute; 0 turns the limit off'),
};

const llm = {
  LLM_PROVIDER: oneOf(LLM_PROVIDERS).default('local').describe('chat model provider'),
  LLM_BASE_URL: httpUrl().optional().describe('base URL of the OpenAI-compatible API'),
  LLM_API_KEY: z.string().optional().describe('its API key; with openai, this or LLM_BASE_URL is required'),
  LLM_MODEL: z.string().default('gpt-4o-mini').describe('main model (answers, tool calls)'),
  LLM_FAST_MODEL: z
    .string()
    .optional()
    .describe('fast model (summaries and the complexity, grading and rewrite judgements); unset: LLM_MODEL')
    .meta({ readmeDefault: 'LLM_MODEL' }),
  LLM_TIMEOUT_MS: integer(100, 600000).default(60000).describe('longest wait for one model call'),
  LLM_MAX_RETRIES: integer(0, 10).default(2).describe('retries of a failed model call'),
  LLM_JUDGE_TIMEOUT_MS: integer(100, 600000)
    .default(10000)
    .describe('longest wait for one judgement of the fast model (complexity, grading, rewrite) before the local judge answers'),
};

const weather = {
  WEATHER_BASE_URL: httpUrl().default('https://api.open-meteo.com').describe('Open-Meteo-compatible forecast API'),
  WEATHER_GEOCODING_URL: httpUrl().default('https://geocoding-api.open-meteo.com').describe('Open-Meteo-compatible geocoding API'),
  WEATHER_TIMEOUT_MS: integer(100, 60000).default(5000).describe('longest wait for the weather service'),
};

const knowledge = {
  KNOWLEDGE_CORPUS_DIR: z.string().default('corpus').describe('sample documents loaded into an empty knowledge base'),
  KNOWLEDGE_SEED_ON_START: flag().default(true).describe('load KNOWLEDGE_CORPUS_DIR when the knowledge base is empty'),
  KNOWLEDGE_TOP_K: integer(1, 20).default(4).describe('passages retrieval returns'),
  KNOWLEDGE_CHUNK_SIZES: z
    .string()
    .regex(/^\d{2,5}(,\d{2,5}){0,3}$/, 'must be 1-4 comma-separated sizes in characters, largest first, e.g. 1200,400')
    .transform((sizes) => sizes.split(',').map(Number))
    // prefault: the default is the text, parsed like a set value.
    .prefault('1200,400')
    .describe('characters per chunk level, parent first, leaf last'),
  KNOWLEDGE_CHUNK_OVERLAP: integer(0, 1000).default(80).describe('characters a leaf repeats from the one before it'),
  KNOWLEDGE_MAX_UPLOAD_BYTES: integer(1024, 100 * 1024 * 1024)
    .default(10 * 1024 * 1024)
    .describe('largest uploaded document'),
  KNOWLEDGE_INGEST_CONCURRENCY: integer(0, 64).default(1).describe('ingest jobs this instance works on at once (0: this instance takes none)'),
  KNOWLEDGE_INGEST_ATTEMPTS: integer(1, 20).default(3).describe('tries of an ingest job that fails for a passing reason'),
  KNOWLEDGE_INGEST_LOCK_MS: integer(1000, 600000).default(30000).describe("how long a worker's hold on a job lasts unrenewed: a dead worker's job moves on after it"),
  KNOWLEDGE_BULK_LEAVES: integer(0, 100_000_000).default(20000).describe('a document with at least this many leaves is bulk-loaded (0: never)'),
  KNOWLEDGE_PARSE_TIMEOUT_MS: integer(1000, 600000)
    .default(60000)
    .describe('longest parse of one uploaded document (in a worker thread); past it the worker is stopped and the job fails with document_too_large'),
  KNOWLEDGE_PARSE_MEMORY_MB: integer(32, 16384)
    .default(512)
    .describe('memory of the worker thread that parses one document (its heap, and the buffers it inflates); over it the job fails with document_too_large'),
  KNOWLEDGE_MAX_EXTRACTED_BYTES: integer(1024, 1024 * 1024 * 1024)
    .default(10 * 1024 * 1024)
    .describe('most text (UTF-8 bytes) one document may yield; extraction stops there and the job fails with document_too_large'),
  KNOWLEDGE_MAX_PAGES: integer(1, 1_000_000).default(5000).describe('most pages one document may have (checked before its text is extracted)'),
  KNOWLEDGE_MAX_CHUNKS_PER_DOCUMENT: integer(1, 100_000_000)
    .default(100_000)
    .describe('most chunks (parents and leaves) one document may be split into (checked before embedding)'),
};

const retrieval = {
  // Read as text: an invalid value falls back to the multiplier and is reported in the trace.
  RAG_RECALL_K: z.string().optional().describe('candidates each recall leg keeps (raw text; see RAG_RECALL_MULTIPLIER)'),
  RAG_RECALL_MULTIPLIER: integer(1, 50).default(4).describe('recall size as a multiple of top_k when RAG_RECALL_K is unset or invalid'),
  RAG_AUTO_MERGE: flag().default(true).describe('replace recalled sibling chunks by their parent'),
  RAG_AUTO_MERGE_THRESHOLD: decimal(0.01, 1).default(0.5).describe("share of a parent's children that must be recalled for the merge"),
  RAG_MIN_RELEVANCE: decimal(0, 1).default(0.1).describe('reranked passages scoring below it are dropped'),
};

const rerank = {
  RERANK_PROVIDER: oneOf(RERANK_PROVIDERS).default('local').describe('reranker; none skips reranking'),
  RERANK_URL: httpUrl('an http(s) URL of a /rerank endpoint').optional().describe('the rerank endpoint, required with http'),
  RERANK_MODEL: z.string().default('jina-reranker-v2-base-multilingual').describe('model name sent to the rerank API'),
  RERANK_API_KEY: z.string().optional().describe('bearer key for the rerank API'),
  RERANK_TIMEOUT_MS: integer(50, 60000).default(3000).describe('longest wait for the reranker'),
};

const embeddings = {
  EMBEDDING_PROVIDER: oneOf(EMBEDDING_PROVIDERS).default('local').describe('embeddings provider'),
  EMBEDDING_BASE_URL: httpUrl().optional().describe('base URL of the OpenAI-compatible embeddings API; unset: LLM_BASE_URL').meta({ readmeDefault: 'LLM_BASE_URL' }),
  EMBEDDING_API_KEY: z.string().optional().describe('its API key; unset: LLM_API_KEY; with openai, a base URL or a key is required').meta({ readmeDefault: 'LLM_API_KEY' }),
  EMBEDDING_MODEL: z.string().default('text-embedding-3-small').describe('embeddings model for openai'),
  EMBEDDING_DIMENSIONS: integer(16, 4096).default(256).describe('vector size'),
};

const dense = {
  RAG_DENSE_BACKEND: oneOf(DENSE_BACKENDS).default('auto').describe('dense recall backend'),
  RAG_HNSW_EF_SEARCH: integer(10, 1000).default(500).describe('pgvector HNSW candidate list per query'),
  RAG_HNSW_BUILD_MEMORY: z
    .string()
    .regex(/^[1-9][0-9]{0,6}(kB|MB|GB)$/, 'must be a PostgreSQL memory size such as 512MB or 2GB')
    .default('512MB')
    .describe('maintenance_work_mem of an HNSW index build (after a bulk load, at start)'),
};

const chat = {
  CHAT_RECENT_MESSAGES: integer(2, 200).default(12).describe('messages the model sees verbatim'),
  SSE_HEARTBEAT_MS: integer(1000, 600000).default(15000).describe('interval of the SSE heartbeat comment'),
  RUN_EVENTS_TTL_SECONDS: integer(60, 86400 * 7)
    .default(3600)
    .describe("how long a run's events stay in Redis"),
  RUN_HEARTBEAT_MS: integer(50, 600000).default(5000).describe('how often a running run records that it is alive'),
  RUN_STALE_AFTER_MS: integer(100, 3600000).default(15000).describe('a run without heartbeat for this long is abandoned'),
  RUN_CANCEL_WAIT_MS: integer(100, 60000).default(5000).describe('how long a cancel waits for the running instance to stop the run before recording it cancelled itself'),
  OPENAI_COMPAT_MODEL: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9._:/-]{0,99}$/, 'must be a model id of letters, digits and . _ : / - (at most 100)')
    .default('rag-agent')
    .describe('the model id the OpenAI-compatible routes (/v1) list and answer as'),
};

/** The variables in blocks, by concern. */
export const ENVIRONMENT_BLOCKS = {
  server,
  http,
  database,
  cache,
  auth,
  rateLimit,
  llm,
  weather,
  knowledge,
  retrieval,
  rerank,
  embeddings,
  dense,
  chat,
};

/** Every variable, by name. */
export const ENVIRONMENT = {
  ...server,
  ...http,
  ...database,
  ...cache,
  ...auth,
  ...rateLimit,
  ...llm,
  ...weather,
  ...knowledge,
  ...retrieval,
  ...rerank,
  ...embeddings,
  ...dense,
  ...chat,
};

export type EnvironmentVariable = keyof typeof ENVIRONMENT;

const variablesSchema = z.object(ENVIRONMENT);

/** The parsed environment: each variable converted to its type, defaults applied. */
export type Environment = z.output<typeof variablesSchema>;

export interface ConfigProblem {
  variable: string;
  message: string;
}

interface CrossCheck {
  reads: readonly EnvironmentVariable[];
  problem(env: Environment): ConfigProblem | undefined;
}

/** A rule over several variables; it sees only the variables it names, and is skipped when one of them is itself invalid. */
function crossCheck<const K extends EnvironmentVariable>(reads: readonly K[], problem: (env: Pick<Environment, K>) => { variable: K; message: string } | undefined): CrossCheck {
  return { reads, problem };
}

const CROSS_CHECKS: readonly CrossCheck[] = [
  crossCheck(['LLM_PROVIDER', 'LLM_BASE_URL', 'LLM_API_KEY'], (env) =>
    env.LLM_PROVIDER === 'openai' && !env.LLM_BASE_URL && !env.LLM_API_KEY
      ? { variable: 'LLM_API_KEY', message: 'required when LLM_PROVIDER=openai (or set LLM_BASE_URL for a keyless local endpoint)' }
      : undefined,
  ),
  crossCheck(['EMBEDDING_PROVIDER', 'EMBEDDING_BASE_URL', 'EMBEDDING_API_KEY', 'LLM_BASE_URL', 'LLM_API_KEY'], (env) =>
    env.EMBEDDING_PROVIDER === 'openai' && !(env.EMBEDDING_BASE_URL ?? env.LLM_BASE_URL) && !(env.EMBEDDING_API_KEY ?? env.LLM_API_KEY)
      ? {
          variable: 'EMBEDDING_API_KEY',
          message: 'required when EMBEDDING_PROVIDER=openai (or set EMBEDDING_BASE_URL for a keyless local endpoint; LLM_API_KEY and LLM_BASE_URL are used when set)',
        }
      : undefined,
  ),
  crossCheck(['RERANK_PROVIDER', 'RERANK_URL'], (env) =>
    env.RERANK_PROVIDER === 'http' && !env.RERANK_URL ? { variable: 'RERANK_URL', message: 'required when RERANK_PROVIDER=http' } : undefined,
  ),
  crossCheck(['KNOWLEDGE_CHUNK_SIZES', 'KNOWLEDGE_CHUNK_OVERLAP'], (env) => {
    const sizes = env.KNOWLEDGE_CHUNK_SIZES;
    const decreasing = sizes.every((size, i) => i === 0 || size < sizes[i - 1]);
    return decreasing && env.KNOWLEDGE_CHUNK_OVERLAP < sizes[sizes.length - 1]
      ? undefined
      : { variable: 'KNOWLEDGE_CHUNK_SIZES', message: 'sizes must decrease from parent to leaf and exceed KNOWLEDGE_CHUNK_OVERLAP' };
  }),
  crossCheck(['RUN_STALE_AFTER_MS', 'RUN_HEARTBEAT_MS'], (env) =>
    env.RUN_STALE_AFTER_MS < 2 * env.RUN_HEARTBEAT_MS
      ? { variable: 'RUN_STALE_AFTER_MS', message: 'must be at least twice RUN_HEARTBEAT_MS, or a live run could be taken over' }
      : undefined,
  ),
  crossCheck(['SHUTDOWN_DRAIN_MS', 'SHUTDOWN_TIMEOUT_MS'], (env) =>
    env.SHUTDOWN_DRAIN_MS !== undefined && env.SHUTDOWN_DRAIN_MS > 0 && env.SHUTDOWN_DRAIN_MS >= env.SHUTDOWN_TIMEOUT_MS
      ? {
          variable: 'SHUTDOWN_DRAIN_MS',
          message: 'must be less than SHUTDOWN_TIMEOUT_MS (the rest of it ends the turns that outlast the drain and closes the pools)',
        }
      : undefined,
  ),
  crossCheck(['HTTP_HEADERS_TIMEOUT_MS', 'HTTP_REQUEST_TIMEOUT_MS'], (env) =>
    env.HTTP_HEADERS_TIMEOUT_MS !== undefined && env.HTTP_HEADERS_TIMEOUT_MS > env.HTTP_REQUEST_TIMEOUT_MS
      ? {
          variable: 'HTTP_HEADERS_TIMEOUT_MS',
          message: 'must not exceed HTTP_REQUEST_TIMEOUT_MS (the headers are part of the request)',
        }
      : undefined,
  ),
  crossCheck(['CORS_ORIGINS', 'NODE_ENV'], (env) =>
    env.NODE_ENV === 'production' && env.CORS_ORIGINS?.includes('*')
      ? { variable: 'CORS_ORIGINS', message: 'must list the allowed origins when NODE_ENV=production (* is refused)' }
      : undefined,
  ),
  crossCheck(['JWT_JWKS_URL', 'JWT_ISSUER'], (env) =>
    env.JWT_JWKS_URL && !env.JWT_ISSUER ? { variable: 'JWT_ISSUER', message: "required when JWT_JWKS_URL is set (the identity provider's issuer, the tokens' iss)" } : undefined,
  ),
  crossCheck(['JWT_JWKS_URL', 'JWT_AUDIENCE'], (env) =>
    env.JWT_JWKS_URL && !env.JWT_AUDIENCE
      ? { variable: 'JWT_AUDIENCE', message: "required when JWT_JWKS_URL is set (this service's client id or API identifier, the tokens' aud)" }
      : undefined,
  ),
  crossCheck(['JWT_JWKS_URL', 'NODE_ENV'], (env) =>
    env.NODE_ENV === 'production' && env.JWT_JWKS_URL && !/^https:\/\/|^http:\/\/(127\.0\.0\.1|localhost|\[::1\])[:/]/i.test(env.JWT_JWKS_URL)
      ? { variable: 'JWT_JWKS_URL', message: 'must be an https:// URL when NODE_ENV=production (keys fetched over plain http could be replaced on the way)' }
      : undefined,
  ),
  crossCheck(['JWT_SECRET', 'NODE_ENV'], (env) =>
    env.NODE_ENV === 'production' && !env.JWT_SECRET ? { variable: 'JWT_SECRET', message: 'required when NODE_ENV=production' } : undefined,
  ),
];

/**
 * The whole environment: per-variable rules, then the cross-checks. The
 * cross-checks run even when some variables are invalid (`when`), so one
 * start-up reports every problem; each skips itself when a variable it reads
 * already failed.
 */
export const environmentSchema = variablesSchema.superRefine(
  (env, ctx) => {
    const invalid = new Set(ctx.issues.map((issue) => issue.path?.[0]));
    for (const check of CROSS_CHECKS) {
      if (check.reads.some((name) => invalid.has(name))) continue;
      const problem = check.problem(env);
      if (problem) ctx.addIssue({ code: 'custom', path: [problem.variable], message: problem.message });
    }
  },
  { when: () => true },
);

/**
 * The default the README states for a variable: its `readmeDefault`
 * metadata, else its schema default as text; undefined when it has none.
 */
export function documentedDefault(schema: z.ZodType): string | undefined {
  const stated = schema.meta()?.readmeDefault;
  if (typeof stated === 'string') return stated;
  let current: z.core.$ZodType = schema;
  for (;;) {
    const def = current._zod.def as { type: string; defaultValue?: unknown; innerType?: z.core.$ZodType; in?: z.core.$ZodType };
    if (def.type === 'default' || def.type === 'prefault') return String(def.defaultValue);
    const inner = def.type === 'pipe' ? def.in : def.innerType;
    if (!inner) return undefined;
    current = inner;
  }
}
