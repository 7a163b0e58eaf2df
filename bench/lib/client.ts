import { silentLogger } from '../../src/logger.js';
import type { SyncSettings } from '../../src/sync/run-sync.js';
import { createUpstreamClient, type UpstreamClient } from '../../src/upstream/client.js';
import { crawl, type CrawlResult } from '../../src/upstream/crawl.js';
import { USER_AGENT } from '../../src/version.js';

/** The client `runSync` builds from the same settings, for benches that crawl without syncing. */
export function benchClient(settings: SyncSettings): UpstreamClient {
  return createUpstreamClient({
    baseUrl: settings.upstreamUrl,
    connectTimeoutMs: settings.connectTimeoutMs,
    headersTimeoutMs: settings.requestTimeoutMs,
    bodyTimeoutMs: settings.requestTimeoutMs,
    maxBodyBytes: settings.maxBodyBytes,
    maxAttempts: settings.maxAttempts,
    maxRetryAfterMs: settings.maxRetryAfterMs,
    userAgent: USER_AGENT,
    logger: silentLogger(),
  });
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
