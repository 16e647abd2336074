/**
 * Every environment variable of the service, declared once: its type, range,
 * default and description, in blocks by area (src/config/variables/).
 * `loadConfig` (app-config.ts) parses the environment with this table and
 * maps the result onto `AppConfig`, whose type is derived from that mapping.
 * The README's Configuration table is checked against it
 * (readme-config.spec.ts); where the README states a derived default in
 * words, the entry carries it as `readmeDefault` metadata. The rules over
 * several variables (cross-checks) are here.
 */
import { z } from 'zod';
import { auth } from './variables/auth.js';
import { chat, weather } from './variables/chat.js';
import { mcp } from './variables/mcp.js';
import { dense, knowledge, retrieval } from './variables/knowledge.js';
import { embeddings, llm, rerank } from './variables/models.js';
import { http, rateLimit, server } from './variables/server.js';
import { cache, database } from './variables/stores.js';
import { OTEL_SDK_VARIABLES, tracing } from './variables/tracing.js';

export { DENSE_BACKENDS } from './variables/knowledge.js';
export type { McpServerConfig } from './variables/mcp.js';
export { EMBEDDING_PROVIDERS, LLM_PROVIDERS, RERANK_PROVIDERS } from './variables/models.js';
export { LOG_FORMATS, LOG_LEVELS, NODE_ENVS } from './variables/server.js';

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
  mcp,
  knowledge,
  retrieval,
  rerank,
  embeddings,
  dense,
  chat,
  tracing,
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
  ...mcp,
  ...knowledge,
  ...retrieval,
  ...rerank,
  ...embeddings,
  ...dense,
  ...chat,
  ...tracing,
};

export type EnvironmentVariable = keyof typeof ENVIRONMENT;

/**
 * Every name a set variable may have without being taken for a misspelling:
 * ours, and the OpenTelemetry SDK's own (it reads them itself).
 */
export const KNOWN_VARIABLE_NAMES: readonly string[] = [...Object.keys(ENVIRONMENT), ...OTEL_SDK_VARIABLES];

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
  crossCheck(['REDIS_SENTINELS', 'REDIS_SENTINEL_MASTER'], (env) =>
    env.REDIS_SENTINELS && !env.REDIS_SENTINEL_MASTER
      ? { variable: 'REDIS_SENTINEL_MASTER', message: 'required when REDIS_SENTINELS is set (the master group name the sentinels monitor)' }
      : undefined,
  ),
  crossCheck(['REDIS_SENTINELS', 'REDIS_URL'], (env) =>
    env.REDIS_SENTINELS && env.REDIS_URL === 'none' ? { variable: 'REDIS_URL', message: 'cannot be none when REDIS_SENTINELS is set' } : undefined,
  ),
  crossCheck(['REDIS_CLUSTER_NODES', 'REDIS_SENTINELS'], (env) =>
    env.REDIS_CLUSTER_NODES && env.REDIS_SENTINELS
      ? { variable: 'REDIS_CLUSTER_NODES', message: 'cannot be set with REDIS_SENTINELS (a deployment is a cluster or has sentinels, not both)' }
      : undefined,
  ),
  crossCheck(['REDIS_CLUSTER_NODES', 'REDIS_URL'], (env) => {
    if (!env.REDIS_CLUSTER_NODES || env.REDIS_URL === undefined) return undefined;
    if (env.REDIS_URL === 'none') return { variable: 'REDIS_URL', message: 'cannot be none when REDIS_CLUSTER_NODES is set' };
    return /^rediss?:\/\/[^/]*\/[1-9]/.test(env.REDIS_URL)
      ? { variable: 'REDIS_URL', message: 'cannot name a database other than 0 when REDIS_CLUSTER_NODES is set (a cluster has only database 0)' }
      : undefined;
  }),
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
