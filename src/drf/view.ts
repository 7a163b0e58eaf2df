import { LIST_PATH } from '../upstream/contract.js';
import { djangoAnswer, djangoErrorPage, type DrfRequest, type DrfResponse } from './answer.js';
import { renderDataHtml } from './browsable-html.js';
import { DJANGO_DEFAULT_CONTENT_TYPE } from './django-pages.js';
import { DjangoServerError, parseHeaderParameters } from './media-type.js';
import { JSON_RENDERER, negotiate, type Renderer } from './negotiation.js';
import { parsePythonInt } from './python-int.js';
import { pyJsonDumps, type JsonValue } from './python-json.js';
import { decodeQueryBytes, escapeUriPath, iriToUri, pyParseQsl } from './python-url.js';
import { isValidDjangoHost, splitTarget, type RequestTarget } from './request-target.js';

/**
 * Django 3.2's middleware and DRF 3.14's APIView.dispatch in front of the list view: the host
 * check, the slash redirect, content negotiation and the method. Pure: what the page holds is the
 * caller's (the mirror's snapshot, the simulated upstream's data).
 */

export interface DrfOptions {
  /** Django's USE_X_FORWARDED_HOST + SECURE_PROXY_SSL_HEADER on X-Forwarded-Proto. */
  trustProxyHeaders: boolean;
  publicBaseUrl: string | null;
  cacheControl: string | null;
}

export const LIST_PATH_NO_SLASH = '/api/model/team-block-coworker/list';
export const ALLOW = 'GET, HEAD, OPTIONS';
// Django's DATA_UPLOAD_MAX_NUMBER_FIELDS: more query fields make QueryDict raise (a 400).
const MAX_QUERY_FIELDS = 1000;

/** Whether `url` is for the list view: the list path with or without its slash, as Django decodes it. */
export function isListPath(url: string): boolean {
  const { pathInfo } = splitTarget(url);
  return pathInfo === LIST_PATH || pathInfo === LIST_PATH_NO_SLASH;
}

export function header(req: DrfRequest, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

/** Django's `request.scheme`: the trusted proxy header when configured, else gunicorn's scheme. */
export function requestScheme(req: DrfRequest, options: Pick<DrfOptions, 'trustProxyHeaders'>): string {
  const forwarded = options.trustProxyHeaders ? header(req, 'x-forwarded-proto') : undefined;
  if (forwarded !== undefined) return forwarded === 'https' ? 'https' : 'http';
  return req.server?.urlScheme ?? 'http';
}

/**
 * The host Django's `get_host()` reads: X-Forwarded-Host (trusted), Host, else SERVER_NAME with
 * SERVER_PORT unless it is the scheme's default. Undefined only when the caller gave no server.
 */
export function rawHost(req: DrfRequest, options: Pick<DrfOptions, 'trustProxyHeaders'>): string | undefined {
  const forwarded = options.trustProxyHeaders ? header(req, 'x-forwarded-host') : undefined;
  const host = forwarded ?? header(req, 'host');
  if (host !== undefined || req.server === undefined) return host;
  const defaultPort = requestScheme(req, options) === 'https' ? '443' : '80';
  return req.server.port === defaultPort ? req.server.name : `${req.server.name}:${req.server.port}`;
}

/**
 * Django's DEBUG=False 404 page for any other path, after the Host check Django's middleware makes
 * first (pass `options` so a trusted X-Forwarded-Host is the one checked, as for the list).
 */
export function respondDjangoNotFound(
  req: DrfRequest,
  options?: Pick<DrfOptions, 'trustProxyHeaders'>,
): DrfResponse {
  const host = rawHost(req, { trustProxyHeaders: options?.trustProxyHeaders ?? false });
  if (host !== undefined && !isValidDjangoHost(host)) return djangoErrorPage(req, 400);
  return djangoErrorPage(req, 404);
}

/** The list view's context once negotiation has picked a renderer. */
export interface ViewContext {
  req: DrfRequest;
  target: RequestTarget;
  host: string | undefined;
  options: DrfOptions;
  renderer: Renderer;
  acceptedMediaType: string;
  /** The decoded query as Django's QueryDict holds it, in order. */
  params: readonly [string, string][];
}

/** Where dispatch leads: an answer already, or the view's OPTIONS or GET/HEAD handler. */
export type Dispatch =
  { kind: 'answer'; answer: DrfResponse } | { kind: 'options' | 'list'; view: ViewContext };

function redirectWithSlash(req: DrfRequest, target: RequestTarget): DrfResponse {
  const query = target.query === '' ? '' : `?${iriToUri(target.query)}`;
  const location = iriToUri(`${escapeUriPath(target.pathInfo)}/${query}`);
  const headers: [string, string][] = [
    ['Content-Type', DJANGO_DEFAULT_CONTENT_TYPE],
    ['Location', location],
  ];
  return djangoAnswer(req, 301, headers, [], 'redirect');
}

/** Middleware, then APIView.dispatch up to the method handler, for a request on the list path. */
export function dispatchList(req: DrfRequest, options: DrfOptions): Dispatch {
  const target = splitTarget(req.url);
  // CommonMiddleware: get_host() first, then APPEND_SLASH, before any view runs.
  const host = rawHost(req, options);
  if (host !== undefined && !isValidDjangoHost(host))
    return { kind: 'answer', answer: djangoErrorPage(req, 400) };
  if (target.pathInfo === LIST_PATH_NO_SLASH)
    return { kind: 'answer', answer: redirectWithSlash(req, target) };
  if (target.pathInfo !== LIST_PATH) return { kind: 'answer', answer: djangoErrorPage(req, 404) };
  const query = decodeQueryBytes(target.query);
  if (query !== '' && query.split('&').length > MAX_QUERY_FIELDS)
    return { kind: 'answer', answer: djangoErrorPage(req, 400, 'view') };
  const params = pyParseQsl(query);
  const negotiated = negotiate(header(req, 'accept'), lastValue(params, 'format') || null);
  // A failed negotiation is rendered by the first renderer: plain compact JSON.
  const forced: ViewContext = {
    req,
    target,
    host,
    options,
    renderer: JSON_RENDERER,
    acceptedMediaType: JSON_RENDERER.mediaType,
    params,
  };
  if (negotiated.kind === 'unknown-format')
    return { kind: 'answer', answer: apiError(forced, 404, 'Not found.') };
  if (negotiated.kind === 'not-acceptable') {
    const answer = apiError(forced, 406, 'Could not satisfy the request Accept header.');
    return { kind: 'answer', answer };
  }
  const view: ViewContext = { ...forced, ...negotiated };
  // No authentication classes: the upstream authenticates nobody, so credentials change nothing.
  const method = req.method.toUpperCase();
  if (method === 'OPTIONS') return { kind: 'options', view };
  if (method === 'GET' || method === 'HEAD') return { kind: 'list', view };
  return { kind: 'answer', answer: apiError(view, 405, `Method "${method}" not allowed.`) };
}

/** QueryDict.get(): the last value given for `key`. */
export function lastValue(params: readonly [string, string][], key: string): string | undefined {
  let found: string | undefined;
  for (const [name, value] of params) if (name === key) found = value;
  return found;
}

/** DRF Response's own headers, before Django's middleware adds its own. */
export function drfHeaders(renderer: Renderer): [string, string][] {
  return [
    ['Content-Type', renderer.contentType],
    ['Vary', 'Accept'],
    ['Allow', ALLOW],
  ];
}

const indents = new Map<string, number | null>();

/** JSONRenderer.get_indent: `indent=N` in the accepted type, clamped to 0..8, 0 meaning none. */
export function indentOf(acceptedMediaType: string): number | null {
  let indent = indents.get(acceptedMediaType);
  if (indent === undefined) {
    indent = computeIndent(acceptedMediaType);
    if (indents.size >= 512) indents.clear();
    indents.set(acceptedMediaType, indent);
  }
  return indent;
}

function computeIndent(acceptedMediaType: string): number | null {
  let raw: string | undefined;
  try {
    raw = parseHeaderParameters(acceptedMediaType).params.get('indent');
  } catch {
    return null;
  }
  const value = raw === undefined ? null : parsePythonInt(raw);
  if (value === null) return null;
  const clamped = value > 8n ? 8 : value < 0n ? 0 : Number(value);
  return clamped === 0 ? null : clamped;
}

/** The view's renderer applied to `data`. */
export function render(view: ViewContext, status: number, data: JsonValue): Buffer {
  if (view.renderer.format === 'api') {
    return renderDataHtml(status, data, { method: view.req.method, url: view.req.url });
  }
  return Buffer.from(pyJsonDumps(data, indentOf(view.acceptedMediaType)));
}

/** An APIException's answer: `{"detail": ...}` rendered as negotiated. */
export function apiError(view: ViewContext, status: number, detail: string): DrfResponse {
  return djangoAnswer(view.req, status, drfHeaders(view.renderer), [render(view, status, { detail })]);
}

/** The OPTIONS answer: SimpleMetadata's body, captured compact bytes served as they are. */
export function optionsAnswer(view: ViewContext, compact: Buffer, value: JsonValue | null): DrfResponse {
  const plainJson = view.renderer.format === 'json' && indentOf(view.acceptedMediaType) === null;
  const body = plainJson || value === null ? compact : render(view, 200, value);
  return djangoAnswer(view.req, 200, drfHeaders(view.renderer), [body]);
}

export { DjangoServerError };
