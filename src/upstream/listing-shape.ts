import type { ValidatedPage } from './validate.js';

/** What page 1 announced; every later page must agree with it. */
export interface ListingShape {
  count: number;
  pageSize: number;
  pages: number;
}

/** One disagreement between a page and the shape, for the UPSTREAM_INCONSISTENT report. */
export interface Mismatch {
  page: number;
  what: string;
  /** A count, a length or a status; for page 1 read again, the short digest of its bytes. */
  expected: number | string;
  got: number | string;
}

/** The number of entries page `page` must hold under `shape`. */
function expectedLength(shape: ListingShape, page: number): number {
  return page < shape.pages ? shape.pageSize : shape.count - shape.pageSize * (shape.pages - 1);
}

/**
 * Count identical everywhere, full pages full and the last page holding the remainder: together
 * these make the entries total `count` and the last page non-empty (unless count is 0).
 */
export function checkPageShape(shape: ListingShape, page: ValidatedPage): Mismatch | undefined {
  if (page.count !== shape.count) {
    return { page: page.page, what: 'count', expected: shape.count, got: page.count };
  }
  const expected = expectedLength(shape, page.page);
  if (page.entries.length !== expected) {
    return { page: page.page, what: 'results length', expected, got: page.entries.length };
  }
  return undefined;
}
