import {
  invalidPageAnswer,
  neighbourLinks,
  numPages,
  pageAnswer,
  pageBody,
  pageLink,
  requestedPage,
  type PageLinks,
} from '../drf/list-page.js';
import type { DrfResponse } from '../drf/answer.js';
import type { JsonValue } from '../drf/python-json.js';
import type { ViewContext } from '../drf/view.js';
import { LIST_PATH } from '../upstream/contract.js';
import type { SimulatedData, SimulatedEntry } from './data.js';
import type { FaultState } from './faults.js';
import { rowsTail, type PageCache } from './page-cache.js';
import { deriveSeed, Rng } from './prng.js';

/** The simulator's side of a list page: its data and the content faults. DRF's rules are src/drf's. */
export interface ListContext {
  readonly data: SimulatedData;
  readonly faults: FaultState;
  readonly cache: PageCache;
  readonly pageSize: number;
  /** Counts unordered draws so every crawl sees a different order. */
  unorderedDraws: number;
}

export interface ResolvedPage {
  /** null: DRF's 404 "Invalid page.". */
  page: number | null;
  count: number;
  numPages: number;
}

/** The page a list request names, resolved against the listing as the faults make it look. */
export function resolvePage(ctx: ListContext, view: ViewContext): ResolvedPage {
  const count = ctx.faults.active.emptyListing ? 0 : ctx.data.count;
  const pages = numPages(count, ctx.pageSize);
  return { page: requestedPage(view, pages), count, numPages: pages };
}

/** The page's rows with the `unordered` and `invalidEntry` faults applied, or null when untouched. */
function faultedRows(ctx: ListContext, page: number, count: number): SimulatedEntry[] | null {
  const { faults } = ctx;
  const unordered = faults.active.unordered;
  const invalid = faults.match('invalidEntry', page);
  if (count === 0 || (!unordered && !invalid)) return null;
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
  return rows;
}

function links(ctx: ListContext, view: ViewContext, page: number, pages: number): PageLinks {
  const { faults } = ctx;
  const neighbours = neighbourLinks(view, page, pages);
  const foreign = faults.match('foreignNext', page);
  const loop = faults.match('nextLoop', page);
  if (foreign) {
    faults.record({ fault: 'foreignNext', page });
    return { ...neighbours, next: `${foreign.origin.replace(/\/+$/, '')}${LIST_PATH}?page=${page + 1}` };
  }
  if (loop) {
    faults.record({ fault: 'nextLoop', page });
    return { ...neighbours, next: pageLink(view, loop.to) };
  }
  return neighbours;
}

/** The 200 page answer (or DRF's 404 for a page that does not exist), content faults applied. */
export function listPageAnswer(ctx: ListContext, view: ViewContext, resolved: ResolvedPage): DrfResponse {
  const { page, count, numPages: pages } = resolved;
  if (page === null) return invalidPageAnswer(view);
  const rows = count === 0 ? [] : faultedRows(ctx, page, count);
  const content = {
    count,
    page,
    numPages: pages,
    tail: rows === null ? ctx.cache.tail(page) : rowsTail(rows),
    values: () => (rows ?? ctx.cache.rows(page)) as JsonValue[],
  };
  return pageAnswer(view, pageBody(view, content, links(ctx, view, page, pages)));
}
