import { decodeCursor, encodeCursor } from './session-cursor.js';
import { InvalidCursorError } from './session.errors.js';

describe('session cursor', () => {
  it('round-trips', () => {
    const cursor = { updatedMicros: '1796080108294123', id: '4e05e1f2-1175-4c65-9986-df7cec064cf3' };
    expect(decodeCursor(encodeCursor(cursor))).toEqual(cursor);
  });

  it.each(['', 'garbage', Buffer.from('123.not-a-uuid').toString('base64url'), Buffer.from('x.4e05e1f2-1175-4c65-9986-df7cec064cf3').toString('base64url')])(
    'rejects %p',
    (raw) => {
      expect(() => decodeCursor(raw)).toThrow(InvalidCursorError);
    },
  );
});
