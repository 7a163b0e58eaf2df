import { MirrorError, truncateForMessage } from '../errors.js';
import { LIST_PATH } from './contract.js';

/** Where the listing lives; every `next`/`previous` must point back here. */
export interface ListLocation {
  /** Page 1: the list URL without a query. */
  listUrl: string;
  origin: string;
  pathname: string;
}

export function listLocation(baseUrl: string): ListLocation {
  // The base may carry a path prefix (a reverse proxy mount); keep it, minus a trailing slash.
  const url = new URL(`${baseUrl.replace(/\/+$/, '')}${LIST_PATH}`);
  url.search = '';
  url.hash = '';
  return { listUrl: url.href, origin: url.origin, pathname: url.pathname };
}

export function pageUrl(location: ListLocation, page: number): string {
  return page === 1 ? location.listUrl : `${location.listUrl}?page=${page}`;
}

type LinkKind = 'next' | 'previous';

/**
 * The page number a `next`/`previous` link points to. A link off our origin or list path is refused
 * before anything could request it: the upstream builds links from the Host we sent, so any other
 * origin means something in between is rewriting them.
 */
function linkedPage(location: ListLocation, link: string, kind: LinkKind, page: number): number {
  const url = new URL(link);
  if (url.origin !== location.origin || url.pathname !== location.pathname) {
    throw new MirrorError(
      'UPSTREAM_FOREIGN_NEXT',
      `page ${page}: "${kind}" points outside ${location.listUrl}: ${truncateForMessage(link)}; not following it`,
      { page, link: kind, url: link, expectedOrigin: location.origin, expectedPath: location.pathname },
    );
  }
  const keys = [...url.searchParams.keys()];
  if (keys.length === 0) return 1;
  const value = url.searchParams.get('page');
  if (keys.length !== 1 || value === null || !/^[1-9]\d*$/.test(value)) {
    throw new MirrorError(
      'UPSTREAM_PAGINATION',
      `page ${page}: "${kind}" has an unexpected query: ${truncateForMessage(link)}`,
      { page, link: kind, url: link },
    );
  }
  return Number(value);
}

function describeTarget(target: number | null): string {
  return target === null ? 'null' : `page ${target}`;
}

function checkLink(
  location: ListLocation,
  link: string | null,
  kind: LinkKind,
  page: number,
  expected: number | null,
): void {
  const target = link === null ? null : linkedPage(location, link, kind, page);
  if (target === expected) return;
  if (kind === 'next' && target !== null && target <= page) {
    throw new MirrorError('UPSTREAM_PAGE_LOOP', `page ${page}: "next" goes back to page ${target}`, {
      page,
      url: link,
      target,
    });
  }
  throw new MirrorError(
    'UPSTREAM_PAGINATION',
    `page ${page}: "${kind}" should be ${describeTarget(expected)}, got ${describeTarget(target)}`,
    { page, link: kind, expected, got: target, url: link },
  );
}

/**
 * Checks a page's links against its number: next is page+1 (null on the last page); previous is
 * null on page 1, the bare list URL on page 2, page-1 after.
 */
export function checkPageLinks(
  location: ListLocation,
  links: { next: string | null; previous: string | null },
  page: number,
  lastPage: number,
): void {
  checkLink(location, links.next, 'next', page, page < lastPage ? page + 1 : null);
  checkLink(location, links.previous, 'previous', page, page > 1 ? page - 1 : null);
}
