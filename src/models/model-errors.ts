import { CodedError } from '../common/coded-error.js';
import { networkFailure } from '../common/network-failure.js';

/** The model did not answer within LLM_TIMEOUT_MS; raised by the agent's own deadline, whatever the client library reports. */
export class ModelTimeoutError extends CodedError {
  readonly code = 'model_timeout';
  constructor(readonly timeoutMs: number) {
    super(`The model did not answer in time (${timeoutMs} ms).`);
    this.name = 'ModelTimeoutError';
  }
}

const NETWORK_WORDS = {
  refused: 'refused the connection',
  timeout: 'timed out',
  not_found: 'could not be found (host name lookup failed)',
  unreachable: 'could not be reached (host or network unreachable)',
  reset: 'closed the connection',
  tls: 'failed the TLS handshake',
} as const;

/**
 * What the model endpoint did, as the end of "its endpoint …" / "the
 * endpoint …", in our words: the HTTP status it answered, or what happened
 * to the connection (refused, timed out, host not found, closed, TLS).
 * Undefined when the error says neither; never the endpoint's or the
 * library's own text, which may quote the request.
 */
export function modelEndpointFailure(error: unknown): string | undefined {
  const status = (error as { status?: unknown })?.status;
  if (typeof status === 'number') return `answered HTTP ${status}`;
  const network = networkFailure(error);
  if (network) return NETWORK_WORDS[network.kind];
  // The OpenAI client's own request timeout, as LangChain rethrows it.
  if ((error as { name?: unknown })?.name === 'TimeoutError') return NETWORK_WORDS.timeout;
  return undefined;
}

/** A model call failed; the client is told what its endpoint did (modelEndpointFailure), never the library's text. */
export class ModelCallError extends CodedError {
  readonly code = 'model_error';
  constructor(cause: unknown) {
    const failure = modelEndpointFailure(cause);
    super(`The model failed${failure ? ` (its endpoint ${failure})` : ''}.`, { cause });
    this.name = 'ModelCallError';
  }
}

/**
 * Whether a failed model call is worth another try: not when nothing
 * listens at the endpoint (connection refused) or its host does not exist,
 * which a retry a second later will find the same; the turn then fails at
 * once instead of after LLM_MAX_RETRIES backoffs.
 */
export function isHopelessModelFailure(error: unknown): boolean {
  const network = networkFailure(error);
  return network?.kind === 'refused' || network?.kind === 'not_found';
}
