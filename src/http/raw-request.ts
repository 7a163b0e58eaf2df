import {
  gunicornError,
  gunicornServerError,
  LIMIT_REQUEST_FIELDS,
  LIMIT_REQUEST_FIELD_SIZE,
  LIMIT_REQUEST_LINE,
  METHOD_TOKEN,
  READ_SIZE,
} from '../drf/gunicorn.js';
import type { DrfResponse } from '../drf/answer.js';
import { parsePythonInt } from '../drf/python-int.js';

/** A request head read off the bytes Node's parser refused: what gunicorn would have parsed. */
export interface RawRequestHead {
  method: string;
  url: string;
  requestLine: string;
  /** gunicorn's `req.version`, e.g. [1, 1]: its answer's status line repeats it. */
  version: [number, number];
  /** Node's flat [name, value, ...] list. */
  rawHeaders: string[];
  /** Lower-cased names, repeated values joined with ',' as gunicorn's WSGI environ does. */
  headers: Record<string, string>;
}

/** What gunicorn 20.1 makes of a request's head: the head, its own error answer, or null (incomplete). */
export type GunicornParse = { head: RawRequestHead } | { refused: DrfResponse } | null;

const VERSION = /^HTTP\/(\d+)\.(\d+)$/;

/** Python's repr() of a latin-1 str, as gunicorn's error messages print what they refuse. */
export function pyRepr(text: string): string {
  const quote = text.includes("'") && !text.includes('"') ? '"' : "'";
  let out = quote;
  for (const ch of text) {
    const code = ch.charCodeAt(0);
    if (ch === '\\' || ch === quote) out += `\\${ch}`;
    else if (ch === '\t') out += '\\t';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (code < 0x20 || (code >= 0x7f && code <= 0xa0) || code === 0xad)
      out += `\\x${code.toString(16).padStart(2, '0')}`;
    else out += ch;
  }
  return out + quote;
}

/** Python's `str.split(' ', 2)`. */
function splitRequestLine(line: string): string[] {
  const first = line.indexOf(' ');
  if (first < 0) return [line];
  const second = line.indexOf(' ', first + 1);
  if (second < 0) return [line.slice(0, first), line.slice(first + 1)];
  return [line.slice(0, first), line.slice(first + 1, second), line.slice(second + 1)];
}

function refused(message: string): { refused: DrfResponse } {
  return { refused: gunicornError(message) };
}

interface RequestLine {
  requestLine: string;
  method: string;
  url: string;
  version: [number, number];
  /** The bytes after the request line's CRLF. */
  rest: string;
}

/** gunicorn's `parse_request_line`, with the line-length limit of its first read. */
function parseRequestLine(text: string): RequestLine | { refused: DrfResponse } | null {
  const lineEnd = text.indexOf('\r\n');
  if (lineEnd < 0 || lineEnd > READ_SIZE - 2) {
    if (text.length - 2 > LIMIT_REQUEST_LINE)
      return refused(
        `Request Line is too large (${Math.min(text.length, READ_SIZE)} > ${LIMIT_REQUEST_LINE})`,
      );
    return null;
  }
  if (lineEnd > LIMIT_REQUEST_LINE)
    return refused(`Request Line is too large (${lineEnd} > ${LIMIT_REQUEST_LINE})`);
  const requestLine = text.slice(0, lineEnd);
  const bits = splitRequestLine(requestLine);
  if (bits.length !== 3)
    return refused(`Invalid Request Line 'Invalid HTTP request line: ${pyRepr(requestLine)}'`);
  const [method = '', url = '', versionText = ''] = bits;
  if (!METHOD_TOKEN.test(method)) return refused(`Invalid Method 'Invalid HTTP method: ${pyRepr(method)}'`);
  const version = VERSION.exec(versionText);
  if (!version) return refused(`Invalid HTTP Version 'Invalid HTTP Version: ${pyRepr(versionText)}'`);
  const parsedVersion: [number, number] = [Number(version[1]), Number(version[2])];
  return { requestLine, method, url, version: parsedVersion, rest: text.slice(lineEnd + 2) };
}

/** gunicorn's `parse_headers`: continuation lines joined, its count and size limits. */
function parseHeaderFields(rest: string): [string, string][] | { refused: DrfResponse } | null {
  let lines: string[] = [];
  if (!rest.startsWith('\r\n')) {
    const end = rest.indexOf('\r\n\r\n');
    if (end < 0) return null;
    lines = rest.slice(0, end).split('\r\n');
  }
  const fields: [string, string][] = [];
  while (lines.length > 0) {
    if (fields.length >= LIMIT_REQUEST_FIELDS)
      return refused("Error parsing headers: 'limit request headers fields'");
    const current = lines.shift() ?? '';
    let length = current.length + 2;
    const colon = current.indexOf(':');
    if (colon <= 0) return refused(`Invalid HTTP Header: ${pyRepr(current)}`);
    const name = current.slice(0, colon);
    const upper = name.toUpperCase();
    if (!METHOD_TOKEN.test(upper)) return refused(`Invalid HTTP header name: ${pyRepr(upper)}`);
    const parts = [current.slice(colon + 1).replace(/^[ \t]+/, '')];
    while (lines.length > 0 && /^[ \t]/.test(lines[0] ?? '')) {
      const more = lines.shift() ?? '';
      length += more.length + 2;
      if (length > LIMIT_REQUEST_FIELD_SIZE)
        return refused("Error parsing headers: 'limit request headers fields size'");
      parts.push(more.replace(/^[ \t]+|[ \t]+$/g, ''));
    }
    if (length > LIMIT_REQUEST_FIELD_SIZE)
      return refused("Error parsing headers: 'limit request headers fields size'");
    fields.push([name, parts.join(' ')]);
  }
  return fields;
}

/**
 * gunicorn 20.1's `Request.parse` and `set_body_reader` (Debian's, with the framing fixes) over the
 * bytes of `packet`: the request line, the headers (continuation lines joined), the limits and
 * the body framing it refuses.
 */
export function parseGunicornHead(packet: Buffer): GunicornParse {
  const line = parseRequestLine(packet.toString('latin1'));
  if (line === null || 'refused' in line) return line;
  const fields = parseHeaderFields(line.rest);
  if (fields === null || 'refused' in fields) return fields;
  const framing = framingError(fields, line.version);
  if (framing !== null) return { refused: framing };
  const rawHeaders: string[] = [];
  const headers: Record<string, string> = {};
  for (const [name, value] of fields) {
    rawHeaders.push(name, value);
    const key = name.toLowerCase();
    headers[key] = key in headers ? `${headers[key]},${value}` : value;
  }
  return {
    head: {
      method: line.method.toUpperCase(),
      url: line.url,
      requestLine: line.requestLine,
      version: line.version,
      rawHeaders,
      headers: wsgiHeaders(headers, rawHeaders),
    },
  };
}

/** `Message.set_body_reader`: the Content-Length and Transfer-Encoding gunicorn refuses. */
function framingError(fields: readonly [string, string][], version: [number, number]): DrfResponse | null {
  let chunked = false;
  let contentLength: string | null = null;
  for (const [name, value] of fields) {
    const upper = name.toUpperCase();
    if (upper === 'CONTENT-LENGTH') {
      if (contentLength !== null) return gunicornError("Invalid HTTP Header: 'CONTENT-LENGTH'");
      contentLength = value;
    } else if (upper === 'TRANSFER-ENCODING') {
      const coding = value.toLowerCase();
      if (coding === 'chunked') {
        if (chunked) return gunicornError("Invalid HTTP Header: 'TRANSFER-ENCODING'");
        chunked = true;
      } else if (coding === 'identity') {
        if (chunked) return gunicornError("Invalid HTTP Header: 'TRANSFER-ENCODING'");
      } else return gunicornServerError();
    }
  }
  if (chunked) {
    if (version[0] < 1 || (version[0] === 1 && version[1] < 1))
      return gunicornError("Invalid HTTP Header: 'TRANSFER-ENCODING'");
    if (contentLength !== null) return gunicornError("Invalid HTTP Header: 'CONTENT-LENGTH'");
  } else if (contentLength !== null) {
    const n = parsePythonInt(contentLength);
    if (n === null || n < 0n) return gunicornError("Invalid HTTP Header: 'CONTENT-LENGTH'");
  }
  return null;
}

/**
 * Where gunicorn refuses what Node's parser takes: a Transfer-Encoding other than one `chunked` or
 * `identity` (Node joins repeated ones with ', ') is gunicorn's 500, a chunked HTTP/1.0 body its 400.
 */
export function unsupportedTransferCoding(
  transferEncoding: string | string[] | undefined,
  httpVersion: string,
): DrfResponse | null {
  if (transferEncoding === undefined) return null;
  const coding = String(transferEncoding).toLowerCase();
  if (coding === 'chunked' && (httpVersion === '1.0' || httpVersion === '0.9'))
    return gunicornError("Invalid HTTP Header: 'TRANSFER-ENCODING'");
  return coding === 'chunked' || coding === 'identity' ? null : gunicornServerError();
}

/** Names gunicorn's environ folds together: `-` and `_` both become `_` in `HTTP_*` keys. */
const FOLDED = new Map([
  ['host', 'host'],
  ['x-forwarded-host', 'x-forwarded-host'],
  ['x_forwarded_host', 'x-forwarded-host'],
  ['x-forwarded-proto', 'x-forwarded-proto'],
  ['x_forwarded_proto', 'x-forwarded-proto'],
  ['cookie', 'cookie'],
]);

/**
 * The headers Django reads as gunicorn's environ holds them: repeated `Host`s joined with ','
 * (Node keeps only the first; no host check passes the joined value), repeated `Cookie`s joined with
 * ',' (Node joins them with '; ', which Django would read as separate cookies) and `X_Forwarded_Host` /
 * `X_Forwarded_Proto` read as their dashed names. The same object when none of that applies.
 */
export function wsgiHeaders<T extends Readonly<Record<string, string | string[] | undefined>>>(
  headers: T,
  rawHeaders: readonly string[],
): T {
  if (!needsFolding(rawHeaders)) return headers;
  let values: Map<string, string[]> | null = null;
  let folded = false;
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = rawHeaders[i] ?? '';
    if (name.length !== 4 && name.length !== 6 && name.length !== 16 && name.length !== 17) continue;
    const lower = name.toLowerCase();
    const key = FOLDED.get(lower);
    if (key === undefined) continue;
    values ??= new Map();
    const list = values.get(key) ?? [];
    list.push(rawHeaders[i + 1] ?? '');
    values.set(key, list);
    if (lower !== key || list.length > 1) folded = true;
  }
  if (!folded || values === null) return headers;
  const out: Record<string, string | string[] | undefined> = { ...headers };
  for (const [key, list] of values) out[key] = list.join(',');
  return out as T;
}

const FOLDED_BITS = new Map([
  ['host', 1],
  ['x-forwarded-host', 2],
  ['x-forwarded-proto', 4],
  ['cookie', 8],
]);

/**
 * Whether a header of FOLDED repeats or comes with underscores. It runs on every request, so it
 * allocates nothing in the usual case (one `Host`).
 */
function needsFolding(rawHeaders: readonly string[]): boolean {
  let seen = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i] ?? '';
    const n = name.length;
    if (n !== 4 && n !== 6 && n !== 16 && n !== 17) continue;
    const lower = name === 'Host' ? 'host' : name.toLowerCase();
    const key = FOLDED.get(lower);
    if (key === undefined) continue;
    const bit = FOLDED_BITS.get(key) ?? 0;
    if (lower !== key || (seen & bit) !== 0) return true;
    seen |= bit;
  }
  return false;
}

/** gunicorn's refusal of a request line with no version, which Node reads as HTTP/0.9. */
export function simpleRequestLine(method: string, url: string): DrfResponse {
  return refused(`Invalid Request Line 'Invalid HTTP request line: ${pyRepr(`${method} ${url}`)}'`).refused;
}
