import { holdsAtLeast } from './read-replica.js';

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
