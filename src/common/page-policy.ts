/**
 * The Content-Security-Policy of the pages the service serves itself (the
 * web client, the Swagger UI): scripts from this origin only and no inline
 * script, inline styles (both pages' components carry them), data: images,
 * calls and form posts to this origin only, no plug-ins, never framed.
 */
export const SAME_ORIGIN_PAGE_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');
