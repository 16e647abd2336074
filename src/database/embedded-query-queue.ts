import type { PGlite } from '@electric-sql/pglite';

interface Pending {
  connection: number;
  message: Uint8Array;
  onData: (data: Uint8Array) => void;
  resolve: (bytes: number) => void;
  reject: (error: Error) => void;
}

/** The protocol's startup packet (no type byte: it opens with its length, whose first byte is 0). */
function isStartup(message: Uint8Array): boolean {
  return message[0] === 0;
}

const SYNC = 0x53; // 'S'
const SIMPLE_QUERY = 0x51; // 'Q'
const TERMINATE = 0x58; // 'X'

/** Whether the backend answers the message with ReadyForQuery: the end of a statement, or of a transaction when none is open. */
function endsExchange(message: Uint8Array): boolean {
  return isStartup(message) || message[0] === SYNC || message[0] === SIMPLE_QUERY || message[0] === TERMINATE;
}

/**
 * The scheduler of the embedded server's connections over PGlite's single
 * backend. pglite-socket's own multiplexer hands the backend over between
 * any two protocol messages, so another connection's Parse can replace the
 * unnamed statement between a Parse and its Bind (seen: "bind message
 * supplies 3 parameters, but prepared statement "" requires 2"). Here a
 * connection keeps the backend from its first message until it is back at
 * ReadyForQuery outside a transaction: each statement, and each
 * transaction as a whole, runs alone, in arrival order.
 */
export class ExclusiveQueryQueue {
  private readonly pending: Pending[] = [];
  /** The connection that holds the backend (mid-statement or mid-transaction), or null when it is free. */
  private owner: number | null = null;
  /** The connection whose message the backend is running now. */
  private executing: number | null = null;
  /** Connections that went away while their message ran: cleaned up (rolled back) once it has. */
  private readonly gone = new Set<number>();
  private draining = false;
  /** Set while the owner sends nothing and others wait: it fires `evict` after `idleOwnerMs`. */
  private idleTimer: NodeJS.Timeout | undefined;

  /**
   * `evict`: closes a connection that held a transaction open, sending
   * nothing, for `idleOwnerMs` while others waited (PostgreSQL's
   * idle_in_transaction_session_timeout, which PGlite does not enforce).
   */
  constructor(
    private readonly db: PGlite,
    private readonly evict: (connection: number) => void,
    private readonly idleOwnerMs = 30_000,
  ) {}

  enqueue(connection: number, message: Uint8Array, onData: (data: Uint8Array) => void): Promise<number> {
    return new Promise((resolve, reject) => {
      this.pending.push({ connection, message, onData, resolve, reject });
      void this.drain();
    });
  }

  getQueueLength(): number {
    return this.pending.length;
  }

  /** A connection that went away: its waiting messages are dropped. */
  clearQueueForHandler(connection: number): void {
    for (let index = this.pending.length - 1; index >= 0; index -= 1) {
      if (this.pending[index].connection !== connection) continue;
      const [dropped] = this.pending.splice(index, 1);
      dropped.reject(new Error('connection closed'));
    }
  }

  /** A connection that went away while holding the backend: its transaction is rolled back and the others go on. */
  async clearTransactionIfNeeded(connection: number): Promise<void> {
    if (this.executing === connection) {
      // Its message is under way (it may be the BEGIN): rolled back once it has run, or the transaction outlives it.
      this.gone.add(connection);
      return;
    }
    if (this.owner !== connection) return;
    await this.release();
  }

  /** Rolls back what the owner left open and frees the backend for the others. */
  private async release(): Promise<void> {
    clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
    await this.rollBackOpenTransaction();
    this.owner = null;
    void this.drain();
  }

  private async rollBackOpenTransaction(): Promise<void> {
    if (this.db.isInTransaction()) await this.db.exec('ROLLBACK');
  }

  /** The owner holds the backend and sends nothing while others wait: after idleOwnerMs its connection is closed. */
  private watchIdleOwner(): void {
    if (this.idleTimer || this.owner === null || this.pending.length === 0) return;
    const owner = this.owner;
    this.idleTimer = setTimeout(() => {
      this.idleTimer = undefined;
      // Closing the connection rolls its transaction back (clearTransactionIfNeeded) and frees the backend.
      if (this.owner === owner && this.executing !== owner) this.evict(owner);
    }, this.idleOwnerMs);
    this.idleTimer.unref();
  }

  private async drain(): Promise<void> {
    if (this.draining) return;
    this.draining = true;
    try {
      for (;;) {
        const index = this.owner === null ? 0 : this.pending.findIndex((item) => item.connection === this.owner);
        if (index < 0 || index >= this.pending.length) {
          this.watchIdleOwner(); // the owner's next message has not come yet
          return;
        }
        clearTimeout(this.idleTimer);
        this.idleTimer = undefined;
        const [item] = this.pending.splice(index, 1);
        this.owner = item.connection;
        this.executing = item.connection;
        let bytes = 0;
        try {
          await this.db.runExclusive(() =>
            this.db.execProtocolRawStream(item.message, {
              onRawData: (data) => {
                bytes += data.length;
                item.onData(data);
              },
            }),
          );
          item.resolve(bytes);
        } catch (error) {
          item.reject(error instanceof Error ? error : new Error(String(error)));
        } finally {
          this.executing = null;
        }
        if (this.gone.delete(item.connection)) {
          await this.rollBackOpenTransaction();
          this.owner = null;
        } else if (endsExchange(item.message) && !this.db.isInTransaction()) {
          this.owner = null;
        }
      }
    } finally {
      this.draining = false;
    }
  }
}
