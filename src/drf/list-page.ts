import { LIST_PATH } from '../upstream/contract.js';
import { djangoAnswer, type DrfResponse } from './answer.js';
import { renderListHtml } from './browsable-html.js';
import { DjangoServerError } from './media-type.js';
import { parsePythonInt } from './python-int.js';
import { pyJsonDumps, pyJsonString, type JsonValue } from './python-json.js';
import { iriToUri, rewriteQuery } from './python-url.js';
import { isUrlsplitSafeHost } from './request-target.js';
import { apiError, drfHeaders, indentOf, lastValue, requestScheme, type ViewContext } from './view.js';

/** PageNumberPagination.paginate_queryset and get_next_link/get_previous_link, pure. */

/** Django Paginator.num_pages with allow_empty_first_page: an empty listing still has page 1. */
export function numPages(count: number, pageSize: number): number {
  return Math.max(1, Math.ceil(count / pageSize));
}

/** PageNumberPagination's page: 'last', or Python int() within 1..num_pages; null → Invalid page. */
export function resolvePage(value: string | undefined, numPagesValue: number): number | null {
  if (value === undefined) return 1;
  if (value === 'last') return numPagesValue;
  const n = parsePythonInt(value);
  if (n === null || n < 1n || n > BigInt(numPagesValue)) return null;
  return Number(n);
}

/** The page a GET/HEAD names (null: DRF's 404 "Invalid page."). */
export function requestedPage(view: ViewContext, numPagesValue: number): number | null {
  return resolvePage(lastValue(view.params, 'page'), numPagesValue);
}

export function invalidPageAnswer(view: ViewContext): DrfResponse {
  return apiError(view, 404, 'Invalid page.');
}

/** Django's `build_absolute_uri()` of the list path, without the query. */
function linkPrefix(view: ViewContext): string {
  if (view.options.publicBaseUrl !== null) return view.options.publicBaseUrl.replace(/\/+$/, '') + LIST_PATH;
  const scheme = requestScheme(view.req, view.options);
  // Only a caller that gave no server info leaves the host unknown; Django would name its own.
  const host = view.host ?? 'localhost';
  if (!isUrlsplitSafeHost(host)) throw new DjangoServerError(`urlsplit rejects host ${host}`);
  return `${scheme}://${host}${LIST_PATH}`;
}

/** DRF's replace_query_param (page > 1) or remove_query_param (page 1) on the request's URI. */
export function pageLink(view: ViewContext, page: number): string {
  const query = rewriteQuery(iriToUri(view.target.query), 'page', page === 1 ? null : String(page));
  return linkPrefix(view) + (query === '' ? '' : `?${query}`);
}

export interface PageLinks {
  next: string | null;
  previous: string | null;
}

export function neighbourLinks(view: ViewContext, page: number, numPagesValue: number): PageLinks {
  return {
    next: page < numPagesValue ? pageLink(view, page + 1) : null,
    previous: page > 1 ? pageLink(view, page - 1) : null,
  };
}

/** One page's content: compact `"results":[...]}` bytes for the plain answer, values for the others. */
export interface PageContent {
  count: number;
  page: number;
  numPages: number;
  /** `"results":[...]}` in DRF's compact JSON bytes, shared by every answer of the page. */
  tail: Buffer;
  /** The page's entries, for indented JSON and HTML only. */
  values: () => readonly JsonValue[];
}

/** JSONRenderer's indent for this view, or null (HTML and compact JSON). */
export function jsonIndent(view: ViewContext): number | null {
  return view.renderer.format === 'json' ? indentOf(view.acceptedMediaType) : null;
}

/** The page body's chunks: for compact JSON a small head plus the shared tail, never a copy of it. */
export function pageBody(view: ViewContext, content: PageContent, links: PageLinks): Buffer[] {
  const { next, previous } = links;
  if (view.renderer.format === 'api') {
    return [
      renderListHtml({
        count: content.count,
        page: content.page,
        numPages: content.numPages,
        next,
        previous,
        entries: content.values(),
        request: { method: view.req.method, url: view.req.url },
      }),
    ];
  }
  const indent = jsonIndent(view);
  if (indent !== null) {
    const data = { count: content.count, next, previous, results: [...content.values()] };
    return [Buffer.from(pyJsonDumps(data, indent))];
  }
  const link = (url: string | null): string => (url === null ? 'null' : pyJsonString(url));
  const head = `{"count":${content.count},"next":${link(next)},"previous":${link(previous)},`;
  return [Buffer.from(head), content.tail];
}

/** The 200 page answer; `extra` headers (the mirror's validators) follow DRF's own. */
export function pageAnswer(
  view: ViewContext,
  body: readonly Buffer[],
  extra: readonly [string, string][] = [],
): DrfResponse {
  return djangoAnswer(view.req, 200, [...drfHeaders(view.renderer), ...extra], body);
}

export { resultsTail } from './results-tail.js';
