import { AsyncLocalStorage } from 'node:async_hooks';

interface RequestScope {
  requestId: string;
}

const storage = new AsyncLocalStorage<RequestScope>();

/** Runs `fn` with `requestId` visible to every log line written during it. */
export function runWithRequestId<T>(requestId: string, fn: () => T): T {
  return storage.run({ requestId }, fn);
}

export function currentRequestId(): string | undefined {
  return storage.getStore()?.requestId;
}
