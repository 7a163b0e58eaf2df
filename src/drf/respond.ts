import { createHash } from 'node:crypto';
import { djangoAnswer, djangoErrorPage, type DrfRequest, type DrfResponse } from './answer.js';
import {
  invalidPageAnswer,
  jsonIndent,
  neighbourLinks,
  pageAnswer,
  pageBody,
  requestedPage,
  type PageLinks,
} from './list-page.js';
import { DjangoServerError } from './media-type.js';
import type { PreparedSnapshot } from './snapshot.js';
import {
  ALLOW,
  apiError,
  dispatchList,
  header,
  optionsAnswer,
  type DrfOptions,
  type ViewContext,
} from './view.js';

export type { DrfRequest, DrfResponse } from './answer.js';
export { indentOf, isListPath, LIST_PATH_NO_SLASH, respondDjangoNotFound, type DrfOptions } from './view.js';
export { resolvePage } from './list-page.js';

/**
 * The mirror's list view: any request whose path is the list path (with or without trailing slash)
 * answered as DRF 3.14 on Django 3.2 would from a prepared snapshot, plus the mirror's own
 * validators (ETag, Last-Modified); snapshot null → 503 `{"detail":"The mirror has no snapshot yet: ..."}`.
 */
export function respondList(
  req: DrfRequest,
  snapshot: PreparedSnapshot | null,
  options: DrfOptions,
): DrfResponse {
  try {
    const dispatched = dispatchList(req, options);
    if (dispatched.kind === 'answer') return dispatched.answer;
    const { view } = dispatched;
    if (snapshot === null)
      return apiError(view, 503, 'The mirror has no snapshot yet: no sync has succeeded.');
    if (dispatched.kind === 'options') {
      return optionsAnswer(view, snapshot.options.compact, snapshot.options.value);
    }
    return listResponse(view, snapshot);
  } catch (error) {
    if (error instanceof DjangoServerError) return djangoErrorPage(req, 500);
    throw error;
  }
}

function listResponse(view: ViewContext, snapshot: PreparedSnapshot): DrfResponse {
  const page = requestedPage(view, snapshot.numPages);
  if (page === null) return invalidPageAnswer(view);
  const links = neighbourLinks(view, page, snapshot.numPages);
  const etag = entityTag(snapshot, page, view, links);
  const extra = cacheHeaders(view.options, snapshot, etag);
  if (matchesIfNoneMatch(header(view.req, 'if-none-match'), etag)) {
    return djangoAnswer(view.req, 304, [['Vary', 'Accept'], ['Allow', ALLOW], ...extra], [], 'not-modified');
  }
  const content = {
    count: snapshot.count,
    page,
    numPages: snapshot.numPages,
    tail: snapshot.pageTails[page - 1] ?? Buffer.alloc(0),
    values: () => snapshot.entryValues.slice((page - 1) * snapshot.pageSize, page * snapshot.pageSize),
  };
  return pageAnswer(view, pageBody(view, content, links), extra);
}

function entityTag(snapshot: PreparedSnapshot, page: number, view: ViewContext, links: PageLinks): string {
  const parts = [
    snapshot.id,
    page,
    view.renderer.format,
    jsonIndent(view) ?? '',
    links.next ?? '',
    links.previous ?? '',
  ];
  return `"${createHash('sha1').update(parts.join('\0')).digest('base64url')}"`;
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

/**
 * RFC 9110 If-None-Match, weak comparison, for the mirror's own tags only: `*` is left to the
 * upstream's behaviour, which has no validators and answers 200.
 */
function matchesIfNoneMatch(value: string | undefined, etag: string): boolean {
  if (value === undefined) return false;
  return value.split(',').some((tag) => {
    const t = tag.trim();
    return (t.startsWith('W/') ? t.slice(2) : t) === etag;
  });
}
