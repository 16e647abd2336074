import { ExtractionBudget, ExtractionLimitError, UnreadableContentError } from '../extraction-budget.js';
import { extractHtmlText, htmlToText } from './html-text.js';
import { decodeCsv, decodeHtml } from './text-decoding.js';

const budget = (maxExtractedBytes = 1024 * 1024) => new ExtractionBudget({ maxPages: 100, maxExtractedBytes });

describe('htmlToText', () => {
  it('keeps headings as markdown headings, paragraphs as lines and links by their text', () => {
    const html = `<!doctype html><html><head><title>Ignored</title><style>p { color: red }</style></head><body>
      <h1>Returns  policy</h1><p>Aurora widgets may be returned within <b>45 days</b>. See <a href="/form">the refund form</a>.</p>
      <h2>Refunds <small>(EU)</small></h2><ul><li>Card</li><li>Cash</li></ul>
      <table><tr><th>Product</th><th>Price</th></tr><tr><td>Aurora X1</td><td>199 EUR</td></tr></table></body></html>`;
    expect(htmlToText(html, budget())).toBe(
      [
        '# Returns policy',
        '',
        'Aurora widgets may be returned within 45 days. See the refund form.',
        '',
        '## Refunds (EU)',
        '',
        '- Card',
        '- Cash',
        '',
        '| Product | Price',
        '| Aurora X1 | 199 EUR',
      ].join('\n'),
    );
  });

  it('never keeps scripts, styles, templates, forms controls, navigation or footers', () => {
    const html = `<nav><a href="/">Home</a></nav><script>var secret = "x";</script><noscript>enable js</noscript>
      <template><p>hidden</p></template><svg><text>drawing</text></svg><p>Body text</p><select><option>Choice</option></select>
      <button>Click</button><footer>Copyright</footer><style>.a{}</style>`;
    expect(htmlToText(html, budget())).toBe('Body text');
  });

  it('keeps only the main content when the page marks it', () => {
    const html = `<header><h1>Site</h1></header><div class="sidebar">Other stories</div><main><h2>Article</h2><p>The fact.</p></main>`;
    expect(htmlToText(html, budget())).toBe('## Article\n\nThe fact.');
    expect(htmlToText(`<div>Menu</div><div role="main"><p>Only this.</p></div>`, budget())).toBe('Only this.');
  });

  it('escapes lines that start with # but are not headings (a hashtag, a comment in code)', () => {
    expect(htmlToText('<p>#launch day</p><pre>x = 1\n# a comment\n</pre>', budget())).toBe('\\#launch day\n\nx = 1\n\\# a comment');
  });

  it('counts the text against the budget and stops at its limit', () => {
    const html = `<p>${'word '.repeat(1000)}</p>`;
    expect(() => htmlToText(html, budget(1000))).toThrow(ExtractionLimitError);
  });

  it('reads the page in the encoding its meta tag or byte order mark names', async () => {
    const gbk = Buffer.concat([Buffer.from('<meta charset="gbk"><p>'), Buffer.from([0xcd, 0xcb, 0xbb, 0xf5]), Buffer.from('</p>')]);
    expect((await extractHtmlText(gbk, budget())).pages).toEqual([{ page: null, text: '退货', headings: true, splitAtHeadings: true }]);
    const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('<p>保修</p>', 'utf16le')]);
    expect(decodeHtml(utf16)).toBe('<p>保修</p>');
    expect(() => decodeHtml(Buffer.from([0x3c, 0x70, 0x3e, 0xff, 0xfe, 0x41]))).toThrow(new UnreadableContentError('its text is not valid UTF-8'));
  });

  it('reads CSV as UTF-8 or UTF-16 with its byte order mark, and refuses other bytes', () => {
    expect(decodeCsv(Buffer.from('\ufeffa,b', 'utf8'))).toBe('a,b');
    expect(decodeCsv(Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('a;b', 'utf16le')]))).toBe('a;b');
    expect(() => decodeCsv(Buffer.from([0x61, 0x2c, 0xe9]))).toThrow(UnreadableContentError);
  });
});
