import { QueryFailedError } from 'typeorm';
import { holdsAtLeast, replicaFault } from './read-replica.js';

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

  it('yes for what the replica answers for: unreachable, a recovery conflict, a lock its replay holds, a table a migration has not made there yet', () => {
    expect(replicaFault(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5433'), { code: 'ECONNREFUSED' }))).toBe(true);
    expect(replicaFault(new Error('Connection terminated unexpectedly'))).toBe(true);
    for (const code of ['40001', '55P03', '57P01', '42P01', '42703']) expect({ code, fault: replicaFault(failed(code)) }).toEqual({ code, fault: true });
  });

  it('no for what the primary would refuse as well, or a statement cancelled at its own time limit', () => {
    for (const code of ['22P02', '22021', '57014']) expect({ code, fault: replicaFault(failed(code)) }).toEqual({ code, fault: false });
    expect(replicaFault(new TypeError('not a function'))).toBe(false);
  });
});
