import { ConfigValidationError, DEVELOPMENT_JWT_SECRET, loadConfig } from './app-config.js';

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
      expect(() => loadConfig({ HTTP_REQUEST_TIMEOUT_MS: '5000', HTTP_HEADERS_TIMEOUT_MS: '6000' })).toThrow(
        /HTTP_HEADERS_TIMEOUT_MS: must not exceed HTTP_REQUEST_TIMEOUT_MS/,
      );
    });

    it('lowers the headers default to a shorter request timeout', () => {
      expect(loadConfig({ HTTP_REQUEST_TIMEOUT_MS: '4000' }).http).toMatchObject({ requestTimeoutMs: 4000, headersTimeoutMs: 4000 });
    });
  });

  it('treats empty variables as unset', () => {
    expect(loadConfig({ PORT: '', JWT_SECRET: '' }).port).toBe(3000);
  });
});
