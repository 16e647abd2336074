import { probeHttp } from '../common/http-probe.js';
import { hostPort } from '../common/network-failure.js';
import type { AppConfig } from '../config/app-config.js';

/**
 * The start-up look at the identity provider's key set (JWT_JWKS_URL): one
 * GET. It stops nothing (tokens signed by the provider get 503
 * identity_provider_unavailable while the keys cannot be fetched; HS256
 * tokens and API keys are unaffected); it returns the warning to log, one
 * line naming the variable, the host:port and what happened.
 */
export async function checkJwks(config: AppConfig): Promise<string[]> {
  const idp = config.auth.identityProvider;
  if (!idp) return [];
  const where = `the key set at ${hostPort(idp.jwksUrl)}`;
  const consequence = "identity-provider tokens get 503 identity_provider_unavailable until it answers (the service's own tokens and API keys work)";
  const probe = await probeHttp(idp.jwksUrl, idp.timeoutMs);
  if (!probe.reached) return [`JWT_JWKS_URL: ${where}: ${probe.problem}; ${consequence}`];
  if (probe.status !== 200) return [`JWT_JWKS_URL: ${where} answered HTTP ${probe.status}; ${consequence}`];
  const keys = (probe.body as { keys?: unknown })?.keys;
  if (!Array.isArray(keys)) return [`JWT_JWKS_URL: ${where} answered something that is not a key set (no "keys" array); ${consequence}`];
  return [];
}
