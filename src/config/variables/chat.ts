/** Chat turns, their runs and streams, the OpenAI-compatible model id, and the weather tool. */
import { z } from 'zod';
import { httpUrl, integer } from './values.js';

export const chat = {
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

export const weather = {
  WEATHER_BASE_URL: httpUrl().default('https://api.open-meteo.com').describe('Open-Meteo-compatible forecast API'),
  WEATHER_GEOCODING_URL: httpUrl().default('https://geocoding-api.open-meteo.com').describe('Open-Meteo-compatible geocoding API'),
  WEATHER_TIMEOUT_MS: integer(100, 60000).default(5000).describe('longest wait for the weather service'),
};
