import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { comparedHeaders, goldenEntries, loadGoldenCases } from '../../helpers/golden-files.js';
import { sendRaw, type RawResponse } from './raw-http.js';
import { startServerPair, type ServerPair } from './server-pair.js';
import { missing, referenceDrf } from '../../helpers/requirements.js';

/**
 * What browsers, fetch(), curl, Python requests and a reverse proxy on the same host send, each
 * answered by the real DRF site (gunicorn 20.1 with its defaults) and by the mirror's list
 * endpoint as `buildServer` mounts it. Links naming the server's own port are compared with the
 * port written as PORT.
 */

const drf = referenceDrf();
const LIST = '/api/model/team-block-coworker/list/';
const HOST = 'Host: 127.0.0.1:8765';

interface Case {
  name: string;
  head: string[];
}

const bigCookie = (n: number): string => `Cookie: c${n}=${'v'.repeat(6000)}`;

const CASES: Case[] = [
  {
    name: 'valid Basic credentials (browser-cached, nginx auth_basic)',
    head: [`GET ${LIST} HTTP/1.1`, HOST, 'Authorization: Basic dXNlcjpwYXNz'],
  },
  {
    name: 'malformed Basic credentials',
    head: [`GET ${LIST}?page=2 HTTP/1.1`, HOST, 'Authorization: Basic !!!'],
  },
  { name: 'Basic without credentials', head: [`GET ${LIST} HTTP/1.1`, HOST, 'Authorization: Basic'] },
  { name: 'Bearer token', head: [`GET ${LIST} HTTP/1.1`, HOST, 'Authorization: Bearer abc'] },
  {
    name: 'three 6,000-byte cookies',
    head: [`GET ${LIST}?page=2 HTTP/1.1`, HOST, bigCookie(1), bigCookie(2), bigCookie(3)],
  },
  {
    name: '100 header fields',
    head: [`GET ${LIST} HTTP/1.1`, HOST, ...Array.from({ length: 99 }, (_, i) => `X-H${i}: ${i}`)],
  },
  {
    name: '101 header fields',
    head: [`GET ${LIST} HTTP/1.1`, HOST, ...Array.from({ length: 100 }, (_, i) => `X-H${i}: ${i}`)],
  },
  { name: 'an 8,200-byte header field', head: [`GET ${LIST} HTTP/1.1`, HOST, `X-Big: ${'b'.repeat(8200)}`] },
  { name: 'a 4,100-byte request line', head: [`GET ${LIST}?x=${'a'.repeat(4100)} HTTP/1.1`, HOST] },
  {
    name: 'X-Forwarded-Proto: https from a local proxy',
    head: [`GET ${LIST}?page=2 HTTP/1.1`, HOST, 'X-Forwarded-Proto: https'],
  },
  { name: 'X-Forwarded-Ssl: on', head: [`GET ${LIST}?page=2 HTTP/1.1`, HOST, 'X-Forwarded-Ssl: on'] },
  {
    name: 'X-Forwarded-Protocol: ssl',
    head: [`GET ${LIST}?page=3 HTTP/1.1`, HOST, 'X-Forwarded-Protocol: ssl'],
  },
  { name: 'X-Forwarded-Proto: http', head: [`GET ${LIST}?page=2 HTTP/1.1`, HOST, 'X-Forwarded-Proto: http'] },
  {
    name: 'agreeing scheme headers',
    head: [`GET ${LIST}?page=2 HTTP/1.1`, HOST, 'X-Forwarded-Proto: https', 'X-Forwarded-Ssl: on'],
  },
  {
    name: 'contradictory scheme headers',
    head: [`GET ${LIST}?page=2 HTTP/1.1`, HOST, 'X-Forwarded-Proto: https', 'X-Forwarded-Ssl: off'],
  },
  {
    name: 'X-Forwarded-Proto: https on the 404 path',
    head: ['GET /nope HTTP/1.1', HOST, 'X-Forwarded-Proto: https'],
  },
  { name: 'an unknown method FOO', head: [`FOO ${LIST} HTTP/1.1`, HOST] },
  { name: 'a lower-case get', head: [`get ${LIST}?page=2 HTTP/1.1`, HOST] },
  { name: 'a lower-case head', head: [`head ${LIST} HTTP/1.1`, HOST] },
  { name: 'a mixed-case Options', head: [`Options ${LIST} HTTP/1.1`, HOST] },
  { name: 'PROPFIND', head: [`PROPFIND ${LIST} HTTP/1.1`, HOST] },
  { name: 'an unknown method elsewhere', head: ['BREW /pot HTTP/1.1', HOST] },
  { name: 'Expect: something-else', head: [`GET ${LIST} HTTP/1.1`, HOST, 'Expect: something-else'] },
  { name: 'If-None-Match: *', head: [`GET ${LIST} HTTP/1.1`, HOST, 'If-None-Match: *'] },
  { name: 'If-None-Match: * on HEAD', head: [`HEAD ${LIST}?page=2 HTTP/1.1`, HOST, 'If-None-Match: *'] },
  { name: 'HTTP/1.0 without Host', head: [`GET ${LIST}?page=2 HTTP/1.0`] },
  { name: 'HTTP/1.1 without Host', head: [`GET ${LIST}?page=2 HTTP/1.1`] },
  {
    name: 'HTTP/1.0 without Host, secure from a local proxy',
    head: [`GET ${LIST}?page=2 HTTP/1.0`, 'X-Forwarded-Proto: https'],
  },
  { name: 'the slash redirect', head: [`GET ${LIST.slice(0, -1)}?page=2 HTTP/1.1`, HOST] },
  {
    name: 'browser navigation',
    head: [
      `GET ${LIST} HTTP/1.1`,
      HOST,
      'Accept: text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
      'Sec-Fetch-Mode: navigate',
      'Upgrade-Insecure-Requests: 1',
    ],
  },
  {
    name: 'fetch() with credentials and CORS headers',
    head: [
      `GET ${LIST}?page=2 HTTP/1.1`,
      HOST,
      'Accept: */*',
      'Origin: http://site.example',
      'Sec-Fetch-Mode: cors',
      'Authorization: Basic dXNlcjpwYXNz',
    ],
  },
  {
    name: 'a CORS preflight',
    head: [
      `OPTIONS ${LIST} HTTP/1.1`,
      HOST,
      'Origin: http://site.example',
      'Access-Control-Request-Method: GET',
    ],
  },
  {
    name: 'Python requests',
    head: [
      `GET ${LIST}?page=3 HTTP/1.1`,
      HOST,
      'User-Agent: python-requests/2.31.0',
      'Accept-Encoding: gzip, deflate',
      'Accept: */*',
      'Connection: keep-alive',
    ],
  },
  {
    name: 'an Upgrade: websocket request',
    head: [`GET ${LIST} HTTP/1.1`, HOST, 'Connection: Upgrade', 'Upgrade: websocket'],
  },
  // Django 3.2 splits media type parameters at a `;` after an even count of `"`, escaped ones
  // counted too: here `indent` ends up inside another parameter's name and is not seen.
  {
    name: 'Accept with an escaped quote before indent',
    head: [`GET ${LIST}?page=2 HTTP/1.1`, HOST, 'Accept: application/json; x="a\\"b;c"; indent=2'],
  },
  {
    name: 'OPTIONS, Accept with an escaped quote before indent',
    head: [`OPTIONS ${LIST} HTTP/1.1`, HOST, 'Accept: application/json; x="a\\"b;c"; indent=2'],
  },
  // The site runs SessionMiddleware but no CsrfViewMiddleware or authentication, and its view never
  // reads the session: a session id that cannot be a key (empty, under 8 characters) is deleted with
  // Vary: Cookie on every answer Django gives; a well-formed one and a CSRF token change nothing.
  { name: 'a short session cookie', head: [`GET ${LIST} HTTP/1.1`, HOST, 'Cookie: sessionid=abc'] },
  {
    name: 'a short session cookie on HEAD, browsable API',
    head: [`HEAD ${LIST} HTTP/1.1`, HOST, 'Accept: text/html', 'Cookie: sessionid=abc'],
  },
  {
    name: 'a session cookie of a logged-in admin',
    head: [
      `GET ${LIST}?page=2 HTTP/1.1`,
      HOST,
      'Accept: text/html',
      'Cookie: csrftoken=PvZ3lU0vKq1cFq5zQ2mY8wX7rT6sD4eA; sessionid=k3j4h5g6f7d8s9a0q1w2e3r4t5y6u7i8',
    ],
  },
  {
    name: 'an empty session cookie',
    head: [`GET ${LIST} HTTP/1.1`, HOST, 'Accept: text/html', 'Cookie: sessionid='],
  },
  {
    name: 'a CSRF cookie, browsable API',
    head: [`GET ${LIST} HTTP/1.1`, HOST, 'Accept: text/html', 'Cookie: csrftoken=abc'],
  },
  {
    name: 'an 8-character session cookie',
    head: [`GET ${LIST} HTTP/1.1`, HOST, 'Cookie: sessionid=abcdefgh'],
  },
  { name: 'a 7-character session cookie', head: [`GET ${LIST} HTTP/1.1`, HOST, 'Cookie: sessionid=abcdefg'] },
  {
    name: 'a quoted session cookie with escapes',
    head: [`GET ${LIST} HTTP/1.1`, HOST, 'Cookie: sessionid="a\\bc\\012d"'],
  },
  {
    name: 'the last of two session cookies',
    head: [`GET ${LIST} HTTP/1.1`, HOST, 'Cookie: sessionid=k3j4h5g6f7d8s9a0; theme=dark;sessionid=x'],
  },
  {
    name: 'two Cookie header fields',
    head: [`GET ${LIST} HTTP/1.1`, HOST, 'Cookie: sessionid=abc', 'Cookie: theme=dark'],
  },
  {
    name: 'a session cookie with spaces around',
    head: [`GET ${LIST} HTTP/1.1`, HOST, 'Cookie: a=1 ;  sessionid =  abc  ; b=2'],
  },
  { name: 'a cookie without a value', head: [`GET ${LIST} HTTP/1.1`, HOST, 'Cookie: sessionid'] },
  {
    name: 'a short session cookie on OPTIONS',
    head: [`OPTIONS ${LIST} HTTP/1.1`, HOST, 'Cookie: sessionid=abc'],
  },
  {
    name: 'a short session cookie on POST',
    head: [`POST ${LIST} HTTP/1.1`, HOST, 'Content-Length: 0', 'Cookie: sessionid=abc'],
  },
  {
    name: 'a short session cookie, page not found',
    head: [`GET ${LIST}?page=99 HTTP/1.1`, HOST, 'Cookie: sessionid=abc'],
  },
  {
    name: 'a short session cookie, not acceptable',
    head: [`GET ${LIST} HTTP/1.1`, HOST, 'Accept: application/xml', 'Cookie: sessionid=abc'],
  },
  { name: 'a short session cookie, Django 404', head: ['GET /nope HTTP/1.1', HOST, 'Cookie: sessionid=abc'] },
  {
    name: 'a short session cookie, the slash redirect',
    head: [`GET ${LIST.slice(0, -1)}?page=2 HTTP/1.1`, HOST, 'Cookie: sessionid=abc'],
  },
  {
    name: 'a short session cookie, a disallowed host',
    head: [`GET ${LIST} HTTP/1.1`, 'Host: bad_host', 'Cookie: sessionid=abc'],
  },
  { name: 'HEAD, browsable API', head: [`HEAD ${LIST} HTTP/1.1`, HOST, 'Accept: text/html'] },
  {
    name: 'HEAD, browser Accept',
    head: [
      `HEAD ${LIST}?page=3 HTTP/1.1`,
      HOST,
      'Accept: text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
    ],
  },
];

function request(c: Case): Buffer {
  return Buffer.from(`${[...c.head, 'Connection: close'].join('\r\n')}\r\n\r\n`, 'latin1');
}

async function exchange(port: number, c: Case): Promise<RawResponse | string> {
  const isHead = /^head /i.test(c.head[0] ?? '');
  try {
    return await sendRaw(port, request(c), isHead);
  } catch (error) {
    return `no answer: ${(error as Error).message}`;
  }
}

function shown(r: RawResponse | string, port: number): string {
  if (typeof r === 'string') return r;
  // DRF's browsable API page: its HTML is not reproduced, only its status and headers.
  const browsable = comparedHeaders(r.headers).includes('content-type: text/html; charset=utf-8');
  const body = browsable ? '<browsable API page>' : r.body.toString('latin1');
  const text = [String(r.status), ...comparedHeaders(r.headers), body].join('\n');
  return text.replaceAll(`127.0.0.1:${port}`, '127.0.0.1:PORT');
}

describe.skipIf(missing(drf))('real clients: the mirror answers as the DRF site under gunicorn', () => {
  const golden = loadGoldenCases();
  const entries = goldenEntries(golden);
  let pair: ServerPair | undefined;

  beforeAll(async () => {
    pair = await startServerPair(drf.found ?? 'python3', {
      id: 'real-clients',
      entries,
      optionsBody: golden.find((c) => c.name === 'options')?.body.toString('utf8') ?? null,
    });
  });

  afterAll(() => pair?.close());

  it.each(CASES.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const want = shown(await exchange(pair?.referencePort ?? 0, c), pair?.referencePort ?? 0);
    const got = shown(await exchange(pair?.mirrorPort ?? 0, c), pair?.mirrorPort ?? 0);
    expect(got).toBe(want);
  });
});
