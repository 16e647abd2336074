import { documentNameProblem, InvalidDocumentNameError, uploadedDocumentName } from './document-name.js';

describe('document file names', () => {
  it('accepts ordinary names in any script, up to 255 characters counted as code points', () => {
    for (const name of ['manual.pdf', '退货与保修政策.md', 'Größe & Maße (v2).txt', `${'📄'.repeat(251)}.txt`]) {
      expect(documentNameProblem(name)).toBeNull();
    }
  });

  it('names what is wrong with a name that cannot be stored', () => {
    expect(documentNameProblem('a\u0000b.txt')).toBe('file name contains a NUL character (U+0000)');
    expect(documentNameProblem('a\ud800b.txt')).toBe('file name contains an unpaired UTF-16 surrogate (not valid Unicode)');
    expect(documentNameProblem('a\udc00.txt')).toMatch(/unpaired UTF-16 surrogate/);
    for (const control of ['\u0001', '\t', '\n', '\r', '\u001b', '\u007f', '\u0085', '\u009f']) {
      expect(documentNameProblem(`a${control}b.txt`)).toBe('file name contains a control character');
    }
    expect(documentNameProblem(`${'n'.repeat(252)}.txt`)).toBe('file name is longer than 255 characters (256)');
    expect(documentNameProblem(`${'📄'.repeat(252)}.txt`)).toBe('file name is longer than 255 characters (256)');
    expect(documentNameProblem('   ')).toBe('file name is empty');
  });

  it('refuses an uploaded name whose bytes were not UTF-8 (the parser made them U+FFFD)', () => {
    expect(uploadedDocumentName('星辰净水器.txt')).toBe('星辰净水器.txt');
    expect(() => uploadedDocumentName('bad\ufffd.txt')).toThrow(InvalidDocumentNameError);
    expect(() => uploadedDocumentName('bad\ufffd.txt')).toThrow(/not valid UTF-8/);
    for (const withPath of ['\\ .txt', 'dir/notes.md', 'C:\\fakepath\\notes.md']) {
      expect(() => uploadedDocumentName(withPath)).toThrow(/must not contain/);
    }
  });
});
