import type { Config } from '../config.js';
import type { SyncSettings } from './run-sync.js';

export function syncSettingsFrom(config: Config, upstreamUrl: string): SyncSettings {
  return {
    upstreamUrl,
    concurrency: config.concurrency,
    maxPages: config.maxPages,
    maxCrawlAttempts: config.maxCrawlAttempts,
    allowEmpty: config.allowEmpty,
    requestTimeoutMs: config.requestTimeoutMs,
    connectTimeoutMs: config.connectTimeoutMs,
    maxBodyBytes: config.maxBodyBytes,
    maxAttempts: config.maxAttempts,
    maxRetryAfterMs: config.maxRetryAfterMs,
    bounds: {
      maxListingBytes: config.maxListingBytes,
      maxEntries: config.maxListingEntries,
      maxBytes: config.maxEntryBytes,
      maxDepth: config.maxEntryDepth,
      maxOptionsBytes: config.maxOptionsBytes,
      maxDurationMs: config.maxSyncDurationMs,
      requestDeadlineMs: config.requestDeadlineMs,
    },
  };
}
