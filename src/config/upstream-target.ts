import { LIST_PATH } from '../upstream/list-path.js';

/** Where to crawl, what may be shown of it, and the headers that authenticate every request. */
export interface UpstreamTarget {
  /** scheme://host[/prefix] without credentials, query or trailing slash; the list path is appended. */
  url: string;
  /** `url` with any credentials masked (`https://user:***@host`): the only form stored, logged or served. */
  label: string;
  /** Lower-case header names; empty when the upstream is open. */
  headers: Record<string, string>;
  /**
   * The Authorization header is the URL's own user:password (not UPSTREAM_HEADER's or the token's):
   * a child process is given them back inside the URL.
   */
  credentialsInUrl?: boolean;
}

export type ParsedUpstreamUrl =
  { ok: true; url: string; label: string; basicAuth: string | null } | { ok: false; problem: string };

const LIST_PATH_NO_SLASH = LIST_PATH.replace(/\/+$/, '');

/**
 * Accepts the site's base URL or the full list URL (a pasted browser address), with or without the
 * trailing slash. A query or fragment is refused rather than dropped: it means the paste was not the
 * address meant, and crawling `/` silently would hide that.
 */
export function parseUpstreamUrl(text: string): ParsedUpstreamUrl {
  if (!URL.canParse(text)) return { ok: false, problem: 'expected an absolute http(s) URL' };
  const url = new URL(text);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return { ok: false, problem: 'expected an absolute http(s) URL' };
  }
  if (text.includes('?') || text.includes('#')) {
    return {
      ok: false,
      problem: `expected the site's base URL without a query or fragment (e.g. ${url.origin}); the mirror adds ?page=N itself`,
    };
  }
  let path = url.pathname.replace(/\/+$/, '');
  if (path.endsWith(LIST_PATH_NO_SLASH)) path = path.slice(0, -LIST_PATH_NO_SLASH.length);
  let basicAuth: string | null = null;
  if (url.username || url.password) {
    try {
      const user = decodeURIComponent(url.username);
      const password = decodeURIComponent(url.password);
      basicAuth = `Basic ${Buffer.from(`${user}:${password}`, 'utf8').toString('base64')}`;
    } catch {
      return { ok: false, problem: 'the user name or password in the URL is not valid percent-encoding' };
    }
  }
  const base = `${url.protocol}//${url.host}${path}`;
  return { ok: true, url: base, label: maskedLabel(url, path), basicAuth };
}

function maskedLabel(url: URL, path: string): string {
  // A lone user name is often the secret itself (a token), so it is masked whole.
  const credentials = url.password ? `${url.username}:***@` : url.username ? '***@' : '';
  return `${url.protocol}//${credentials}${url.host}${path}`;
}

/**
 * Any URL with its credentials masked the way the upstream's label is (`https://user:***@host/…`;
 * a lone user name, often a token, masked whole): the one form in which the API, the status page
 * and webhook payloads show a URL that may carry them (a config error shows none: refused-value.ts).
 * Text, so it also masks what does not parse as a URL.
 */
export function maskUrlCredentials(text: string): string {
  return text.replace(/^([a-z][a-z0-9+.-]*:\/\/)([^/?#@]*)@/i, (_m, scheme: string, userinfo: string) => {
    const colon = userinfo.indexOf(':');
    return `${scheme}${colon >= 0 ? `${userinfo.slice(0, colon)}:***` : '***'}@`;
  });
}

/** `Name: value` → [lower-case name, value], or null when it is not a header line. */
export function parseHeaderLine(text: string): [string, string] | null {
  const match = /^\s*([!#$%&'*+.^_`|~0-9A-Za-z-]+)\s*:\s*(.*?)\s*$/.exec(text);
  if (!match?.[1] || !match[2]) return null;
  return [match[1].toLowerCase(), match[2]];
}
