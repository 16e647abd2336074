import DataLoader from 'dataloader';

/** How many users' versions one query reads at most. */
const MAX_BATCH = 500;

/**
 * Reads of users' session-list versions, coalesced: the reads asked for
 * while a query is in flight go out together in the next one (one
 * `user_id = ANY(...)` lookup), so a burst of list requests costs a few
 * queries instead of one each. A read is always answered by a query sent
 * after it was asked, so it sees every change committed before it: the
 * check that keeps a cached list from being served stale is not weakened.
 */
export class CoalescedVersionReads {
  private inFlight: Promise<unknown> = Promise.resolve();
  private readonly loader: DataLoader<string, string>;

  constructor(read: (userIds: readonly string[]) => Promise<string[]>) {
    this.loader = new DataLoader(
      (userIds) => {
        const batch = read(userIds);
        this.inFlight = batch.catch(() => undefined);
        return batch;
      },
      {
        cache: false,
        maxBatchSize: MAX_BATCH,
        // The next batch is sent once the one in flight answered (and the reads that arrived meanwhile joined it).
        batchScheduleFn: (dispatch) => void this.inFlight.then(() => setImmediate(dispatch)),
      },
    );
  }

  /** The user's current session-list version. */
  version(userId: string): Promise<string> {
    return this.loader.load(userId);
  }
}
