import {
  configFromEnvironment,
  ConfigValidationError,
  DEVELOPMENT_JWT_SECRET,
  EMBEDDING_PROVIDERS,
  ENVIRONMENT,
  Environment,
  LLM_PROVIDERS,
  loadConfig,
  RERANK_PROVIDERS,
} from './app-config.js';
import { ENVIRONMENT_BLOCKS, environmentSchema } from './environment.js';

/** The lines of the error loadConfig throws for `env` (without the heading). */
function problemLines(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigValidationError);
    const [heading, ...lines] = (error as Error).message.split('\n');
    expect(heading).toBe('Invalid environment configuration:');
    return lines;
  }
  throw new Error(`loadConfig accepted ${JSON.stringify(env)}`);
}

describe('loadConfig', () => {
  it('has defaults that work on a local machine', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      nodeEnv: 'development',
      port: 3000,
      database: { url: 'postgres://postgres@127.0.0.1:5432/rag_chat', migrationsRun: true, createIfMissing: true },
      redis: { url: 'redis://127.0.0.1:6379', ttlSeconds: 300, commandTimeoutMs: 200 },
      auth: { jwtSecret: DEVELOPMENT_JWT_SECRET, usingDevelopmentSecret: true },
      http: { bodyLimit: '1mb' },
    });
  });

  it('reads and converts every variable', () => {
    const config = loadConfig({
      PORT: '8080',
      DATABASE_URL: 'postgresql://u@db:5432/x',
      REDIS_URL: 'rediss://cache:6380',
      CACHE_TTL_SECONDS: '60',
      JWT_SECRET: 'a-secret-of-sixteen+',
      MIGRATIONS_RUN: 'false',
    });
    expect(config.port).toBe(8080);
    expect(config.database).toMatchObject({ url: 'postgresql://u@db:5432/x', migrationsRun: false });
    expect(config.redis).toMatchObject({ url: 'rediss://cache:6380', ttlSeconds: 60 });
    expect(config.auth).toEqual({ jwtSecret: 'a-secret-of-sixteen+', usingDevelopmentSecret: false, maxTokenLifetimeSeconds: 86400 });
  });

  it.each([
    ['PORT', 'eighty'],
    ['PORT', '70000'],
    ['DATABASE_URL', 'mysql://x'],
    ['REDIS_URL', 'localhost:6379'],
    ['NODE_ENV', 'staging'],
    ['CACHE_COMMAND_TIMEOUT_MS', '0'],
    ['JWT_SECRET', 'short'],
    ['BODY_LIMIT', 'lots'],
    ['LOG_LEVEL', 'loud'],
  ])('stops with a message naming %s when it is %p', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigValidationError);
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`^Invalid environment configuration:\\n${name}: `));
  });

  it('refuses production without JWT_SECRET', () => {
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(/JWT_SECRET: required when NODE_ENV=production/);
    expect(loadConfig({ NODE_ENV: 'production', JWT_SECRET: 'a-real-production-secret' }).nodeEnv).toBe('production');
  });

  describe('JWT_MAX_LIFETIME_SECONDS', () => {
    it('defaults to one day and reads a value', () => {
      expect(loadConfig({}).auth.maxTokenLifetimeSeconds).toBe(86400);
      expect(loadConfig({ JWT_MAX_LIFETIME_SECONDS: '3600' }).auth.maxTokenLifetimeSeconds).toBe(3600);
    });

    it.each(['0', '59', '-5', '1.5', 'a day', String(86400 * 30 + 1)])('refuses %p, naming the variable', (value) => {
      expect(() => loadConfig({ JWT_MAX_LIFETIME_SECONDS: value })).toThrow(/^Invalid environment configuration:\nJWT_MAX_LIFETIME_SECONDS: /);
    });
  });

  describe('SHUTDOWN_DRAIN_MS', () => {
    it('defaults to 3/4 of SHUTDOWN_TIMEOUT_MS and reads a value below it', () => {
      expect(loadConfig({}).shutdownDrainMs).toBe(7500);
      expect(loadConfig({ SHUTDOWN_TIMEOUT_MS: '30000' }).shutdownDrainMs).toBe(22500);
      expect(loadConfig({ SHUTDOWN_DRAIN_MS: '2000', SHUTDOWN_TIMEOUT_MS: '3000' }).shutdownDrainMs).toBe(2000);
    });

    it('must leave part of SHUTDOWN_TIMEOUT_MS to end the turns it cut off', () => {
      expect(problemLines({ SHUTDOWN_DRAIN_MS: '10000' })).toEqual([expect.stringMatching(/^SHUTDOWN_DRAIN_MS: must be less than SHUTDOWN_TIMEOUT_MS/)]);
    });
  });

  describe('HTTP_REQUEST_TIMEOUT_MS and HTTP_HEADERS_TIMEOUT_MS', () => {
    it('default to 30 s and 10 s and read values', () => {
      expect(loadConfig({}).http).toMatchObject({ requestTimeoutMs: 30000, headersTimeoutMs: 10000 });
      expect(loadConfig({ HTTP_REQUEST_TIMEOUT_MS: '5000', HTTP_HEADERS_TIMEOUT_MS: '5000' }).http).toMatchObject({
        requestTimeoutMs: 5000,
        headersTimeoutMs: 5000,
      });
    });

    it.each([
      ['HTTP_REQUEST_TIMEOUT_MS', '0'],
      ['HTTP_REQUEST_TIMEOUT_MS', '999'],
      ['HTTP_REQUEST_TIMEOUT_MS', '600001'],
      ['HTTP_REQUEST_TIMEOUT_MS', 'soon'],
      ['HTTP_HEADERS_TIMEOUT_MS', '0'],
      ['HTTP_HEADERS_TIMEOUT_MS', '2.5'],
    ])('refuses %s=%p, naming the variable', (name, value) => {
      expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`^Invalid environment configuration:\\n${name}: `));
    });

    it('refuses a headers timeout longer than the request timeout', () => {
      expect(() => loadConfig({ HTTP_REQUEST_TIMEOUT_MS: '5000', HTTP_HEADERS_TIMEOUT_MS: '6000' })).toThrow(/HTTP_HEADERS_TIMEOUT_MS: must not exceed HTTP_REQUEST_TIMEOUT_MS/);
    });

    it('lowers the headers default to a shorter request timeout', () => {
      expect(loadConfig({ HTTP_REQUEST_TIMEOUT_MS: '4000' }).http).toMatchObject({ requestTimeoutMs: 4000, headersTimeoutMs: 4000 });
    });
  });

  it('treats empty variables as unset', () => {
    expect(loadConfig({ PORT: '', JWT_SECRET: '' }).port).toBe(3000);
  });

  it('accepts exactly true and false for switches', () => {
    expect(loadConfig({ MIGRATIONS_RUN: 'false', RAG_AUTO_MERGE: 'false' })).toMatchObject({
      database: { migrationsRun: false },
      knowledge: { autoMerge: false },
    });
    for (const value of ['TRUE', 'yes', '1', 'off']) {
      expect(problemLines({ KNOWLEDGE_SEED_ON_START: value })).toEqual(['KNOWLEDGE_SEED_ON_START: must be true or false']);
    }
  });

  it('reads chunk sizes, recall settings and trims trailing slashes from the weather URLs', () => {
    const config = loadConfig({
      KNOWLEDGE_CHUNK_SIZES: '2000,800,300',
      RAG_RECALL_K: 'not-a-number',
      RAG_AUTO_MERGE_THRESHOLD: '0.75',
      WEATHER_BASE_URL: 'http://weather.test//',
    });
    expect(config.knowledge).toMatchObject({ chunkSizes: [2000, 800, 300], recallKRaw: 'not-a-number', autoMergeThreshold: 0.75 });
    expect(config.weather.baseUrl).toBe('http://weather.test');
    expect(loadConfig({}).knowledge.chunkSizes).toEqual([1200, 400]);
  });

  describe('reports every problem at once', () => {
    it('names each bad variable and each failed cross-check, one line each, in one error', () => {
      const lines = problemLines({
        PORT: 'eighty',
        REDIS_URL: 'localhost:6379',
        LOG_LEVEL: 'loud',
        LLM_PROVIDER: 'openai',
        RERANK_PROVIDER: 'http',
        RUN_HEARTBEAT_MS: '10000',
        KNOWLEDGE_CHUNK_SIZES: '400,1200',
        NODE_ENV: 'production',
      });
      expect(lines).toEqual([
        'PORT: must be an integer from 0 to 65535',
        'LOG_LEVEL: must be one of fatal, error, warn, info, debug, trace, silent (got "loud")',
        'REDIS_URL: must be a redis:// or rediss:// URL, or none',
        expect.stringMatching(/^LLM_API_KEY: required when LLM_PROVIDER=openai/),
        'RERANK_URL: required when RERANK_PROVIDER=http',
        'KNOWLEDGE_CHUNK_SIZES: sizes must decrease from parent to leaf and exceed KNOWLEDGE_CHUNK_OVERLAP',
        expect.stringMatching(/^RUN_STALE_AFTER_MS: must be at least twice RUN_HEARTBEAT_MS/),
        'JWT_SECRET: required when NODE_ENV=production',
      ]);
    });

    it('skips a cross-check whose own variables are invalid, instead of reporting a consequence', () => {
      expect(problemLines({ HTTP_REQUEST_TIMEOUT_MS: 'soon', HTTP_HEADERS_TIMEOUT_MS: '6000' })).toEqual(['HTTP_REQUEST_TIMEOUT_MS: must be an integer from 1000 to 600000']);
      expect(problemLines({ NODE_ENV: 'staging' })).toEqual(['NODE_ENV: must be one of development, production, test (got "staging")']);
    });

    it('keeps the problems as data too', () => {
      try {
        loadConfig({ PORT: '-1', CACHE_TTL_SECONDS: '0' });
        throw new Error('accepted');
      } catch (error) {
        expect((error as ConfigValidationError).problems.map((p) => p.variable)).toEqual(['PORT', 'CACHE_TTL_SECONDS']);
      }
    });
  });

  describe('provider names', () => {
    it.each([
      ['LLM_PROVIDER', LLM_PROVIDERS],
      ['EMBEDDING_PROVIDER', EMBEDDING_PROVIDERS],
      ['RERANK_PROVIDER', RERANK_PROVIDERS],
    ] as const)('%s accepts exactly its registered names and names them when it refuses one', (variable, names) => {
      expect(problemLines({ [variable]: 'mystery' })).toEqual([`${variable}: must be one of ${names.join(', ')} (got "mystery")`]);
      // Case matters: the name is a key, not free text.
      expect(problemLines({ [variable]: names[0].toUpperCase() })[0]).toMatch(new RegExp(`^${variable}: must be one of`));
    });
  });

  describe('openai endpoints', () => {
    it('refuses EMBEDDING_PROVIDER=openai with neither a base URL nor a key', () => {
      expect(problemLines({ EMBEDDING_PROVIDER: 'openai' })).toEqual([
        expect.stringMatching(/^EMBEDDING_API_KEY: required when EMBEDDING_PROVIDER=openai \(or set EMBEDDING_BASE_URL/),
      ]);
      // The chat model's own endpoint being local says nothing about where embeddings go.
      expect(problemLines({ EMBEDDING_PROVIDER: 'openai', LLM_PROVIDER: 'local' })).toHaveLength(1);
    });

    it('gives the embeddings their own endpoint, falling back to the LLM_ one', () => {
      expect(loadConfig({ EMBEDDING_PROVIDER: 'openai', EMBEDDING_BASE_URL: 'http://127.0.0.1:8001/v1' }).embeddings).toMatchObject({
        provider: 'openai',
        baseUrl: 'http://127.0.0.1:8001/v1',
        apiKey: undefined,
      });
      expect(loadConfig({ EMBEDDING_PROVIDER: 'openai', LLM_BASE_URL: 'http://llm.test/v1', LLM_API_KEY: 'llm-key' }).embeddings).toMatchObject({
        baseUrl: 'http://llm.test/v1',
        apiKey: 'llm-key',
      });
      expect(
        loadConfig({
          EMBEDDING_PROVIDER: 'openai',
          LLM_BASE_URL: 'http://llm.test/v1',
          LLM_API_KEY: 'llm-key',
          EMBEDDING_BASE_URL: 'http://embed.test/v1',
          EMBEDDING_API_KEY: 'embed-key',
        }).embeddings,
      ).toMatchObject({ baseUrl: 'http://embed.test/v1', apiKey: 'embed-key' });
    });

    it('refuses a malformed EMBEDDING_BASE_URL', () => {
      expect(problemLines({ EMBEDDING_BASE_URL: 'embed.test' })).toEqual(['EMBEDDING_BASE_URL: must be an http(s) URL']);
    });

    it('keeps the chat provider rule: openai needs LLM_API_KEY or LLM_BASE_URL', () => {
      expect(problemLines({ LLM_PROVIDER: 'openai' })).toEqual([expect.stringMatching(/^LLM_API_KEY: required when LLM_PROVIDER=openai/)]);
      expect(loadConfig({ LLM_PROVIDER: 'openai', LLM_BASE_URL: 'http://127.0.0.1:8000/v1' }).llm).toMatchObject({ provider: 'openai' });
    });
  });

  describe('Redis Sentinel', () => {
    it('reads the sentinels, the master name and the password; REDIS_URL keeps only the login, and nothing falls back to the default Redis', () => {
      const config = loadConfig({ REDIS_SENTINELS: ' 10.0.0.1:26379, sentinel.local:26380', REDIS_SENTINEL_MASTER: 'mymaster', REDIS_SENTINEL_PASSWORD: 's3cret' });
      expect(config.redis).toMatchObject({
        sentinel: {
          nodes: [
            { host: '10.0.0.1', port: 26379 },
            { host: 'sentinel.local', port: 26380 },
          ],
          master: 'mymaster',
          password: 's3cret',
        },
        defaulted: false,
      });
      expect(config.redis.url).not.toBeNull();
      expect(loadConfig({}).redis.sentinel).toBeNull();
    });

    it('refuses sentinels without a master name, malformed nodes, and REDIS_URL=none beside them', () => {
      expect(problemLines({ REDIS_SENTINELS: '127.0.0.1:26379' })).toEqual([expect.stringMatching(/^REDIS_SENTINEL_MASTER: required when REDIS_SENTINELS is set/)]);
      expect(problemLines({ REDIS_SENTINELS: '127.0.0.1', REDIS_SENTINEL_MASTER: 'm' })).toEqual([expect.stringMatching(/^REDIS_SENTINELS: must be host:port pairs/)]);
      expect(problemLines({ REDIS_SENTINELS: '127.0.0.1:26379', REDIS_SENTINEL_MASTER: 'm', REDIS_URL: 'none' })).toEqual([
        expect.stringMatching(/^REDIS_URL: cannot be none when REDIS_SENTINELS is set/),
      ]);
    });
  });

  describe('Redis Cluster', () => {
    it('reads the nodes and the run shards; REDIS_URL keeps only the login, and nothing falls back to the default Redis', () => {
      const config = loadConfig({ REDIS_CLUSTER_NODES: ' 10.0.0.1:7000, redis-2.local:7001', REDIS_CLUSTER_RUN_SHARDS: '6' });
      expect(config.redis).toMatchObject({
        cluster: {
          nodes: [
            { host: '10.0.0.1', port: 7000 },
            { host: 'redis-2.local', port: 7001 },
          ],
          runShards: 6,
        },
        sentinel: null,
        defaulted: false,
      });
      expect(config.redis.url).not.toBeNull();
      expect(loadConfig({ REDIS_CLUSTER_NODES: '127.0.0.1:7000' }).redis.cluster?.runShards).toBe(3);
      expect(loadConfig({}).redis.cluster).toBeNull();
    });

    it('refuses malformed nodes, a shard count out of range, sentinels beside it, REDIS_URL=none and a database other than 0', () => {
      expect(problemLines({ REDIS_CLUSTER_NODES: '127.0.0.1' })).toEqual([expect.stringMatching(/^REDIS_CLUSTER_NODES: must be host:port pairs/)]);
      expect(problemLines({ REDIS_CLUSTER_NODES: '127.0.0.1:7000', REDIS_CLUSTER_RUN_SHARDS: '0' })).toEqual([expect.stringMatching(/^REDIS_CLUSTER_RUN_SHARDS: /)]);
      expect(problemLines({ REDIS_CLUSTER_NODES: '127.0.0.1:7000', REDIS_SENTINELS: '127.0.0.1:26379', REDIS_SENTINEL_MASTER: 'm' })).toEqual([
        expect.stringMatching(/^REDIS_CLUSTER_NODES: cannot be set with REDIS_SENTINELS/),
      ]);
      expect(problemLines({ REDIS_CLUSTER_NODES: '127.0.0.1:7000', REDIS_URL: 'none' })).toEqual([
        expect.stringMatching(/^REDIS_URL: cannot be none when REDIS_CLUSTER_NODES is set/),
      ]);
      expect(problemLines({ REDIS_CLUSTER_NODES: '127.0.0.1:7000', REDIS_URL: 'redis://:pw@h:6379/2' })).toEqual([
        expect.stringMatching(/^REDIS_URL: cannot name a database other than 0/),
      ]);
      expect(loadConfig({ REDIS_CLUSTER_NODES: '127.0.0.1:7000', REDIS_URL: 'redis://:pw@h:6379/0' }).redis.cluster).not.toBeNull();
    });
  });

  describe('the schema', () => {
    it('declares each variable once, with a description', () => {
      const declared = Object.values(ENVIRONMENT_BLOCKS).flatMap((block) => Object.keys(block));
      expect(new Set(declared).size).toBe(declared.length);
      expect(declared.sort()).toEqual(Object.keys(ENVIRONMENT).sort());
      expect(
        Object.entries(ENVIRONMENT)
          .filter(([, schema]) => !schema.description?.trim())
          .map(([name]) => name),
      ).toEqual([]);
    });

    it('maps every variable it declares into AppConfig', () => {
      const env = environmentSchema.parse({});
      const read = new Set<string>();
      const tracking = new Proxy(env, {
        get(target, name, receiver) {
          read.add(String(name));
          return Reflect.get(target, name, receiver);
        },
      }) as Environment;
      configFromEnvironment(tracking);
      expect(Object.keys(ENVIRONMENT).filter((name) => !read.has(name))).toEqual([]);
    });
  });
});

describe('DATABASE_CREATE_IF_MISSING', () => {
  it('is on by default in development and test, off in production (a mistyped DATABASE_URL must not create a database there)', () => {
    expect(loadConfig({}).database.createIfMissing).toBe(true);
    expect(loadConfig({ NODE_ENV: 'test' }).database.createIfMissing).toBe(true);
    expect(loadConfig({ NODE_ENV: 'production', JWT_SECRET: 'a-real-production-secret' }).database.createIfMissing).toBe(false);
  });

  it('is what it is set to, in any environment', () => {
    expect(loadConfig({ DATABASE_CREATE_IF_MISSING: 'false' }).database.createIfMissing).toBe(false);
    expect(loadConfig({ NODE_ENV: 'production', JWT_SECRET: 'a-real-production-secret', DATABASE_CREATE_IF_MISSING: 'true' }).database.createIfMissing).toBe(true);
  });
});
