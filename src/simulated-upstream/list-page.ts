import { LIST_PATH } from '../upstream/contract.js';
import type { SimulatedData } from './data.js';
import {
  drfJson,
  envelope,
  INVALID_PAGE_BODY,
  neighbourLinks,
  numPages,
  pageLink,
  parsePageNumber,
} from './drf-render.js';
import type { FaultState } from './faults.js';
import type { PageCache } from './page-cache.js';
import { deriveSeed, Rng } from './prng.js';
import { drfAnswer, type Answer } from './send.js';

export interface ListContext {
  readonly data: SimulatedData;
  readonly faults: FaultState;
  readonly cache: PageCache;
  readonly pageSize: number;
  /** Counts unordered draws so every crawl sees a different order. */
  unorderedDraws: number;
}

/** The page a list request names, resolved against the listing as the faults make it look. */
export function resolvePage(
  ctx: ListContext,
  query: URLSearchParams,
): { page: number | null; count: number } {
  const count = ctx.faults.active.emptyListing ? 0 : ctx.data.count;
  return { page: parsePageNumber(query, numPages(count, ctx.pageSize)), count };
}

function resultsJson(ctx: ListContext, page: number, count: number): string {
  const { faults } = ctx;
  if (count === 0) return '[]';
  const unordered = faults.active.unordered;
  const invalid = faults.match('invalidEntry', page);
  if (!unordered && !invalid) return ctx.cache.resultsJson(page);

  let rows = ctx.cache.rows(page);
  if (unordered) {
    // Page N of a fresh random order is a random subset of the page's size.
    const rng = new Rng(deriveSeed(unordered.seed, `unordered:${ctx.unorderedDraws++}`));
    const size = Math.min(ctx.pageSize, count - (page - 1) * ctx.pageSize);
    rows = rng
      .sample(count, size)
      .sort((a, b) => a - b)
      .map((index) => ctx.data.at(index) ?? {});
    faults.record({ fault: 'unordered', page });
  }
  if (invalid && invalid.index < rows.length) {
    const entry: Record<string, unknown> = { ...rows[invalid.index] };
    if (invalid.missing) delete entry[invalid.field];
    else entry[invalid.field] = invalid.value;
    rows = rows.with(invalid.index, entry);
    faults.record({ fault: 'invalidEntry', page });
  }
  return drfJson(rows);
}

function links(
  ctx: ListContext,
  host: string,
  query: URLSearchParams,
  page: number,
  count: number,
): { next: string | null; previous: string | null } {
  const { faults } = ctx;
  const neighbours = neighbourLinks(host, query, page, numPages(count, ctx.pageSize));
  let next = neighbours.next;
  const foreign = faults.match('foreignNext', page);
  const loop = faults.match('nextLoop', page);
  if (foreign) {
    next = `${foreign.origin.replace(/\/+$/, '')}${LIST_PATH}?page=${page + 1}`;
    faults.record({ fault: 'foreignNext', page });
  } else if (loop) {
    next = pageLink(host, query, loop.to);
    faults.record({ fault: 'nextLoop', page });
  }
  return { next, previous: neighbours.previous };
}

/** The 200 page answer (or DRF's 404 for a page that does not exist), content faults applied. */
export function listPageAnswer(
  ctx: ListContext,
  host: string,
  query: URLSearchParams,
  resolved: { page: number | null; count: number },
): Answer {
  const { page, count } = resolved;
  if (page === null) return drfAnswer(404, INVALID_PAGE_BODY);
  const { next, previous } = links(ctx, host, query, page, count);
  return drfAnswer(200, envelope(count, next, previous, resultsJson(ctx, page, count)));
}
