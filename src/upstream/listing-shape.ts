import type { UnknownField, ValidatedPage } from './validate.js';

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
  expected: number;
  got: number;
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

export interface Listing {
  entries: { page: number; index: number; uuid: string; json: string }[];
  count: number;
  pageSize: number;
  pages: number;
  unknownFields: UnknownField[];
  repeatedUuids: string[];
  unknownEnvelopeFields: string[];
}

/** Flattens checked pages (in page order) into the listing, collecting drift and repeated uuids. */
export function assembleListing(shape: ListingShape, pages: readonly ValidatedPage[]): Listing {
  const entries: Listing['entries'] = [];
  const unknownFields = new Map<string, UnknownField>();
  const envelopeFields = new Set<string>();
  const seen = new Map<string, number>();
  for (const page of pages) {
    for (const entry of page.entries) {
      entries.push({ page: page.page, index: entry.index, uuid: entry.uuid, json: entry.json });
      seen.set(entry.uuid, (seen.get(entry.uuid) ?? 0) + 1);
    }
    for (const field of page.unknownFields) {
      if (!unknownFields.has(field.field)) unknownFields.set(field.field, field);
    }
    for (const field of page.unknownEnvelopeFields) envelopeFields.add(field);
  }
  const repeatedUuids = [...seen].filter(([, times]) => times > 1).map(([uuid]) => uuid);
  return {
    entries,
    count: shape.count,
    pageSize: shape.pageSize,
    pages: shape.pages,
    unknownFields: [...unknownFields.values()],
    repeatedUuids,
    unknownEnvelopeFields: [...envelopeFields],
  };
}
