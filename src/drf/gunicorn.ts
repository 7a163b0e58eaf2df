import type { DrfResponse } from './answer.js';

/**
 * gunicorn 20.1's request parsing where it differs from Node's (http/message.py, config.py,
 * workers/base.py), with its default settings. Pure: the adapter hands in what it read off the wire.
 */

/** gunicorn's TOKEN_RE: a method it accepts, upper-cased afterwards (`get` is served as GET). */
export const METHOD_TOKEN = /^[!#$%&'*+\-.^_`|~0-9a-zA-Z]+$/;

/** limit_request_line, limit_request_fields, limit_request_field_size defaults. */
export const LIMIT_REQUEST_LINE = 4094;
export const LIMIT_REQUEST_FIELDS = 100;
export const LIMIT_REQUEST_FIELD_SIZE = 8190;
/** The socket read size of gunicorn's unreader: what it has seen of a line that has no end yet. */
export const READ_SIZE = 8192;
/** Every header gunicorn accepts fits in this (fields × (size + CRLF) + the request line). */
export const MAX_HEADER_BYTES = LIMIT_REQUEST_FIELDS * (LIMIT_REQUEST_FIELD_SIZE + 2) + 8192;

/** secure_scheme_headers: header (upper-cased) → the value that means https. */
const SECURE_SCHEME_HEADERS = new Map([
  ['X-FORWARDED-PROTOCOL', 'ssl'],
  ['X-FORWARDED-PROTO', 'https'],
  ['X-FORWARDED-SSL', 'on'],
]);

/**
 * `wsgi.url_scheme` from a trusted peer's secure-scheme headers, every occurrence read in order;
 * headers that disagree are `contradictory` (gunicorn's 400). `rawHeaders` is Node's flat list.
 */
export function schemeFromHeaders(
  rawHeaders: readonly string[],
  peerTrusted: boolean,
): 'http' | 'https' | 'contradictory' {
  if (!peerTrusted) return 'http';
  let scheme: 'http' | 'https' | null = null;
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = rawHeaders[i] ?? '';
    // Most headers are none of the three: skip them without building an upper-case copy.
    if (name.length !== 15 && name.length !== 17 && name.length !== 20) continue;
    const secureValue = SECURE_SCHEME_HEADERS.get(name.toUpperCase());
    if (secureValue === undefined) continue;
    const next = rawHeaders[i + 1] === secureValue ? 'https' : 'http';
    if (scheme !== null && scheme !== next) return 'contradictory';
    scheme = next;
  }
  return scheme ?? 'http';
}

/**
 * The limit a request breaks, as gunicorn words it, or null. `lineBytes`: the request line's
 * length (Node hands the target over as latin-1 text, one char per byte).
 */
export function limitBroken(lineBytes: number, rawHeaders: readonly string[]): string | null {
  if (lineBytes > LIMIT_REQUEST_LINE) {
    // gunicorn reads 8,192 bytes at a time: a line whose CRLF is not in the first read is named by that.
    const size = lineBytes + 2 > READ_SIZE ? READ_SIZE : lineBytes;
    return `Request Line is too large (${size} > ${LIMIT_REQUEST_LINE})`;
  }
  if (rawHeaders.length / 2 > LIMIT_REQUEST_FIELDS) {
    return "Error parsing headers: 'limit request headers fields'";
  }
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    // `Name: value` plus CRLF; Node keeps no record of the whitespace sent, one space is the norm.
    const size = (rawHeaders[i] ?? '').length + 2 + (rawHeaders[i + 1] ?? '').length + 2;
    if (size > LIMIT_REQUEST_FIELD_SIZE) return "Error parsing headers: 'limit request headers fields size'";
  }
  return null;
}

function escapeHtml(text: string): string {
  return text
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&#x27;');
}

/** util.write_error: gunicorn's own page for a request it refuses before the application. */
export function gunicornError(message: string, status: 400 | 500 = 400): DrfResponse {
  const reason = status === 400 ? 'Bad Request' : 'Internal Server Error';
  const html =
    `<html>\n  <head>\n    <title>${reason}</title>\n  </head>\n  <body>\n` +
    `    <h1><p>${reason}</p></h1>\n    ${escapeHtml(message)}\n  </body>\n</html>\n`;
  const body = Buffer.from(html, 'latin1');
  return {
    status,
    headers: [
      ['Connection', 'close'],
      ['Content-Type', 'text/html'],
      ['Content-Length', String(body.length)],
    ],
    body: [body],
  };
}

/** handle_error's 500 for what its parser raises and does not name (an unsupported transfer coding). */
export function gunicornServerError(): DrfResponse {
  return gunicornError('', 500);
}

export const CONTRADICTORY_SCHEME = 'Contradictory scheme headers';
