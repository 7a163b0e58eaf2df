import { LIST_PATH } from '../upstream/contract.js';

// What DRF 3.14 + Django 3.2 put on the wire for this view; see test/fixtures/drf-golden/.

export const OPTIONS_BODY =
  '{"name":"Team Block Coworker List","description":"","renders":["application/json","text/html"],' +
  '"parses":["application/json","application/x-www-form-urlencoded","multipart/form-data"]}';
export const INVALID_PAGE_BODY = '{"detail":"Invalid page."}';
export const NOT_ACCEPTABLE_BODY = '{"detail":"Could not satisfy the request Accept header."}';
export const ALLOW = 'GET, HEAD, OPTIONS';

// Django's default 404 page with DEBUG=False, for paths outside the list view.
export const DJANGO_NOT_FOUND_HTML =
  '\n<!doctype html>\n<html lang="en">\n<head>\n  <title>Not Found</title>\n</head>\n<body>\n' +
  '  <h1>Not Found</h1><p>The requested resource was not found on this server.</p>\n</body>\n</html>\n';

/**
 * DRF's JSONRenderer: json.dumps(ensure_ascii=False, separators=(',', ':')) then U+2028/U+2029
 * escaped. For strings, booleans, null, integers and arrays/objects of those JSON.stringify writes the
 * same bytes as Python.
 */
export function drfJson(value: unknown): string {
  return JSON.stringify(value).replaceAll('\u2028', '\\u2028').replaceAll('\u2029', '\\u2029');
}

export function methodNotAllowedBody(method: string): string {
  return drfJson({ detail: `Method "${method}" not allowed.` });
}

/** Django Paginator.num_pages with allow_empty_first_page: an empty listing still has page 1. */
export function numPages(count: number, pageSize: number): number {
  return Math.ceil(Math.max(1, count) / pageSize);
}

const PY_INT = /^\s*[+-]?\d+(?:_\d+)*\s*$/;

/**
 * DRF's get_page_number + Django's validate_number: the last `page` value wins, `last` is the last
 * page, Python int() syntax otherwise. Returns null where DRF answers 404 "Invalid page.".
 */
export function parsePageNumber(query: URLSearchParams, pages: number): number | null {
  const raw = query.getAll('page').at(-1);
  // `query_params.get(...) or 1`: a blank value is page 1 too.
  if (raw === undefined || raw === '') return 1;
  if (raw === 'last') return pages;
  if (!PY_INT.test(raw)) return null;
  const number = Number(raw.trim().replaceAll('_', ''));
  return number >= 1 && number <= pages ? number : null;
}

const QUOTE_PLUS_SAFE = /[A-Za-z0-9_.~-]/;

/** Python's urllib.parse.quote_plus (UTF-8, upper-case escapes, space as +). */
export function quotePlus(value: string): string {
  let out = '';
  for (const byte of Buffer.from(value, 'utf8')) {
    const char = String.fromCharCode(byte);
    if (byte === 0x20) out += '+';
    else if (byte < 0x80 && QUOTE_PLUS_SAFE.test(char)) out += char;
    else out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** parse_qs(keep_blank_values=True): keys in first-seen order, every value kept. */
function parseQs(query: URLSearchParams): Map<string, string[]> {
  const dict = new Map<string, string[]>();
  for (const [key, value] of query) {
    const values = dict.get(key);
    if (values) values.push(value);
    else dict.set(key, [value]);
  }
  return dict;
}

function urlencodeSorted(dict: Map<string, string[]>): string {
  const keys = [...dict.keys()].sort();
  return keys
    .flatMap((key) => (dict.get(key) ?? []).map((value) => `${quotePlus(key)}=${quotePlus(value)}`))
    .join('&');
}

/**
 * DRF's replace_query_param / remove_query_param on build_absolute_uri(): other query parameters are
 * kept and re-encoded in sorted order. `page` undefined removes it.
 */
export function pageLink(host: string, query: URLSearchParams, page: number | undefined): string {
  const dict = parseQs(query);
  if (page === undefined) dict.delete('page');
  else dict.set('page', [String(page)]);
  const encoded = urlencodeSorted(dict);
  return `http://${host}${LIST_PATH}${encoded ? `?${encoded}` : ''}`;
}

/** next/previous as DRF's PageNumberPagination writes them. */
export function neighbourLinks(
  host: string,
  query: URLSearchParams,
  page: number,
  pages: number,
): { next: string | null; previous: string | null } {
  return {
    next: page < pages ? pageLink(host, query, page + 1) : null,
    previous:
      page === 1 ? null : page === 2 ? pageLink(host, query, undefined) : pageLink(host, query, page - 1),
  };
}

/** The page envelope in DRF's key order, around an already-rendered results array. */
export function envelope(
  count: number,
  next: string | null,
  previous: string | null,
  resultsJson: string,
): string {
  return `{"count":${count},"next":${drfJson(next)},"previous":${drfJson(previous)},"results":${resultsJson}}`;
}

/**
 * DRF's DefaultContentNegotiation over [JSONRenderer, BrowsableAPIRenderer]: true when some accepted
 * media type is served. The browsable HTML itself is not simulated; such requests get JSON.
 */
export function acceptable(accept: string | undefined): boolean {
  if (accept === undefined || accept.trim() === '') return true;
  return accept.split(',').some((part) => {
    const type = (part.split(';')[0] ?? '').trim().toLowerCase();
    return ['*/*', 'application/*', 'application/json', 'text/*', 'text/html'].includes(type);
  });
}
