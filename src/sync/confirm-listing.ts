import { MirrorError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { UpstreamClient } from '../upstream/client.js';
import type { CrawlSink, CrawlSummary } from '../upstream/crawl.js';
import { listLocation, pageUrl } from '../upstream/page-links.js';
import { validatePage, type EntryLimits } from '../upstream/validate.js';
import type { RunStage } from '../db/run-commit.js';

export interface ConfirmContext {
  baseUrl: string;
  client: UpstreamClient;
  logger: Logger;
  signal?: AbortSignal | undefined;
  limits?: EntryLimits;
  /** A whole second crawl into `sink`, as the run made the first. */
  crawlAgain: (sink: CrawlSink) => Promise<CrawlSummary>;
}

/**
 * DRF paginating an unordered queryset repeats some rows and skips others while `count` stays right
 * (DRF issue #6886): a skipped row looks removed, a repeated one looks like a new appearance. When
 * a crawl that holds repeated uuids would record either, it is confirmed before anything is stored:
 * - a new state (added or changed appearance) that is the exact copy of another entry: the pages holding the copies are read
 *   again and must come back identical (cheap: a handful of pages, even on a first sync);
 * - a removal: the whole listing is crawled again and must come back identical.
 * Otherwise the upstream's order is unstable and the run fails with UPSTREAM_UNSTABLE_ORDER.
 * A run that records neither never pays for a confirmation. The first crawl and the diff's
 * outcome are read from the run's stage.
 */
export async function confirmListing(
  ctx: ConfirmContext,
  stage: RunStage,
  first: CrawlSummary,
  removed: number,
): Promise<void> {
  const repeated = await stage.repeatedUuids(20);
  if (repeated.count === 0) return;
  const copies = await stage.exactCopies();
  if (removed === 0 && copies.copies === 0) return;
  ctx.logger.info(
    { removed, exactCopies: copies.copies, repeatedUuids: repeated.count },
    removed > 0
      ? 'removal with repeated uuids: crawling again to confirm'
      : 'exact copies: re-reading their pages to confirm',
  );
  const stable =
    removed > 0 ? await sameListing(ctx, stage, first) : await samePages(ctx, stage, copies.pages);
  if (!stable.same) {
    throw new MirrorError(
      'UPSTREAM_UNSTABLE_ORDER',
      `reading the listing again gave different entries (${stable.where}) while ${removed} entr(y/ies) looked removed ` +
        `and ${copies.copies} repeated exactly; the upstream probably paginates an unordered queryset ` +
        '(DRF issue #6886: rows repeated and skipped). Nothing was stored; give the upstream view a stable ordering',
      { removed, exactCopies: copies.copies, repeatedUuids: repeated.first },
    );
  }
}

/** A second crawl, each page compared with the staged one as it arrives. */
async function sameListing(
  ctx: ConfirmContext,
  stage: RunStage,
  first: CrawlSummary,
): Promise<{ same: boolean; where: string }> {
  // The first page that differs (pages arrive in any order).
  const seen: { differs: number | null } = { differs: null };
  // Pages arrive from several workers at once, and the stage is one connection: one read at a time
  // (overlapping queries on one PostgreSQL client are what pg 8 warns of and pg 9 refuses).
  let reads: Promise<unknown> = Promise.resolve();
  const second = await ctx.crawlAgain({
    onPage: async (page, entries) => {
      if (seen.differs !== null && seen.differs < page) return;
      const read = reads.then(() => stage.pageTexts(page));
      reads = read.catch(() => undefined);
      const before = await read;
      if (before.length !== entries.length || entries.some((e, i) => e.json !== before[i])) {
        seen.differs = Math.min(seen.differs ?? page, page);
      }
    },
    reset: () => {
      seen.differs = null;
    },
  });
  const { differs } = seen;
  if (second.count !== first.count) {
    return { same: false, where: `${first.count} then ${second.count} entries` };
  }
  return differs === null
    ? { same: true, where: '' }
    : { same: false, where: `first difference on page ${differs}` };
}

async function samePages(
  ctx: ConfirmContext,
  stage: RunStage,
  pages: readonly number[],
): Promise<{ same: boolean; where: string }> {
  const location = listLocation(ctx.baseUrl);
  for (const page of pages) {
    const { body } = await ctx.client.getJson(pageUrl(location, page), {
      page,
      ...(ctx.signal ? { signal: ctx.signal } : {}),
    });
    const again = validatePage(body, page, ctx.limits).entries.map((e) => e.json);
    const before = await stage.pageTexts(page);
    if (again.length !== before.length || again.some((json, i) => json !== before[i])) {
      return { same: false, where: `page ${page} changed` };
    }
  }
  return { same: true, where: '' };
}
