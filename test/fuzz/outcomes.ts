import { isIPv6 } from 'node:net';
import { SERVER_ERROR_PAGE } from '../../src/drf/django-pages.js';
import { gunicornServerError } from '../../src/drf/gunicorn.js';
import { isListPath } from '../../src/drf/respond.js';
import { headerValues, toWire, type HostileRequest } from './hostile-requests.js';
import type { Exchange, WireResponse } from './wire-lane.js';

/** Who answered a request, and how. */
export type OutcomeKind =
  | 'app 2xx'
  | 'app 3xx'
  | 'app 4xx'
  | 'app 500 (documented DRF 500)'
  | 'app 5xx (undocumented)'
  | 'node parser refused (Fastify clientError)'
  | 'node 400 (HTTP/1.1 without Host)'
  | 'node 417 (Expect)'
  | 'node closed CONNECT (no connect listener)'
  | 'node parser refused silently (after an Upgrade request)'
  | 'dropped without a response';

export interface Outcome {
  kind: OutcomeKind;
  status: number | null;
  /** Set when the outcome breaks a fuzzing invariant: the test fails listing these. */
  problem: string | null;
}

function headerOf(response: WireResponse, name: string): string | undefined {
  return response.headers.find(([n]) => n.toLowerCase() === name)?.[1];
}

/** Fastify's defaultClientErrorHandler answer: no Date, a fixed JSON body, then a destroyed socket. */
function isClientErrorAnswer(response: WireResponse): boolean {
  if (headerOf(response, 'date') !== undefined) return false;
  const body = response.body.toString('latin1');
  return (
    (response.status === 400 && body.includes('"message":"Client Error"')) ||
    (response.status === 431 && body.includes('Exceeded maximum allowed HTTP header size'))
  );
}

/** The Host Django reads for this request: a trusted X-Forwarded-Host first, as node joins it. */
function effectiveHost(request: HostileRequest): string | undefined {
  const forwarded = headerValues(request, 'x-forwarded-host');
  if (request.proxied && forwarded.length > 0) return forwarded.join(', ');
  return headerValues(request, 'host')[0];
}

/**
 * The documented cases where DRF itself answers Django's 500 page, so the mirror does too:
 * a non-ASCII media type or parameter name in Accept (and RFC 2231 `name*=` values DRF cannot
 * decode), and a bracketed Host that is not an IPv6 address on a page with next/previous links.
 * Returns the cause, or null when none applies.
 */
export function documentedDrf500(request: HostileRequest, response: WireResponse): string | null {
  if (isGunicornTransferCoding500(request, response)) return 'gunicorn: unsupported Transfer-Encoding';
  if (response.status !== 500 || !isListPath(request.target)) return null;
  if (headerOf(response, 'content-type') !== 'text/html') return null;
  const isHead = request.method.toUpperCase() === 'HEAD';
  if (!(isHead ? response.body.length === 0 : response.body.equals(SERVER_ERROR_PAGE))) return null;
  const accept = headerValues(request, 'accept').join(', ');
  // eslint-disable-next-line no-control-regex -- non-ASCII is exactly what is looked for
  if (/[^\x00-\x7f]/.test(accept)) return 'non-ASCII Accept';
  if (accept.split(/[,;]/).some(isUndecodableRfc2231)) return 'undecodable RFC 2231 parameter in Accept';
  const host = effectiveHost(request);
  if (host?.startsWith('[')) {
    const inner = host.slice(1, host.indexOf(']') < 0 ? undefined : host.indexOf(']'));
    if (!isIPv6(inner)) return 'bracketed non-IPv6 Host';
  }
  return null;
}

const GUNICORN_500 = gunicornServerError().body[0] ?? Buffer.alloc(0);

/**
 * gunicorn's own 500 page (before any routing) for a Transfer-Encoding other than one `chunked` or
 * `identity`: its parser raises UnsupportedTransferCoding, which its error handler does not name.
 */
function isGunicornTransferCoding500(request: HostileRequest, response: WireResponse): boolean {
  const codings = headerValues(request, 'transfer-encoding');
  if (response.status !== 500 || codings.length === 0) return false;
  if (codings.length === 1 && ['chunked', 'identity'].includes((codings[0] ?? '').trim().toLowerCase()))
    return false;
  const isHead = request.method.toUpperCase() === 'HEAD';
  return isHead ? response.body.length === 0 : response.body.equals(GUNICORN_500);
}

// Codec names Python finds among those the fuzzer sends; any other charset is a LookupError.
const PYTHON_CODECS = new Set(['utf-8', 'utf8', 'latin-1', 'latin1', 'iso-8859-1', 'ascii', 'us-ascii']);

/** A `name*=charset'lang'value` parameter Django's parse_header raises on. */
function isUndecodableRfc2231(param: string): boolean {
  const eq = param.indexOf('=');
  if (eq < 0 || !param.slice(0, eq).trim().endsWith('*')) return false;
  if ((param.match(/'/g)?.length ?? 0) !== 2) return false;
  const parts = param
    .slice(eq + 1)
    .trim()
    .split("'");
  if (parts.length !== 3) return true;
  return (parts[2] ?? '').includes('%') && !PYTHON_CODECS.has((parts[0] ?? '').toLowerCase());
}

/** Classifies one exchange; `problem` names any broken invariant. */
export function classify(
  request: HostileRequest,
  exchange: Exchange,
  priorOnConnection?: HostileRequest,
): Outcome {
  if (exchange.kind === 'dropped') {
    if (request.method === 'CONNECT') {
      return { kind: 'node closed CONNECT (no connect listener)', status: null, problem: null };
    }
    // Node quirk: once a request with `Upgrade` was answered as a plain request (no 'upgrade'
    // listener), a parse error in the next request on that connection is swallowed: no
    // clientError, no 400; the idle socket is closed by keepAliveTimeout.
    const afterUpgrade =
      priorOnConnection !== undefined && headerValues(priorOnConnection, 'upgrade').length > 0;
    if (request.breakage !== null && afterUpgrade) {
      return { kind: 'node parser refused silently (after an Upgrade request)', status: null, problem: null };
    }
    const problem = `dropped (${exchange.reason}) after ${exchange.received}`;
    return { kind: 'dropped without a response', status: null, problem };
  }
  const { response } = exchange;
  const status = response.status;
  if (isClientErrorAnswer(response)) {
    const problem = request.breakage === null ? 'a well-formed request was refused by the parser' : null;
    return { kind: 'node parser refused (Fastify clientError)', status, problem };
  }
  const hasHost = headerValues(request, 'host').length > 0;
  if (status === 400 && request.version === 'HTTP/1.1' && !hasHost && response.body.length === 0) {
    return { kind: 'node 400 (HTTP/1.1 without Host)', status, problem: null };
  }
  const expect = headerValues(request, 'expect');
  if (status === 417 && expect.length > 0 && !expect.includes('100-continue')) {
    return { kind: 'node 417 (Expect)', status, problem: null };
  }
  const problem = bodyProblem(request, response) ?? framingProblem(request, response);
  if (status >= 500) {
    if (documentedDrf500(request, response) !== null) {
      return { kind: 'app 500 (documented DRF 500)', status, problem };
    }
    return { kind: 'app 5xx (undocumented)', status, problem: problem ?? `undocumented ${status}` };
  }
  if (status >= 400) return { kind: 'app 4xx', status, problem };
  if (status >= 300) return { kind: 'app 3xx', status, problem };
  if (status >= 200) return { kind: 'app 2xx', status, problem };
  return { kind: 'app 4xx', status, problem: `unexpected status ${status}` };
}

/**
 * Bytes right behind a response mean its framing lied (a HEAD with a body, a wrong length). Only
 * the body breakages legitimately get a second answer (node's 400) behind the handler's.
 */
function framingProblem(request: HostileRequest, response: WireResponse): string | null {
  if (response.trailing === 0 || request.breakage !== null) return null;
  return `${response.trailing} unexpected bytes after the response`;
}

/** Every JSON answer must be whole JSON: catches truncated or interleaved bodies. */
function bodyProblem(request: HostileRequest, response: WireResponse): string | null {
  const type = headerOf(response, 'content-type') ?? '';
  if (
    request.method.toUpperCase() === 'HEAD' ||
    response.body.length === 0 ||
    !type.startsWith('application/json')
  ) {
    return null;
  }
  try {
    JSON.parse(response.body.toString('utf8'));
    return null;
  } catch {
    return `invalid JSON body: ${JSON.stringify(response.body.subarray(0, 120).toString('utf8'))}`;
  }
}

/** A failing request, printable and replayable: its bytes as a JS string literal. */
export function describeFailure(request: HostileRequest, exchange: Exchange, outcome: Outcome): string {
  const wire = toWire(request).toString('latin1');
  const shown = wire.length > 600 ? `${wire.slice(0, 600)}…(${wire.length} bytes)` : wire;
  const got =
    exchange.kind === 'answered'
      ? `${exchange.response.status} ${JSON.stringify(exchange.response.body.subarray(0, 200).toString('latin1'))}`
      : `${exchange.reason} ${exchange.received}`;
  const server = request.proxied ? 'proxy-trusting mirror' : 'default mirror';
  return `#${request.index} to the ${server}: ${outcome.problem ?? outcome.kind}\n  request: ${JSON.stringify(shown)}\n  got: ${got}`;
}
