import { DataSource, EntityManager } from 'typeorm';

/** pg's errors for a query that got no answer: no reply within `query_timeout`, or the connection gone while it waited. */
const NO_REPLY_MESSAGES = /^(Query read timeout|Connection terminated( unexpectedly)?|Client has encountered a connection error and is not queryable)$/;
const NO_REPLY_CODES = new Set(['ECONNRESET', 'EPIPE', 'ETIMEDOUT']);

/**
 * Whether a statement failed without the server's answer: the server may
 * have run it or not. (A server that answered with an error, a statement
 * or lock timeout included, did not run it.)
 */
export function isNoReply(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; current && depth < 4; depth += 1) {
    const e = current as { code?: unknown; message?: unknown; driverError?: unknown; cause?: unknown };
    if (typeof e.code === 'string' && NO_REPLY_CODES.has(e.code)) return true;
    if (typeof e.message === 'string' && NO_REPLY_MESSAGES.test(e.message)) return true;
    current = e.driverError ?? e.cause;
  }
  return false;
}

/** pg's errors for a connection the server did not answer in time (a new one, or one from a pool that had none free). */
const NO_CONNECTION_MESSAGES = /^(Connection terminated due to connection timeout|timeout exceeded when trying to connect)$/;

/**
 * Whether a statement failed because the database did not answer: no reply
 * to it (`isNoReply`), or no connection to send it on within the connect
 * limit. Trying another statement now would only wait for another limit.
 */
export function isUnanswered(error: unknown): boolean {
  if (isNoReply(error)) return true;
  let current: unknown = error;
  for (let depth = 0; current && depth < 4; depth += 1) {
    const e = current as { message?: unknown; driverError?: unknown; cause?: unknown };
    if (typeof e.message === 'string' && NO_CONNECTION_MESSAGES.test(e.message)) return true;
    current = e.driverError ?? e.cause;
  }
  return false;
}

/**
 * A transaction whose every statement ran, but whose COMMIT got no answer:
 * it may have committed or not. `cause` is the driver's error (so it still
 * reads as the database being unavailable).
 */
export class CommitOutcomeUnknownError extends Error {
  constructor(override readonly cause: unknown) {
    super('the database did not answer the COMMIT: the transaction may or may not have committed');
    this.name = 'CommitOutcomeUnknownError';
  }
}

/**
 * `dataSource.transaction(work)`, telling a failed COMMIT that got no
 * answer (CommitOutcomeUnknownError) from a failure that certainly rolled
 * the transaction back (any other error).
 */
export async function transactionKnowingCommit<T>(dataSource: DataSource, work: (manager: EntityManager) => Promise<T>): Promise<T> {
  let workDone = false;
  try {
    return await dataSource.transaction(async (manager) => {
      const result = await work(manager);
      workDone = true;
      return result;
    });
  } catch (error) {
    if (workDone && isNoReply(error)) throw new CommitOutcomeUnknownError(error);
    throw error;
  }
}
