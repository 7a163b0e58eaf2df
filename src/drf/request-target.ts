import { decodePathInfo } from './python-url.js';

/** The path, query and host of a request as gunicorn + Django 3.2 see them. */

export interface RequestTarget {
  /** Raw path as on the wire (percent-escapes kept). */
  rawPath: string;
  /** Django's `path_info`: percent-decoded, UTF-8 decoded. */
  pathInfo: string;
  /** WSGI `QUERY_STRING`: raw, after the first `?`, before any `#`. */
  query: string;
}

const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:/;

/** gunicorn's `split_request_uri` (urlsplit) of the request-target. */
export function splitTarget(url: string): RequestTarget {
  let rest = url;
  const hash = rest.indexOf('#');
  if (hash >= 0) rest = rest.slice(0, hash);
  if (!rest.startsWith('//')) {
    // absolute-form: drop scheme and authority
    const scheme = SCHEME.exec(rest);
    if (scheme) {
      rest = rest.slice(scheme[0].length);
      if (rest.startsWith('//')) {
        const end = rest.slice(2).search(/[/?]/);
        rest = end < 0 ? '' : rest.slice(2 + end);
      }
    }
  }
  const q = rest.indexOf('?');
  const rawPath = q < 0 ? rest : rest.slice(0, q);
  const query = q < 0 ? '' : rest.slice(q + 1);
  return { rawPath, pathInfo: decodePathInfo(rawPath) || '/', query };
}

const HOST_SHAPE = /^([a-z0-9.-]+|\[[a-f0-9]*:[a-f0-9.:]+\])(:[0-9]+)?$/;

/** Django's `split_domain_port` + `validate_host` with ALLOWED_HOSTS=['*']: is `host` accepted? */
export function isValidDjangoHost(host: string): boolean {
  const lower = host.replace(/[A-Z]/g, (ch) => ch.toLowerCase());
  if (!HOST_SHAPE.test(lower)) return false;
  if (lower.endsWith(']')) return true;
  const colon = lower.lastIndexOf(':');
  let domain = colon < 0 ? lower : lower.slice(0, colon);
  if (domain.endsWith('.')) domain = domain.slice(0, -1);
  return domain !== '';
}

/**
 * Debian's Python 3.11.2 `urlsplit` (with the CVE-2024-11168 fix) rejects a bracketed host that is
 * not an IPv6 address; DRF's link building then fails with a 500.
 */
export function isUrlsplitSafeHost(host: string): boolean {
  if (!host.startsWith('[')) return true;
  const close = host.indexOf(']');
  return isIPv6(host.slice(1, close));
}

/** Python's `ipaddress.IPv6Address` parser, without scope ids (Django's host check forbids them). */
export function isIPv6(text: string): boolean {
  const parts = text.split(':');
  if (parts.length < 3) return false;
  const last = parts[parts.length - 1] ?? '';
  if (last.includes('.')) {
    if (!isIPv4(last)) return false;
    parts.splice(parts.length - 1, 1, '0', '0');
  }
  if (parts.length > 9) return false;
  let skip: number | null = null;
  for (let i = 1; i < parts.length - 1; i += 1) {
    if (parts[i] === '') {
      if (skip !== null) return false;
      skip = i;
    }
  }
  if (skip !== null) {
    let hi = skip;
    let lo = parts.length - skip - 1;
    if (parts[0] === '' && --hi !== 0) return false;
    if (parts[parts.length - 1] === '' && --lo !== 0) return false;
    if (8 - (hi + lo) < 1) return false;
    return parts.every((p, i) =>
      i === skip || (i === 0 && p === '') || (i === parts.length - 1 && p === '') ? true : isHextet(p),
    );
  }
  if (parts.length !== 8) return false;
  return parts.every(isHextet);
}

function isHextet(part: string): boolean {
  return /^[0-9a-fA-F]{1,4}$/.test(part);
}

function isIPv4(text: string): boolean {
  const octets = text.split('.');
  if (octets.length !== 4) return false;
  return octets.every(
    (o) => /^[0-9]{1,3}$/.test(o) && Number(o) <= 255 && !(o.length > 1 && o.startsWith('0')),
  );
}
