/** What a removed value or secret is replaced with in a log line. */
export const REDACTED = '[redacted]';

/**
 * Query parameters whose values are logged: paging and flags, never a
 * credential and never user content. Every other value is `[redacted]`:
 * tokens and keys travel under any name (`key`, `apikey`, `ticket[]`…), and
 * `q` (the session title search) is the user's own text. Cursors are opaque
 * page positions, not credentials. Names are matched exactly, after decoding.
 */
export const LOGGED_QUERY_VALUES: ReadonlySet<string> = new Set(['limit', 'before', 'cursor', 'wait']);

/**
 * An API key: `rk-` and its base64url secret (see api-key.service.ts). Any
 * run of 20 or more secret characters counts, wherever it starts, so a key
 * cut short or run into other text is caught too.
 */
const API_KEY_SHAPED = /rk-([A-Za-z0-9_-]{20,})/g;

/**
 * A random secret has capitals or digits (43 characters without either: odds
 * of 1 in 10^15); kebab-case words (`network-policy-controller`) have
 * neither, and are left alone.
 */
const redactApiKey = (match: string, secret: string) => (/[A-Z0-9]/.test(secret) ? REDACTED : match);

/** The credential of an Authorization header value, whatever it is (a model provider's key, a password), as some error objects carry it. */
const AUTHORIZATION_VALUE = /\b(bearer|basic)(\s+)[A-Za-z0-9._~+/=-]{16,}/gi;

/**
 * Dot-joined base64url runs: JWS (three parts) and JWE (five) compact forms
 * among them. Matched only from the start of a run, so a long run without
 * dots costs one pass, not one per character.
 */
const DOTTED_BASE64URL = /(?<![A-Za-z0-9_-])[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]*){2,}/g;

/** Whether a base64url text decodes to a JSON object's start: a JOSE header or a JWT's claims (`eyJ…` is `{"`, but `{ "` is valid too). */
function isJsonObject(segment: string): boolean {
  if (segment.length < 8) return false;
  return /^\s*\{\s*"/.test(Buffer.from(segment.slice(0, 16), 'base64url').toString('latin1'));
}

/**
 * The dotted run with everything from its JWT on replaced: from the first
 * part that is a JOSE header followed by two more parts (a JWT after other
 * dotted words is still found), else from the part before the first JSON
 * claims part (a header run into other text, `abceyJ…`, does not decode).
 */
function redactJose(run: string): string {
  const parts = run.split('.');
  let start = parts.findIndex((part, index) => index + 2 < parts.length && isJsonObject(part));
  if (start < 0) start = parts.findIndex((_, index) => index + 2 < parts.length && isJsonObject(parts[index + 1]));
  if (start < 0) return run;
  return [...parts.slice(0, start), REDACTED].join('.');
}

/**
 * `text` with every API-key-shaped and JWT-shaped string (signed or
 * encrypted, any header spacing), and whatever follows `Bearer` or `Basic`,
 * replaced by `[redacted]`. Stream tickets and identity-provider tokens are
 * JWTs too.
 */
export function redactSecrets(text: string): string {
  return text.replace(API_KEY_SHAPED, redactApiKey).replace(DOTTED_BASE64URL, redactJose).replace(AUTHORIZATION_VALUE, `$1$2${REDACTED}`);
}

/** Whether `text` holds something `redactSecrets` would remove. */
export function containsSecret(text: string): boolean {
  return redactSecrets(text) !== text;
}

/** Only the escapes of unreserved characters (`%72` is `r`): never ambiguous, never malformed. */
function decodeUnreserved(text: string): string {
  return text.replace(/%([0-9A-Fa-f]{2})/g, (escape, hex: string) => {
    const character = String.fromCharCode(parseInt(hex, 16));
    return /[A-Za-z0-9._~-]/.test(character) ? character : escape;
  });
}

/** `text` decoded; when it holds a malformed escape, still with every escape of a token character decoded, so no credential hides behind one. */
function decoded(text: string, decode: (text: string) => string): string {
  try {
    return decode(text);
  } catch {
    return decodeUnreserved(text);
  }
}

const decodeQueryPart = (text: string) => decoded(text.replace(/\+/g, ' '), decodeURIComponent);

/**
 * The request URL as the log shows it: the path, and for the query each
 * parameter's name with its value replaced by `[redacted]` unless the name is
 * in LOGGED_QUERY_VALUES. Path, names and kept values are shown decoded (so
 * `%72k-…` is seen for what it is) with API keys and JWTs removed; the
 * fragment is dropped.
 */
export function loggableUrl(url: string): string {
  const hashAt = url.indexOf('#');
  const withoutFragment = hashAt < 0 ? url : url.slice(0, hashAt);
  const queryAt = withoutFragment.indexOf('?');
  const path = redactSecrets(decoded(queryAt < 0 ? withoutFragment : withoutFragment.slice(0, queryAt), decodeURI));
  if (queryAt < 0) return path;
  const parameters = withoutFragment
    .slice(queryAt + 1)
    .split('&')
    .filter((pair) => pair !== '')
    .map((pair) => {
      const equalsAt = pair.indexOf('=');
      const name = decodeQueryPart(equalsAt < 0 ? pair : pair.slice(0, equalsAt));
      if (equalsAt < 0) return redactSecrets(name);
      const value = pair.slice(equalsAt + 1);
      const shown = value === '' ? '' : LOGGED_QUERY_VALUES.has(name) ? decodeQueryPart(value) : REDACTED;
      return `${redactSecrets(name)}=${redactSecrets(shown)}`;
    });
  return `${path}?${parameters.join('&')}`;
}
