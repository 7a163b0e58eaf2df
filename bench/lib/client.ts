import { silentLogger } from '../../src/logger.js';
import { buildUpstreamClient, type SyncConfig } from '../../src/sync/run-sync.js';
import type { UpstreamClient } from '../../src/upstream/client.js';
import { crawl, crawlInto, type CrawlResult, type CrawlSummary } from '../../src/upstream/crawl.js';

/** The client `runSync` builds from the same settings, for benches that crawl without syncing. */
export function benchClient(config: SyncConfig): UpstreamClient {
  return buildUpstreamClient(config, silentLogger());
}

/** One crawl as `runSync` does it (same client, concurrency and caps), without storing anything. */
export async function crawlListing(config: SyncConfig): Promise<CrawlResult> {
  const client = benchClient(config);
  try {
    return await crawl({
      client,
      baseUrl: config.upstream.target.url,
      concurrency: config.sync.concurrency,
      maxPages: config.sync.maxPages,
      maxCrawlAttempts: config.sync.maxCrawlAttempts,
      logger: silentLogger(),
    });
  } finally {
    await client.close();
  }
}

/**
 * One crawl as `runSync` makes it (same client, concurrency and caps), every page dropped as it
 * arrives: the baseline of a streaming sync, which holds no more than this.
 */
export async function crawlDiscarding(config: SyncConfig): Promise<CrawlSummary> {
  const client = benchClient(config);
  try {
    return await crawlInto(
      {
        client,
        baseUrl: config.upstream.target.url,
        concurrency: config.sync.concurrency,
        maxPages: config.sync.maxPages,
        maxCrawlAttempts: config.sync.maxCrawlAttempts,
        logger: silentLogger(),
      },
      { onPage: () => undefined, reset: () => undefined },
    );
  } finally {
    await client.close();
  }
}
