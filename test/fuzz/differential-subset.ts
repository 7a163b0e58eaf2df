import type { RawRequestSpec } from '../http/drf/differential-requests.js';
import type { HostileRequest } from './hostile-requests.js';
import { ACCEPTS } from './hostile-values.js';

/**
 * Which fuzzer requests the differential slice may send to both the mirror and the reference DRF
 * under gunicorn, and in what form.
 */

const DIFFERENTIAL_METHODS = new Set([
  'GET',
  'HEAD',
  'OPTIONS',
  'POST',
  'PUT',
  'PATCH',
  'DELETE',
  'TRACE',
  'PROPFIND',
]);
const FRAMING = new Set([
  'connection',
  'content-length',
  'transfer-encoding',
  'expect',
  'upgrade',
  'keep-alive',
  'te',
]);
/**
 * Whether DRF's choice for this Accept is the same in every process. Within one precedence level
 * DRF walks a Python set (hash-randomized order): two same-level tokens that both fit JSON but
 * ask for different `indent`s make DRF's answer vary run to run, and the mirror picks one of them.
 * The pooled single values are safe; composed lists are kept only when they mention no indent.
 */
function isDeterministicAccept(value: string): boolean {
  return ACCEPTS.includes(value) || !/indent/i.test(value);
}

// gunicorn's defaults: limit_request_line 4094, limit_request_field_size 8190, limit_request_fields 100.
const GUNICORN_LINE = 4094;
const GUNICORN_FIELD = 8190;
const GUNICORN_FIELDS = 100;

/**
 * The request as the existing differential harness sends it (`toRawRequest`), when it was meant
 * for the mirror `proxied` names, both servers parse it the same way and neither answers it by a
 * mirror-only rule; otherwise null.
 * Left out: mirror additions (`as_of`, If-None-Match → 304), a missing Host (Django falls back to
 * the server's own name), repeated headers (node and gunicorn join them differently), and anything
 * past gunicorn's request-line and header limits.
 */
export function toDifferentialSpec(request: HostileRequest, proxied: boolean): RawRequestSpec | null {
  if (request.family !== 'list' || request.breakage !== null || request.proxied !== proxied) return null;
  if (request.version !== 'HTTP/1.1' || !DIFFERENTIAL_METHODS.has(request.method)) return null;
  if (/as_of|as%5f/i.test(request.target)) return null;
  const headers = request.headers.filter(([n]) => !FRAMING.has(n.toLowerCase()));
  const names = headers.map(([n]) => n.toLowerCase());
  if (new Set(names).size !== names.length || !names.includes('host')) return null;
  if (names.includes('if-none-match') || headers.length > GUNICORN_FIELDS - 4) return null;
  if (`${request.method} ${request.target} HTTP/1.1`.length > GUNICORN_LINE) return null;
  if (headers.some(([n, v]) => n.length + 2 + v.length > GUNICORN_FIELD)) return null;
  if (headers.some(([n, v]) => n.toLowerCase() === 'accept' && !isDeterministicAccept(v))) return null;
  return { method: request.method, target: request.target, headers };
}
