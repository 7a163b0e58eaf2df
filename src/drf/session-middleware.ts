import type { DrfRequest, DrfResponse } from './answer.js';
import { pyStrip } from './negotiation.js';

/**
 * Django 3.2's SessionMiddleware as the upstream runs it (between SecurityMiddleware and
 * CommonMiddleware, Django's default place), in front of a view that never reads the session.
 *
 * Such a request's session is never loaded, so the middleware changes an answer in one case only:
 * the request carries a `sessionid` cookie that cannot be a session key (empty, or shorter than 8
 * characters: `SessionBase._validate_session_key`). The session then counts as empty
 * (`is_empty()`), and `process_response` deletes the browser's cookie and adds `Cookie` to Vary,
 * whatever the method, format or status. A well-formed key is never looked up (the view does not
 * touch the session), so it changes nothing.
 */

const SESSION_COOKIE_NAME = 'sessionid';

/** `response.delete_cookie(SESSION_COOKIE_NAME, path='/', domain=None, samesite='Lax')`, as SimpleCookie writes it. */
const DELETE_SESSION_COOKIE: [string, string] = [
  'Set-Cookie',
  `${SESSION_COOKIE_NAME}=""; expires=Thu, 01 Jan 1970 00:00:00 GMT; Max-Age=0; Path=/; SameSite=Lax`,
];

// http.cookies._unquote: an octal escape (\012) or a backslash before any character but a newline.
const QUOTED_ESCAPE = /\\(?:([0-3][0-7][0-7])|([^\n]))/g;

/** Python's `http.cookies._unquote`: a value in double quotes loses them and its escapes. */
function unquote(value: string): string {
  if (value.length < 2 || !value.startsWith('"') || !value.endsWith('"')) return value;
  return value
    .slice(1, -1)
    .replace(QUOTED_ESCAPE, (_, octal: string | undefined, char: string | undefined) =>
      octal !== undefined ? String.fromCharCode(parseInt(octal, 8)) : (char ?? ''),
    );
}

/**
 * The session cookie's value as `request.COOKIES` holds it (`django.http.cookie.parse_cookie`:
 * chunks split on `;`, a chunk without `=` a value of the empty name, the last of a repeated name
 * kept), or undefined without one. gunicorn joins repeated Cookie headers with `,`, which is why a
 * second header's cookies end up inside the first one's last value.
 */
function sessionCookie(cookieHeader: string): string | undefined {
  let found: string | undefined;
  for (const chunk of cookieHeader.split(';')) {
    const equals = chunk.indexOf('=');
    const key = equals === -1 ? '' : pyStrip(chunk.slice(0, equals));
    if (key === SESSION_COOKIE_NAME) found = unquote(pyStrip(chunk.slice(equals + 1)));
  }
  return found;
}

/** `patch_vary_headers(response, ('Cookie',))`, the header kept in its place or added where the middleware runs. */
function withVaryCookie(headers: readonly [string, string][]): [string, string][] {
  const at = headers.findIndex(([name]) => name.toLowerCase() === 'vary');
  if (at === -1) {
    // Added by SessionMiddleware's process_response, which runs before SecurityMiddleware's.
    const security = headers.findIndex(([name]) => name === 'X-Content-Type-Options');
    const out = [...headers];
    out.splice(security === -1 ? out.length : security, 0, ['Vary', 'Cookie']);
    return out;
  }
  const [name, value] = headers[at] ?? ['Vary', ''];
  const present = value.split(/\s*,\s*/).filter((h) => h !== '');
  const lower = new Set(present.map((h) => h.toLowerCase()));
  if (lower.has('cookie')) return [...headers];
  const patched = lower.has('*') ? '*' : [...present, 'Cookie'].join(', ');
  const out = [...headers];
  out[at] = [name, patched];
  return out;
}

/** The answer as it leaves SessionMiddleware (cookies go last: Django's WSGI handler appends them). */
export function afterSessionMiddleware(req: Pick<DrfRequest, 'headers'>, answer: DrfResponse): DrfResponse {
  const cookie = req.headers.cookie;
  if (cookie === undefined) return answer;
  const key = sessionCookie(Array.isArray(cookie) ? cookie.join(',') : cookie);
  if (key === undefined || key.length >= 8) return answer;
  return { ...answer, headers: [...withVaryCookie(answer.headers), DELETE_SESSION_COOKIE] };
}
