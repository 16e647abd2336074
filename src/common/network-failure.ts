/** What went wrong reaching a server, in our words (never a library's), from an error anywhere in a cause chain. */
export interface NetworkFailure {
  kind: 'refused' | 'timeout' | 'not_found' | 'unreachable' | 'reset' | 'tls';
  words: string;
}

const BY_CODE: Record<string, NetworkFailure> = {
  ECONNREFUSED: { kind: 'refused', words: 'connection refused' },
  ETIMEDOUT: { kind: 'timeout', words: 'timed out' },
  UND_ERR_CONNECT_TIMEOUT: { kind: 'timeout', words: 'timed out' },
  ENOTFOUND: { kind: 'not_found', words: 'host not found' },
  EAI_AGAIN: { kind: 'unreachable', words: 'host name lookup failed for now (EAI_AGAIN)' },
  EHOSTUNREACH: { kind: 'unreachable', words: 'host unreachable' },
  ENETUNREACH: { kind: 'unreachable', words: 'network unreachable' },
  ECONNRESET: { kind: 'reset', words: 'connection reset' },
  EPIPE: { kind: 'reset', words: 'connection closed' },
  UND_ERR_SOCKET: { kind: 'reset', words: 'connection closed' },
};

/** Node's certificate and TLS error codes (`DEPTH_ZERO_SELF_SIGNED_CERT`, `ERR_TLS_CERT_ALTNAME_INVALID`, `EPROTO`…). */
const TLS_CODE = /^(ERR_TLS_|ERR_SSL_|EPROTO$)|CERT|SSL/;

/** The error, its causes (`cause`), and the errors an AggregateError holds (Node's happy-eyeballs connect to `localhost`), depth-first. */
function* chain(error: unknown, depth = 0): Generator<Record<string, unknown>> {
  if (depth > 8 || typeof error !== 'object' || error === null) return;
  const record = error as Record<string, unknown>;
  yield record;
  if (Array.isArray(record.errors)) for (const inner of record.errors) yield* chain(inner, depth + 1);
  yield* chain(record.cause, depth + 1);
}

/** The network failure behind `error`, if it is one: refused, timed out, host not found, unreachable, reset, or TLS. */
export function networkFailure(error: unknown): NetworkFailure | undefined {
  for (const link of chain(error)) {
    const code = typeof link.code === 'string' ? link.code : undefined;
    if (code && BY_CODE[code]) return BY_CODE[code];
    if (code && TLS_CODE.test(code)) {
      const message = typeof link.message === 'string' ? link.message : code;
      return { kind: 'tls', words: `TLS failed: ${message}` };
    }
  }
  return undefined;
}

/** `host:port` of a URL (the scheme's default port when it names none), for messages; never its credentials or path. */
export function hostPort(url: string, defaultPort?: number): string {
  try {
    const parsed = new URL(url);
    const port = parsed.port || String(defaultPort ?? (parsed.protocol === 'https:' ? 443 : parsed.protocol === 'http:' ? 80 : ''));
    const host = parsed.hostname || 'localhost';
    return port ? `${host}:${port}` : host;
  } catch {
    return '(unparseable URL)';
  }
}
