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
    expect(config.auth).toEqual({ jwtSecret: 'a-secret-of-sixteen+', usingDevelopmentSecret: false });
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

  it('treats empty variables as unset', () => {
    expect(loadConfig({ PORT: '', JWT_SECRET: '' }).port).toBe(3000);
  });
});
