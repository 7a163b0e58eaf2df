import { MirrorError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { UpstreamClient } from '../upstream/client.js';
import type { CrawlResult } from '../upstream/crawl.js';
import { listLocation, pageUrl } from '../upstream/page-links.js';
import { validatePage, type EntryLimits } from '../upstream/validate.js';
import type { DiffResult } from './diff.js';

export interface ConfirmContext {
  baseUrl: string;
  client: UpstreamClient;
  logger: Logger;
  signal?: AbortSignal | undefined;
  limits?: EntryLimits;
  /** A whole second crawl, as the run made the first. */
  crawlAgain: () => Promise<CrawlResult>;
}

/**
 * DRF paginating an unordered queryset repeats some rows and skips others while `count` stays right
 * (DRF issue #6886): a skipped row looks removed, a repeated one looks like a new appearance. When
 * a crawl that holds repeated uuids would record either, it is confirmed before anything is stored:
 * - a new state (added or changed appearance) that is the exact copy of another entry: the pages holding the copies are read
 *   again and must come back identical (cheap: a handful of pages, even on a first sync);
 * - a removal: the whole listing is crawled again and must come back identical.
 * Otherwise the upstream's order is unstable and the run fails with UPSTREAM_UNSTABLE_ORDER.
 * A run that records neither never pays for a confirmation.
 */
export async function confirmListing(
  ctx: ConfirmContext,
  first: CrawlResult,
  diff: DiffResult,
): Promise<void> {
  if (first.repeatedUuids.length === 0) return;
  const copies = exactCopies(first, diff);
  const removed = diff.counts.removed;
  if (removed === 0 && copies.size === 0) return;
  ctx.logger.info(
    { removed, exactCopies: copies.size, repeatedUuids: first.repeatedUuids.length },
    removed > 0
      ? 'removal with repeated uuids: crawling again to confirm'
      : 'exact copies: re-reading their pages to confirm',
  );
  const stable = removed > 0 ? await sameListing(ctx, first) : await samePages(ctx, first, copies);
  if (!stable.same) {
    throw new MirrorError(
      'UPSTREAM_UNSTABLE_ORDER',
      `reading the listing again gave different entries (${stable.where}) while ${removed} entr(y/ies) looked removed ` +
        `and ${copies.size} repeated exactly; the upstream probably paginates an unordered queryset ` +
        '(DRF issue #6886: rows repeated and skipped). Nothing was stored; give the upstream view a stable ordering',
      { removed, exactCopies: copies.size, repeatedUuids: first.repeatedUuids.slice(0, 20) },
    );
  }
}

/**
 * Entry texts the run would store as a new state (an added or returned appearance, or a changed one)
 * while they stand twice in the crawl: what a repeated row of an unordered queryset looks like.
 */
function exactCopies(first: CrawlResult, diff: DiffResult): Set<string> {
  const stored = new Set<string>();
  for (const placement of diff.placements) if (placement.kind === 'new') stored.add(placement.body);
  if (stored.size === 0) return stored;
  const times = new Map<string, number>();
  for (const entry of first.entries) {
    if (stored.has(entry.json)) times.set(entry.json, (times.get(entry.json) ?? 0) + 1);
  }
  return new Set([...times].filter(([, n]) => n > 1).map(([json]) => json));
}

async function sameListing(
  ctx: ConfirmContext,
  first: CrawlResult,
): Promise<{ same: boolean; where: string }> {
  const second = await ctx.crawlAgain();
  if (second.entries.length !== first.entries.length) {
    return { same: false, where: `${first.entries.length} then ${second.entries.length} entries` };
  }
  const at = second.entries.findIndex((entry, i) => entry.json !== first.entries[i]?.json);
  return at < 0
    ? { same: true, where: '' }
    : { same: false, where: `first difference on page ${second.entries[at]?.page}` };
}

async function samePages(
  ctx: ConfirmContext,
  first: CrawlResult,
  copies: ReadonlySet<string>,
): Promise<{ same: boolean; where: string }> {
  const location = listLocation(ctx.baseUrl);
  const pages = [...new Set(first.entries.filter((e) => copies.has(e.json)).map((e) => e.page))];
  for (const page of pages) {
    const { body } = await ctx.client.getJson(pageUrl(location, page), {
      page,
      ...(ctx.signal ? { signal: ctx.signal } : {}),
    });
    const again = validatePage(body, page, ctx.limits).entries.map((e) => e.json);
    const before = first.entries.filter((e) => e.page === page).map((e) => e.json);
    if (again.length !== before.length || again.some((json, i) => json !== before[i])) {
      return { same: false, where: `page ${page} changed` };
    }
  }
  return { same: true, where: '' };
}
