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

/**
 * The variables that give a child `sync` process the settings of this `start`: those a flag of
 * `start` may have set, and the upstream (the demo's URL is known only here). Every other setting
 * reaches the child through the environment it inherits.
 */
export function syncEnvFrom(config: Config, upstreamUrl: string): Record<string, string> {
  return {
    UPSTREAM_URL: upstreamUrl,
    DATABASE_PATH: config.databasePath,
    SYNC_CONCURRENCY: String(config.concurrency),
    SYNC_MAX_PAGES: String(config.maxPages),
    SYNC_ALLOW_EMPTY: String(config.allowEmpty),
    LOG_LEVEL: config.logLevel,
  };
}
