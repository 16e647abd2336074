/** Settles like `promise`, or rejects with `onTimeout()` if it takes longer than `ms`. */
export function withTimeout<T>(promise: Promise<T>, ms: number, onTimeout: () => Error): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(onTimeout()), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}

/**
 * Like `withTimeout`, but a timer that fires first lets the loop turn once
 * (setImmediate runs after the I/O poll) before it counts: on a busy event
 * loop the timer can come due while a reply that arrived in time is still
 * unread in the socket, and that reply wins.
 */
export function withTimeoutAfterPendingIo<T>(promise: Promise<T>, ms: number, onTimeout: () => Error): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const timer = setTimeout(() => setImmediate(() => !settled && ((settled = true), reject(onTimeout()))), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        if (!settled) resolve(value);
        settled = true;
      },
      (error: unknown) => {
        clearTimeout(timer);
        if (!settled) reject(error instanceof Error ? error : new Error(String(error)));
        settled = true;
      },
    );
  });
}
