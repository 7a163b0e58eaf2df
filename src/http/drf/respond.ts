import { createHash } from 'node:crypto';
import { LIST_PATH } from '../../upstream/contract.js';
import { basicAuthFailure } from './basic-auth.js';
import { renderDataHtml, renderListHtml } from './browsable-html.js';
import {
  BAD_REQUEST_PAGE,
  DJANGO_DEFAULT_CONTENT_TYPE,
  DJANGO_ERROR_CONTENT_TYPE,
  NOT_FOUND_PAGE,
  SERVER_ERROR_PAGE,
} from './django-pages.js';
import { DjangoServerError, parseHeaderParameters } from './media-type.js';
import { JSON_RENDERER, negotiate, type Renderer } from './negotiation.js';
import { parsePythonInt } from './python-int.js';
import { pyJsonDumps, pyJsonString, type JsonValue } from './python-json.js';
import { decodeQueryBytes, escapeUriPath, iriToUri, pyParseQsl, rewriteQuery } from './python-url.js';
import { isUrlsplitSafeHost, isValidDjangoHost, splitTarget, type RequestTarget } from './request-target.js';
import type { PreparedSnapshot } from './snapshot.js';

export interface DrfRequest {
  method: string;
  /** Raw request-target: path + '?' + query, as on the wire. */
  url: string;
  /** node's lower-cased IncomingHttpHeaders. */
  headers: Readonly<Record<string, string | string[] | undefined>>;
}

export interface DrfOptions {
  trustProxyHeaders: boolean;
  publicBaseUrl: string | null;
  cacheControl: string | null;
}

export interface DrfResponse {
  status: number;
  headers: [string, string][];
  /**
   * Empty for HEAD; a HEAD answer then carries the GET body's `Content-Length` in `headers`, the
   * only case where a Content-Length header is emitted (the caller cannot know it).
   */
  body: Buffer;
}

export const LIST_PATH_NO_SLASH = '/api/model/team-block-coworker/list';

const ALLOW = 'GET, HEAD, OPTIONS';
// Django's DATA_UPLOAD_MAX_NUMBER_FIELDS: more query fields make QueryDict raise (a 400).
const MAX_QUERY_FIELDS = 1000;

/** Whether `url` is for respondList: the list path with or without its slash, as Django decodes it. */
export function isListPath(url: string): boolean {
  const { pathInfo } = splitTarget(url);
  return pathInfo === LIST_PATH || pathInfo === LIST_PATH_NO_SLASH;
}

function header(req: DrfRequest, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

function answer(req: DrfRequest, status: number, headers: [string, string][], body: Buffer): DrfResponse {
  if (req.method.toUpperCase() !== 'HEAD') return { status, headers, body };
  const length: [string, string][] = status === 304 ? [] : [['Content-Length', String(body.length)]];
  return { status, headers: [...headers, ...length], body: Buffer.alloc(0) };
}

function djangoPage(req: DrfRequest, status: number, body: Buffer): DrfResponse {
  return answer(req, status, [['Content-Type', DJANGO_ERROR_CONTENT_TYPE]], body);
}

/** The host Django's `get_host()` reads, or undefined when the request has none. */
function rawHost(req: DrfRequest, options: Pick<DrfOptions, 'trustProxyHeaders'>): string | undefined {
  const forwarded = options.trustProxyHeaders ? header(req, 'x-forwarded-host') : undefined;
  return forwarded ?? header(req, 'host');
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
  if (host !== undefined && !isValidDjangoHost(host)) return djangoPage(req, 400, BAD_REQUEST_PAGE);
  return djangoPage(req, 404, NOT_FOUND_PAGE);
}

/**
 * Answers any request whose path is the list path (with or without trailing slash) as DRF 3.14 on
 * Django 3.2 would; snapshot null → 503 `{"detail":"The mirror has no snapshot yet: ..."}`.
 */
export function respondList(
  req: DrfRequest,
  snapshot: PreparedSnapshot | null,
  options: DrfOptions,
): DrfResponse {
  const target = splitTarget(req.url);
  // CommonMiddleware: get_host() first, then APPEND_SLASH, before any view runs.
  const host = rawHost(req, options);
  if (host !== undefined && !isValidDjangoHost(host)) return djangoPage(req, 400, BAD_REQUEST_PAGE);
  if (target.pathInfo === LIST_PATH_NO_SLASH) return redirectWithSlash(req, target);
  if (target.pathInfo !== LIST_PATH) return djangoPage(req, 404, NOT_FOUND_PAGE);
  try {
    return respondView(req, target, host, snapshot, options);
  } catch (error) {
    if (error instanceof DjangoServerError) return djangoPage(req, 500, SERVER_ERROR_PAGE);
    throw error;
  }
}

function redirectWithSlash(req: DrfRequest, target: RequestTarget): DrfResponse {
  const query = target.query === '' ? '' : `?${iriToUri(target.query)}`;
  const location = iriToUri(`${escapeUriPath(target.pathInfo)}/${query}`);
  return answer(
    req,
    301,
    [
      ['Content-Type', DJANGO_DEFAULT_CONTENT_TYPE],
      ['Location', location],
    ],
    Buffer.alloc(0),
  );
}

interface ViewContext {
  req: DrfRequest;
  target: RequestTarget;
  host: string | undefined;
  options: DrfOptions;
  renderer: Renderer;
  acceptedMediaType: string;
}

/** DRF's APIView.dispatch: negotiation, authentication, then the method handler. */
function respondView(
  req: DrfRequest,
  target: RequestTarget,
  host: string | undefined,
  snapshot: PreparedSnapshot | null,
  options: DrfOptions,
): DrfResponse {
  const query = decodeQueryBytes(target.query);
  if (query !== '' && query.split('&').length > MAX_QUERY_FIELDS)
    return djangoPage(req, 400, BAD_REQUEST_PAGE);
  const params = pyParseQsl(query);
  const negotiated = negotiate(header(req, 'accept'), lastValue(params, 'format') || null);
  // A failed negotiation is rendered by the first renderer: plain compact JSON.
  const forced = {
    req,
    target,
    host,
    options,
    renderer: JSON_RENDERER,
    acceptedMediaType: JSON_RENDERER.mediaType,
  };
  if (negotiated.kind === 'unknown-format') return apiError(forced, 404, 'Not found.');
  if (negotiated.kind === 'not-acceptable') {
    return apiError(forced, 406, 'Could not satisfy the request Accept header.');
  }
  const ctx: ViewContext = { ...forced, ...negotiated };
  const authFailure = basicAuthFailure(header(req, 'authorization'));
  if (authFailure !== null) return apiError(ctx, 403, authFailure);
  const method = req.method.toUpperCase();
  if (method === 'OPTIONS' || method === 'GET' || method === 'HEAD') {
    if (snapshot === null)
      return apiError(ctx, 503, 'The mirror has no snapshot yet: no sync has succeeded.');
    if (method === 'OPTIONS') return optionsResponse(ctx, snapshot);
    return listResponse(ctx, params, snapshot);
  }
  return apiError(ctx, 405, `Method "${method}" not allowed.`);
}

/** QueryDict.get(): the last value given for `key`. */
function lastValue(params: readonly [string, string][], key: string): string | undefined {
  let found: string | undefined;
  for (const [name, value] of params) if (name === key) found = value;
  return found;
}

function drfHeaders(renderer: Renderer): [string, string][] {
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

function render(ctx: ViewContext, status: number, data: JsonValue): Buffer {
  if (ctx.renderer.format === 'api') return renderDataHtml(status, data);
  return Buffer.from(pyJsonDumps(data, indentOf(ctx.acceptedMediaType)));
}

function apiError(ctx: ViewContext, status: number, detail: string): DrfResponse {
  return answer(ctx.req, status, drfHeaders(ctx.renderer), render(ctx, status, { detail }));
}

function optionsResponse(ctx: ViewContext, snapshot: PreparedSnapshot): DrfResponse {
  const { compact, value } = snapshot.options;
  const plainJson = ctx.renderer.format === 'json' && indentOf(ctx.acceptedMediaType) === null;
  // The captured body is served verbatim; only an indented or HTML answer needs it re-rendered.
  const body = plainJson || value === null ? compact : render(ctx, 200, value);
  return answer(ctx.req, 200, drfHeaders(ctx.renderer), body);
}

/** Django's `get_full_path()` + `build_absolute_uri()` for the list path, without the query. */
function linkPrefix(ctx: ViewContext): string {
  if (ctx.options.publicBaseUrl !== null) return ctx.options.publicBaseUrl.replace(/\/+$/, '') + LIST_PATH;
  const forwardedProto = ctx.options.trustProxyHeaders ? header(ctx.req, 'x-forwarded-proto') : undefined;
  const scheme = forwardedProto === undefined ? 'http' : forwardedProto === 'https' ? 'https' : 'http';
  // Without a Host header Django falls back to the server's name and port, which are not known here.
  const host = ctx.host ?? 'localhost';
  if (!isUrlsplitSafeHost(host)) throw new DjangoServerError(`urlsplit rejects host ${host}`);
  return `${scheme}://${host}${LIST_PATH}`;
}

function pageLink(ctx: ViewContext, page: number): string {
  const query = rewriteQuery(iriToUri(ctx.target.query), 'page', page === 1 ? null : String(page));
  return linkPrefix(ctx) + (query === '' ? '' : `?${query}`);
}

/** PageNumberPagination's page: 'last', or Python int() within 1..num_pages; null → Invalid page. */
export function resolvePage(value: string | undefined, numPages: number): number | null {
  if (value === undefined) return 1;
  if (value === 'last') return numPages;
  const n = parsePythonInt(value);
  if (n === null || n < 1n || n > BigInt(numPages)) return null;
  return Number(n);
}

function listResponse(
  ctx: ViewContext,
  params: readonly [string, string][],
  snapshot: PreparedSnapshot,
): DrfResponse {
  const page = resolvePage(lastValue(params, 'page'), snapshot.numPages);
  if (page === null) return apiError(ctx, 404, 'Invalid page.');
  const next = page < snapshot.numPages ? pageLink(ctx, page + 1) : null;
  const previous = page > 1 ? pageLink(ctx, page - 1) : null;
  const indent = ctx.renderer.format === 'json' ? indentOf(ctx.acceptedMediaType) : null;
  const etag = entityTag(snapshot, page, ctx.renderer, indent, next, previous);
  const extra = cacheHeaders(ctx.options, snapshot, etag);
  const method = ctx.req.method.toUpperCase();
  if (matchesIfNoneMatch(header(ctx.req, 'if-none-match'), etag) && (method === 'GET' || method === 'HEAD')) {
    return answer(ctx.req, 304, [['Vary', 'Accept'], ['Allow', ALLOW], ...extra], Buffer.alloc(0));
  }
  const body = listBody(snapshot, page, next, previous, ctx.renderer, indent);
  return answer(ctx.req, 200, [...drfHeaders(ctx.renderer), ...extra], body);
}

function listBody(
  snapshot: PreparedSnapshot,
  page: number,
  next: string | null,
  previous: string | null,
  renderer: Renderer,
  indent: number | null,
): Buffer {
  const entries = snapshot.entryValues.slice((page - 1) * snapshot.pageSize, page * snapshot.pageSize);
  if (renderer.format === 'api') {
    return renderListHtml({
      count: snapshot.count,
      page,
      numPages: snapshot.numPages,
      next,
      previous,
      entries,
    });
  }
  if (indent !== null) {
    return Buffer.from(pyJsonDumps({ count: snapshot.count, next, previous, results: [...entries] }, indent));
  }
  const link = (url: string | null): string => (url === null ? 'null' : pyJsonString(url));
  const head = `{"count":${snapshot.count},"next":${link(next)},"previous":${link(previous)},`;
  return Buffer.concat([Buffer.from(head), snapshot.pageTails[page - 1] ?? Buffer.alloc(0)]);
}

function entityTag(
  snapshot: PreparedSnapshot,
  page: number,
  renderer: Renderer,
  indent: number | null,
  next: string | null,
  previous: string | null,
): string {
  const hash = createHash('sha1')
    .update([snapshot.id, page, renderer.format, indent ?? '', next ?? '', previous ?? ''].join('\0'))
    .digest('base64url');
  return `"${hash}"`;
}

function cacheHeaders(options: DrfOptions, snapshot: PreparedSnapshot, etag: string): [string, string][] {
  const headers: [string, string][] = [
    ['ETag', etag],
    ['Last-Modified', snapshot.lastModified],
  ];
  if (options.cacheControl !== null) headers.push(['Cache-Control', options.cacheControl]);
  headers.push(['X-Mirror-Fetched-At', snapshot.fetchedAtIso]);
  return headers;
}

/** RFC 9110 If-None-Match: weak comparison, `*` matches any current representation. */
function matchesIfNoneMatch(value: string | undefined, etag: string): boolean {
  if (value === undefined) return false;
  return value.split(',').some((tag) => {
    const t = tag.trim();
    return t === '*' || (t.startsWith('W/') ? t.slice(2) : t) === etag;
  });
}
