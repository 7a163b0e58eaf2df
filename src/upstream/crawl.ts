import { createHash } from 'node:crypto';
import type { Logger } from '../logger.js';
import { defaultOf } from '../config/settings.js';
import { MirrorError, isMirrorError } from '../errors.js';
import type { UpstreamClient } from './client.js';
import { checkPageLinks, listLocation, pageUrl, type ListLocation } from './page-links.js';
import { checkPageShape, type ListingShape, type Mismatch } from './listing-shape.js';
import {
  DEFAULT_ENTRY_LIMITS,
  validatePage,
  type EntryLimits,
  type UnknownField,
  type ValidatedPage,
} from './validate.js';

export interface CrawledEntry {
  page: number;
  /** 0-based position in the page's `results`. */
  index: number;
  uuid: string;
  /** The entry as JSON, keys in the upstream's order. */
  json: string;
}

/** One entry as a sink receives it: where it stands in the listing, and its text. */
export interface SunkEntry extends CrawledEntry {
  /** 0-based position in the whole listing. */
  position: number;
}

/**
 * Where a crawl puts its entries as pages arrive (in any page order when concurrent), so nothing
 * holds the listing whole. `reset` drops what an attempt put there: the upstream changed mid-crawl
 * and the crawl starts over.
 */
export interface CrawlSink {
  onPage(page: number, entries: readonly SunkEntry[]): Promise<void> | void;
  reset(): Promise<void> | void;
}

/** What a crawl into a sink learnt besides the entries. */
export interface CrawlSummary {
  count: number;
  /** Entries per full page; with a single page, that page's length (0 for an empty listing). */
  pageSize: number;
  pages: number;
  unknownFields: UnknownField[];
  /** The OPTIONS body as received, or null when that request failed (logged). */
  optionsBody: string | null;
  /** Whole-crawl attempts used, 1 when the first was consistent. */
  attempts: number;
}

export interface CrawlResult extends CrawlSummary {
  entries: CrawledEntry[];
  /** Uuids listed more than once, in order of first appearance. */
  repeatedUuids: string[];
}

export interface CrawlOptions {
  client: Pick<UpstreamClient, 'getJson' | 'getText'>;
  baseUrl: string;
  /** Pages fetched at once; 1 follows `next` strictly in order. Default 4. */
  concurrency?: number;
  maxPages: number;
  /** Whole-crawl attempts when the upstream changes mid-crawl. Default 3. */
  maxCrawlAttempts?: number;
  logger: Logger;
  signal?: AbortSignal;
  onProgress?: (pagesDone: number, pagesTotal: number) => void;
  /** Byte and count budgets of the whole listing and of each entry; defaults below. */
  bounds?: Partial<CrawlBounds>;
}

/** What one crawl may hold in memory: checked as pages arrive, so a hostile listing fails early. */
export interface CrawlBounds extends EntryLimits {
  /** Sum of the page bodies of one crawl attempt, in bytes. */
  maxListingBytes: number;
  /** Entries announced (`count`) or received. */
  maxEntries: number;
  /** Largest OPTIONS body kept; a larger one is dropped (the previous one is served). */
  maxOptionsBytes: number;
}

export const DEFAULT_CRAWL_BOUNDS: CrawlBounds = {
  ...DEFAULT_ENTRY_LIMITS,
  maxListingBytes: defaultOf('sync', 'maxListingBytes'),
  maxEntries: defaultOf('sync', 'maxEntries'),
  maxOptionsBytes: defaultOf('upstream', 'maxOptionsBytes'),
};

interface AttemptContext {
  options: CrawlOptions;
  location: ListLocation;
  log: Logger;
  signal: AbortSignal;
  bounds: CrawlBounds;
  /** Bytes of page bodies read so far in this attempt. */
  tally: { bytes: number };
  sink: CrawlSink;
  drift: DriftTally;
}

/** Unknown fields by name, each at its first place in page order, and envelope fields: bounded by names. */
interface DriftTally {
  fields: Map<string, { field: UnknownField; order: [page: number, seq: number] }>;
  envelope: Set<string>;
}

function listingTooLarge(ctx: AttemptContext, page: number): MirrorError {
  const cap = ctx.bounds.maxListingBytes;
  return new MirrorError(
    'UPSTREAM_LISTING_TOO_LARGE',
    `the listing passed the ${cap}-byte cap (SYNC_MAX_LISTING_BYTES) at page ${page}, after ${ctx.tally.bytes} bytes; ` +
      'nothing was stored. Raise SYNC_MAX_LISTING_BYTES if the upstream really is this large',
    { page, bytes: ctx.tally.bytes, maxListingBytes: cap },
  );
}

/** The upstream moved under us; the crawl is retried as a whole. */
class InconsistentError extends MirrorError {
  constructor(readonly mismatch: Mismatch) {
    super(
      'UPSTREAM_INCONSISTENT',
      `page ${mismatch.page}: ${mismatch.what} expected ${mismatch.expected}, got ${mismatch.got}`,
      { ...mismatch },
    );
  }
}

/** A page as read: its JSON and the text it came in (compared when page 1 is read again). */
interface PageBody {
  body: unknown;
  text: string;
}

async function fetchPageBody(ctx: AttemptContext, page: number, url: string): Promise<PageBody> {
  try {
    const response = await ctx.options.client.getJson(url, { page, signal: ctx.signal });
    ctx.tally.bytes += response.byteLength ?? response.text.length;
    if (ctx.tally.bytes > ctx.bounds.maxListingBytes) throw listingTooLarge(ctx, page);
    return { body: response.body, text: response.text };
  } catch (error) {
    // DRF answers 404 "Invalid page." past the end: the listing shrank since page 1 was read.
    if (
      page > 1 &&
      isMirrorError(error) &&
      error.code === 'UPSTREAM_HTTP_STATUS' &&
      error.details.status === 404
    ) {
      throw new InconsistentError({ page, what: 'status', expected: 200, got: 404 });
    }
    throw error;
  }
}

async function fetchPage(ctx: AttemptContext, page: number, url: string): Promise<ValidatedPage> {
  return validatedPage(ctx, page, (await fetchPageBody(ctx, page, url)).body);
}

function validatedPage(ctx: AttemptContext, page: number, body: unknown): ValidatedPage {
  const validated = validatePage(body, page, ctx.bounds);
  if (ctx.log.isLevelEnabled('debug')) {
    ctx.log
      .child({ page })
      .debug({ entries: validated.entries.length, count: validated.count }, 'page fetched');
  }
  return validated;
}

/** Fetches, validates and checks one page against the shape page 1 announced. */
async function fetchCheckedPage(
  ctx: AttemptContext,
  shape: ListingShape,
  page: number,
  url: string,
): Promise<ValidatedPage> {
  const validated = await fetchPage(ctx, page, url);
  // Count first: a changed count explains wrong links and lengths, and is worth a retry.
  const mismatch = checkPageShape(shape, validated);
  if (mismatch) throw new InconsistentError(mismatch);
  checkPageLinks(ctx.location, validated, page, shape.pages);
  await deliver(ctx, shape, validated);
  return validated;
}

/** Hands a checked page to the sink and notes its drift; the page is then dropped. */
async function deliver(ctx: AttemptContext, shape: ListingShape, page: ValidatedPage): Promise<void> {
  const base = (page.page - 1) * shape.pageSize;
  await ctx.sink.onPage(
    page.page,
    page.entries.map((e) => ({
      page: page.page,
      index: e.index,
      position: base + e.index,
      uuid: e.uuid,
      json: e.json,
    })),
  );
  page.unknownFields.forEach((field, seq) => {
    const seen = ctx.drift.fields.get(field.field);
    const [p, q] = seen?.order ?? [Infinity, Infinity];
    if (page.page < p || (page.page === p && seq < q)) {
      ctx.drift.fields.set(field.field, { field, order: [page.page, seq] });
    }
  });
  for (const field of page.unknownEnvelopeFields) ctx.drift.envelope.add(field);
}

/** Strictly in order, requesting each page's own (already checked) `next`. */
async function fetchSequential(
  ctx: AttemptContext,
  shape: ListingShape,
  first: ValidatedPage,
): Promise<void> {
  let link = first.next;
  for (let page = 2; page <= shape.pages; page++) {
    if (!link) throw new Error(`unreachable: page ${page - 1} was checked to link to page ${page}`);
    link = (await fetchCheckedPage(ctx, shape, page, link)).next;
    ctx.options.onProgress?.(page, shape.pages);
  }
}

/** A pool of workers over pages 2..N; the first failure cancels the rest. */
async function fetchConcurrent(ctx: AttemptContext, shape: ListingShape, concurrency: number): Promise<void> {
  const controller = new AbortController();
  const poolCtx = { ...ctx, signal: AbortSignal.any([ctx.signal, controller.signal]) };
  let nextPage = 2;
  let done = 1;
  let failure: { error: unknown } | undefined;
  const worker = async (): Promise<void> => {
    while (nextPage <= shape.pages && !failure) {
      const page = nextPage++;
      try {
        await fetchCheckedPage(poolCtx, shape, page, pageUrl(ctx.location, page));
      } catch (error) {
        // Only the first failure is the story; later ones are mostly our own cancellation.
        failure ??= { error };
        controller.abort();
        return;
      }
      ctx.options.onProgress?.(++done, shape.pages);
    }
  };
  const workers = Math.min(concurrency, shape.pages - 1);
  await Promise.all(Array.from({ length: workers }, worker));
  if (failure) throw failure.error;
}

/** What a page 1 read again after the last page differed by (`Mismatch.what`). */
const PAGE_ONE_BYTES = 'bytes when read again after the last page';
const PAGE_ONE_ENTRIES = 'entries (uuids in order) when read again after the last page';

/**
 * DRF's pages are separate queries, not one snapshot: edits during a crawl can give pages 1–7 of one
 * version and 8–12 of the next with the same `count`. Page 1 read again after the last page, byte
 * for byte the same, shows no edit reached it meanwhile; any difference retries the crawl. (An edit
 * that leaves page 1 and the count alone still passes: the next run corrects it.) Other uuids or
 * another order there is told apart from edited entries: when it persists, the listing has no stable
 * order rather than busy editors.
 */
async function recheckFirstPage(ctx: AttemptContext, first: ValidatedPage, firstText: string): Promise<void> {
  const again = await fetchPageBody(ctx, 1, ctx.location.listUrl);
  if (again.text === firstText) return;
  const reread = validatePage(again.body, 1, ctx.bounds);
  const sameUuids =
    reread.entries.length === first.entries.length &&
    reread.entries.every((entry, i) => entry.uuid === first.entries[i]?.uuid);
  throw new InconsistentError({
    page: 1,
    what: sameUuids ? PAGE_ONE_BYTES : PAGE_ONE_ENTRIES,
    expected: `sha256 ${shortDigest(firstText)}`,
    got: `sha256 ${shortDigest(again.text)}`,
  });
}

function shortDigest(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 12);
}

async function crawlOnce(ctx: AttemptContext): Promise<ListingShape> {
  const firstBody = await fetchPageBody(ctx, 1, ctx.location.listUrl);
  const first = validatedPage(ctx, 1, firstBody.body);
  const shape = shapeFromFirstPage(first, ctx.options.maxPages);
  if (shape.count > ctx.bounds.maxEntries) {
    throw new MirrorError(
      'UPSTREAM_LISTING_TOO_LARGE',
      `upstream announces ${shape.count} entries, more than the cap of ${ctx.bounds.maxEntries} (SYNC_MAX_ENTRIES); nothing was stored`,
      { page: 1, count: shape.count, maxEntries: ctx.bounds.maxEntries },
    );
  }
  checkPageLinks(ctx.location, first, 1, shape.pages);
  await deliver(ctx, shape, first);
  ctx.options.onProgress?.(1, shape.pages);
  const concurrency = ctx.options.concurrency ?? defaultOf('sync', 'concurrency');
  if (concurrency <= 1) await fetchSequential(ctx, shape, first);
  else await fetchConcurrent(ctx, shape, concurrency);
  // A listing of one page was read at one instant: nothing to tear.
  if (shape.pages > 1) await recheckFirstPage(ctx, first, firstBody.text);
  return shape;
}

function shapeFromFirstPage(first: ValidatedPage, maxPages: number): ListingShape {
  const { count, entries, next } = first;
  if (next === null) {
    if (entries.length !== count) {
      throw new InconsistentError({
        page: 1,
        what: 'results on the only page',
        expected: count,
        got: entries.length,
      });
    }
    return { count, pageSize: entries.length, pages: 1 };
  }
  if (entries.length === 0) {
    throw new MirrorError('UPSTREAM_PAGINATION', 'page 1 links to a next page but holds no results', {
      page: 1,
      count,
      next,
    });
  }
  const pages = Math.ceil(count / entries.length);
  if (pages > maxPages) {
    throw new MirrorError(
      'UPSTREAM_TOO_MANY_PAGES',
      `upstream announces ${count} entries in pages of ${entries.length}, ${pages} pages, more than the cap of ${maxPages}`,
      { count, pageSize: entries.length, pages, maxPages },
    );
  }
  return { count, pageSize: entries.length, pages };
}

async function fetchOptions(
  options: CrawlOptions,
  location: ListLocation,
  log: Logger,
  signal: AbortSignal,
  maxBytes: number,
): Promise<string | null> {
  try {
    const { text } = await options.client.getText(location.listUrl, 'OPTIONS', {
      signal,
      maxBodyBytes: maxBytes,
    });
    // JSON escapes U+0000 and PostgreSQL's text cannot hold it: such a body is broken, and refused
    // on every store alike, as a too large one is.
    if (text.includes('\u0000')) {
      log.warn({ url: location.listUrl }, 'OPTIONS body holds U+0000; it will not be replayed');
      return null;
    }
    return text;
  } catch (err) {
    // Cancelled because the crawl itself failed: that failure is the one worth reporting.
    if (!signal.aborted) {
      log.warn({ err, url: location.listUrl }, 'OPTIONS request failed; its body will not be replayed');
    }
    return null;
  }
}

/**
 * Reads the whole listing into `sink`: page 1 fixes count and page size, pages 2..N follow
 * (concurrently when allowed) and must agree with it and with DRF's link rules. If the upstream
 * changes mid-crawl the sink is reset and the whole crawl starts over, up to `maxCrawlAttempts`,
 * then fails with UPSTREAM_INCONSISTENT.
 */
export async function crawlInto(options: CrawlOptions, sink: CrawlSink): Promise<CrawlSummary> {
  const location = listLocation(options.baseUrl);
  const log = options.logger.child({ module: 'crawl' });
  const maxAttempts = Math.max(1, options.maxCrawlAttempts ?? defaultOf('sync', 'maxCrawlAttempts'));
  const signal = options.signal ?? new AbortController().signal;
  const bounds = { ...DEFAULT_CRAWL_BOUNDS, ...options.bounds };
  const optionsController = new AbortController();
  const optionsBody = fetchOptions(
    options,
    location,
    log,
    AbortSignal.any([signal, optionsController.signal]),
    bounds.maxOptionsBytes,
  );
  const mismatches: (Mismatch & { attempt: number })[] = [];
  let succeeded = false;
  try {
    for (let attempt = 1; attempt <= maxAttempts; attempt++) {
      const drift: DriftTally = { fields: new Map(), envelope: new Set() };
      try {
        if (attempt > 1) await sink.reset();
        const shape = await crawlOnce({
          options,
          location,
          log,
          signal,
          bounds,
          tally: { bytes: 0 },
          sink,
          drift,
        });
        const unknownFields = [...drift.fields.values()]
          .sort((a, b) => a.order[0] - b.order[0] || a.order[1] - b.order[1])
          .map((f) => f.field);
        reportDrift(log, unknownFields, [...drift.envelope]);
        succeeded = true;
        return { ...shape, unknownFields, optionsBody: await optionsBody, attempts: attempt };
      } catch (error) {
        if (!(error instanceof InconsistentError)) throw error;
        mismatches.push({ ...error.mismatch, attempt });
        log.warn({ attempt, maxAttempts, mismatch: error.mismatch }, 'upstream changed during the crawl');
      }
    }
  } finally {
    // A failed crawl should not wait out a slow OPTIONS, nor leave it running past its return.
    if (!succeeded) optionsController.abort();
    await optionsBody;
  }
  const last = mismatches[mismatches.length - 1];
  if (last?.what === PAGE_ONE_ENTRIES) throw unstableOrder(maxAttempts, mismatches);
  throw new MirrorError(
    'UPSTREAM_INCONSISTENT',
    `upstream kept changing during the crawl (${maxAttempts} attempts); last: page ${last?.page}: ${last?.what} expected ${last?.expected}, got ${last?.got}`,
    { attempts: maxAttempts, mismatches, ...(last ? { page: last.page } : {}) },
  );
}

/** Every attempt ended with page 1 listing other entries than at its start: no stable order. */
function unstableOrder(
  attempts: number,
  mismatches: readonly (Mismatch & { attempt: number })[],
): MirrorError {
  return new MirrorError(
    'UPSTREAM_UNSTABLE_ORDER',
    `page 1 listed other entries, or the same in another order, when read again after the last page, in each of ` +
      `${attempts} crawls; the upstream probably paginates an unordered queryset (DRF issue #6886: rows repeated ` +
      'and skipped), or is edited faster than a crawl. Nothing was stored; give the upstream view a stable ordering',
    { attempts, mismatches, page: 1 },
  );
}

/** The whole listing in memory, in listing order: for tests and benches of the crawl alone. */
export async function crawl(options: CrawlOptions): Promise<CrawlResult> {
  let pages = new Map<number, CrawledEntry[]>();
  const summary = await crawlInto(options, {
    onPage: (page, entries) => {
      pages.set(
        page,
        entries.map(({ position: _position, ...entry }) => entry),
      );
    },
    reset: () => {
      pages = new Map();
    },
  });
  const entries = [...pages].sort((a, b) => a[0] - b[0]).flatMap(([, list]) => list);
  const seen = new Map<string, number>();
  for (const entry of entries) seen.set(entry.uuid, (seen.get(entry.uuid) ?? 0) + 1);
  const repeatedUuids = [...seen].filter(([, times]) => times > 1).map(([uuid]) => uuid);
  return { entries, ...summary, repeatedUuids };
}

function reportDrift(
  log: Logger,
  unknownFields: readonly UnknownField[],
  envelopeFields: readonly string[],
): void {
  if (unknownFields.length > 0) {
    log.warn(driftSummary(unknownFields), 'upstream entries carry fields the contract does not name');
  }
  if (envelopeFields.length > 0) {
    // The envelope is rebuilt by the mirror, so these are reported but cannot be served back.
    log.warn({ envelopeFields }, 'upstream page envelope carries fields the contract does not name');
  }
}

const DRIFT_NAMES_LOGGED = 10;

/** A count and the first few names: thousands of unknown fields must not make one huge log line. */
export function driftSummary(unknownFields: readonly UnknownField[]): {
  unknownFieldCount: number;
  firstUnknownFields: UnknownField[];
} {
  return {
    unknownFieldCount: unknownFields.length,
    firstUnknownFields: unknownFields.slice(0, DRIFT_NAMES_LOGGED),
  };
}
