import { decodeCursor, encodeCursor } from './session-cursor.js';
import { InvalidCursorError } from './session.errors.js';

const ID = '4e05e1f2-1175-4c65-9986-df7cec064cf3';
const raw = (text: string) => Buffer.from(text).toString('base64url');

describe('session cursor', () => {
  it('round-trips', () => {
    const cursor = { updatedMicros: '1796080108294123', id: ID };
    expect(decodeCursor(encodeCursor(cursor))).toEqual(cursor);
  });

  it.each(['0', '1', '9999999999999999'])('accepts the timestamp %p (at most 16 digits: until the year 2286)', (micros) => {
    expect(decodeCursor(raw(`${micros}.${ID}`))).toEqual({ updatedMicros: micros, id: ID });
  });

  it.each([
    '',
    'garbage',
    raw('123.not-a-uuid'),
    raw(`x.${ID}`),
    raw(`-1.${ID}`),
    raw(`1.5.${ID}`),
    // Beyond what PostgreSQL turns into a timestamptz (or a bigint): used to answer 500.
    raw(`99999999999999999.${ID}`),
    raw(`9000000000000000000.${ID}`),
    raw(`9999999999999999999.${ID}`),
    raw(`${'9'.repeat(40)}.${ID}`),
  ])('rejects %p', (cursor) => {
    expect(() => decodeCursor(cursor)).toThrow(InvalidCursorError);
  });
});
