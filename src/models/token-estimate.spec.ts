import { boundedPieces, estimateTokens, TOKENIZER_PIECE_LENGTH, truncateToTokens } from './token-estimate.js';

describe('token estimates', () => {
  it.each([
    ['unbroken Chinese', '漢字かな交じり文'.repeat(8000)],
    ['one long ASCII word', 'a'.repeat(64000)],
    ['English prose', 'The warranty period is two years from the date of purchase. '.repeat(1000)],
    ['emoji (surrogate pairs)', '😀'.repeat(5000)],
    ['empty', ''],
  ])('gives the tokenizer only bounded pieces that rejoin into the text: %s', (_name, text) => {
    const pieces = boundedPieces(text);
    expect(pieces.join('')).toBe(text);
    expect(pieces.every((piece) => piece.length > 0 && piece.length <= TOKENIZER_PIECE_LENGTH)).toBe(true);
    // No piece starts with the low half of a surrogate pair.
    expect(pieces.some((piece) => /^[\udc00-\udfff]/.test(piece))).toBe(false);
  });

  it('cuts prose before white space, so the count is close to counting the whole', async () => {
    const prose = 'The warranty period is two years from the date of purchase. '.repeat(50);
    expect(boundedPieces(prose).every((piece, index) => index === 0 || /^\s/.test(piece))).toBe(true);
    const { countTokens } = await import('gpt-tokenizer');
    const whole = countTokens(prose);
    expect(Math.abs((await estimateTokens(prose)) - whole)).toBeLessThanOrEqual(boundedPieces(prose).length);
  });

  it('truncates to a token limit and says whether it cut', async () => {
    expect(await truncateToTokens('Hello world', 10)).toEqual({ text: 'Hello world', truncated: false });
    const cut = await truncateToTokens('The warranty period is two years from the date of purchase.', 3);
    expect(cut.truncated).toBe(true);
    expect('The warranty period is two years from the date of purchase.'.startsWith(cut.text)).toBe(true);
    expect(cut.text.length).toBeGreaterThan(0);
  });
});
