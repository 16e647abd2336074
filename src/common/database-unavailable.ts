// 57014: statement_timeout cancelled the statement; 55P03: lock_timeout; 57P01-03: shutdown, crash, starting up; 53300: too many connections.
const UNAVAILABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', '57014', '55P03', '57P01', '57P02', '57P03', '53300']);
const UNAVAILABLE_MESSAGES =
  /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Query read timeout|the database system is (starting up|shutting down)/i;

/**
 * PostgreSQL unreachable, restarting, stalled past the statement limits or
 * out of connections: the client may retry, nothing was wrong with the request.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; current && depth < 3; depth += 1) {
    const e = current as { code?: unknown; message?: unknown; driverError?: unknown; cause?: unknown };
    if (typeof e.code === 'string' && UNAVAILABLE_CODES.has(e.code)) return true;
    if (typeof e.message === 'string' && UNAVAILABLE_MESSAGES.test(e.message)) return true;
    current = e.driverError ?? e.cause;
  }
  return false;
}
