/** The HTTP server: process, listening, request limits, CORS and rate limits. */
import { z } from 'zod';
import { flag, httpUrl, integer, oneOf } from './values.js';

export const NODE_ENVS = ['development', 'production', 'test'] as const;
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export const LOG_FORMATS = ['auto', 'json', 'pretty'] as const;

export const server = {
  NODE_ENV: oneOf(NODE_ENVS).default('development').describe('development, production or test; production requires JWT_SECRET'),
  PORT: integer(0, 65535).default(3000).describe('HTTP port'),
  HOST: z.string().default('0.0.0.0').describe('address to listen on'),
  LOG_LEVEL: oneOf(LOG_LEVELS).default('info').describe('log level (pino), or silent'),
  LOG_FORMAT: oneOf(LOG_FORMATS).default('auto').describe('json, pretty (readable lines), or auto: pretty when stdout is a terminal and NODE_ENV is not production, else json'),
  SHUTDOWN_TIMEOUT_MS: integer(0, 600000).default(10000).describe('how long SIGTERM waits for in-flight requests and turns'),
  SHUTDOWN_DRAIN_MS: integer(0, 600000)
    .optional()
    .describe('how long turns in flight may still run after SIGTERM; later they end with shutting_down, their message kept; unset: 3/4 of SHUTDOWN_TIMEOUT_MS')
    .meta({ readmeDefault: '7500' }),
  WEB_CLIENT_ENABLED: flag().default(true).describe('serve the reference web client (web/dist) at /'),
};

export const http = {
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
  PUBLIC_BASE_URL: httpUrl()
    .transform((url) => url.replace(/\/+$/, ''))
    .pipe(z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }))
    .optional()
    .describe("the URL clients reach the service at (scheme://host[:port][/path]), naming the MCP resource; unset: each request's scheme and Host"),
};

export const rateLimit = {
  RATE_LIMIT_CHAT_PER_MINUTE: integer(0, 100000).default(30).describe('chat turns per user and minute; 0 turns the limit off'),
  RATE_LIMIT_SEARCH_PER_MINUTE: integer(0, 100000).default(60).describe('knowledge searches per user and minute; 0 turns the limit off'),
  RATE_LIMIT_UPLOAD_PER_MINUTE: integer(0, 100000).default(10).describe('document uploads per user and minute; 0 turns the limit off'),
  RATE_LIMIT_RUN_CONTROL_PER_MINUTE: integer(0, 100000).default(60).describe('run cancels and stream tickets per user and minute; 0 turns the limit off'),
};
