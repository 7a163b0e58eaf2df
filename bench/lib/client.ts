import { silentLogger } from '../../src/logger.js';
import { buildUpstreamClient, type SyncSettings } from '../../src/sync/run-sync.js';
import type { UpstreamClient } from '../../src/upstream/client.js';
import { crawl, type CrawlResult } from '../../src/upstream/crawl.js';

/** The client `runSync` builds from the same settings, for benches that crawl without syncing. */
export function benchClient(settings: SyncSettings): UpstreamClient {
  return buildUpstreamClient(settings, silentLogger());
}

/** One crawl as `runSync` does it (same client, concurrency and caps), without storing anything. */
export async function crawlListing(settings: SyncSettings): Promise<CrawlResult> {
  const client = benchClient(settings);
  try {
    return await crawl({
      client,
      baseUrl: settings.upstreamUrl,
      concurrency: settings.concurrency,
      maxPages: settings.maxPages,
      maxCrawlAttempts: settings.maxCrawlAttempts,
      logger: silentLogger(),
    });
  } finally {
    await client.close();
  }
}
