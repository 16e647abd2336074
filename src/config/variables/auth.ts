/** Tokens: the service's own secret, an identity provider's keys, stream tickets. */
import { z } from 'zod';
import { httpUrl, integer } from './values.js';

export const auth = {
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
  JWT_GROUPS_CLAIM: z
    .string()
    .min(1)
    .default('groups')
    .describe("claim holding the user's groups (a name or an array of names), in HS256 and identity-provider tokens alike: a dot path"),
  JWT_ADMIN_ROLE: z.string().min(1).default('admin').describe('role (in JWT_ROLE_CLAIM) that makes an identity-provider token admin'),
  JWT_JWKS_TIMEOUT_MS: integer(100, 60000).default(5000).describe('longest wait for the JWKS endpoint'),
  JWT_JWKS_COOLDOWN_MS: integer(0, 3600000).default(30000).describe('least time between two JWKS fetches caused by an unknown kid'),
};
