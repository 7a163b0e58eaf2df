import { Dice } from './dice.js';
import {
  ACCEPTS,
  AS_OF_BAD,
  AS_OF_GOOD,
  AUTHS,
  EXTRA_PARAMS,
  FORMATS,
  FORWARDED_HOSTS,
  FORWARDED_MISC,
  FORWARDED_PROTOS,
  HOSTS,
  IF_NONE_MATCH,
  LIST_PATHS,
  MISC_HEADERS,
  OPS_PATHS,
  OTHER_PATHS,
  PAGES,
  PATH_ALPHABET,
  pctUtf8,
  QUERY_ALPHABET,
  rawUtf8,
  UNICODE_WORDS,
} from './hostile-values.js';

/** Which part of the service a request aims at. */
export type Family = 'list' | 'mirror-api' | 'ops' | 'other';

/** One raw HTTP request; all text is latin-1 (one char per byte on the wire). */
export interface HostileRequest {
  index: number;
  family: Family;
  method: string;
  target: string;
  /** '' sends a request line without a version (HTTP/0.9 style). */
  version: string;
  headers: [string, string][];
  /** Raw head lines appended after `headers` (only for deliberate breakages). */
  rawLines: string[];
  eol: '\r\n' | '\n';
  body: string;
  /**
   * The HTTP/1.1 syntax rule broken on purpose, or null. Only these requests may be refused by
   * node's own parser (Fastify's clientError 400/431); a well-formed request must reach a handler.
   */
  breakage: string | null;
  /** Sent to the mirror that trusts X-Forwarded-Host/-Proto rather than to the default one. */
  proxied: boolean;
}

export interface GeneratorContext {
  /** uuids present in the synced listing, so some history paths hit real rows. */
  uuids: readonly string[];
}

// The Host most requests carry: the one the reference server's links are built from as well.
export const DEFAULT_HOST = '127.0.0.1:8765';
// node's default --max-http-header-size is 16 KiB for the request line and all headers together.
const HEAD_LIMIT = 16 * 1024;

const METHODS: readonly (readonly [number, string])[] = [
  [60, 'GET'],
  [9, 'HEAD'],
  [6, 'OPTIONS'],
  [4, 'POST'],
  [3, 'PUT'],
  [3, 'DELETE'],
  [3, 'PATCH'],
  [2, 'PROPFIND'],
  [2, 'TRACE'],
  [1, 'PURGE'],
  [1, 'QUERY'],
  [1, 'MKCOL'],
  [1, 'SEARCH'],
];

/** `count` hostile requests, the same ones for the same seed and context. */
export function generateHostileRequests(
  count: number,
  seed: number,
  context: GeneratorContext,
): HostileRequest[] {
  const dice = new Dice(seed);
  const out: HostileRequest[] = [];
  for (let index = 0; index < count; index += 1) out.push(generateOne(dice, index, context));
  return out;
}

function generateOne(dice: Dice, index: number, context: GeneratorContext): HostileRequest {
  const family = dice.weighted<Family>([
    [62, 'list'],
    [18, 'mirror-api'],
    [5, 'ops'],
    [15, 'other'],
  ]);
  const request: HostileRequest = {
    index,
    family,
    method: dice.weighted(METHODS),
    target: targetFor(dice, family, context),
    version: dice.weighted([
      [96, 'HTTP/1.1'],
      [3, 'HTTP/1.0'],
      [0.7, 'HTTP/2.0'],
      [0.3, ''],
    ]),
    headers: headersFor(dice),
    rawLines: [],
    eol: '\r\n',
    body: '',
    breakage: null,
    proxied: dice.chance(0.2),
  };
  addBody(dice, request);
  addConnectionHeaders(dice, request);
  if (dice.chance(0.04)) breakSyntax(dice, request);
  else if (dice.chance(0.005)) request.method = 'CONNECT';
  // Piled-up long values can pass node's header limit without a breakage meant: say so.
  if (request.breakage === null && headSize(request) > HEAD_LIMIT - 1_024)
    request.breakage = 'head near 16 KiB';
  return request;
}

// ---------------------------------------------------------------------------------------------
// Request-targets

function targetFor(dice: Dice, family: Family, context: GeneratorContext): string {
  let target: string;
  switch (family) {
    case 'list':
      target = dice.weighted(LIST_PATHS) + listQuery(dice);
      break;
    case 'mirror-api':
      target = mirrorApiTarget(dice, context);
      break;
    case 'ops':
      target = dice.pick(OPS_PATHS) + (dice.chance(0.3) ? `?${randomQuery(dice)}` : '');
      break;
    case 'other':
      target = otherTarget(dice);
      break;
  }
  // node takes a fragment (RFC 9112 does not) only after a path: not after `*` or a bare authority.
  const originForm = target.startsWith('/');
  if (originForm && dice.chance(0.03)) target += `#${dice.pick(['', 'frag', 'x?page=2', '%zz'])}`;
  if (originForm && dice.chance(0.04)) target = padTarget(dice, target, dice.int(1_000, 8_000));
  return target;
}

function listQuery(dice: Dice): string {
  const params: string[] = [];
  if (dice.chance(0.65)) params.push(`page=${pageValue(dice)}`);
  if (dice.chance(0.15)) params.push(`page=${pageValue(dice)}`);
  if (dice.chance(0.12)) params.push(`format=${dice.pick(FORMATS)}`);
  if (dice.chance(0.1))
    params.push(`as_of=${dice.chance(0.6) ? dice.pick(AS_OF_GOOD) : dice.pick(AS_OF_BAD)}`);
  const extras = dice.chance(0.35) ? dice.int(1, 4) : 0;
  for (let e = 0; e < extras; e += 1) params.push(extraParam(dice));
  dice.shuffle(params);
  if (dice.chance(0.01)) params.push('&'.repeat(dice.pick([998, 999, 1000, 1001, 1500])));
  if (params.length === 0 && !dice.chance(0.05)) return '';
  return `?${params.join('&')}`;
}

function pageValue(dice: Dice): string {
  return dice.weighted<() => string>([
    [70, () => dice.pick(PAGES)],
    [5, () => '9'.repeat(dice.int(20, 4_000))],
    [3, () => `-${'9'.repeat(dice.int(20, 500))}`],
    [3, () => `${dice.int(0, 9)}.${'0'.repeat(dice.int(1, 30))}`],
    [3, () => pctUtf8(dice.pick(['٣', '２', '३', '𝟑', '፫', '௩', '¹', '①']))],
    [
      3,
      () =>
        `${dice.pick(['+', '%20', '%09', '_', '%2B', ''])}${dice.int(1, 9)}${dice.pick(['', '+', '%20', '_'])}`,
    ],
    [2, () => dice.text('0123456789_+-.%eE', dice.int(1, 12))],
    [2, () => pctUtf8(`${dice.pick(UNICODE_WORDS)}${dice.int(1, 6)}`)],
  ])();
}

function extraParam(dice: Dice): string {
  return dice.weighted<() => string>([
    [60, () => dice.pick(EXTRA_PARAMS)],
    [
      15,
      () =>
        `${dice.text('abcxyz_', dice.int(1, 6))}=${dice.text(QUERY_ALPHABET, dice.int(0, 24)).replace(/#/g, '')}`,
    ],
    [10, () => `${pctUtf8(dice.pick(UNICODE_WORDS))}=${pctUtf8(dice.pick(UNICODE_WORDS))}`],
    [
      10,
      () =>
        `x=${dice.pick(['%', '%z', '%zz', '%f', '%ff%fe', '%C0%AF', '%E0%80%AF', '%ED%B0%80', '%F8%88%80%80%80'])}`,
    ],
    [5, () => `page${dice.pick(['', '%20', '_', '%00'])}=${pageValue(dice)}`],
  ])();
}

function randomQuery(dice: Dice): string {
  const n = dice.int(0, 4);
  const params: string[] = [];
  for (let i = 0; i < n; i += 1) params.push(extraParam(dice));
  return params.join('&');
}

const RUN_IDS = [
  '1',
  '2',
  '0',
  '-1',
  'abc',
  '1.5',
  '1e3',
  '%31',
  '%201',
  '%EF%BC%91',
  '99999999999999999999',
  '9007199254740993',
  '',
  '%zz',
  '1%00',
];
const BAD_UUIDS = [
  'x'.repeat(32),
  '0'.repeat(32),
  'A'.repeat(32),
  'a'.repeat(31),
  'a'.repeat(33),
  'a'.repeat(200),
  '%00',
  '..',
  '%2F',
  '%zz',
  pctUtf8('é'.repeat(16)),
  'null',
  '',
];

const MIRROR_QUERY_PARAMS: readonly (readonly [string, readonly string[]])[] = [
  [
    'page',
    [
      '1',
      '2',
      '0',
      '-1',
      'abc',
      '1.5',
      '1e3',
      '1000000',
      '1000001',
      '99999999999999999999',
      '',
      '%31',
      '+1',
      ' 1',
    ],
  ],
  ['page_size', ['1', '50', '500', '501', '0', '-5', 'abc', '', '99999999999999999999']],
  [
    'since',
    [
      '7d',
      '12h',
      '1ms',
      '0',
      '2026-01-01',
      '2026-01-01T00:00:00Z',
      'yesterday',
      '',
      '99999999999999d',
      '1e400d',
      '-5m',
      '%zz',
      '2026-13-45',
      '275760-09-13',
      '+275760-09-14T00:00:00Z',
    ],
  ],
  ['until', ['now', '1d', '2100-01-01', '', '9'.repeat(40), '0000-00-00']],
  ['uuid', ['a'.repeat(32), 'A'.repeat(32), 'x', '', '%00']],
  ['field', ['name', 'post', '', 'x'.repeat(300), '%00', pctUtf8('名')]],
  ['kind', ['added', 'changed', 'removed', 'returned', 'bogus', '', 'ADDED']],
  ['before', ['1', '0', '-1', '99999999999999999999', 'abc', '9007199254740991', '9007199254740992']],
  ['format', ['json', 'api']],
  ['as_of', ['2100-01-01']],
];

function mirrorApiTarget(dice: Dice, context: GeneratorContext): string {
  const uuid = (): string =>
    context.uuids.length > 0 && dice.chance(0.5) ? dice.pick(context.uuids) : dice.pick(BAD_UUIDS);
  const path = dice.weighted<() => string>([
    [20, () => '/api/mirror/runs/'],
    [10, () => `/api/mirror/runs/${dice.pick(RUN_IDS)}/`],
    [20, () => '/api/mirror/coworkers/'],
    [10, () => `/api/mirror/coworkers/${uuid()}/`],
    [10, () => `/api/mirror/coworkers/${uuid()}/history/`],
    [20, () => '/api/mirror/changes/'],
    [2, () => '/api/mirror/sync/'],
    [2, () => '/api/mirror/'],
    [2, () => '/api/mirror/runs'],
    [1, () => `/api/mirror/runs/${dice.pick(RUN_IDS)}`],
    [1, () => '/api/mirror/%72uns/'],
    [1, () => '/api/mirror//runs/'],
    [1, () => '/api/mirror/../healthz'],
    [1, () => `/api/mirror/coworkers/${uuid()}/history`],
    [1, () => `/api/mirror/${dice.text(PATH_ALPHABET, dice.int(1, 40))}`],
  ])();
  const params: string[] = [];
  const n = dice.weighted([
    [30, 0],
    [40, 1],
    [20, 2],
    [10, 4],
  ]);
  for (let i = 0; i < n; i += 1) {
    if (dice.chance(0.8)) {
      const [name, values] = dice.pick(MIRROR_QUERY_PARAMS);
      const value = dice.pick(values).replace(/ /g, dice.pick(['+', '%20']));
      params.push(dice.chance(0.05) ? name : `${name}=${value}`);
    } else params.push(extraParam(dice));
  }
  return params.length > 0 || dice.chance(0.05) ? `${path}?${params.join('&')}` : path;
}

function otherTarget(dice: Dice): string {
  const path = dice.weighted<() => string>([
    [70, () => dice.pick(OTHER_PATHS)],
    [20, () => `/${dice.text(PATH_ALPHABET, dice.int(0, 30))}`],
    [10, () => `/${pctUtf8(dice.pick(UNICODE_WORDS))}/${dice.text(PATH_ALPHABET, dice.int(0, 8))}`],
  ])();
  if (path.includes('?') || !dice.chance(0.3)) return path;
  return `${path}?${randomQuery(dice)}`;
}

/** Grows the target to about `length` bytes with extra query parameters (or a long path). */
function padTarget(dice: Dice, target: string, length: number): string {
  const hash = target.indexOf('#');
  const base = hash < 0 ? target : target.slice(0, hash);
  const fragment = hash < 0 ? '' : target.slice(hash);
  const room = Math.max(0, length - base.length);
  if (dice.chance(0.2) && !base.includes('?')) {
    return `${base}${dice.text(PATH_ALPHABET, room)}${fragment}`;
  }
  const filler = dice.weighted<() => string>([
    [40, () => `pad=${'x'.repeat(Math.max(0, room - 5))}`],
    [30, () => 'a=1&'.repeat(Math.floor(room / 4)).slice(0, -1)],
    [20, () => `page=${'9'.repeat(Math.max(1, room - 6))}`],
    [10, () => dice.text(QUERY_ALPHABET.replace('#', ''), room)],
  ])();
  return `${base}${base.includes('?') ? '&' : '?'}${filler}${fragment}`;
}

// ---------------------------------------------------------------------------------------------
// Headers, body and framing

function headersFor(dice: Dice): [string, string][] {
  const headers: [string, string][] = [];
  if (!dice.chance(0.03)) headers.push(['Host', dice.chance(0.85) ? DEFAULT_HOST : dice.pick(HOSTS)]);
  if (dice.chance(0.02)) headers.push(['Host', dice.pick(HOSTS)]);
  if (dice.chance(0.5)) headers.push(['Accept', acceptValue(dice)]);
  if (dice.chance(0.02)) headers.push(['Accept', acceptValue(dice)]);
  if (dice.chance(0.08)) headers.push(['If-None-Match', dice.pick(IF_NONE_MATCH)]);
  if (dice.chance(0.1)) headers.push(['X-Forwarded-Host', dice.pick(FORWARDED_HOSTS)]);
  if (dice.chance(0.1)) headers.push(['X-Forwarded-Proto', dice.pick(FORWARDED_PROTOS)]);
  if (dice.chance(0.02)) headers.push(['X-Forwarded-Host', dice.pick(FORWARDED_HOSTS)]);
  if (dice.chance(0.06)) headers.push([...dice.pick(FORWARDED_MISC)]);
  if (dice.chance(0.05)) headers.push(['Authorization', dice.pick(AUTHS)]);
  const misc = dice.chance(0.25) ? dice.int(1, 3) : 0;
  for (let i = 0; i < misc; i += 1) headers.push([...dice.pick(MISC_HEADERS)]);
  if (dice.chance(0.03)) headers.push(['X-Pad', 'a'.repeat(dice.int(1_000, 9_000))]);
  if (dice.chance(0.01)) {
    for (let i = dice.int(20, 90); i > 0; i -= 1) headers.push([`X-Many-${i}`, String(i)]);
  }
  if (dice.chance(0.1)) {
    for (const h of headers) h[0] = dice.pick([h[0].toLowerCase(), h[0].toUpperCase(), h[0]]);
  }
  return dice.chance(0.2) ? dice.shuffle(headers) : headers;
}

function acceptValue(dice: Dice): string {
  return dice.weighted<() => string>([
    [85, () => dice.pick(ACCEPTS)],
    [
      10,
      () => [dice.pick(ACCEPTS), dice.pick(ACCEPTS), dice.pick(ACCEPTS)].join(dice.pick([',', ', ', ' , '])),
    ],
    [3, () => Array.from({ length: dice.int(20, 200) }, (_, i) => `text/x-${i};q=0.${i % 10}`).join(', ')],
    [2, () => `${dice.text('abcdefghij/*;=, ', dice.int(0, 60))}`],
  ])();
}

function addBody(dice: Dice, request: HostileRequest): void {
  const wantsBody = ['POST', 'PUT', 'PATCH'].includes(request.method) ? 0.8 : 0.03;
  if (!dice.chance(wantsBody)) return;
  const body = dice.pick([
    '{}',
    '{"name":"x"}',
    'a=1&b=2',
    '\xff\xfe\x00garbage',
    'x'.repeat(dice.int(100, 5_000)),
  ]);
  if (dice.chance(0.15)) {
    request.headers.push(['Transfer-Encoding', 'chunked']);
    request.body = `${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`;
  } else {
    request.headers.push(['Content-Length', String(body.length)]);
    request.body = body;
  }
  if (dice.chance(0.05)) request.headers.push(['Expect', '100-continue']);
}

function addConnectionHeaders(dice: Dice, request: HostileRequest): void {
  const roll = dice.next();
  if (roll < 0.04) request.headers.push(['Connection', 'close']);
  else if (roll < 0.07) request.headers.push(['Connection', 'keep-alive']);
  else if (roll < 0.08) request.headers.push(['Connection', 'Upgrade'], ['Upgrade', 'websocket']);
  else if (roll < 0.085) request.headers.push(['Expect', dice.pick(['bogus', '200-ok', ''])]);
}

// ---------------------------------------------------------------------------------------------
// Deliberate syntax breakage

type Breaker = (dice: Dice, request: HostileRequest) => void;

const BREAKERS: readonly (readonly [string, Breaker])[] = [
  ['lower-case method', (d, r) => (r.method = d.pick(['get', 'head', 'Get', 'options', 'pOST']))],
  ['unknown method', (d, r) => (r.method = d.pick(['FOO', 'GETS', 'BREW', 'G\xc9T', 'GET\x00', '']))],
  [
    'raw non-ASCII in target',
    (d, r) =>
      (r.target += `${r.target.includes('?') ? '&' : '?'}page=${rawUtf8(d.pick(UNICODE_WORDS.slice(0, 6)))}`),
  ],
  ['control char in target', (d, r) => (r.target = `/${d.pick(['\x01', '\x7f', '\x1b', '\t'])}${r.target}`)],
  ['space in target', (_d, r) => (r.target = `${r.target} x`)],
  [
    'bad version',
    (d, r) => (r.version = d.pick(['HTTP/1.2', 'HTTP/1.1x', 'HTTP/3', 'http/1.1', 'HTTP/1', 'HTTP/11'])),
  ],
  ['space in header name', (_d, r) => r.headers.push(['X Bad', '1'])],
  ['non-ASCII header name', (_d, r) => r.headers.push(['X-\xe9', '1'])],
  ['empty header name', (_d, r) => r.rawLines.push(': x')],
  ['header without colon', (_d, r) => r.rawLines.push('NoColonHere')],
  ['space before colon', (_d, r) => r.rawLines.push('Host : example.com')],
  [
    'control char in header value',
    (d, r) => r.headers.push(['X-Ctl', `a${d.pick(['\x00', '\x01', '\x7f', '\x0b'])}b`]),
  ],
  ['obs-fold', (_d, r) => r.rawLines.push('X-Folded: a', ' continued')],
  ['bare LF line ends', (_d, r) => (r.eol = '\n')],
  [
    'Content-Length not a number',
    (d, r) => r.headers.push(['Content-Length', d.pick(['abc', '-1', '1.5', '0x10', ''])]),
  ],
  [
    'Content-Length and Transfer-Encoding',
    (_d, r) =>
      withBody(
        r,
        [
          ['Content-Length', '5'],
          ['Transfer-Encoding', 'chunked'],
        ],
        '0\r\n\r\n',
      ),
  ],
  [
    'two Content-Lengths',
    (_d, r) =>
      withBody(
        r,
        [
          ['Content-Length', '2'],
          ['Content-Length', '3'],
        ],
        '{}',
      ),
  ],
  ['header overflow', (d, r) => r.headers.push(['X-Huge', 'h'.repeat(HEAD_LIMIT + d.int(1, 4_000))])],
  // The handler may answer before node reads the broken body: force a close either way.
  [
    'bad chunk size',
    (_d, r) =>
      withBody(
        r,
        [
          ['Transfer-Encoding', 'chunked'],
          ['Connection', 'close'],
        ],
        'zz\r\n',
      ),
  ],
  [
    'Transfer-Encoding not chunked',
    (_d, r) =>
      withBody(
        r,
        [
          ['Transfer-Encoding', 'gzip'],
          ['Connection', 'close'],
        ],
        '',
      ),
  ],
];

function withBody(request: HostileRequest, framing: [string, string][], body: string): void {
  const framingNames = new Set(['content-length', 'transfer-encoding', 'connection', 'expect', 'upgrade']);
  request.headers = request.headers.filter(([n]) => !framingNames.has(n.toLowerCase()));
  request.headers.push(...framing);
  request.body = body;
}

function breakSyntax(dice: Dice, request: HostileRequest): void {
  const [name, breaker] = dice.pick(BREAKERS);
  breaker(dice, request);
  request.breakage = name;
}

// ---------------------------------------------------------------------------------------------
// Wire form

export function toWire(request: HostileRequest): Buffer {
  const line =
    request.version === ''
      ? `${request.method} ${request.target}`
      : `${request.method} ${request.target} ${request.version}`;
  const lines = [line, ...request.headers.map(([n, v]) => `${n}: ${v}`), ...request.rawLines];
  return Buffer.from(`${lines.join(request.eol)}${request.eol}${request.eol}${request.body}`, 'latin1');
}

function headSize(request: HostileRequest): number {
  return toWire(request).length - Buffer.byteLength(request.body, 'latin1');
}

export function headerValues(request: HostileRequest, name: string): string[] {
  return request.headers.filter(([n]) => n.toLowerCase() === name).map(([, v]) => v);
}

/** True when node keeps the connection open after answering (HTTP/1.1 default, 1.0 opt-in). */
export function wantsKeepAlive(request: HostileRequest): boolean {
  const connection = headerValues(request, 'connection').join(',').toLowerCase();
  if (connection.includes('close')) return false;
  if (request.version === 'HTTP/1.1') return true;
  return request.version === 'HTTP/1.0' && connection.includes('keep-alive');
}
