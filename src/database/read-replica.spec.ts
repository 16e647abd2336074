import { jest } from '@jest/globals';
import { DataSource, QueryFailedError } from 'typeorm';
import type { AppConfig } from '../config/app-config.js';
import type { Metrics } from '../observability/metrics.js';
import { holdsAtLeast, PrimaryState, PrimaryWalHistory, ReadReplica, ReplicaState, replicaFault, unfitness, walPosition } from './read-replica.js';

describe('holdsAtLeast (is the read replica at or past the versions the caller saw on the primary?)', () => {
  it('compares each version as a bigint, past 2^53 too', () => {
    expect(holdsAtLeast(['9007199254740993'], ['9007199254740992'])).toBe(true);
    expect(holdsAtLeast(['9007199254740992'], ['9007199254740993'])).toBe(false);
    expect(holdsAtLeast(['10'], ['9'])).toBe(true);
  });

  it('needs every version to be at least the one seen', () => {
    expect(holdsAtLeast(['5', '7'], ['5', '7'])).toBe(true);
    expect(holdsAtLeast(['6', '6'], ['5', '7'])).toBe(false);
  });

  it('counts a version the replica does not have as 0: behind anything the primary has moved', () => {
    expect(holdsAtLeast([null], ['0'])).toBe(true);
    expect(holdsAtLeast([null], ['1'])).toBe(false);
    expect(holdsAtLeast([], ['1'])).toBe(false);
  });
});

describe('replicaFault (does the primary answer a read the replica failed?)', () => {
  const failed = (code: string) => new QueryFailedError('SELECT 1', [], Object.assign(new Error(`failed with ${code}`), { code }));

  it('yes for what the replica answers for: unreachable, a recovery conflict, a lock its replay holds, a statement timeout, a table a migration has not made there yet', () => {
    expect(replicaFault(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5433'), { code: 'ECONNREFUSED' }))).toBe(true);
    expect(replicaFault(new Error('Connection terminated unexpectedly'))).toBe(true);
    // 57014: a replica slower than the primary (busier, colder caches) timed the read out; the primary may well answer it.
    for (const code of ['40001', '55P03', '57014', '57P01', '42P01', '42703']) expect({ code, fault: replicaFault(failed(code)) }).toEqual({ code, fault: true });
  });

  it('no for what the primary would refuse as well', () => {
    for (const code of ['22P02', '22021']) expect({ code, fault: replicaFault(failed(code)) }).toEqual({ code, fault: false });
    expect(replicaFault(new TypeError('not a function'))).toBe(false);
  });
});

describe('walPosition', () => {
  it('reads pg_lsn text as bytes, the high word past 2^32', () => {
    expect(walPosition('0/0')).toBe(0n);
    expect(walPosition('0/1D75060')).toBe(0x1d75060n);
    expect(walPosition('16/B374D848')).toBe((0x16n << 32n) + 0xb374d848n);
    expect(walPosition('1/0') > walPosition('0/FFFFFFFF')).toBe(true);
  });
});

describe("PrimaryWalHistory (how far behind the primary a replica is, from the primary's WAL positions at earlier probes)", () => {
  it('is the age of the newest moment whose position the replica has replayed', () => {
    const history = new PrimaryWalHistory(5_000);
    history.record(1_000, 100n);
    history.record(2_000, 200n);
    history.record(3_000, 300n);
    expect(history.lagMs(300n, 3_010)).toBe(10);
    expect(history.lagMs(350n, 3_010)).toBe(10);
    expect(history.lagMs(299n, 3_010)).toBe(1_010);
    expect(history.lagMs(100n, 3_010)).toBe(2_010);
  });

  it('grows while the replica stands still and the primary writes on (a stalled WAL stream), and stays 0-ish while the primary is idle', () => {
    const history = new PrimaryWalHistory(5_000);
    for (let at = 0; at <= 4_000; at += 1_000) history.record(at, 100n);
    expect(history.lagMs(100n, 4_001)).toBe(1);
    history.record(5_000, 180n);
    history.record(6_000, 260n);
    expect(history.lagMs(100n, 6_001)).toBe(2_001);
  });

  it('is Infinity for a replica behind every moment kept, and keeps one moment older than the bound', () => {
    const history = new PrimaryWalHistory(2_000);
    for (let at = 0; at <= 10_000; at += 1_000) history.record(at, BigInt(at));
    expect(history.lagMs(7_999n, 10_000)).toBe(Number.POSITIVE_INFINITY);
    expect(history.lagMs(8_000n, 10_000)).toBe(2_000);
    expect(history.lagMs(0n, 10_000)).toBe(Number.POSITIVE_INFINITY);
  });
});

describe('unfitness (may this replica serve reads for this primary at all?)', () => {
  const primary: PrimaryState = { deployment: 'd1', migration: 'M2', timeline: 2, positionAfter: '0/5000' };
  const replica: ReplicaState = { standby: true, receiving: true, timeline: 2, replayed: '0/4000', deployment: 'd1', migration: 'M2' };

  it('is fit: a standby of this database on its timeline, behind or level with it', () => {
    expect(unfitness(replica, primary)).toBeUndefined();
    expect(unfitness({ ...replica, replayed: '0/5000' }, primary)).toBeUndefined();
    // A role without pg_read_all_stats does not see the timeline it receives: the other checks still hold.
    expect(unfitness({ ...replica, timeline: null }, primary)).toBeUndefined();
  });

  it('is unfit: no standby, a copy of another database, no WAL receiver, a migration not replayed', () => {
    expect(unfitness({ ...replica, standby: false }, primary)).toMatch(/not a standby/);
    expect(unfitness({ ...replica, deployment: 'd2' }, primary)).toMatch(/another database/);
    expect(unfitness({ ...replica, receiving: false }, primary)).toMatch(/receives no WAL/);
    expect(unfitness({ ...replica, migration: 'M1' }, primary)).toMatch(/newest migration \(M2\)/);
  });

  it('is unfit after a failover when it still follows the old primary: another timeline, or WAL past all the primary has written', () => {
    expect(unfitness({ ...replica, timeline: 1 }, primary)).toMatch(/follows another primary \(it receives timeline 1, the primary writes timeline 2\)/);
    expect(unfitness({ ...replica, timeline: null, replayed: '0/5001' }, primary)).toMatch(/follows another primary \(it has replayed WAL up to 0\/5001/);
  });
});

describe('ReadReplica (its probe and reads, on stand-ins for the two databases)', () => {
  const IDENTITY = { deployment: 'd1', migration: 'M1' };

  /** A stand-in for a DataSource: answers every statement from `answer`; `connectWait` holds each new connection. */
  function standIn(answer: (sql: string) => Array<Record<string, unknown>>, connectWait?: () => Promise<void>) {
    const createQueryRunner = () => {
      let connected = false;
      const connect = async () => {
        if (!connected) await connectWait?.();
        connected = true;
      };
      return {
        connect,
        query: async (sql: string) => {
          await connect();
          return { records: answer(sql) };
        },
        release: async () => undefined,
      };
    };
    return { isInitialized: true, createQueryRunner, connection: { createQueryRunner }, destroy: async () => undefined } as unknown as DataSource;
  }

  /** A ReadReplica of `maxLagMs` over stand-ins, the replica already connected; `wal` says where each stands. */
  function harness(maxLagMs: number, connectWait?: () => Promise<void>) {
    const wal = { primary: '0/100', replayed: '0/100' };
    const primary = standIn(() => [{ position: wal.primary, timeline: 1, ...IDENTITY }], connectWait);
    const replica = standIn(() => [{ standby: true, receiving: true, timeline: 1, replayed: wal.replayed, ...IDENTITY }]);
    const config = { database: { readUrl: 'postgres://replica/db', readMaxLagMs: maxLagMs, poolSize: 1, statementTimeoutMs: 1000, lockTimeoutMs: 1000 } } as unknown as AppConfig;
    const metrics = { databaseRead: () => undefined, replicaLag: () => undefined, watchPool: () => undefined, unwatchPool: () => undefined } as unknown as Metrics;
    const readReplica = new ReadReplica(config, primary, metrics);
    Object.assign(readReplica as unknown as { replica: DataSource }, { replica });
    const probe = () => (readReplica as unknown as { probeOnce(): Promise<void> }).probeOnce();
    return { readReplica, primary, replica, wal, probe };
  }

  it("does not count a wait for the primary's pool as the replica's lag", async () => {
    // The primary's pool is busy: the probe's first connection is held until the test has moved the clock on 1.5 s.
    let release: (() => void) | undefined;
    let hold = false;
    const busyPool = () => {
      if (!hold) return Promise.resolve();
      hold = false;
      return new Promise<void>((resolve) => (release = resolve));
    };
    const { readReplica, probe } = harness(1_000, busyPool);
    await probe();
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
    try {
      hold = true;
      const probing = probe();
      for (let turn = 0; !release; turn += 1) {
        if (turn === 1_000) throw new Error('the probe never asked the primary for a connection');
        await Promise.resolve();
      }
      jest.advanceTimersByTime(1_500);
      release();
      await probing;
      expect(readReplica.usable()).toBe(true);
    } finally {
      jest.useRealTimers();
    }
  });

  it('runs a read the replica timed out (57014) again on the primary, and keeps the replica: the timeout says how long the read took, not that the replica is unwell', async () => {
    const { readReplica, replica, probe } = harness(5_000);
    await probe();
    const timedOut = new QueryFailedError('SELECT 1', [], Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' }));
    const value = await readReplica.read('session_list', ['1'], async (db) => {
      if (db === replica) throw timedOut;
      return { versions: ['1'], value: 'from the primary' };
    });
    expect(value).toBe('from the primary');
    expect(readReplica.usable()).toBe(true);
  });
});
