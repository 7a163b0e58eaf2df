import {
  BAD_REQUEST_PAGE,
  DJANGO_ERROR_CONTENT_TYPE,
  NOT_FOUND_PAGE,
  SERVER_ERROR_PAGE,
} from './django-pages.js';

/** A request as gunicorn hands it to Django: the raw target, the headers and where it arrived. */
export interface DrfRequest {
  method: string;
  /** Raw request-target: path + '?' + query, as on the wire. */
  url: string;
  /** node's lower-cased IncomingHttpHeaders. */
  headers: Readonly<Record<string, string | string[] | undefined>>;
  /** The listening socket and gunicorn's scheme decision; without it, `http` and `localhost`. */
  server?: ServerInfo;
}

/** WSGI's `wsgi.url_scheme`, `SERVER_NAME` and `SERVER_PORT` as gunicorn 20.1 sets them. */
export interface ServerInfo {
  urlScheme: 'http' | 'https';
  /** The address the listening socket is bound to (gunicorn's `getsockname()`). */
  name: string;
  port: string;
}

export interface DrfResponse {
  status: number;
  /** Every header in wire order, `Content-Length` included where Django (or gunicorn) sends one. */
  headers: [string, string][];
  /**
   * The body in chunks (a shared page tail stays one chunk, never copied). Empty for HEAD, whose
   * headers still carry the GET body's length.
   */
  body: readonly Buffer[];
}

/**
 * Which of Django's middlewares touched the answer, which decides the headers it gains: a view's or
 * an error page's answer passes all three (XFrameOptions, then Common's Content-Length, then
 * Security's two); Common's slash redirect replaces the response after XFrameOptions ran; a
 * DisallowedHost raised in Common's process_request skips both inner ones (gunicorn then chunks it).
 */
export type DjangoPath = 'view' | 'redirect' | 'bad-host' | 'not-modified';

const X_FRAME: [string, string] = ['X-Frame-Options', 'DENY'];
const NOSNIFF: [string, string] = ['X-Content-Type-Options', 'nosniff'];
const REFERRER: [string, string] = ['Referrer-Policy', 'same-origin'];

function byteLength(body: readonly Buffer[]): number {
  let length = 0;
  for (const chunk of body) length += chunk.length;
  return length;
}

/** The answer as it leaves Django's middleware, HEAD's body dropped (its length kept). */
export function djangoAnswer(
  req: Pick<DrfRequest, 'method'>,
  status: number,
  headers: [string, string][],
  body: readonly Buffer[],
  path: DjangoPath = 'view',
): DrfResponse {
  const length: [string, string] = ['Content-Length', String(byteLength(body))];
  let all: [string, string][];
  if (path === 'view') all = [...headers, X_FRAME, length, NOSNIFF, REFERRER];
  else if (path === 'redirect') all = [...headers, length, NOSNIFF, REFERRER];
  else if (path === 'bad-host') all = [...headers, NOSNIFF, REFERRER];
  else all = [...headers, X_FRAME, NOSNIFF, REFERRER];
  const bodyless = req.method.toUpperCase() === 'HEAD' || path === 'not-modified';
  return { status, headers: all, body: bodyless ? [] : body };
}

/**
 * Django's DEBUG=False error pages: 404, 500, and 400 for a DisallowedHost (raised before the inner
 * middlewares) or, with `path` 'view', for a SuspiciousOperation raised in the view.
 */
export function djangoErrorPage(
  req: Pick<DrfRequest, 'method'>,
  status: 400 | 404 | 500,
  path: DjangoPath = status === 400 ? 'bad-host' : 'view',
): DrfResponse {
  const page = status === 400 ? BAD_REQUEST_PAGE : status === 404 ? NOT_FOUND_PAGE : SERVER_ERROR_PAGE;
  return djangoAnswer(req, status, [['Content-Type', DJANGO_ERROR_CONTENT_TYPE]], [page], path);
}
