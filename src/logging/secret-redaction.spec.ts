import { Writable } from 'node:stream';
import { createRootLogger } from './logger.js';
import { loggableUrl, redactSecrets } from './secret-redaction.js';

describe('secret redaction for logs', () => {
  const apiKey = 'rk-Q2b8x0vY9mZk3LrT1aWcE5dF7gH9jK2lN4pS6uV8wX0';
  const jwt = 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJlLW9mLXRoZS10b2tlbi1oZXJl';
  const spacedJwt = `${Buffer.from('{ "alg": "HS256" }').toString('base64url')}.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJl`;

  it('removes API keys and JWTs (any header spacing, after other dotted words) from any text', () => {
    expect(redactSecrets(`Bearer ${apiKey}`)).toBe('Bearer [redacted]');
    expect(redactSecrets(`cookie=${jwt}; theme=dark`)).toBe('cookie=[redacted]; theme=dark');
    expect(redactSecrets(`token ${spacedJwt}`)).toBe('token [redacted]');
    expect(redactSecrets(`host.example.${jwt}`)).toBe('host.example.[redacted]');
    expect(redactSecrets(`x${apiKey}`)).toBe('x[redacted]');
    expect(redactSecrets(`/api/abc${jwt}/x`)).toBe('/api/[redacted]/x');
    expect(redactSecrets('{"id":"abc","url":"/x"}')).toBe('{"id":"abc","url":"/x"}');
    expect(redactSecrets('"authorization":"Bearer sk-proj-0123456789abcdefXYZ"')).toBe('"authorization":"Bearer [redacted]"');
    expect(redactSecrets(`Basic ${Buffer.from('user:a long password').toString('base64')}`)).toBe('Basic [redacted]');
    expect(redactSecrets('Missing Authorization header: send "Bearer <token>"')).toBe('Missing Authorization header: send "Bearer <token>"');
  });

  it('keeps ordinary text: host names, versions, kebab-case words with rk- in them', () => {
    for (const text of ['docs.example.com', 'service 1.2.3 on 127.0.0.1', 'network-connection-timeout-error', 'bookmark-list-of-the-user-here']) {
      expect(redactSecrets(text)).toBe(text);
    }
  });

  // No clock here: a quadratic search (816 ms on 20 000 characters) would take about 20 minutes on these 760 000,
  // far past Jest's timeout, while the linear one takes a fraction of a second.
  it('takes linear time on long runs of token characters', () => {
    const text = `${'a'.repeat(200_000)} ${'rk-'.repeat(50_000)} ${'a.'.repeat(100_000)} ${'Bearer '.repeat(30_000)}`;
    expect(redactSecrets(text).length).toBeLessThanOrEqual(text.length);
  });

  it('logs the path and the query names, values only of the allow-listed ones', () => {
    expect(loggableUrl('/api/sessions?limit=5&cursor=abc&q=my%20secret%20plan&api_key=xyz')).toBe('/api/sessions?limit=5&cursor=abc&q=[redacted]&api_key=[redacted]');
    expect(loggableUrl('/s?ticket[]=a&ticket[a]=b&key=1&key=2&flag&empty=')).toBe('/s?ticket[]=[redacted]&ticket[a]=[redacted]&key=[redacted]&key=[redacted]&flag&empty=');
    expect(loggableUrl('/s?tick%65t=a&limit[]=7')).toBe('/s?ticket=[redacted]&limit[]=[redacted]');
    expect(loggableUrl('/path#fragment')).toBe('/path');
  });

  it('removes secrets from the path, from names and from allow-listed values, also percent-encoded', () => {
    const encoded = [...apiKey].map((c) => `%${c.charCodeAt(0).toString(16)}`).join('');
    expect(loggableUrl(`/api/sessions/${apiKey}/messages`)).toBe('/api/sessions/[redacted]/messages');
    expect(loggableUrl(`/api/sessions/${encoded}/messages`)).toBe('/api/sessions/[redacted]/messages');
    expect(loggableUrl(`/x?${jwt}&${encoded}=1`)).toBe('/x?[redacted]&[redacted]=[redacted]');
    expect(loggableUrl(`/x?cursor=${jwt}&limit=${encoded}`)).toBe('/x?cursor=[redacted]&limit=[redacted]');
    // A malformed escape elsewhere does not stop the decoding that reveals the key.
    expect(loggableUrl(`/api/${encoded}/%E0%A4%ZZ?${encoded}%ZZ=1&cursor=%ZZ${encoded}`)).toBe('/api/[redacted]/%E0%A4%ZZ?[redacted]%ZZ=[redacted]&cursor=%ZZ[redacted]');
  });

  it('the root logger removes secrets from every line it writes', () => {
    const written: string[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        written.push(String(chunk));
        done();
      },
    });
    const logger = createRootLogger('info', sink);
    logger.warn({ err: new Error(`refused ${apiKey}`), header: `Bearer ${jwt}` }, `call with ${spacedJwt}`);
    expect(written).toHaveLength(1);
    expect(written[0]).not.toContain(apiKey.slice(3));
    expect(written[0]).not.toContain(jwt.split('.')[2]);
    expect(written[0]).not.toContain(spacedJwt.split('.')[0]);
    expect(JSON.parse(written[0]).msg).toBe('call with [redacted]');
  });
});
