/**
 * A seeded mix of raw requests for the differential test: every value below is something a client
 * can put on the wire that node's and gunicorn's HTTP parsers both accept.
 */

import { Rng } from '../../../src/simulated-upstream/prng.js';

export interface RawRequestSpec {
  method: string;
  target: string;
  /** Header lines, latin-1 text (one char per byte). */
  headers: [string, string][];
}

/** The project's one PRNG (the simulated upstream's mulberry32), as a bare function. */
export function seededRandom(seed: number): () => number {
  const rng = new Rng(seed);
  return () => rng.next();
}

const LIST = '/api/model/team-block-coworker/list/';
const PATHS = [
  ...Array<string>(12).fill(LIST),
  '/api/model/team-block-coworker/list',
  '/api/model/team-block-coworker/%6Cist/',
  '/api/model/team-block-coworker/lis%74',
  '/api/model/team-block-coworker/list//',
  '/api/model/team-block-coworker/LIST/',
  '/api/model/team-block-coworker/list/%2E',
  '/api%2Fmodel/team-block-coworker/list/',
  '/api/model/team-block-coworker/list%2F',
  '/api/model/team-block-coworker/list/extra',
  '/api/model/team-block-coworker/',
  '/',
  '/nope',
  '/%FF%FE',
  '/caf%C3%A9/',
];

const PAGES = [
  '1',
  '2',
  '3',
  '4',
  '5',
  '0',
  '-1',
  'last',
  'Last',
  'LAST',
  '+2',
  '%2B2',
  '%202',
  '2%20',
  '+',
  '%2B',
  '2_0',
  '1_',
  '_1',
  '1__0',
  '0_2',
  '%D9%A3',
  '%EF%BC%92',
  '%E0%A5%A8',
  '%F0%9D%9F%91',
  '1e1',
  '1.0',
  '0x1',
  '',
  '%20%203%20',
  '%E2%80%833',
  '%EF%BB%BF1',
  '%C2%A01',
  '%1C1',
  '%C2%851',
  '00003',
  'abc',
  '999999999999999999999999',
  '%',
  '%zz',
  '3%00',
  '%2D1',
  '-0',
  '%E3%80%802',
  '2%0A',
  '%0B2',
  '1%E2%80%A8',
  '١%',
  '%C2%B2',
];

/** Query parameters DRF must keep in next/previous, odd spellings and escapes included. */
export const EXTRA_PARAMS = [
  'a=1',
  'a=2',
  'z',
  '=x',
  'b=%zz+y',
  '%C3%A9=1',
  'q=a%2Bb',
  'x=%F0%9F%98%80',
  '%FF=1',
  'k=%ED%A0%80',
  ';a=1',
  'x=1;y=2',
  'u={|}',
  'v=^`',
  "w='~*!$()",
  'c=%22%3C%3E',
  's=a+b',
  'AB=1',
  'ab=2',
  '_=3',
  'e=',
  'f==',
  '%00=1',
  'page_size=2',
  'format',
  'g=%E2%80%A8',
  'h=%5C',
  'i="quoted"',
  'j=<tag>',
  'k=%7E',
  '~=1',
  'l=%C3',
  '%F0%9F%98%80=emoji',
  '%EF%BF%BD=r',
  'm=a%26b',
  'n=%3D',
];

const FORMATS = ['json', 'api', 'xml', 'JSON', '', 'json%20', 'html'];

const ACCEPTS = [
  undefined,
  undefined,
  undefined,
  undefined,
  '*/*',
  'application/json',
  'text/html',
  'application/xml',
  'application/json; indent=4',
  'application/json;indent=2',
  'application/json; indent=0',
  'application/json; indent=-3',
  'application/json; indent=12',
  'application/json; indent=abc',
  'application/json; indent="3"',
  'application/*',
  'application/*;indent=3',
  '*/*;indent=2',
  '*/*; q=0.8',
  'text/*',
  'text/html, application/json',
  'text/html;q=0.1, application/json;q=0.9',
  'application/xml, */*',
  'Application/JSON',
  'application/json ; indent = 4',
  'application/json;q=0',
  '*',
  '',
  'application',
  'json',
  'application/json;charset=utf-8',
  'text/plain',
  'image/*',
  'application/json, text/html; indent=4',
  'application/json; indent=4; x="a;b"',
  'text/html; indent=4',
  '*/json',
  'application/json;indent=1_0',
  'application/json;indent= +3',
  'application/json; INDENT=5',
  'appl\xe9cation/json',
  'application/json; \xe9=1',
  'application/json; x="\xe9"',
  "application/json; indent*=utf-8''3",
  "application/json; indent*=bogus''%33",
  "application/json; indent*=utf-8''%33",
  'application/json,',
  ',,',
  'text/html;level=1',
  '*/*;indent=9',
  'application/json; indent=\xb2',
  'application/json; indent=\xa05',
  'text/xml, image/png',
];

const HOSTS = [
  ...Array<string | undefined>(10).fill('127.0.0.1:8765'),
  'example.com',
  'EXAMPLE.com:8080',
  '[::1]:8000',
  '[::1]',
  '[1:2]',
  '[::ffff:1.2.3.4]',
  '[::1.2.3.04]',
  'bad_host',
  'example.com.',
  '.',
  'localhost:',
  'a:b',
  'h:80:90',
  'xn--caf-dma.example',
  '[0:0:0:0:0:0:0:1]:1',
  '[1:2:3:4:5:6:7:8:9]',
  'MiXeD.Case.Host',
];

const METHODS = [
  ...Array<string>(14).fill('GET'),
  'HEAD',
  'HEAD',
  'HEAD',
  'OPTIONS',
  'OPTIONS',
  'POST',
  'PUT',
  'PATCH',
  'DELETE',
  'TRACE',
  'PROPFIND',
];

const AUTHS = [
  'Basic',
  'Basic abc',
  'Basic YTpi',
  'Bearer token',
  'Basic YTpi extra',
  'basic YQ==',
  'Basic ====',
  'Basic Y',
];

const FORWARDED_HOSTS = ['proxy.example', 'PROXY.example:8443', 'bad_host', '[::1]:9', '[1:2]', 'a, b'];
const FORWARDED_PROTOS = ['https', 'http', 'HTTPS', 'https, http', ''];

/** Fixed cases every run includes: Django's 1000-field limit on either side of the line. */
export function boundaryRequests(): RawRequestSpec[] {
  const host: [string, string] = ['Host', '127.0.0.1:8765'];
  const list = '/api/model/team-block-coworker/list/';
  return [
    { method: 'GET', target: `${list}?${'&'.repeat(999)}page=2`, headers: [host] },
    { method: 'GET', target: `${list}?${'&'.repeat(1000)}page=2`, headers: [host] },
    { method: 'GET', target: `${list.slice(0, -1)}?${'&'.repeat(1000)}`, headers: [host] },
    { method: 'GET', target: `/nope?${'&'.repeat(1000)}`, headers: [host] },
  ];
}

export function generateRequests(count: number, seed: number, proxyHeaders = false): RawRequestSpec[] {
  const random = seededRandom(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)] as T;
  const specs: RawRequestSpec[] = [];
  for (let i = 0; i < count; i += 1) {
    const params: string[] = [];
    const roll = random();
    if (roll < 0.6) params.push(`page=${pick(PAGES)}`);
    if (random() < 0.15) params.push(`page=${pick(PAGES)}`);
    if (random() < 0.12) params.push(`format=${pick(FORMATS)}`);
    const extras = random() < 0.35 ? 1 + Math.floor(random() * 3) : 0;
    for (let e = 0; e < extras; e += 1)
      params.splice(Math.floor(random() * (params.length + 1)), 0, pick(EXTRA_PARAMS));
    if (random() < 0.05) params.push('');
    for (let p = params.length - 1; p > 0; p -= 1) {
      const j = Math.floor(random() * (p + 1));
      [params[p], params[j]] = [params[j] as string, params[p] as string];
    }
    let query = params.length > 0 || random() < 0.03 ? `?${params.join('&')}` : '';
    if (random() < 0.03) query += '#frag';
    const headers: [string, string][] = [];
    const host = random() < 0.85 ? '127.0.0.1:8765' : pick(HOSTS);
    if (host !== undefined) headers.push(['Host', host]);
    const accept = pick(ACCEPTS);
    if (accept !== undefined) headers.push(['Accept', accept]);
    if (random() < 0.05) headers.push(['Authorization', pick(AUTHS)]);
    if (random() < (proxyHeaders ? 0.6 : 0.05)) headers.push(['X-Forwarded-Host', pick(FORWARDED_HOSTS)]);
    if (random() < (proxyHeaders ? 0.5 : 0.05)) headers.push(['X-Forwarded-Proto', pick(FORWARDED_PROTOS)]);
    specs.push({ method: pick(METHODS), target: pick(PATHS) + query, headers });
  }
  return specs;
}

export function toRawRequest(spec: RawRequestSpec): Buffer {
  const lines = [`${spec.method} ${spec.target} HTTP/1.1`, ...spec.headers.map(([n, v]) => `${n}: ${v}`)];
  const hasBody = ['POST', 'PUT', 'PATCH'].includes(spec.method);
  if (hasBody) lines.push('Content-Type: application/json', 'Content-Length: 2');
  lines.push('Connection: close', '', hasBody ? '{}' : '');
  return Buffer.from(lines.join('\r\n'), 'latin1');
}
